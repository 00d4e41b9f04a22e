"""The tables `reduce-ladder run` and `check` print beside the ladder (which is
harness.report.ladder_table.ladder_console_table): the fastest-per-backend line, the correctness
table, a seed's own table (seed 004's effective bandwidth, `--seed 004`), and any suite's rows
(suite_table: `reduce-ladder bench`, `fastest-bench`).

The ladder, best-line, check and seed-row builders take result records or their JSON form (the
session's rows); the seed table's renderers take seed_rows' rows."""

from __future__ import annotations

from collections.abc import Iterable

from harness.core import catalogue
from harness.core.passes import one_pass
from harness.core.sizes import size_label
from harness.report.ladder_table import COPY_ID, check_text, peer_ratios, records_at
from harness.report.markdown import RIGHT, grid, markdown_table, num, us
from harness.report.records import ResultRecord, Row
from harness.report.terminal import rich_table


def as_records(rows: Iterable[ResultRecord | dict]) -> list[ResultRecord]:
    """Records from records or their JSON form."""
    return [r if isinstance(r, ResultRecord) else ResultRecord.from_json(r) for r in rows]


def best_line(rows: Iterable[ResultRecord | dict], n: int, dtype: str = "float32") -> str | None:
    """'fastest cuda: ... / fastest triton: ...' with their ratios to the peers."""
    at = records_at(as_records(rows), dtype, n)
    parts = []
    for backend in ("cuda", "triton"):
        ok = [r for r in at.values() if r.backend == backend and r.ok and r.ms is not None]
        if ok:
            b = min(ok, key=lambda r: r.ms)
            parts.append(
                f"fastest {backend}: {b.variant} {b.gbps_total or 0:.0f} GB/s "
                f"({peer_ratios(b, at).text()})"
            )
    return "; ".join(parts) or None


CHECK_COLUMNS = ("variant", "dtype", "n", "check", "|err|", "tolerance")  # fits 100 columns
CHECK_WIDE_COLUMNS = ("variant", "dtype", "n", "check", "result", "golden", "|err|", "tolerance")


def check_cells(r: ResultRecord, *, wide: bool = False) -> list[str]:
    c = r.check
    values = [str(c.value), str(c.golden)] if c else ["-", "-"]
    return [
        r.variant,
        r.dtype,
        f"{r.n:,}",
        check_text(r),
        *(values if wide else []),
        num(c.abs_err if c else None, ".3g"),
        num(c.tolerance if c else None, ".3g"),
    ]


def rich_checks(rows: Iterable[ResultRecord | dict], title: str, *, wide: bool = False):
    """Each sum against its golden: compact (the error and its bound), or wide (the values)."""
    records = as_records(rows)
    bad = ["red" if not r.ok and not r.wrong_demo else None for r in records]
    header = CHECK_WIDE_COLUMNS if wide else CHECK_COLUMNS
    cells = (check_cells(r, wide=wide) for r in records)
    return rich_table(title, header, cells, right=[False] * len(header), styles=bad)


# ---------------------------------------------------------------------------------------------
# A seed's own table: seed 004's effective-bandwidth table, regenerated (`--seed 004`).

# Seed 004's own nsys times (ms) for 16M ints, 256 threads, on its (unnamed) GPU: printed beside
# ours for reference only. The seed gives no figure for its Dyn kernels ("no difference seen").
SEED_FIGURES_MS: dict[str, float] = {
    "004:reduceGmem": 0.248,
    "004:reduceSmem": 0.201,
    "004:reduceGmemUnroll": 0.120,
    "004:reduceSmemUnroll": 0.097,
}

ITEMSIZE = {"float32": 4, "int32": 4}


def _first_pass_ms(r: ResultRecord | None) -> float | None:
    """The first kernel alone (an in-place variant's scratch refill is untimed setup)."""
    return r.first_pass.median_ms if r and r.first_pass else None


