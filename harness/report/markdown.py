"""The one table writer: columns (Column: a header and its cell from one item) over items, or a
pivot of rows (grid, pivot), written as GitHub Markdown or, from the same columns, as a rich
Table on the terminal (long text in a legend under it: KeyedText); and every cell's number
format."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from string import ascii_uppercase
from typing import Any

RIGHT = "r"


@dataclass(frozen=True)
class Column:
    header: str
    cell: Callable[[Any], str]
    right: bool = False  # numbers right-aligned
    whole: bool = False  # on the terminal never folded (ids): the other columns give way


def numbers(header: str, cell: Callable[[Any], str]) -> Column:
    return Column(header, cell, right=True)


def markdown_lines(
    header: Sequence[str], rows: Iterable[Sequence[str]], align: Sequence[str] = ()
) -> list[str]:
    """The header, the rule (`---:` for columns aligned RIGHT), the rows ("|" escaped; a short row:
    a note spanning the rest)."""
    rule = "".join("---:|" if a == RIGHT else "---|" for a in align) + "---|" * (
        len(header) - len(align)
    )
    body = ("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |" for cells in rows)
    return ["| " + " | ".join(header) + " |", "|" + rule, *body]


def markdown_table(
    header: Sequence[str], rows: Iterable[Sequence[str]], align: Sequence[str] = ()
) -> str:
    return "\n".join(markdown_lines(header, rows, align)) + "\n"


def column_table(columns: Sequence[Column], items: Iterable[Any], *, align: bool = True) -> str:
    """One row per item, one cell per column (align: the right columns' rule `---:`)."""
    rule = [RIGHT if c.right else "" for c in columns] if align else ()
    return markdown_table(
        [c.header for c in columns], ([c.cell(x) for c in columns] for x in items), rule
    )


def grid(
    items: Iterable[Any], down: Callable[[Any], Any], across: Callable[[Any], Any],
    cell: Callable[[Any], str], downs: Iterable[Any] | None = None,
    acrosses: Iterable[Any] | None = None, *, label: Callable[[Any], str] = str,
    missing: str = "-",
) -> tuple[list[Any], list[list[str]]]:  # fmt: skip
    """A pivot: (the across keys, one row per down key: label(key), then a cell per across key),
    keys in the order given (else first seen); a pair's first item gives its cell, else missing."""
    items, at = list(items), {}
    for x in items:
        at.setdefault((down(x), across(x)), x)
    ds = dict.fromkeys(map(down, items) if downs is None else downs)
    cs = list(dict.fromkeys(map(across, items) if acrosses is None else acrosses))
    return cs, [[label(d), *(cell(at[d, c]) if (d, c) in at else missing for c in cs)] for d in ds]


def pivot(corner: str, *args: Any, head=str, align: str = "", more=(), **kw: Any) -> str:
    """grid(*args, **kw) as a Markdown table: corner, then head(key) per across key; the rows, then
    `more`; align: the label column's and the cells' ("lr", "rr"; "": none)."""
    cols, body = grid(*args, **kw)
    rule = align[:1] + align[1:] * len(cols)
    return markdown_table([corner, *map(head, cols)], [*body, *more], rule)


def verdict(name: str, misses: int, total: int, detail: str = "") -> str:
    """A target's line over `total` cases: '- name: met on all N', or '- name: missed on K of N'
    and then detail (what was missed)."""
    said = f"missed on {misses} of {total}{detail}" if misses else f"met on all {total}"
    return f"- {name}: {said}"


def num(x: float | None, fmt: str) -> str:
    """x formatted, or "-" where there is no number (not measured, NaN)."""
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, fmt)


def times(x: float | None) -> str:
    """A ratio as "1.23x", or "-" where there is none."""
    text = num(x, ".2f")
    return text if text == "-" else text + "x"


def us(ms: float | None) -> str:
    """Milliseconds shown as microseconds, one decimal."""
    return num(None if ms is None else ms * 1e3, ".1f")


def short_dtype(name: str) -> str:
    """float32 -> f32, int32 -> i32, bfloat16 -> bf16."""
    return name.replace("float", "f").replace("int", "i")


def short_id(variant_id: str) -> str:
    """A variant id without its backend prefix (the column says which backend)."""
    return variant_id.split("/", 1)[-1]


@dataclass
class KeyedText:
    """Long text shown as a short key (A, B, ...) in a column and spelled out in the legend."""

    keys: dict[str, str] = field(default_factory=dict)

    def key(self, text: str) -> str:
        i = len(self.keys)
        return self.keys.setdefault(
            text, ascii_uppercase[i % 26] + (str(i // 26) if i >= 26 else "")
        )

    def legend(self) -> list[str]:
        return [f"{k}: {text}" for text, k in self.keys.items()]


def terminal_table(
    title: str | None, columns: Sequence[Column], rows: Iterable[Any], row_style=None,
    caption=None, section: int | None = None,
):  # fmt: skip
    """Every terminal table: a rich Table of rows, one cell per column, in the ladder table's box
    style; row_style(row) may colour a row; a line above row section."""
    from rich import box
    from rich.table import Table

    table = Table(
        title=title, caption=caption, box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True
    )
    for c in columns:
        # fold, never crop: a compact table is narrow enough not to fold at 100 columns, and
        # on a narrower terminal (or --wide) a folded number is still the number
        table.add_column(c.header, justify="right" if c.right else "left", overflow="fold",
                         no_wrap=c.whole)  # fmt: skip
    for k, r in enumerate(rows):
        if k == section:
            table.add_section()
        table.add_row(*(c.cell(r) for c in columns), style=row_style and row_style(r))
    return table


def with_legend(table, lines: Iterable[str]):
    """The table with its legend lines under it (dim), as one renderable."""
    from rich.console import Group
    from rich.text import Text

    return Group(table, *(Text(line, style="dim") for line in lines))
