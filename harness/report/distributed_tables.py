"""The tables and the plot of `reduce-ladder distributed` (DISTRIBUTED_SCHEMA documents).

Everything derived is derived here, from the measured times in the documents:
- aggregate bandwidth: the K shards' bytes over the slowest rank's local + combine time;
- weak scaling (n per GPU fixed): efficiency = t1 / tK; strong scaling (total n fixed):
  speedup = t1 / tK, efficiency = t1 / (K tK); t1 is the K = 1 run of the same scaling, size,
  combine and variant (no K = 1 run in the documents: no efficiency, shown as "-");
- the all_reduce sweep as nccl-tests defines it: algbw = bytes / t, busbw = algbw * 2(K-1)/K,
  t the mean over ranks of the time per call;
- the issue's targets, each with the measured figure it is judged on.

Several documents (one per step: weak, strong, sweep, the large sum) render as one: their runs
are pooled (merged_document), so efficiency can use a K = 1 run from another file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.core.sizes import size_label
from harness.report import documents
from harness.report.documents import ReportError, load_document
from harness.report.markdown import RIGHT, markdown_table, num

TABLE_FILE = "distributed.md"
PLOT_FILE = "distributed.png"
WEAK_TARGET = 0.95  # issue 16: weak-scaling efficiency at 2^30 per GPU, K = 2 and 4
COMBINE_TARGET_US = 25.0  # one scalar combine on 4 GPUs
STRONG_TARGETS = {2: 1.8, 4: 3.4}  # speedup at 2^32 total


def load(paths: list[str]) -> list[dict]:
    """The documents, each checked for its schema; ReportError naming the file otherwise."""
    return [load_document(path, "distributed").raw for path in paths]


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
        if speedup is None:
            eff = None
        else:
            eff = speedup if r["scaling"] == "weak" else speedup / r["gpus"]
        rows.append(SumRow(r, speedup, eff))
    return rows


def busbw_factor(k: int) -> float:
    """nccl-tests' all_reduce bus-bandwidth factor 2(K-1)/K."""
    return 2 * (k - 1) / k


def sweep_rows(runs: list[dict]) -> list[tuple[dict, float, float]]:
    """(run, algbw GB/s, busbw GB/s) per sweep point, by K then n."""
    out = []
    for r in sorted(
        (r for r in runs if r["kind"] == "allreduce"), key=lambda r: (r["gpus"], r["n"])
    ):
        algbw = r["bytes"] / (r["us_mean"] * 1e3)  # bytes / ns = GB/s
        out.append((r, algbw, algbw * busbw_factor(r["gpus"])))
    return out


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def _verdict(r: dict) -> str:
    if r["ok"]:
        return "exact"
    why = [
        w
        for w, bad in (
            ("wrong sum", not r["exact"]),
            ("ranks differ", not r["ranks_agree"]),
            ("partial wrong", not r["partials_exact"]),
            ("shard changed", not r["shards_unchanged"]),
        )
        if bad
    ]
    return "WRONG: " + ", ".join(why)


def sums_table(rows: list[SumRow]) -> str:
    header = [
        "scaling",
        "K",
        "n per GPU",
        "n total",
        "combine",
        "local ms",
        "combine us",
        "total ms",
        "agg GB/s",
        "local GB/s per GPU",
        "speedup",
        "efficiency",
        "check",
    ]
    body = [
        [
            s.run["scaling"],
            str(s.run["gpus"]),
            size_label(s.run["n_per_rank"]),
            size_label(s.run["n_total"]),
            s.run["combine"],
            num(s.run["local_ms"], ".3f"),
            num(s.run["combine_ms"] * 1e3, ".1f"),
            num(s.run["total_ms"], ".3f"),
            num(s.agg_gbps, ".1f"),
            num(s.local_gbps_per_gpu, ".1f"),
            num(s.speedup, ".2f"),
            _pct(s.efficiency),
            _verdict(s.run),
        ]
        for s in rows
    ]
    return markdown_table(header, body, ["", RIGHT, RIGHT, RIGHT, "", *[RIGHT] * 7])


def combine_table(runs: list[dict]) -> str:
    loops = sorted(
        (r for r in runs if r["kind"] == "combine_loop"), key=lambda r: (r["gpus"], r["combine"])
    )
    body = [
        [
            str(r["gpus"]),
            r["combine"],
            str(r["calls"]),
            num(r["us_per_call"], ".1f"),
            ", ".join(f"{u:.1f}" for u in r["us_per_call_by_rank"]),
            "ok" if r["ok"] else "WRONG",
        ]
        for r in loops
    ]
    header = ["K", "combine", "calls", "us per call (slowest rank)", "per rank", "check"]
    return markdown_table(header, body, [RIGHT, "", RIGHT, RIGHT])


def sweep_table(runs: list[dict]) -> str:
    body = [
        [
            str(r["gpus"]),
            size_label(r["n"]),
            f"{r['bytes']:,}",
            num(r["us_mean"], ".1f"),
            num(r["us_max"], ".1f"),
            num(alg, ".2f"),
            num(bus, ".2f"),
            "ok" if r["ok"] else "WRONG",
        ]
        for r, alg, bus in sweep_rows(runs)
    ]
    header = [
        "K",
        "n (float32)",
        "bytes",
        "time us (mean)",
        "time us (max)",
        "algbw GB/s",
        "busbw GB/s",
        "check",
    ]
    return markdown_table(header, body, [RIGHT] * 7)


