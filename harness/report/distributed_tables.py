"""The tables and the plot of `reduce-ladder distributed` (DISTRIBUTED_SCHEMA documents), every
derived figure from the measured times: aggregate bandwidth (the K shards' bytes over the slowest
rank's local + combine time); weak efficiency t1 / tK, strong speedup t1 / tK and efficiency
t1 / (K tK), t1 the K = 1 run of the same scaling, size, combine and variant ("-" without one);
nccl-tests' algbw = bytes / t and busbw = algbw * 2(K-1)/K; the targets, each with its figure.
Several documents (one per step) render as one: their runs are pooled (merged_document).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.core.sizes import size_label
from harness.report import documents
from harness.report.documents import ReportError, load_document
from harness.report.markdown import Column, column_table, num, numbers

TABLE_FILE = "distributed.md"
PLOT_FILE = "distributed.png"
WEAK_TARGET = 0.95  # issue 16: weak-scaling efficiency at 2^30 per GPU, K = 2 and 4
COMBINE_TARGET_US = 25.0  # one scalar combine on 4 GPUs
STRONG_TARGETS = {2: 1.8, 4: 3.4}  # speedup at 2^32 total


def merged_document(docs: list[dict]) -> dict:
    """One document with every run (the first document's device and settings)."""
    merged = {k: v for k, v in docs[0].items() if k != "runs"}
    merged["runs"] = [r for d in docs for r in d["runs"]]
    merged["gpus"] = sorted({r["gpus"] for r in merged["runs"]})
    merged["scaling"] = sorted({r["scaling"] for r in merged["runs"] if r["kind"] == "sum"})
    return merged


@dataclass(frozen=True)
class SumRow:
    run: dict
    speedup: float | None  # t1 / tK
    efficiency: float | None  # weak: t1 / tK; strong: t1 / (K tK)

    @property
    def agg_gbps(self) -> float:
        return 4 * self.run["n_total"] / (self.run["total_ms"] * 1e6)

    @property
    def local_gbps_per_gpu(self) -> float:
        return 4 * self.run["n_per_rank"] / (self.run["local_ms"] * 1e6)


def _key(run: dict) -> tuple:
    size = run["n_per_rank"] if run["scaling"] == "weak" else run["n_total"]
    return run["scaling"], run["variant"], run["combine"], size


def sum_rows(runs: list[dict]) -> list[SumRow]:
    sums = [r for r in runs if r["kind"] == "sum"]
    base = {_key(r): r["total_ms"] for r in sums if r["gpus"] == 1}
    rows = []
    for r in sorted(sums, key=lambda r: (*_key(r), r["gpus"])):
        t1 = base.get(_key(r))
        speedup = t1 / r["total_ms"] if t1 else None
        weak = r["scaling"] == "weak"
        rows.append(SumRow(r, speedup, speedup and (speedup if weak else speedup / r["gpus"])))
    return rows


def busbw_factor(k: int) -> float:
    """nccl-tests' all_reduce bus-bandwidth factor 2(K-1)/K."""
    return 2 * (k - 1) / k


def sweep_rows(runs: list[dict]) -> list[tuple[dict, float, float]]:
    """(run, algbw GB/s, busbw GB/s) per sweep point, by K then n."""
    points = sorted(
        (r for r in runs if r["kind"] == "allreduce"), key=lambda r: (r["gpus"], r["n"])
    )
    algbw = [r["bytes"] / (r["us_mean"] * 1e3) for r in points]  # bytes / ns = GB/s
    return [(r, a, a * busbw_factor(r["gpus"])) for r, a in zip(points, algbw, strict=True)]


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def _verdict(r: dict) -> str:
    if r["ok"]:
        return "exact"
    bad = {"wrong sum": "exact", "ranks differ": "ranks_agree", "partial wrong": "partials_exact"}
    why = [w for w, k in {**bad, "shard changed": "shards_unchanged"}.items() if not r[k]]
    return "WRONG: " + ", ".join(why)


def _ok(r: dict) -> str:
    return "ok" if r["ok"] else "WRONG"


C, R = Column, numbers  # text, numbers
SUM_COLUMNS = (
    C("scaling", lambda s: s.run["scaling"]),
    R("K", lambda s: str(s.run["gpus"])),
    R("n per GPU", lambda s: size_label(s.run["n_per_rank"])),
    R("n total", lambda s: size_label(s.run["n_total"])),
    C("combine", lambda s: s.run["combine"]),
    R("local ms", lambda s: num(s.run["local_ms"], ".3f")),
    R("combine us", lambda s: num(s.run["combine_ms"] * 1e3, ".1f")),
    R("total ms", lambda s: num(s.run["total_ms"], ".3f")),
    R("agg GB/s", lambda s: num(s.agg_gbps, ".1f")),
    R("local GB/s per GPU", lambda s: num(s.local_gbps_per_gpu, ".1f")),
    R("speedup", lambda s: num(s.speedup, ".2f")),
    R("efficiency", lambda s: _pct(s.efficiency)),
    C("check", lambda s: _verdict(s.run)),
)
COMBINE_COLUMNS = (
    R("K", lambda r: str(r["gpus"])),
    C("combine", lambda r: r["combine"]),
    R("calls", lambda r: str(r["calls"])),
    R("us per call (slowest rank)", lambda r: num(r["us_per_call"], ".1f")),
    C("per rank", lambda r: ", ".join(f"{u:.1f}" for u in r["us_per_call_by_rank"])),
    C("check", _ok),
)
SWEEP_COLUMNS = (
    R("K", lambda p: str(p[0]["gpus"])),
    R("n (float32)", lambda p: size_label(p[0]["n"])),
    R("bytes", lambda p: f"{p[0]['bytes']:,}"),
    R("time us (mean)", lambda p: num(p[0]["us_mean"], ".1f")),
    R("time us (max)", lambda p: num(p[0]["us_max"], ".1f")),
    R("algbw GB/s", lambda p: num(p[1], ".2f")),
    R("busbw GB/s", lambda p: num(p[2], ".2f")),
    C("check", lambda p: _ok(p[0])),
)

TARGET_COLUMNS = tuple(
    C(h, lambda t, i=i: t[i]) for i, h in enumerate(("target", "measured", "verdict"))
)


def targets(runs: list[dict]) -> list[tuple[str, str, str]]:
    """(target, measured, met / missed) for each issue target the runs can judge."""
    out = []
    for s in sum_rows(runs):
        r, k = s.run, s.run["gpus"]
        if r["combine"] != "all_reduce" or s.efficiency is None or k == 1:
            continue
        if r["scaling"] == "weak" and r["n_per_rank"] == 2**30 and k in (2, 4):
            met = s.efficiency >= WEAK_TARGET
            what = f"weak efficiency, K={k}, 2^30 per GPU >= {WEAK_TARGET:.0%}"
            out.append((what, _pct(s.efficiency), "met" if met else "missed"))
        goal = STRONG_TARGETS.get(k)
        if r["scaling"] == "strong" and r["n_total"] == 2**32 and goal:
            met = s.speedup >= goal
            what = f"strong speedup, K={k}, 2^32 total >= {goal}x"
            out.append((what, f"{s.speedup:.2f}x", "met" if met else "missed"))
    for r in runs:
        if r["kind"] == "combine_loop" and r["gpus"] == 4 and r["combine"] == "all_reduce":
            us, met = r["us_per_call"], r["us_per_call"] <= COMBINE_TARGET_US
            what = f"scalar combine, K=4 <= {COMBINE_TARGET_US:.0f} us"
            out.append((what, f"{us:.1f} us", "met" if met else "missed"))
    return out


def markdown(doc: dict) -> str:
    """The whole Markdown page of one (merged) document."""
    runs = doc["runs"]
    dev = doc.get("device", {})
    names = dev.get("gpu_names") or ["CPU"]
    parts = [
        "# One sum across several GPUs\n",
        f"Device: {len(names)} x {names[0]}; backend {doc['backend']}; variant {doc['variant']}; "
        f"NCCL {dev.get('nccl', '-')}; torch {dev.get('torch', '-')}. "
        f"What rank 0 saw: {', '.join(f'{k}={v}' for k, v in doc['child_env'].items())}.\n",
        f"Method: {doc['method']}\n",
    ]
    loops = sorted(
        (r for r in runs if r["kind"] == "combine_loop"), key=lambda r: (r["gpus"], r["combine"])
    )
    sections = (
        ("## Sums: time split and scaling\n", SUM_COLUMNS, sum_rows(runs)),
        ("\n## One scalar combine per call\n", COMBINE_COLUMNS, loops),
        ("\n## all_reduce sweep (nccl-tests definitions)\n", SWEEP_COLUMNS, sweep_rows(runs)),
        ("\n## Targets\n", TARGET_COLUMNS, targets(runs)),
    )
    parts += [
        part
        for title, cols, items in sections
        if items
        for part in (title, column_table(cols, items))
    ]
    return "\n".join(parts)


def plot(doc: dict, path: Path) -> dict:
    """Left: the time split (local / combine, all_reduce) per K for each scaling at its largest
    size; right: efficiency against K per scaling and combine. Returns what was drawn."""
    from harness.report.plots import figure, save

    rows = sum_rows(doc["runs"])
    fig, (left, right) = figure(1, 2, figsize=(12, 4.5))
    bars, lines = [], {}
    for scaling in ("weak", "strong"):
        mine = [s for s in rows if s.run["scaling"] == scaling and s.run["combine"] == "all_reduce"]
        top = max((_key(s.run)[3] for s in mine), default=None)
        bars += [(f"{scaling}\nK={s.run['gpus']}", s.run) for s in mine if _key(s.run)[3] == top]
    for s in (s for s in rows if s.efficiency is not None):
        label = f"{s.run['scaling']}, {size_label(_key(s.run)[3])}, {s.run['combine']}"
        lines.setdefault(label, []).append((s.run["gpus"], s.efficiency))
    xs, local = range(len(bars)), [b[1]["local_ms"] for b in bars]
    left.bar(xs, local, label="local sum (slowest rank)", color="tab:blue")
    combine = [b[1]["combine_ms"] for b in bars]
    left.bar(xs, combine, bottom=local, label="combine", color="tab:orange")
    left.set(xticks=list(xs), xticklabels=[b[0] for b in bars], ylabel="ms per call (median)")
    left.set_title("time split, all_reduce combine")
    left.legend()
    for label, pts in sorted(lines.items()):
        pts.sort()
        right.plot([p[0] for p in pts], [100 * p[1] for p in pts], marker="o", label=label)
    right.axhline(100 * WEAK_TARGET, color="gray", linestyle=":", label="95%")
    right.set(xlabel="K (GPUs)", ylabel="efficiency vs K = 1 (%)", title="scaling efficiency")
    right.set_xticks(sorted({s.run["gpus"] for s in rows}) or [1])
    right.legend(fontsize=7)
    save(fig, path)
    return {"bars": [b[0] for b in bars], "lines": sorted(lines)}


def render(paths: list[str], out_dir: str) -> tuple[dict, list[Path]]:
    """Load, merge, write DIR/distributed.md and DIR/distributed.png; (merged doc, files)."""
    documents.check_output(out_dir, folder=True, option="--out")
    doc = merged_document([load_document(p, "distributed").raw for p in paths])
    if not doc["runs"]:
        raise ReportError("no runs in the documents: nothing to tabulate")
    out = documents.output_path(out_dir, folder=True)
    table = out / TABLE_FILE
    table.write_text(markdown(doc))
    picture = out / PLOT_FILE
    plot(doc, picture)
    return doc, [table, picture]
