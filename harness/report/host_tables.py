"""Seed 001's host study as one Markdown page (host.md beside report.md, and what `reduce-ladder
host` prints); its table's rows are result records (records.host_record)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from operator import itemgetter
from pathlib import Path

from harness.core import catalogue
from harness.report.documents import Document, ReportError, load_document
from harness.report.markdown import markdown_table, num, pivot
from harness.report.records import ResultRecord

MARKDOWN_NAME = "host.md"  # beside report.md (`reduce-ladder report ... --host HOST.json`)


def short(vid: str) -> str:
    """V0..V4 for the seed's versions, T-<staging> for their Triton twins, "torch pageable" and
    "torch pinned" for the peers."""
    v = catalogue.BY_ID.get(vid)
    if v is not None and v.family == "001":
        return v.seeds[0].split(":")[1] if v.seeds else f"T-{v.staging}"
    return vid.replace("torch.sum ", "torch ")


def _table(title: str, caption: str, table: str) -> str:
    """A Markdown table, its title in bold above and its caption below."""
    return f"**{title}**\n\n{table}\n{caption}\n"


def _split(x: dict) -> str:
    """H2D ms + kernels ms (H2D share); the pipeline's device total where it has no split."""
    if x.get("h2d_ms") is None:
        return f"dev {x['device_ms']:.3f}"
    return f"{x['h2d_ms']:.3f} + {x['kernels_ms']:.3f} ({100 * x['h2d_share']:.0f}%)"


def seed_tables(records: Sequence[ResultRecord], device_name: str | None, dtype: str) -> list[str]:
    """The seed's table (end-to-end ms, GB/s) and where the time goes: sizes down, variants
    across."""
    cols = list(dict.fromkeys(r.variant for r in records))
    legend = ", ".join(
        f"{short(c)} = {c}" + (f" ({catalogue.BY_ID[c].staging})" if c in catalogue.BY_ID else "")
        for c in cols
    )

    def timed(key: str, fmt: str) -> Callable[[ResultRecord], str]:
        return lambda r: num(r.extra.get(key), fmt) if r.ok else r.status.upper()

    seed = f"seed 001, {device_name}, {dtype}: "
    specs = (
        (seed + "end-to-end time, ms (host memory -> scalar on the host; median)", legend,
         timed("e2e_ms", ".3f")),
        (seed + "GB/s of host data reduced (n x element size / end-to-end time)", legend,
         timed("gbps", ".2f")),
        (f"where the time goes ({dtype}): H2D copy ms + kernels ms (H2D share of end to end)",
         "CUDA events on the stream; the pipeline overlaps copies and kernels by design: its "
         "device total only", lambda r: "-" if not r.ok else _split(r.extra)),
    )  # fmt: skip
    sizes = sorted({r.n for r in records})
    return [
        _table(title, caption, pivot("log2 n", records, lambda r: r.n, lambda r: r.variant, cell,
                                     sizes, cols, head=short, label=lambda n: f"{math.log2(n):g}"))
        for title, caption, cell in specs
    ]  # fmt: skip


def sweep_table(entry: dict) -> str:
    """A pivot of the configurations: chunk down, streams across."""
    cfgs, b = entry["configs"], entry["h2d_alone"]
    streams = sorted({c["streams"] for c in cfgs})
    chunks = {c["chunk"]: c["chunks"] for c in cfgs if c["streams"] == streams[0]}

    def cell(c: dict) -> str:
        return f"{c['e2e_ms']:.3f} ({c['gbps']:.1f})" + ("" if c["ok"] else " WRONG")

    return _table(
        f"V3 pipeline, n = 2^{math.log2(entry['n']):g}: end-to-end ms (GB/s) by chunk x streams",
        f"copy-engine bound: pinned H2D alone {b['pinned_ms']:.3f} ms = {b['pinned_gbps']:.1f} "
        f"GB/s; kernels alone {entry['kernels_alone_ms']:.3f} ms; V2 one copy "
        f"{entry['v2_one_copy']['e2e_ms']:.3f} ms",
        pivot("chunk (elements)", cfgs, itemgetter("chunk"), itemgetter("streams"), cell,
              sorted({c["chunk"] for c in cfgs}), streams,
              head=lambda k: f"{k} stream" + "s" * (k > 1),
              label=lambda ch: f"{ch:,} x{chunks.get(ch, '')}"),
    )  # fmt: skip


def adversarial_table(adv: dict) -> str:
    return _table(
        f"adversarial input, n = {adv['n']:,}: {adv['input']}",
        f"exact sum {adv['exact']}; a naive float32 running sum gives "
        f"{adv['naive_float32_running_sum']:.0f} (error {adv['naive_abs_err']:.0f}); "
        f"x.cuda().sum() error {adv['torch_sum_abs_err']:g}",
        markdown_table(("variant", "|error|", "bound gamma_L*sum|x|", "within"), (
            [short(r["variant"]), f"{r['abs_err']:g}", f"{r['bound']:.4g}",
             "yes" if r["ok"] else "NO"] for r in adv["rows"]
        )),
    )  # fmt: skip


def markdown(host: Document) -> str:
    """The whole host study (`reduce-ladder host --json`, loaded by harness.report.documents)
    as one Markdown document."""
    doc = host.raw
    dev = doc.get("device", {})
    name = dev.get("name")
    parts = [
        f"# Seed 001, host-driven reduction from host memory, on {name}\n",
        f"Run {doc.get('created', '')}; torch {dev.get('torch')}, triton {dev.get('triton')}, "
        f"cupy {dev.get('cupy')}.\n",
    ]
    method = doc.get("method") or {}
    if isinstance(method, dict):
        parts.append("\n".join(f"- {k}: {v}" for k, v in method.items()) + "\n")
    dtype = doc.get("options", {}).get("dtype", "float32")
    parts += seed_tables(host.records, name, dtype) if host.records else []
    if doc.get("adversarial"):
        parts.append(adversarial_table(doc["adversarial"]))
    for entry in (doc.get("sweep") or {}).get("sizes", []):
        parts += [sweep_table(entry), f"Finding: {entry['finding']}\n"]
    return "\n".join(parts)


def load(path: str | Path) -> Document:
    """Seed 001's host study (`reduce-ladder host --json`), checked (it renders) before anything
    is written; ReportError naming the file otherwise."""
    doc = load_document(path, "host")
    try:
        markdown(doc)
    except (ValueError, KeyError, TypeError) as e:
        raise ReportError(f"{path}: not a readable host-study document ({e})") from None
    return doc


def write(path: str | Path, out_dir: str | Path) -> list[Path]:
    """host.md in out_dir, from the document."""
    page = Path(out_dir) / MARKDOWN_NAME
    page.write_text(markdown(load(path)))
    return [page]
