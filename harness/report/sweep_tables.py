"""report.md's tables across sizes: one field of every variant at every n (GB/s, % copy), the
small sizes' graph / call times, and every measurement of a dtype with its ratios."""

from __future__ import annotations

from harness.core.sizes import size_label
from harness.report.documents import Document
from harness.report.ladder_table import check_text, variant_order
from harness.report.markdown import markdown_table, num, us
from harness.report.ratios import peer_ratios, records_at
from harness.report.records import ResultRecord


def _dtype_records(run: Document, dtype: str) -> list[ResultRecord]:
    return [r for r in run.records if r.dtype == dtype]


def _ratios(run: Document, dtype: str):
    """(record -> its PeerRatios), the peers looked up once per size."""
    by_n = {n: records_at(run.records, dtype, n) for n in run.sizes(dtype)}
    return lambda r: peer_ratios(r, by_n[r.n])


def sweep_table(run: Document, dtype: str, field: str) -> str:
    """Variants x sizes, one field: "gbps" (effective GB/s) or "pct_copy" (% of the copy's)."""
    sizes = run.sizes(dtype)
    rows = _dtype_records(run, dtype)
    by = {(r.variant, r.n): r for r in rows}
    ratios = _ratios(run, dtype)

    def value(r: ResultRecord) -> float | None:
        return r.gbps_total if field == "gbps" else ratios(r).pct_copy

    body = []
    for vid in variant_order(rows):
        cells = [vid]
        for n in sizes:
            r = by.get((vid, n))
            cells.append("-" if r is None else (num(value(r), ".0f") if r.ok else "✗"))
        body.append(cells)
    return markdown_table(["variant", *[size_label(n) for n in sizes]], body)


def small_sizes_section(run: Document, dtype: str, sizes: list[int]) -> list[str]:
    """Device time per call from CUDA-graph replay beside one synchronized call's wall time."""
    rows = [r for r in _dtype_records(run, dtype) if r.n in sizes]
    by = {(r.variant, r.n): r for r in rows}
    body = []
    for vid in variant_order(rows):
        cells = [vid]
        for n in sizes:
            r = by.get((vid, n))
            cells.append("-" if r is None else f"{us(_med(r.graph))} / {us(_med(r.call))}")
        body.append(cells)
    return [
        f"### Small sizes: launch overhead ({dtype})",
        "",
        "Device time per call from CUDA-graph replay (what the kernels cost) beside the host wall "
        "time of one synchronized Python call (what a caller pays):",
        "",
        markdown_table(["variant", *[f"{size_label(n)} graph / call µs" for n in sizes]], body),
    ]


def _med(t) -> float | None:
    return t.median_ms if t else None


ALL_HEADER = (
    "variant",
    "n",
    "status",
    "device µs",
    "graph µs",
    "call µs",
    "GB/s",
    "% copy",
    "× CUB",
    "× torch.sum",
)


def all_measurements_table(run: Document, dtype: str) -> str:
    rows = _dtype_records(run, dtype)
    order = {v: i for i, v in enumerate(variant_order(rows))}
    rows.sort(key=lambda r: (order[r.variant], r.n))
    ratios = _ratios(run, dtype)
    body = []
    for r in rows:
        q = ratios(r)
        body.append(
            [
                r.variant,
                size_label(r.n),
                check_text(r),
                us(r.ms),
                us(_med(r.graph)),
                us(_med(r.call)),
                num(r.gbps_total, ".1f"),
                num(q.pct_copy, ".1f"),
                num(q.x_cub, ".2f"),
                num(q.x_torch, ".2f"),
            ]
        )
    return markdown_table(ALL_HEADER, body)