def seed_rows(
    rows: Iterable[ResultRecord | dict], n: int, dtype: str, seed: str = "004"
) -> list[dict]:
    """The seed's table: one row per CUDA kernel of the seed (stage order) with its Triton twin,
    then the peers. Like the seed it times one kernel (the first pass, n elements in, one partial
    per block out); effective bandwidth = (bytes read + bytes written) / time. Peers are one
    library call (n in, 1 out)."""
    at = records_at(as_records(rows), dtype, n)
    prefix = f"{seed}:"
    size = ITEMSIZE[dtype]
    cuda = [
        catalogue.BY_ID[i]
        for i, r in at.items()
        if i in catalogue.BY_ID
        and r.backend == "cuda"
        and any(s.startswith(prefix) for s in catalogue.BY_ID[i].seeds)
    ]

    def row(kernel, vid, r, ms, written, twin=None, t=None, tms=None, **more) -> dict:
        nbytes = (n + written) * size
        return {"kernel": kernel, "variant": vid, "status": r.status, "cuda_ms": ms,
                "twin": twin, "twin_status": t.status if t else None, "twin_ms": tms,
                "read": n, "written": written, "bytes": nbytes,
                "cuda_gbps": nbytes / ms / 1e6 if ms else None,
                "twin_gbps": nbytes / tms / 1e6 if tms else None,
                "seed_ms": None, "in_place": False, **more}  # fmt: skip

    out: list[dict] = []
    for v in catalogue.ladder_order(cuda):
        r, t = at[v.id], at.get(v.twin or "")
        label = next(s for s in v.seeds if s.startswith(prefix))
        written = r.blocks_first_pass or one_pass(v.launch, n).blocks
        out.append(row(label.removeprefix(prefix), v.id, r, _first_pass_ms(r), written, v.twin, t,
                       _first_pass_ms(t), seed_ms=SEED_FIGURES_MS.get(label),
                       in_place=bool(v.launch and v.launch.in_place)))  # fmt: skip
    for i, r in at.items():
        if r.backend == "peer":  # the copy writes all n; a sum writes one value
            written = n if i == COPY_ID else 1
            out.append(row(i.removeprefix("peer/"), i, r, r.ms or _first_pass_ms(r), written))
    return out


SEED_HEADER = (
    "kernel",
    "CUDA µs",
    "Triton twin",
    "twin µs",
    "elements read",
    "elements written",
    "total bytes",
    "CUDA GB/s",
    "twin GB/s",
    "seed's ms (its GPU)",
    "check",
)


def _status(s: str | None) -> str:
    return "-" if s is None else {"ok": "ok", "wrong": "WRONG", "error": "ERROR"}.get(s, s)


def _seed_cells(r: dict) -> list[str]:
    check = _status(r["status"])
    if r["twin_status"] not in (None, "ok"):
        check += f" / twin {_status(r['twin_status'])}"
    return [
        r["kernel"] + (" (in place)" if r["in_place"] else ""),
        us(r["cuda_ms"]),
        (r["twin"] or "-").removeprefix("triton/"),
        us(r["twin_ms"]),
        str(r["read"]),
        str(r["written"]),
        str(r["bytes"]),
        num(r["cuda_gbps"], ".1f"),
        num(r["twin_gbps"], ".1f"),
        num(r["seed_ms"], ".3f"),
        check,
    ]


SEED_NOTE = (
    "One kernel (the first pass) as the seed times it: n elements read, one partial per block "
    "written; effective bandwidth = (bytes read + bytes written) / time. In-place kernels are "
    "timed without the harness's refresh of their scratch copy. Peers: one library call, n read, "
    "1 written (the copy: n written). The seed's column is its own GPU's nsys time, for "
    "reference only."
)


def markdown_seed(rows: Iterable[dict]) -> str:
    return markdown_table(SEED_HEADER, (_seed_cells(r) for r in rows)) + "\n" + SEED_NOTE + "\n"


def rich_seed(rows: Iterable[dict], title: str):
    rows = list(rows)
    right = [h not in ("kernel", "Triton twin", "check") for h in SEED_HEADER]
    bad = ["red" if r["status"] not in ("ok", "skipped") else None for r in rows]
    return rich_table(title, SEED_HEADER, map(_seed_cells, rows), right=right, caption=SEED_NOTE,
                      styles=bad)  # fmt: skip


# ---------------------------------------------------------------------------------------------
# Any suite's rows (harness.studies.suites) as one table per dtype: n down, variants across.

# The metric a suite's table shows: device time where the suite measured it, else per call.
TABLE_METRICS = ("total", "call")
BASELINES = ("peer/torch.sum", "torch.sum")


def suite_table(rows: Iterable[Row], dtype: str) -> str:
    """Markdown: per n, each variant's microseconds (device time, or per call for the per-call
    suite) and its ratio to torch.sum (t(torch.sum) / t: >= 1.00x at least as fast); a failed
    check shows its status instead."""
    mine = [r for r in rows if r.dtype == dtype]
    metric = next((m for m in TABLE_METRICS if any(r.metric == m for r in mine)), "check")
    shown = [r for r in mine if r.metric in (metric, "check")]
    base = {r.n: r.median_ms for b in BASELINES[::-1] for r in shown  # the first one wins
            if r.variant == b and r.median_ms}  # fmt: skip

    def cell(r: Row) -> str:
        if r.check in ("wrong", "error") or r.median_ms is None:
            return r.check or "-"
        ratio = f" ({base[r.n] / r.median_ms:.2f}x)" if r.n in base else ""
        return f"{r.median_ms * 1e3:.2f}{ratio}"

    ns = sorted({r.n for r in shown})
    variants, body = grid(shown, lambda r: r.n, lambda r: r.variant, cell, ns,
                          [r.variant for r in mine], label=size_label)  # fmt: skip
    return markdown_table(["n", *variants], body, RIGHT * (len(variants) + 1))
