"""What the terminal tables of `reduce-ladder list` and `inspect` share with the ladder table
(harness.report.ladder_table): compact by default (fits 100 columns, no id or number split
across lines), every column with --wide, long text in a legend under the table.

A column (TermColumn: harness.report.markdown.Column, the Markdown tables' own) says how to fill
one cell from a row; `terminal_table` lays the columns out with the ladder table's box style;
`KeyedText` turns long repeated text (a tile mapping's description) into short keys the legend
spells out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from string import ascii_uppercase
from typing import Any

from harness.report.markdown import Column

TermColumn = Column  # the name the terminal tables' callers know


def short_dtype(name: str) -> str:
    """float32 -> f32, int32 -> i32, bfloat16 -> bf16: the catalogue's names, shortened."""
    return name.replace("float", "f").replace("int", "i")


def short_dtypes(names: Iterable[str]) -> str:
    """'f32,i32,f16,bf16,f64'."""
    return ",".join(short_dtype(n) for n in names)


def dtype_key(names: Iterable[str]) -> str:
    """The legend's line for short_dtype: 'f32 float32, i32 int32, ...'."""
    return ", ".join(f"{short_dtype(n)} {n}" for n in names)


def short_id(variant_id: str) -> str:
    """A variant id without its backend prefix (the column says which backend)."""
    return variant_id.split("/", 1)[-1]


@dataclass
class KeyedText:
    """Long text shown as a short key (A, B, ...) in a column and spelled out in the legend, keys
    given in order of first appearance."""

    keys: dict[str, str] = field(default_factory=dict)

    def key(self, text: str) -> str:
        if text not in self.keys:
            i = len(self.keys)
            self.keys[text] = ascii_uppercase[i % 26] + (str(i // 26) if i >= 26 else "")
        return self.keys[text]

    def legend(self) -> list[str]:
        return [f"{k}: {text}" for text, k in self.keys.items()]


def rich_table(
    title: str | None, header: Sequence[str], rows: Iterable[Sequence[str]], *,
    right: Sequence[bool] | None = None, caption: str | None = None,
    styles: Sequence[str | None] = (), whole: Sequence[bool] = (), section: int | None = None,
):  # fmt: skip
    """Every terminal table: a rich Table in the ladder table's box style, the first column left
    and the rest right-aligned unless `right` says otherwise; styles colour rows (one per row);
    a column marked `whole` never folds (ids: the other columns give way); a line is drawn above
    row `section`."""
    from rich import box
    from rich.table import Table

    table = Table(
        title=title, caption=caption, box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True
    )
    right = [i > 0 for i in range(len(header))] if right is None else right
    for i, h in enumerate(header):
        # fold, never crop: a compact table is narrow enough not to fold at 100 columns, and
        # on a narrower terminal (or --wide) a folded number is still the number
        table.add_column(h, justify="right" if right[i] else "left", overflow="fold",
                         no_wrap=i < len(whole) and whole[i])  # fmt: skip
    for k, cells in enumerate(rows):
        if k == section:
            table.add_section()
        table.add_row(*cells, style=styles[k] if k < len(styles) else None)
    return table


def terminal_table(
    title: str | None, columns: Sequence[Column], rows: Iterable[Any], row_style=None,
    caption=None, styles: Sequence[str | None] = (), section: int | None = None,
):  # fmt: skip
    """A rich Table of rows, one cell per column; row_style(row) (or styles, one per row) may
    colour a row; a line is drawn above row `section`."""
    rows = list(rows)
    return rich_table(
        title, [c.header for c in columns], ([c.cell(r) for c in columns] for r in rows),
        right=[c.right for c in columns], caption=caption, whole=[c.whole for c in columns],
        styles=[row_style(r) for r in rows] if row_style else styles, section=section,
    )  # fmt: skip


def with_legend(table, lines: Iterable[str]):
    """The table with its legend lines under it (dim), as one renderable."""
    from rich.console import Group
    from rich.text import Text

    return Group(table, *(Text(line, style="dim") for line in lines))
