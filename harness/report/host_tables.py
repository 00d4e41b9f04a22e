"""Seed 001's study as tables (rich): the seed's table regenerated, the split, the sweep."""

from __future__ import annotations

import math

from rich.table import Table

from harness.core import catalogue

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


def _columns(rows: list[dict]) -> list[str]:
    return list(dict.fromkeys(r["variant"] for r in rows))


def _cell(r: dict | None, key: str, fmt: str) -> str:
    if r is None:
        return "-"
    if r.get("status") != "ok":
        return r.get("status", "?").upper()
    v = r.get(key)
    return "-" if v is None else format(v, fmt)


def seed_tables(rows: list[dict], device_name: str | None, dtype: str) -> list[Table]:
    cols = _columns(rows)
    sizes = sorted({r["n"] for r in rows})
    at = {(r["n"], r["variant"]): r for r in rows}
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
            if r is None or r.get("status") != "ok":
                cells.append("-")
            elif r.get("h2d_ms") is None:
                cells.append(f"dev {r['device_ms']:.3f}")
            else:
                cells.append(
                    f"{r['h2d_ms']:.3f} + {r['kernels_ms']:.3f} ({100 * r['h2d_share']:.0f}%)"
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


HOST_SCHEMA = "reduce-ladder/host/1"


def _markdown(table: Table) -> str:
    """A rich Table as a GitHub Markdown table (title above, caption below)."""
    heads = [str(c.header) for c in table.columns]
    cols = [[str(cell) for cell in c.cells] for c in table.columns]
    lines = []
    if table.title:
        lines += [f"**{table.title}**", ""]
    lines += ["| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
    lines += ["| " + " | ".join(row) + " |" for row in zip(*cols, strict=True)]
    if table.caption:
        lines += ["", str(table.caption)]
    return "\n".join(lines) + "\n"


def markdown(doc: dict) -> str:
    """The whole host study (`reduce-ladder host --json`) as one Markdown document."""
    if doc.get("schema") != HOST_SCHEMA:
        raise ValueError(f"not a host-study document (schema {doc.get('schema')!r})")
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
    if doc.get("table"):
        for t in seed_tables(doc["table"], name, opts.get("dtype", "float32")):
            parts.append(_markdown(t))
    if doc.get("adversarial"):
        parts.append(_markdown(adversarial_table(doc["adversarial"])))
    for entry in (doc.get("sweep") or {}).get("sizes", []):
        parts.append(_markdown(sweep_table(entry)))
        parts.append(f"Finding: {entry['finding']}\n")
    return "\n".join(parts)