def targets(runs: list[dict]) -> list[tuple[str, str, str]]:
    """(target, measured, met / missed) for each issue target the runs can judge."""
    rows = sum_rows(runs)
    out = []
    for s in rows:
        r = s.run
        if r["combine"] != "all_reduce" or s.efficiency is None or r["gpus"] == 1:
            continue
        if r["scaling"] == "weak" and r["n_per_rank"] == 2**30 and r["gpus"] in (2, 4):
            out.append(
                (
                    f"weak efficiency, K={r['gpus']}, 2^30 per GPU >= {WEAK_TARGET:.0%}",
                    _pct(s.efficiency),
                    "met" if s.efficiency >= WEAK_TARGET else "missed",
                )
            )
        goal = STRONG_TARGETS.get(r["gpus"])
        if r["scaling"] == "strong" and r["n_total"] == 2**32 and goal:
            out.append(
                (
                    f"strong speedup, K={r['gpus']}, 2^32 total >= {goal}x",
                    f"{s.speedup:.2f}x",
                    "met" if s.speedup >= goal else "missed",
                )
            )
    for r in runs:
        if r["kind"] == "combine_loop" and r["gpus"] == 4 and r["combine"] == "all_reduce":
            us = r["us_per_call"]
            out.append(
                (
                    f"scalar combine, K=4 <= {COMBINE_TARGET_US:.0f} us",
                    f"{us:.1f} us",
                    "met" if us <= COMBINE_TARGET_US else "missed",
                )
            )
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
    if any(r["kind"] == "sum" for r in runs):
        parts += ["## Sums: time split and scaling\n", sums_table(sum_rows(runs))]
    if any(r["kind"] == "combine_loop" for r in runs):
        parts += ["\n## One scalar combine per call\n", combine_table(runs)]
    if any(r["kind"] == "allreduce" for r in runs):
        parts += ["\n## all_reduce sweep (nccl-tests definitions)\n", sweep_table(runs)]
    judged = targets(runs)
    if judged:
        parts += [
            "\n## Targets\n",
            markdown_table(["target", "measured", "verdict"], [list(t) for t in judged]),
        ]
    return "\n".join(parts)


def plot(doc: dict, path: Path) -> dict:
    """Left: the time split (local / combine, all_reduce) per K for each scaling at its largest
    size; right: efficiency against K per scaling and combine. Returns what was drawn."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    rows = sum_rows(doc["runs"])
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    bars, lines = [], {}
    for scaling in ("weak", "strong"):
        mine = [s for s in rows if s.run["scaling"] == scaling and s.run["combine"] == "all_reduce"]
        if mine:
            top = max(_key(s.run)[3] for s in mine)
            for s in mine:
                if _key(s.run)[3] == top:
                    bars.append(
                        (f"{scaling}\nK={s.run['gpus']}", s.run["local_ms"], s.run["combine_ms"])
                    )
    for s in rows:
        if s.efficiency is not None:
            label = f"{s.run['scaling']}, {size_label(_key(s.run)[3])}, {s.run['combine']}"
            lines.setdefault(label, []).append((s.run["gpus"], s.efficiency))
    xs = range(len(bars))
    left.bar(xs, [b[1] for b in bars], label="local sum (slowest rank)", color="tab:blue")
    left.bar(
        xs, [b[2] for b in bars], bottom=[b[1] for b in bars], label="combine", color="tab:orange"
    )
    left.set_xticks(list(xs), [b[0] for b in bars])
    left.set_ylabel("ms per call (median)")
    left.set_title("time split, all_reduce combine")
    left.legend()
    for label, pts in sorted(lines.items()):
        pts.sort()
        right.plot([p[0] for p in pts], [100 * p[1] for p in pts], marker="o", label=label)
    right.axhline(100 * WEAK_TARGET, color="gray", linestyle=":", label="95%")
    right.set_xlabel("K (GPUs)")
    right.set_ylabel("efficiency vs K = 1 (%)")
    right.set_title("scaling efficiency")
    ks = sorted({s.run["gpus"] for s in rows}) or [1]
    right.set_xticks(ks)
    right.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return {"bars": [b[0] for b in bars], "lines": sorted(lines)}


def render(paths: list[str], out_dir: str) -> tuple[dict, list[Path]]:
    """Load, merge, write DIR/distributed.md and DIR/distributed.png; (merged doc, files)."""
    documents.check_output(out_dir, folder=True, option="--out")
    doc = merged_document(load(paths))
    if not doc["runs"]:
        raise ReportError("no runs in the documents: nothing to tabulate")
    out = documents.output_path(out_dir, folder=True)
    table = out / TABLE_FILE
    table.write_text(markdown(doc))
    picture = out / PLOT_FILE
    plot(doc, picture)
    return doc, [table, picture]
