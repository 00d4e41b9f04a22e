"""Runs compared: per variant at one (dtype, n), the time in the first run (A) over the time in
each other run (B, C, ...): above 1 the other run is faster. As Markdown (report.md) and as a rich
table (the terminal); compare.png is drawn by harness.report.plots from the same rows."""

from __future__ import annotations

from dataclasses import dataclass

from harness.core.sizes import size_label
from harness.report.documents import Document
from harness.report.ladder_table import variant_order
from harness.report.markdown import markdown_table, num, us
from harness.report.ratios import records_at

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


@dataclass(frozen=True)
class CompareRow:
    variant: str
    ms: tuple[float | None, ...]  # per run, A first
    ratios: tuple[float | None, ...]  # t(A) / t(other run), one per run after A


def run_letter(k: int) -> str:
    return LETTERS[k]


def compare_rows(runs: list[Document], dtype: str, n: int) -> list[CompareRow]:
    """Variants that passed in A and in at least one other run at (dtype, n), in ladder order."""
    ats = [records_at(r.records, dtype, n) for r in runs]
    every = [rec for at in ats for rec in at.values()]
    out = []
    for vid in variant_order(every):
        ms = tuple(at[vid].ms if vid in at and at[vid].ok and at[vid].ms else None for at in ats)
        ratios = tuple(ms[0] / m if ms[0] and m else None for m in ms[1:])
        if any(x is not None for x in ratios):
            out.append(CompareRow(vid, ms, ratios))
    return out


def common_sizes(runs: list[Document], preferred: dict[str, int]) -> dict[str, int]:
    """dtype -> the n to compare at: the first run's reference n, where every run has it."""
    out = {}
    for d in runs[0].dtypes():
        n = preferred.get(d)
        if n is not None and all(n in r.sizes(d) for r in runs[1:]):
            out[d] = n
    return out


def _tables(runs: list[Document], sizes: dict[str, int]):
    """Per dtype: its n, the header and the cells of its table."""
    others = [run_letter(k) for k in range(1, len(runs))]
    header = ["variant", *[f"{run_letter(k)} µs" for k in range(len(runs))],
              *[f"A / {o}" for o in others]]  # fmt: skip
    for d, n in sizes.items():
        cells = [[r.variant, *map(us, r.ms), *[num(x, ".2f") for x in r.ratios]]
                 for r in compare_rows(runs, d, n)]  # fmt: skip
        yield d, n, header, cells


def runs_line(runs: list[Document]) -> str:
    return ", ".join(f"{run_letter(k)} = {r.label}" for k, r in enumerate(runs)) + "."


def markdown_section(runs: list[Document], sizes: dict[str, int]) -> list[str]:
    """report.md's comparison: one table per dtype at its n."""
    md = ["## Comparison", "", runs_line(runs), ""]
    if not sizes:
        return [*md, "The runs share no dtype and size; nothing to compare.", ""]
    others = " / ".join(run_letter(k) for k in range(1, len(runs)))
    for d, n, header, cells in _tables(runs, sizes):
        what = f"time in A / time in {others} (above 1: {others} faster)"
        md += [f"{d}, n = {size_label(n)}: {what}", "", markdown_table(header, cells)]
    return [*md, "![comparison](compare.png)", ""]


def rich_tables(runs: list[Document], sizes: dict[str, int]) -> list:
    """The same tables for the terminal, each titled with its dtype and n."""
    from rich.table import Table

    out = []
    for d, n, header, cells in _tables(runs, sizes):
        t = Table(
            title=f"{d}, n = {size_label(n)}: time in A / time in the other run (above 1: "
            "the other run is faster)",
            caption=runs_line(runs),
        )
        for i, h in enumerate(header):
            t.add_column(h, justify="left" if i == 0 else "right")
        for c in cells:
            t.add_row(*c)
        out.append(t)
    return out
