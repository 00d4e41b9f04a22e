"""The one Markdown table writer (report.md, docs/ladder.md, seed and host tables, the porting
doc), rich tables as Markdown, and the number formats every table's cells use."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

RIGHT = "r"


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
