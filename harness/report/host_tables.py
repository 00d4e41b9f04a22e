"""Seed 001's host study as one Markdown page (host.md beside report.md, and what `reduce-ladder
host` prints), from the host suite's rows (harness.studies.host; docs/results-format.md), and the
spelling of those rows' configs: the study's part and a pipeline's streams and chunk."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path

from harness.core import catalogue
from harness.core.mappings import cdiv
from harness.report.documents import Document, ReportError, load_document
from harness.report.markdown import markdown_table, num, pivot
from harness.report.records import Row

SWEEP, ADVERSARIAL = "sweep", "adversarial"  # a config's part ("": the seed's table)
PIPELINE_ID, ONE_COPY_ID = "cuda/001-v3-streams", "cuda/001-v2-pinned"  # V3 swept, beside V2
H2D = ("H2D pinned", "H2D pageable")  # the sweep's copy alone: the copy-engine bound
NAIVE = "naive float32 running sum"  # beside the variants on the adversarial input
ADVERSARIAL_INPUT = "x[0] = 2^24, x[1:] = 1.0 (float32)"


def config(part: str = "", streams: int | None = None, chunk: int | None = None) -> str:
    """A host row's config: its part, then a pipeline's streams and chunk ("sweep streams=4
    chunk=4194304"; "" for the table's rows at the default pipeline)."""
    return f"{part} streams={streams} chunk={chunk}".strip() if streams else part


def parse_config(text: str) -> tuple[str, dict[str, int]]:
    """config's inverse: (the part, {"streams": S, "chunk": C} or {})."""
    words = text.split()
    pipe = dict(w.split("=") for w in words if "=" in w)
    return " ".join(w for w in words if "=" not in w), {k: int(v) for k, v in pipe.items()}


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


def seed_tables(rows: Sequence[Row], device_name: str | None) -> list[str]:
    """The seed's table (end-to-end ms, GB/s) and where the time goes: sizes down, variants
    across (a failed check: its status)."""
    at = {(r.variant, r.n, r.metric): r.median_ms for r in rows}
    shown = [r for r in rows if r.metric in ("e2e", "check")]
    cols, dtype = list(dict.fromkeys(r.variant for r in shown)), shown[0].dtype
    legend = ", ".join(
        f"{short(c)} = {c}" + (f" ({catalogue.BY_ID[c].staging})" if c in catalogue.BY_ID else "")
        for c in cols
    )

    def timed(cell: Callable[[Row], str]) -> Callable[[Row], str]:
        return lambda r: cell(r) if r.check == "ok" else r.check.upper()

    def split(r: Row) -> str:
        """H2D ms + kernels ms (H2D share); the pipeline's device total where it has no split."""
        h2d, kernels = at.get((r.variant, r.n, "h2d")), at.get((r.variant, r.n, "kernels"))
        if h2d is None:
            return f"dev {at[r.variant, r.n, 'device']:.3f}"
        return f"{h2d:.3f} + {kernels:.3f} ({100 * (h2d / r.median_ms):.0f}%)"

    seed = f"seed 001, {device_name}, {dtype}: "
    specs = (
        (seed + "end-to-end time, ms (host memory -> scalar on the host; median)", legend,
         timed(lambda r: f"{r.median_ms:.3f}")),
        (seed + "GB/s of host data reduced (n x element size / end-to-end time)", legend,
         timed(lambda r: f"{r.gbps:.2f}")),
        (f"where the time goes ({dtype}): H2D copy ms + kernels ms (H2D share of end to end)",
         "CUDA events on the stream; the pipeline overlaps copies and kernels by design: its "
         "device total only", lambda r: split(r) if r.check == "ok" else "-"),
    )  # fmt: skip
    sizes = sorted({r.n for r in shown})
    return [
        _table(title, caption, pivot("log2 n", shown, lambda r: r.n, lambda r: r.variant, cell,
                                     sizes, cols, head=short, label=lambda n: f"{math.log2(n):g}"))
        for title, caption, cell in specs
    ]  # fmt: skip


def sweep_table(rows: Sequence[Row], n: int) -> str:
    """V3's pipeline at n, a pivot of its configurations: chunk down, streams across; the
    copy-engine bound, the kernels alone and V2 below; then the finding."""
    at = {(r.variant, r.metric): r for r in rows if r.n == n and r.config == SWEEP}
    cfgs = {(p["chunk"], p["streams"]): r for r in rows if r.n == n and r.metric == "e2e"
            and (p := parse_config(r.config)[1])}  # fmt: skip
    pinned, v2 = at[H2D[0], "h2d"], at[ONE_COPY_ID, "e2e"].median_ms

    def cell(key: tuple[int, int]) -> str:
        r = cfgs[key]
        return f"{r.median_ms:.3f} ({r.gbps:.1f})" + ("" if r.check == "ok" else " WRONG")

    table = _table(
        f"V3 pipeline, n = 2^{math.log2(n):g}: end-to-end ms (GB/s) by chunk x streams",
        f"copy-engine bound: pinned H2D alone {pinned.median_ms:.3f} ms = {pinned.gbps:.1f} "
        f"GB/s; kernels alone {at[PIPELINE_ID, 'kernels'].median_ms:.3f} ms; V2 one copy "
        f"{v2:.3f} ms",
        pivot("chunk (elements)", cfgs, lambda k: k[0], lambda k: k[1], cell,
              sorted({ch for ch, _ in cfgs}), sorted({k for _, k in cfgs}),
              head=lambda k: f"{k} stream" + "s" * (k > 1),
              label=lambda ch: f"{ch:,} x{cdiv(n, ch)}"),
    )  # fmt: skip
    return table + "\n" + f"Finding: {sweep_finding(n, cfgs, pinned, at[H2D[1], 'h2d'], v2)}\n"


def sweep_finding(n: int, cfgs: dict[tuple[int, int], Row], pinned: Row, pageable: Row,
                  v2_ms: float) -> str:  # fmt: skip
    """The sentences under one size's sweep table (whose caption gives the pinned copy-engine
    bound, the kernels alone and V2), from the measured numbers only: cfgs by (chunk, streams)."""
    lines = [f"n = 2^{math.log2(n):g}: H2D copy alone from pageable memory "
             f"{pageable.gbps:.1f} GB/s."]  # fmt: skip
    wins = []
    for ch in sorted({c for c, _ in cfgs}):
        if (one := cfgs.get((ch, 1))) is None:
            continue
        k, best = min(
            ((k, r) for (c, k), r in cfgs.items() if c == ch), key=lambda kr: kr[1].median_ms
        )
        noise = max(one.info["spread_ms"], best.info["spread_ms"])
        if k > 1 and one.median_ms - best.median_ms > noise:
            wins.append(((one.median_ms - best.median_ms) / one.median_ms, ch, k, best, one, noise))
    if wins:
        frac, ch, k, best, one, noise = max(wins, key=lambda w: w[0])
        lines.append(
            f"Streams beat one stream: chunk {ch:,} elements, {k} streams {best.median_ms:.3f} ms "
            f"vs 1 stream {one.median_ms:.3f} ms ({100 * frac:.1f}% faster, above the "
            f"{noise:.3f} ms p10-p90 spread)."
        )
    else:
        lines.append("No stream count beat one stream (same chunk) by more than the p10-p90 "
                     "spread.")  # fmt: skip
    if cfgs:
        (ch, k), b = min(cfgs.items(), key=lambda kv: kv[1].median_ms)
        lines.append(
            f"Best pipeline: {k} streams x {ch:,}-element chunks, {b.median_ms:.3f} ms = "
            f"{b.gbps:.1f} GB/s, {100 * pinned.median_ms / b.median_ms:.0f}% of the copy-engine "
            f"bound ({pinned.median_ms:.3f} ms); vs V2 {v2_ms / b.median_ms:.2f}x."
        )
    return " ".join(lines)


def adversarial_table(rows: Sequence[Row]) -> str:
    """Each variant's (and x.cuda().sum()'s) error on the adversarial input against its bound,
    and a naive float32 running sum's, which the trees must beat."""
    naive = next(r.info["check"] for r in rows if r.variant == NAIVE)
    return _table(
        f"adversarial input, n = {rows[0].n:,}: {ADVERSARIAL_INPUT}",
        f"exact sum {naive['golden']}; a naive float32 running sum gives {naive['value']:.0f} "
        f"(error {naive['abs_err']:.0f})",
        markdown_table(("variant", "|error|", "bound gamma_L*sum|x|", "within"),
                       (_adversarial_line(r) for r in rows if r.variant != NAIVE)),
    )  # fmt: skip


def _adversarial_line(r: Row) -> list[str]:
    c = r.info.get("check", {})
    within = {"ok": "yes", "": "-"}.get(r.check, "NO")
    return [short(r.variant), num(c.get("abs_err"), "g"), num(c.get("tolerance"), ".4g"), within]


def markdown(head: dict, rows: Sequence[Row]) -> str:
    """The whole host study (its ROWS document's head and rows, `reduce-ladder host --json`) as
    one Markdown document."""
    dev = head.get("device", {})
    name = dev.get("name")
    parts = [
        f"# Seed 001, host-driven reduction from host memory, on {name}\n",
        f"Run {head.get('created', '')}; torch {dev.get('torch')}, triton {dev.get('triton')}, "
        f"cupy {dev.get('cupy')}.\n",
    ]
    if method := head.get("method"):
        parts.append("\n".join(f"- {k}: {v}" for k, v in method.items()) + "\n")
    of = {p: [r for r in rows if parse_config(r.config)[0] == p] for p in ("", ADVERSARIAL, SWEEP)}
    parts += seed_tables(of[""], name) if of[""] else []
    parts += [adversarial_table(of[ADVERSARIAL])] if of[ADVERSARIAL] else []
    sweep = of[SWEEP]
    return "\n".join(parts + [sweep_table(sweep, n) for n in dict.fromkeys(r.n for r in sweep)])


def load(path: str | Path) -> Document:
    """Seed 001's host study (the host suite's ROWS document), checked (it renders) before
    anything is written; ReportError naming the file otherwise."""
    doc = load_document(path, "rows")
    if doc.raw.get("suite") != "host":
        raise ReportError(f"{path}: rows of the {doc.raw.get('suite')} suite, not the host study")
    try:
        markdown(doc.raw, doc.rows)
    except (ValueError, KeyError, TypeError, StopIteration) as e:
        raise ReportError(f"{path}: not a readable host-study document ({e!r})") from None
    return doc


def page(doc: Document, out_dir: Path, run: object = None) -> str:
    """host.md (the report's page, harness.report.run_report.PAGES)."""
    return markdown(doc.raw, doc.rows)
