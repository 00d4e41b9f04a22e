"""report.md's tables: one run across sizes (variants x sizes of one field; every measurement of
a dtype with its ratios) and runs compared with the first (per variant at one (dtype, n), the
time in run A over the time in each other run B, C, ...: above 1 the other run is faster), as
Markdown and on the terminal; compare.png draws the same ratios against every n, per variant
family and dtype (the figure `reduce-ladder compare` draws, its axis capped as there: a ratio
beyond the cap is drawn at the edge and named). The runs compared are the devices of
harness.report.devices (lettered A, B, ...): one comparison, one figure."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from harness.core.sizes import size_label
from harness.report.devices import DeviceRow, DeviceRun, device_rows, ratio_table
from harness.report.documents import Document
from harness.report.ladder_table import (
    PeerRatios,
    check_text,
    peer_ratios,
    records_at,
    variant_order,
)
from harness.report.markdown import grid, markdown_table, num, rich_table, us
from harness.report.plots import plot_device_source
from harness.report.records import ResultRecord, median


def _ratios(run: Document, dtype: str) -> Callable[[ResultRecord], PeerRatios]:
    """(record -> its PeerRatios), the peers looked up once per size."""
    by_n = {n: records_at(run.records, dtype, n) for n in run.sizes(dtype)}
    return lambda r: peer_ratios(r, by_n[r.n])


def size_grid(
    run: Document, dtype: str, sizes: list[int], cell: Callable[[ResultRecord], str],
    head: Callable[[int], str] = size_label,
) -> str:  # fmt: skip
    """Markdown: variants down (ladder order), sizes across, cell(record) ("-": not measured)."""
    rows = [r for r in run.records if r.dtype == dtype and r.n in sizes]
    _, body = grid(rows, lambda r: r.variant, lambda r: r.n, cell, variant_order(rows), sizes)
    return markdown_table(["variant", *map(head, sizes)], body)


def sweep_table(run: Document, dtype: str, field: str) -> str:
    """Variants x sizes, one field: "gbps" (effective GB/s) or "pct_copy" (% of the copy's);
    ✗ a failed check."""
    ratios = _ratios(run, dtype)
    value = (lambda r: r.gbps_total) if field == "gbps" else (lambda r: ratios(r).pct_copy)
    return size_grid(run, dtype, run.sizes(dtype), lambda r: num(value(r), ".0f") if r.ok else "✗")


def small_sizes_section(run: Document, dtype: str, sizes: list[int]) -> list[str]:
    """Device time per call from CUDA-graph replay beside one synchronized call's wall time."""
    cell = lambda r: f"{us(median(r.graph))} / {us(median(r.call))}"  # noqa: E731
    head = lambda n: f"{size_label(n)} graph / call µs"  # noqa: E731
    return [
        f"### Small sizes: launch overhead ({dtype})",
        "",
        "Device time per call from CUDA-graph replay (what the kernels cost) beside the host wall "
        "time of one synchronized Python call (what a caller pays):",
        "",
        size_grid(run, dtype, sizes, cell, head),
    ]


ALL_HEADER = ("variant", "n", "status", "device µs", "graph µs", "call µs", "GB/s", "% copy",
              "× CUB", "× torch.sum")  # fmt: skip


def all_measurements_table(run: Document, dtype: str) -> str:
    rows = [r for r in run.records if r.dtype == dtype]
    order = {v: i for i, v in enumerate(variant_order(rows))}
    rows.sort(key=lambda r: (order[r.variant], r.n))
    ratios = _ratios(run, dtype)
    body = [
        [r.variant, size_label(r.n), check_text(r), *(us(median(t)) for t in (r.total, r.graph,
         r.call)), num(r.gbps_total, ".1f"), num(q.pct_copy, ".1f"), num(q.x_cub, ".2f"),
         num(q.x_torch, ".2f")]
        for r in rows
        for q in (ratios(r),)
    ]  # fmt: skip
    return markdown_table(ALL_HEADER, body)


# ---------------------------------------------------------------------------------------------
# runs compared with the first


def run_letter(k: int) -> str:
    return "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[k]


def run_points(runs: list[Document]) -> list[DeviceRun]:
    """The runs as the devices of a comparison (harness.report.devices), lettered A, B, ...: each
    passing timed record a point."""
    out = [DeviceRun(Path(r.path).parent, run_letter(k), r.device) for k, r in enumerate(runs)]
    for point, run in zip(out, runs, strict=True):
        point.points = {("ladder", r.variant, r.dtype, r.n): (r.family, r.ms)
                        for r in run.records if r.ok and r.ms}  # fmt: skip
        point.order = variant_order(run.records)
    return out


def compare_rows(runs: list[Document], dtype: str, n: int) -> list[DeviceRow]:
    """Variants that passed in A and in at least one other run at (dtype, n), in ladder order."""
    return [r for r in device_rows(run_points(runs)) if r.dtype == dtype and r.n == n]


def common_sizes(runs: list[Document], preferred: dict[str, int]) -> dict[str, int]:
    """dtype -> the n to compare at: the first run's reference n, where every run has it."""
    return {d: n for d in runs[0].dtypes() if (n := preferred.get(d)) is not None
            and all(n in r.sizes(d) for r in runs[1:])}  # fmt: skip


def _tables(runs: list[Document], sizes: dict[str, int]):
    """Per dtype: its n, the header and the cells of its table."""
    letters = [run_letter(k) for k in range(len(runs))]
    for d, n in sizes.items():
        yield d, n, *ratio_table(compare_rows(runs, d, n), letters)


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
    return [
        rich_table(f"{d}, n = {size_label(n)}: time in A / time in the other run (above 1: the "
                   "other run is faster)", header, cells, caption=runs_line(runs))
        for d, n, header, cells in _tables(runs, sizes)
    ]  # fmt: skip


def plot_compare(runs: list[Document], n_by_dtype: dict[str, int], path: str | Path) -> dict:
    """t(A) / t(each other run) against n, per variant family and dtype compared: the figure
    `reduce-ladder compare` draws per source (harness.report.plots.plot_device_source), titled
    with every run's device and date."""
    points = run_points(runs)
    rows = [r for r in device_rows(points) if r.dtype in n_by_dtype]
    title = "\n".join(f"{run_letter(k)}: {r.device}, {r.created or 'no date'} ({Path(r.path).name})"
                      for k, r in enumerate(runs))  # fmt: skip
    return plot_device_source(Path(path), title, rows, points)
