"""Seed 001's host study as tables (rich, and Markdown for host.md): the seed's table
regenerated, where the time goes, the stream sweep, the adversarial input.

The table's rows are result records (harness.report.study_records.host_record: the end-to-end
timings in `extra`), or the study's own rows as harness.studies.host.table_rows makes them."""

from __future__ import annotations

import math
from collections.abc import Iterable

from rich.table import Table

from harness.core import catalogue
from harness.report.documents import Document
from harness.report.markdown import rich_as_markdown
from harness.report.records import ResultRecord
from harness.report.study_records import host_record

_SHORT = {
    "cuda/001-v0-gmem-interleaved": "V0",
    "cuda/001-v1-gmem-sequential": "V1",
    "cuda/001-v2-pinned": "V2",
    "cuda/001-v3-streams": "V3",
    "cuda/001-v4-smem": "V4",
    "triton/001-pageable": "T-pageable",
    "triton/001-pinned": "T-pinned",
    "triton/001-streams": "T-streams",
    "torch.sum pageable": "torch pageable",
    "torch.sum pinned": "torch pinned",
}


def short(vid: str) -> str:
    return _SHORT.get(vid, vid)


def _cell(r: ResultRecord | None, key: str, fmt: str) -> str:
    if r is None:
        return "-"
    if not r.ok:
        return r.status.upper()
    v = r.extra.get(key)
    return "-" if v is None else format(v, fmt)


def seed_tables(
    rows: Iterable[ResultRecord | dict], device_name: str | None, dtype: str
) -> list[Table]:
    records = [r if isinstance(r, ResultRecord) else host_record(r, dtype) for r in rows]
    cols = list(dict.fromkeys(r.variant for r in records))
    sizes = sorted({r.n for r in records})
    at = {(r.n, r.variant): r for r in records}
    legend = ", ".join(
        f"{short(c)} = {c}" + (f" ({catalogue.BY_ID[c].staging})" if c in catalogue.BY_ID else "")
        for c in cols
    )
    out = []
    for key, fmt, title in (
        ("e2e_ms", ".3f", "end-to-end time, ms (host memory -> scalar on the host; median)"),
        ("gbps", ".2f", "GB/s of host data reduced (n x element size / end-to-end time)"),
    ):
        t = Table(title=f"seed 001, {device_name}, {dtype}: {title}", caption=legend)
        t.add_column("log2 n", justify="right")
        for c in cols:
            t.add_column(short(c), justify="right")
        for n in sizes:
            t.add_row(f"{math.log2(n):g}", *(_cell(at.get((n, c)), key, fmt) for c in cols))
        out.append(t)
    t = Table(
        title=f"where the time goes ({dtype}): H2D copy ms + kernels ms (H2D share of end to end)",
        caption="CUDA events on the stream; the pipeline overlaps copies and kernels by design: "
        "its device total only",
    )
    t.add_column("log2 n", justify="right")
    for c in cols:
        t.add_column(short(c), justify="right")
    for n in sizes:
        cells = []
        for c in cols:
            r = at.get((n, c))
            x = r.extra if r is not None else {}
            if r is None or not r.ok:
                cells.append("-")
            elif x.get("h2d_ms") is None:
                cells.append(f"dev {x['device_ms']:.3f}")
            else:
                cells.append(
                    f"{x['h2d_ms']:.3f} + {x['kernels_ms']:.3f} ({100 * x['h2d_share']:.0f}%)"
                )
        t.add_row(f"{math.log2(n):g}", *cells)
    out.append(t)
    return out


def sweep_table(entry: dict) -> Table:
    n = entry["n"]
    cfgs = entry["configs"]
    streams = sorted({c["streams"] for c in cfgs})
    chunks = sorted({c["chunk"] for c in cfgs})
    at = {(c["chunk"], c["streams"]): c for c in cfgs}
    b = entry["h2d_alone"]
    t = Table(
        title=f"V3 pipeline, n = 2^{math.log2(n):g}: end-to-end ms (GB/s) by chunk x streams",
        caption=f"copy-engine bound: pinned H2D alone {b['pinned_ms']:.3f} ms = "
        f"{b['pinned_gbps']:.1f} GB/s; kernels alone {entry['kernels_alone_ms']:.3f} ms; "
        f"V2 one copy {entry['v2_one_copy']['e2e_ms']:.3f} ms",
    )
    t.add_column("chunk (elements)", justify="right")
    for k in streams:
        t.add_column(f"{k} stream" + ("s" if k > 1 else ""), justify="right")
    for ch in chunks:
        cells = []
        for k in streams:
            c = at.get((ch, k))
            if c is None:
                cells.append("-")
            else:
                flag = "" if c["ok"] else " WRONG"
                cells.append(f"{c['e2e_ms']:.3f} ({c['gbps']:.1f}){flag}")
        t.add_row(
            f"{ch:,} x{at[(ch, streams[0])]['chunks'] if (ch, streams[0]) in at else ''}", *cells
        )
    return t


def adversarial_table(adv: dict) -> Table:
    t = Table(
        title=f"adversarial input, n = {adv['n']:,}: {adv['input']}",
        caption=f"exact sum {adv['exact']}; a naive float32 running sum gives "
        f"{adv['naive_float32_running_sum']:.0f} (error {adv['naive_abs_err']:.0f}); "
        f"x.cuda().sum() error {adv['torch_sum_abs_err']:g}",
    )
    for h in ("variant", "|error|", "bound gamma_L*sum|x|", "within"):
        t.add_column(h, justify="right")
    for r in adv["rows"]:
        t.add_row(
            short(r["variant"]),
            f"{r['abs_err']:g}",
            f"{r['bound']:.4g}",
            "yes" if r["ok"] else "NO",
        )
    return t


def markdown(host: Document) -> str:
    """The whole host study (`reduce-ladder host --json`, loaded by harness.report.documents)
    as one Markdown document."""
    if host.kind != "host":
        raise ValueError(f"not a host-study document (schema {host.schema!r})")
    doc = host.raw
    dev = doc.get("device", {})
    name = dev.get("name")
    opts = doc.get("options", {})
    parts = [
        f"# Seed 001, host-driven reduction from host memory, on {name}\n",
        f"Run {doc.get('created', '')}; torch {dev.get('torch')}, triton {dev.get('triton')}, "
        f"cupy {dev.get('cupy')}.\n",
    ]
    method = doc.get("method") or {}
    if isinstance(method, dict):
        parts.append("\n".join(f"- {k}: {v}" for k, v in method.items()) + "\n")
    if host.records:
        for t in seed_tables(host.records, name, opts.get("dtype", "float32")):
            parts.append(rich_as_markdown(t))
    if doc.get("adversarial"):
        parts.append(rich_as_markdown(adversarial_table(doc["adversarial"])))
    for entry in (doc.get("sweep") or {}).get("sizes", []):
        parts.append(rich_as_markdown(sweep_table(entry)))
        parts.append(f"Finding: {entry['finding']}\n")
    return "\n".join(parts)
