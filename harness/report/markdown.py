"""The one table writer: a table is columns (Column: a header and how to fill its cell from one
item) over items, or the cells of a pivot (grid); written as GitHub Markdown here (report.md,
docs/ladder.md, every page beside report.md, the porting doc) and on the terminal by
harness.report.terminal from the same columns. Also rich tables as Markdown, and the number
formats every table's cells use."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

RIGHT = "r"


@dataclass(frozen=True)
class Column:
    """One column of a table: its header and its cell from one item."""

    header: str
    cell: Callable[[Any], str]
    right: bool = False  # numbers right-aligned
    whole: bool = False  # on the terminal never folded (ids): the other columns give way


def numbers(header: str, cell: Callable[[Any], str]) -> Column:
    """A column of numbers (right-aligned)."""
    return Column(header, cell, right=True)


def markdown_lines(
    header: Sequence[str], rows: Iterable[Sequence[str]], align: Sequence[str] = ()
) -> list[str]:
    """A GitHub Markdown table as lines: the header, the rule (`---:` for columns aligned RIGHT)
    and the rows, "|" inside a cell escaped. A row may have fewer cells than the header (a note
    spanning the rest)."""
    rule = "".join("---:|" if a == RIGHT else "---|" for a in align) if align else ""
    rule += "---|" * (len(header) - len(align))
    lines = ["| " + " | ".join(header) + " |", "|" + rule]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |" for cells in rows]
    return lines


def markdown_table(
    header: Sequence[str], rows: Iterable[Sequence[str]], align: Sequence[str] = ()
) -> str:
    """markdown_lines as one string, ending in a newline."""
    return "\n".join(markdown_lines(header, rows, align)) + "\n"


def column_table(columns: Sequence[Column], items: Iterable[Any], *, align: bool = True) -> str:
    """Markdown: one row per item, one cell per column (align: the right columns' rule `---:`)."""
    rows = ([c.cell(x) for c in columns] for x in items)
    rule = [RIGHT if c.right else "" for c in columns] if align else ()
    return markdown_table([c.header for c in columns], rows, rule)


def grid(
    items: Iterable[Any], down: Callable[[Any], Any], across: Callable[[Any], Any],
    cell: Callable[[Any], str], downs: Iterable[Any] | None = None,
    acrosses: Iterable[Any] | None = None, *, label: Callable[[Any], str] = str,
    missing: str = "-",
) -> tuple[list[Any], list[list[str]]]:  # fmt: skip
    """A pivot of items: (the across keys, one row per down key: label(key), then a cell per
    across key), the keys in the order given (else as first seen), each once; the first item of a
    (down, across) pair gives its cell(item), a pair without one `missing`."""
    items = list(items)
    at: dict[tuple, Any] = {}
    for x in items:
        at.setdefault((down(x), across(x)), x)
    ds = dict.fromkeys(map(down, items) if downs is None else downs)
    cs = list(dict.fromkeys(map(across, items) if acrosses is None else acrosses))
    return cs, [[label(d), *(cell(at[d, c]) if (d, c) in at else missing for c in cs)] for d in ds]


def rich_as_markdown(table) -> str:
    """A rich Table as a Markdown table: its title in bold above, its caption below."""
    heads = [str(c.header) for c in table.columns]
    cols = [[str(cell) for cell in c.cells] for c in table.columns]
    lines = []
    if table.title:
        lines += [f"**{table.title}**", ""]
    lines += markdown_lines(heads, zip(*cols, strict=True))
    if table.caption:
        lines += ["", str(table.caption)]
    return "\n".join(lines) + "\n"


def num(x: float | None, fmt: str) -> str:
    """x formatted, or "-" where there is no number (not measured, NaN)."""
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, fmt)


def us(ms: float | None) -> str:
    """Milliseconds shown as microseconds, one decimal."""
    return num(None if ms is None else ms * 1e3, ".1f")
