"""The tables of `reduce-ladder distributed`, every derived figure from the measured times
(docs/several-gpus.md): aggregate GB/s, weak / strong efficiency and speedup against the K = 1 run
of the same scaling, size, combine and variant, nccl-tests' algbw and busbw. Documents of several
steps render as one (merged_document)."""

from __future__ import annotations

from collections.abc import Callable
from operator import itemgetter
from pathlib import Path

from harness.core.sizes import size_label
from harness.report import documents
from harness.report.documents import ReportError, load_document
from harness.report.markdown import Column, column_table, num, numbers

TABLE_FILE = "distributed.md"
SUM_CHECKS = {  # a sum is exact when all four hold; a wrong one's verdict names those that failed
    "wrong sum": "exact",
    "ranks differ": "ranks_agree",
    "partial wrong": "partials_exact",
    "shard changed": "shards_unchanged",
}


def merged_document(docs: list[dict]) -> dict:
    """One document with every run (the first document's device and settings)."""
    merged = documents.merge_documents(docs)
    merged["gpus"] = sorted({r["gpus"] for r in merged["runs"]})
    merged["scaling"] = sorted({r["scaling"] for r in merged["runs"] if r["kind"] == "sum"})
    return merged


def sum_rows(runs: list[dict]) -> list[dict]:
    """The sum runs in table order, each with its derived figures: speedup and efficiency against
    the K = 1 run of the same scaling, variant, combine and size (None without one), aggregate
    and per-GPU local bandwidth (GB/s)."""
    # the size a scaling holds fixed: n per GPU (weak), n in total (strong)
    fixed = lambda r: r["n_per_rank"] if r["scaling"] == "weak" else r["n_total"]  # noqa: E731
    key = lambda r: (r["scaling"], r["variant"], r["combine"], fixed(r))  # noqa: E731
    sums = sorted((r for r in runs if r["kind"] == "sum"), key=lambda r: (*key(r), r["gpus"]))
    base = {key(r): r["total_ms"] for r in sums if r["gpus"] == 1}
    rows = []
    for r in sums:
        t1 = base.get(key(r))
        speedup = t1 / r["total_ms"] if t1 else None
        efficiency = speedup if r["scaling"] == "weak" or not speedup else speedup / r["gpus"]
        rows.append(r | dict(speedup=speedup, efficiency=efficiency,
                             agg_gbps=4 * r["n_total"] / (r["total_ms"] * 1e6),
                             local_gbps=4 * r["n_per_rank"] / (r["local_ms"] * 1e6)))  # fmt: skip
    return rows


def sweep_rows(runs: list[dict]) -> list[dict]:
    """The sweep points by K then n, each with nccl-tests' algbw and busbw (GB/s)."""
    points = sorted(
        (r for r in runs if r["kind"] == "allreduce"), key=lambda r: (r["gpus"], r["n"])
    )
    rows = [r | {"algbw": r["bytes"] / (r["us_mean"] * 1e3)} for r in points]  # bytes/ns = GB/s
    return [r | {"busbw": r["algbw"] * 2 * (r["gpus"] - 1) / r["gpus"]} for r in rows]


def _n(header: str, key: str, fmt: str | Callable = "d", scale: float = 1) -> Column:
    """A right-aligned column of row[key] (times scale): a format spec ("-" for None) or a
    function of the value."""
    if callable(fmt):
        return numbers(header, lambda r: fmt(r[key]))
    return numbers(header, lambda r: num(None if r[key] is None else r[key] * scale, fmt))


def wrong(r: dict) -> list[str]:
    """The names of a sum's failed checks (SUM_CHECKS)."""
    return [w for w, k in SUM_CHECKS.items() if not r[k]]


CHECK = Column("check", lambda r: "ok" if r["ok"] else "WRONG")
SUM_COLUMNS = (
    Column("scaling", itemgetter("scaling")),
    _n("K", "gpus"),
    _n("n per GPU", "n_per_rank", size_label),
    _n("n total", "n_total", size_label),
    Column("combine", itemgetter("combine")),
    _n("local ms", "local_ms", ".3f"),
    _n("combine us", "combine_ms", ".1f", 1e3),
    _n("total ms", "total_ms", ".3f"),
    _n("agg GB/s", "agg_gbps", ".1f"),
    _n("local GB/s per GPU", "local_gbps", ".1f"),
    _n("speedup", "speedup", ".2f"),
    _n("efficiency", "efficiency", ".1%"),
    Column("check", lambda r: "exact" if r["ok"] else "WRONG: " + ", ".join(wrong(r))),
)
COMBINE_COLUMNS = (
    _n("K", "gpus"),
    Column("combine", itemgetter("combine")),
    _n("calls", "calls"),
    _n("us per call (slowest rank)", "us_per_call", ".1f"),
    Column("per rank", lambda r: ", ".join(f"{u:.1f}" for u in r["us_per_call_by_rank"])),
    CHECK,
)
SWEEP_COLUMNS = (
    _n("K", "gpus"),
    _n("n (float32)", "n", size_label),
    _n("bytes", "bytes", ","),
    _n("time us (mean)", "us_mean", ".1f"),
    _n("time us (max)", "us_max", ".1f"),
    _n("algbw GB/s", "algbw", ".2f"),
    _n("busbw GB/s", "busbw", ".2f"),
    CHECK,
)


def markdown(doc: dict) -> str:
    """The whole Markdown page of one (merged) document."""
    runs, dev = doc["runs"], doc.get("device", {})
    names = dev.get("gpu_names") or ["CPU"]
    seen = ", ".join(f"{k}={v}" for k, v in doc["child_env"].items())
    parts = [
        "# One sum across several GPUs\n",
        f"Device: {len(names)} x {names[0]}; backend {doc['backend']}; variant {doc['variant']}; "
        f"NCCL {dev.get('nccl', '-')}; torch {dev.get('torch', '-')}. What rank 0 saw: {seen}.\n",
        f"Method: {doc['method']}\n",
    ]
    loops = [r for r in runs if r["kind"] == "combine_loop"]
    loops.sort(key=lambda r: (r["gpus"], r["combine"]))
    sections = (
        ("## Sums: time split and scaling\n", SUM_COLUMNS, sum_rows(runs)),
        ("\n## One scalar combine per call\n", COMBINE_COLUMNS, loops),
        ("\n## all_reduce sweep (nccl-tests definitions)\n", SWEEP_COLUMNS, sweep_rows(runs)),
    )
    parts += [
        p for title, cols, rows in sections if rows for p in (title, column_table(cols, rows))
    ]
    return "\n".join(parts)


def render(paths: list[str], out_dir: str) -> tuple[dict, list[Path]]:
    """Load, merge, write DIR/distributed.md; (merged doc, files)."""
    documents.check_output(out_dir, folder=True, option="--out")
    doc = merged_document([load_document(p, "distributed").raw for p in paths])
    if not doc["runs"]:
        raise ReportError("no runs in the documents: nothing to tabulate")
    out = documents.output_path(out_dir, folder=True)
    (out / TABLE_FILE).write_text(markdown(doc))
    return doc, [out / TABLE_FILE]
