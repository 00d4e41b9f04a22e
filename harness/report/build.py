"""The comparison report: load runs (the CLI's JSON or pytest-benchmark's), normalize them to rows,
compute the ratios against the peers, build the tables, draw the plots. No GPU needed.

Row (one per variant x dtype x n, whatever file it came from):
    variant, backend, stage, twin, dtype, n, status, wrong_demo,
    ms        device time per call (CUDA events, median; L2 flushed between repetitions)
    gbps      effective bandwidth = bytes / ms (bytes read + bytes written, see ladder/peers)
    call_ms   host wall time of one synchronized Python call (launch overhead included)
    graph_ms  device time per call from CUDA-graph replay (n <= 2^20 only)
    first_ms  first pass alone (CLI runs of ladder variants)
Ratios (same run, same dtype and n): x_cub = t(cupy.sum, CUB on) / t, x_torch = t(torch.sum) / t
(above 1: faster than the peer), pct_copy = gbps / copy GB/s * 100.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from harness.core.sizes import size_label

CLI_SCHEMA = "reduce-ladder/run/1"
BENCH_SCHEMA = "reduce-ladder/bench/1"
CUB_ID, NOCUB_ID, TORCH_ID, COPY_ID = (
    "peer/cupy.sum-cub",
    "peer/cupy.sum-nocub",
    "peer/torch.sum",
    "peer/copy",
)
PEER_ORDER = (CUB_ID, NOCUB_ID, TORCH_ID, COPY_ID)
PEER_LABELS = {
    CUB_ID: "cupy.sum (CUB)",
    NOCUB_ID: "cupy.sum (no CUB)",
    TORCH_ID: "torch.sum",
    COPY_ID: "copy bandwidth",
}
DEFAULT_REF_N = 2**25


class ReportError(Exception):
    """A file that cannot be read or understood; the CLI prints it and exits 2."""


@dataclass
class Run:
    path: str
    kind: str  # "cli" or "pytest-benchmark"
    device: str
    created: str
    rows: list[dict] = field(default_factory=list)
    meta: dict = field(default_factory=dict)

    @property
    def label(self) -> str:
        return f"{self.device} ({Path(self.path).name})"

    def dtypes(self) -> list[str]:
        return sorted({r["dtype"] for r in self.rows}, key=lambda d: (d != "float32", d))

    def sizes(self, dtype: str | None = None) -> list[int]:
        return sorted({r["n"] for r in self.rows if dtype is None or r["dtype"] == dtype})


# ---------------------------------------------------------------------------------------------
# loading


def load_run(path: str | Path) -> Run:
    p = Path(path)
    try:
        text = p.read_text()
    except FileNotFoundError:
        raise ReportError(f"{p}: no such file") from None
    except OSError as e:
        raise ReportError(f"{p}: cannot read it ({e.strerror or e})") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise ReportError(f"{p}: not valid JSON ({e.msg} at line {e.lineno})") from None
    if isinstance(doc, dict) and doc.get("schema") == CLI_SCHEMA:
        return _from_cli(str(p), doc)
    if isinstance(doc, dict) and isinstance(doc.get("benchmarks"), list) and "machine_info" in doc:
        return _from_bench(str(p), doc)
    schema = doc.get("schema") if isinstance(doc, dict) else type(doc).__name__
    raise ReportError(
        f"{p}: unknown format (schema {schema!r}); expected a run document "
        f"({CLI_SCHEMA!r}, from `reduce-ladder run --json`) or pytest-benchmark's JSON "
        "(from `pytest benchmarks/ --benchmark-json=...`)"
    )


def _med(d: dict | None) -> float | None:
    return d.get("median_ms") if isinstance(d, dict) else None


def _row(src: dict, ms: float | None, call_ms: float | None) -> dict:
    nbytes = src.get("bytes_total")
    gbps = src.get("gbps_total")
    if gbps is None and nbytes and ms:
        gbps = nbytes / ms / 1e6
    return {
        "variant": src["variant"],
        "backend": src.get("backend") or src["variant"].split("/")[0],
        "stage": str(src.get("stage") or ""),
        "twin": src.get("twin"),
        "family": src.get("family", ""),
        "dtype": src["dtype"],
        "n": int(src["n"]),
        "status": src.get("status", "ok"),
        "wrong_demo": bool(src.get("wrong_demo") or (src.get("catalogue") or {}).get("wrong")),
        "ms": ms,
        "gbps": gbps,
        "bytes": nbytes,
        "call_ms": call_ms,
        "graph_ms": _med(src.get("graph")),
        "first_ms": _med(src.get("first_pass")),
        "message": src.get("message", ""),
    }


def _from_cli(path: str, doc: dict) -> Run:
    try:
        rows = [
            _row(r, _med(r.get("total")), _med(r.get("call")))
            for r in doc.get("results", [])
            if "variant" in r
        ]
    except (KeyError, TypeError, ValueError) as e:
        raise ReportError(f"{path}: a result row lacks a field ({e})") from None
    dev = doc.get("device") or {}
    return Run(
        path,
        "cli",
        dev.get("name") or "no GPU",
        doc.get("created", ""),
        _add_ratios(rows),
        {"device": dev, "mode": doc.get("mode"), "synthetic": doc.get("synthetic", False)},
    )


def _from_bench(path: str, doc: dict) -> Run:
    rows = []
    for b in doc["benchmarks"]:
        info = b.get("extra_info") or {}
        if "variant" not in info:
            continue  # not one of ours
        stats = b.get("stats") or {}
        wall = _med(info.get("call"))
        if wall is None and stats.get("median") is not None:
            wall = stats["median"] * 1e3
        try:
            rows.append(_row(info, _med(info.get("total")) or info.get("device_ms"), wall))
        except (KeyError, TypeError, ValueError) as e:
            raise ReportError(f"{path}: benchmark {b.get('name')!r} lacks a field ({e})") from None
    if not rows:
        raise ReportError(
            f"{path}: pytest-benchmark JSON without reduce-ladder benchmarks (was the suite "
            "skipped, e.g. run without a GPU?)"
        )
    mi = doc.get("machine_info") or {}
    gpu = mi.get("gpu") or {}
    name = gpu.get("name") or next((b["extra_info"].get("device") for b in doc["benchmarks"]), "")
    return Run(
        path,
        "pytest-benchmark",
        name or "unknown device",
        doc.get("datetime", ""),
        _add_ratios(rows),
        {"device": gpu, "synthetic": mi.get("synthetic", False)},
    )


def _add_ratios(rows: list[dict]) -> list[dict]:
    peers: dict[tuple, dict] = {}
    for r in rows:
        if r["backend"] == "peer" and r["status"] == "ok":
            peers[(r["variant"], r["dtype"], r["n"])] = r
    for r in rows:

        def peer(vid: str, r=r) -> dict:
            return peers.get((vid, r["dtype"], r["n"]), {})

        ms, gbps = r["ms"], r["gbps"]
        cub, tor, copy = peer(CUB_ID).get("ms"), peer(TORCH_ID).get("ms"), peer(COPY_ID)
        ok = r["status"] == "ok" and ms
        r["x_cub"] = cub / ms if ok and cub else None
        r["x_torch"] = tor / ms if ok and tor else None
        r["pct_copy"] = 100 * gbps / copy["gbps"] if ok and gbps and copy.get("gbps") else None
    return rows


# ---------------------------------------------------------------------------------------------
# tables


def _stage_key(stage: str) -> tuple:
    # The catalogue's ladder order (000/002 stages 0-8, then 004, 001, fastest, ...).
    from harness.core.catalogue import stage_key as catalogue_stage_key

    return catalogue_stage_key(stage)


def _partner(r: dict) -> str | None:
    """The Triton variant shown beside a CUDA row: its tile twin, or (for variants that are not
    tile twins, like the fastest pair) the catalogue's counterpart."""
    from harness.core.catalogue import BY_ID

    if r.get("twin"):
        return r["twin"]
    v = BY_ID.get(r["variant"])
    return getattr(v, "counterpart", None) if v is not None else None


def variant_order(rows: Iterable[dict]) -> list[str]:
    """CUDA stages by stage, then Triton, then anything else, then the peers (fixed order)."""
    first: dict[str, dict] = {}
    for r in rows:
        first.setdefault(r["variant"], r)
    rank = {"cuda": 0, "triton": 1}
    others = [v for v in first if first[v]["backend"] != "peer"]
    others.sort(key=lambda v: (rank.get(first[v]["backend"], 2), _stage_key(first[v]["stage"])))
    return (
        others
        + [p for p in PEER_ORDER if p in first]
        + [v for v in first if first[v]["backend"] == "peer" and v not in PEER_ORDER]
    )


def reference_n(run: Run, dtype: str, want: int | None = None) -> int:
    sizes = run.sizes(dtype)
    if not sizes:
        raise ReportError(f"{run.path}: no {dtype} rows")
    if want is not None:
        if want not in sizes:
            raise ReportError(
                f"{run.path}: no {dtype} rows at n = {want}; sizes: {', '.join(map(str, sizes))}"
            )
        return want
    below = [n for n in sizes if n <= DEFAULT_REF_N]
    return max(below) if below else min(sizes)


def _at(run: Run, dtype: str, n: int) -> dict[str, dict]:
    return {r["variant"]: r for r in run.rows if r["dtype"] == dtype and r["n"] == n}


def ladder_table(run: Run, dtype: str, n: int) -> list[dict]:
    """The ladder at one n: each CUDA stage with its Triton twin beside it, Triton variants no
    CUDA stage twins on their own rows, then the peers. Each cell dict has ms, gbps, ratios."""
    at = _at(run, dtype, n)
    order = variant_order(at.values())
    out, shown = [], set()
    for vid in order:
        r = at[vid]
        if r["backend"] == "triton" and vid in shown:
            continue
        twin = at.get(_partner(r) or "") if r["backend"] == "cuda" else None
        if twin:
            shown.add(twin["variant"])
        out.append({"kind": "peer" if r["backend"] == "peer" else "stage", "row": r, "twin": twin})
    return out  # CUDA rows come first in variant_order, so every twin is placed before its turn


def _f(x: float | None, fmt: str) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, fmt)


def _us(ms: float | None) -> str:
    return _f(None if ms is None else ms * 1e3, ".1f")


def _check(r: dict | None) -> str:
    if r is None:
        return "-"
    if r["wrong_demo"]:
        return "race showed (wrong)" if r["status"] != "ok" else "right this run"
    return {"ok": "ok", "wrong": "WRONG", "error": "ERROR"}.get(r["status"], r["status"])


LADDER_HEADER = (
    "stage",
    "variant",
    "µs",
    "GB/s",
    "% copy",
    "× CUB",
    "× torch.sum",
    "Triton twin",
    "µs",
    "GB/s",
    "% copy",
    "× CUB",
    "check",
)


def ladder_cells(e: dict) -> list[str]:
    r, t = e["row"], e["twin"]

    def part(x: dict | None) -> list[str]:
        if x is None:
            return ["-"] * 4
        return [_us(x["ms"]), _f(x["gbps"], ".0f"), _f(x["pct_copy"], ".0f"), _f(x["x_cub"], ".2f")]

    name = r["variant"].split("/", 1)[-1] if r["backend"] != "peer" else r["variant"]
    if r["variant"] == COPY_ID:  # the copy is the yardstick, not a sum: no sum ratios
        r = {**r, "x_cub": None, "x_torch": None}
    check = _check(r) + (f" / twin {_check(t)}" if t and t["status"] != "ok" else "")
    return [
        r["stage"],
        name,
        *part(r)[:3],
        _f(r["x_cub"], ".2f"),
        _f(r["x_torch"], ".2f"),
        (t["variant"].split("/", 1)[-1] if t else "-"),
        *part(t),
        check,
    ]


def markdown_table(header: Iterable[str], rows: Iterable[list[str]]) -> str:
    header = list(header)
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |" for cells in rows]
    return "\n".join(lines) + "\n"


def markdown_ladder(run: Run, dtype: str, n: int) -> str:
    return markdown_table(LADDER_HEADER, (ladder_cells(e) for e in ladder_table(run, dtype, n)))


def rich_ladder(run: Run, dtype: str, n: int):
    from rich.table import Table

    table = Table(title=f"{run.device}, {dtype}, n = {n:,} ({size_label(n)})")
    for i, h in enumerate(LADDER_HEADER):
        table.add_column(h, justify="left" if i in (0, 1, 7, 12) else "right", overflow="fold")
    peers_started = False
    for e in ladder_table(run, dtype, n):
        if e["kind"] == "peer" and not peers_started:
            table.add_section()
            peers_started = True
        bad = e["row"]["status"] != "ok" and not e["row"]["wrong_demo"]
        table.add_row(
            *ladder_cells(e), style="red" if bad else ("dim" if e["kind"] == "peer" else None)
        )
    return table


def sweep_table(run: Run, dtype: str, key: str = "gbps", fmt: str = ".0f") -> tuple[list, list]:
    """Variants x sizes matrix of one field (default effective GB/s)."""
    sizes = run.sizes(dtype)
    rows = [r for r in run.rows if r["dtype"] == dtype]
    by = {(r["variant"], r["n"]): r for r in rows}
    header = ["variant", *[size_label(n) for n in sizes]]
    body = []
    for vid in variant_order(rows):
        cells = [vid]
        for n in sizes:
            r = by.get((vid, n))
            cells.append("-" if r is None else (_f(r[key], fmt) if r["status"] == "ok" else "✗"))
        body.append(cells)
    return header, body


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


def all_rows_cells(run: Run, dtype: str) -> list[list[str]]:
    rows = [r for r in run.rows if r["dtype"] == dtype]
    order = {v: i for i, v in enumerate(variant_order(rows))}
    rows.sort(key=lambda r: (order[r["variant"]], r["n"]))
    return [
        [
            r["variant"],
            size_label(r["n"]),
            _check(r),
            _us(r["ms"]),
            _us(r["graph_ms"]),
            _us(r["call_ms"]),
            _f(r["gbps"], ".1f"),
            _f(r["pct_copy"], ".1f"),
            _f(r["x_cub"], ".2f"),
            _f(r["x_torch"], ".2f"),
        ]
        for r in rows
    ]


def compare_rows(a: Run, b: Run, dtype: str, n: int) -> list[dict]:
    """Per variant at (dtype, n) in both runs: speed ratio t_a / t_b (above 1: b is faster)."""
    at_a, at_b = _at(a, dtype, n), _at(b, dtype, n)
    out = []
    for vid in variant_order([*at_a.values(), *at_b.values()]):
        ra, rb = at_a.get(vid), at_b.get(vid)
        if not ra or not rb or ra["status"] != "ok" or rb["status"] != "ok":
            continue
        if ra["ms"] and rb["ms"]:
            out.append(
                {"variant": vid, "ms_a": ra["ms"], "ms_b": rb["ms"], "ratio": ra["ms"] / rb["ms"]}
            )
    return out


# ---------------------------------------------------------------------------------------------
# plots (matplotlib, Agg): each returns what it drew, for the tests and the report


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


_PEER_STYLE = {
    CUB_ID: {"color": "black", "linestyle": "--"},
    NOCUB_ID: {"color": "gray", "linestyle": ":"},
    TORCH_ID: {"color": "tab:red", "linestyle": "-."},
    COPY_ID: {"color": "black", "linestyle": "-", "linewidth": 2.5},
}


def plot_bandwidth_vs_n(run: Run, dtype: str, path: str | Path) -> dict:
    """Effective GB/s against log2 n: CUDA stages (left) and Triton variants (right), the peers
    and the copy bandwidth in both panels."""
    plt = _plt()
    rows = [r for r in run.rows if r["dtype"] == dtype and r["status"] == "ok" and r["gbps"]]
    order = variant_order(rows)
    fig, axes = plt.subplots(1, 2, figsize=(16, 6.5), sharey=True)
    drawn: dict[str, list[str]] = {}
    for ax, backend in zip(axes, ("cuda", "triton"), strict=True):
        labels = []
        mine = [v for v in order if v.startswith(f"{backend}/")]
        cmap = plt.get_cmap("viridis" if backend == "cuda" else "plasma")
        for i, vid in enumerate([*mine, *[p for p in PEER_ORDER if p in order]]):
            pts = sorted((r["n"], r["gbps"]) for r in rows if r["variant"] == vid)
            xs, ys = [math.log2(n) for n, _ in pts], [g for _, g in pts]
            if vid in _PEER_STYLE:
                ax.plot(xs, ys, label=PEER_LABELS[vid], **_PEER_STYLE[vid])
                labels.append(PEER_LABELS[vid])
            else:
                label = vid.split("/", 1)[1]
                c = cmap(i / max(1, len(mine) - 1) * 0.9)
                ax.plot(xs, ys, marker="o", markersize=3, linewidth=1.2, color=c, label=label)
                labels.append(label)
        ax.set_title(f"{'CUDA stages' if backend == 'cuda' else 'Triton variants'}")
        ax.set_xlabel("log2 n")
        ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, ncol=2, loc="upper left")
        drawn[backend] = labels
    axes[0].set_ylabel("effective bandwidth, GB/s (bytes read + written)")
    fig.suptitle(f"{run.device}: {dtype} sum, effective bandwidth vs n")
    fig.tight_layout()
    _save(fig, path)
    return {"path": str(path), "lines": drawn}


def plot_ladder(run: Run, dtype: str, n: int, path: str | Path) -> dict:
    """The ladder at one n: a bar per CUDA stage and its Triton twin beside it (GB/s), the peers
    and the copy bandwidth as horizontal lines."""
    plt = _plt()
    entries = [
        e
        for e in ladder_table(run, dtype, n)
        if e["kind"] == "stage" and not e["row"]["wrong_demo"]
    ]
    at = _at(run, dtype, n)
    fig, ax = plt.subplots(figsize=(max(10, 0.55 * len(entries) + 4), 6))

    def gb(r: dict | None) -> float:
        return r["gbps"] if r and r["status"] == "ok" and r["gbps"] else 0.0

    xs = list(range(len(entries)))
    w = 0.4
    cats = [e["row"]["variant"].split("/", 1)[-1] for e in entries]
    bar_labels = []
    if entries:
        ax.bar([x - w / 2 for x in xs], [gb(e["row"]) for e in entries], w, label="CUDA")
        ax.bar([x + w / 2 for x in xs], [gb(e["twin"]) for e in entries], w, label="Triton twin")
        bar_labels = ["CUDA", "Triton twin"]
    lines = []
    for vid in PEER_ORDER:
        r = at.get(vid)
        if r and r["status"] == "ok" and r["gbps"]:
            ax.axhline(
                r["gbps"], label=f"{PEER_LABELS[vid]} {r['gbps']:.0f} GB/s", **_PEER_STYLE[vid]
            )
            lines.append(PEER_LABELS[vid])
    ax.set_xticks(xs, [f"{e['row']['stage']}: {c}" for e, c in zip(entries, cats, strict=True)])
    ax.tick_params(axis="x", rotation=60, labelsize=8)
    for t in ax.get_xticklabels():
        t.set_horizontalalignment("right")
    ax.set_ylabel("effective bandwidth, GB/s")
    ax.set_title(f"{run.device}: the ladder at n = {size_label(n)}, {dtype}")
    ax.legend(fontsize=8, loc="upper left")
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    _save(fig, path)
    return {"path": str(path), "bars": bar_labels, "lines": lines, "categories": cats}


def plot_compare(a: Run, b: Run, n_by_dtype: dict[str, int], path: str | Path) -> dict:
    """Per-variant speed ratio t(run A) / t(run B) at one n per dtype (above 1: B faster)."""
    plt = _plt()
    series = {d: compare_rows(a, b, d, n) for d, n in n_by_dtype.items()}
    series = {d: rs for d, rs in series.items() if rs}
    variants: list[str] = []
    for rs in series.values():
        variants += [r["variant"] for r in rs if r["variant"] not in variants]
    fig, ax = plt.subplots(figsize=(10, max(4, 0.28 * len(variants) * max(1, len(series)) + 2)))
    h = 0.8 / max(1, len(series))
    ys = {v: i for i, v in enumerate(variants)}
    for k, (d, rs) in enumerate(series.items()):
        ax.barh(
            [ys[r["variant"]] + (k - (len(series) - 1) / 2) * h for r in rs],
            [r["ratio"] for r in rs],
            h,
            label=f"{d}, n = {size_label(n_by_dtype[d])}",
        )
    ax.axvline(1.0, color="black", linewidth=1)
    ax.set_yticks(range(len(variants)), variants, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel(f"time in A / time in B (above 1: B faster)\nA = {a.label}\nB = {b.label}")
    ax.legend(fontsize=8)
    ax.grid(True, axis="x", alpha=0.3)
    fig.tight_layout()
    _save(fig, path)
    return {"path": str(path), "series": list(series), "variants": variants}


def _save(fig, path: str | Path) -> None:
    plt = _plt()
    try:
        fig.savefig(path, dpi=110)
    except OSError as e:
        raise ReportError(f"cannot write {path}: {e.strerror or e}") from None
    finally:
        plt.close(fig)


# ---------------------------------------------------------------------------------------------
# the whole report


README_BEGIN, README_END = "<!-- ladder:begin -->", "<!-- ladder:end -->"


@dataclass
class Rendered:
    out_dir: Path
    markdown: Path
    plots: dict[str, dict]  # file name -> what the plotting function drew
    ref_n: dict[str, int]
    runs: list[Run]


def _rel(path: Path, start: Path) -> str:
    import os

    return Path(os.path.relpath(path.resolve(), start.resolve())).as_posix()


def _n_tag(n: int) -> str:
    return f"log2n{n.bit_length() - 1}" if n & (n - 1) == 0 else f"n{n}"


def _plot_names(dtype: str, n: int) -> tuple[str, str]:
    return f"bandwidth_vs_n_{dtype}.png", f"ladder_{dtype}_{_n_tag(n)}.png"


def render(paths: list[str | Path], out_dir: str | Path, ref_n: int | None = None) -> Rendered:
    """Render one run (or two: a comparison) into out_dir: report.md and the PNG plots."""
    if not 1 <= len(paths) <= 2:
        raise ReportError("give one run, or two to compare")
    runs = [load_run(p) for p in paths]
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as e:
        raise ReportError(f"cannot write into {out}: {e.strerror or e}") from None
    main = runs[0]
    plots: dict[str, dict] = {}
    refs: dict[str, int] = {}
    md: list[str] = ["# reduce-ladder report", ""]
    if any(r.meta.get("synthetic") for r in runs):
        md += ["> **SYNTHETIC TEST DATA: these numbers were not measured on any GPU.**", ""]
    for k, r in enumerate(runs):
        name = "run" if len(runs) == 1 else f"run {'AB'[k]}"
        dev = r.meta.get("device") or {}
        extra = ", ".join(
            f"{key} {dev[key]}"
            for key in ("sm_count", "capability", "torch", "triton", "cupy")
            if dev.get(key) is not None
        )
        md.append(
            f"- {name}: **{r.device}** ({extra or 'no device details'}); "
            f"{r.kind} file `{Path(r.path).name}`, {r.created}; {len(r.rows)} rows, "
            f"dtypes {', '.join(r.dtypes())}, n = {', '.join(size_label(n) for n in r.sizes())}"
        )
    md += [
        "",
        "How to read it: *µs* is device time per call (CUDA events, median, L2 flushed between "
        "repetitions); *GB/s* is effective bandwidth (bytes read + bytes written over that "
        "time; for a ladder variant every pass's input and partials, for a peer the input and "
        "its one result, for the copy 2 n itemsize); *% copy* is that as a share of the "
        "device-to-device copy's GB/s at the same n; *× CUB* and *× torch.sum* are t(peer) / "
        "t(variant), so above 1 means faster than the peer. *graph µs* (n ≤ 2^20) is device "
        "time per call replayed from a CUDA graph (the kernels without launch gaps), *call µs* "
        "the host wall time of one synchronized Python call (what a caller waits).",
        "",
    ]
    for dtype in main.dtypes():
        n = reference_n(main, dtype, ref_n if ref_n in main.sizes(dtype) else None)
        refs[dtype] = n
        bw_name, ladder_name = _plot_names(dtype, n)
        plots[bw_name] = plot_bandwidth_vs_n(main, dtype, out / bw_name)
        plots[ladder_name] = plot_ladder(main, dtype, n, out / ladder_name)
        md += [f"## {dtype}", "", f"### The ladder at n = {size_label(n)} ({n:,})", ""]
        md += [markdown_ladder(main, dtype, n), f"![ladder {dtype}]({ladder_name})", ""]
        md += [
            f"### Effective bandwidth vs n ({dtype})",
            "",
            f"![bandwidth {dtype}]({bw_name})",
            "",
        ]
        header, body = sweep_table(main, dtype, "gbps", ".0f")
        md += ["Effective GB/s (✗: failed check):", "", markdown_table(header, body)]
        header, body = sweep_table(main, dtype, "pct_copy", ".0f")
        md += ["% of copy bandwidth:", "", markdown_table(header, body)]
        small = [s for s in main.sizes(dtype) if s <= 2**20]
        if small:
            md += _small_section(main, dtype, small)
        md += [
            f"<details><summary>Every {dtype} measurement, with its ratios</summary>",
            "",
            markdown_table(ALL_HEADER, all_rows_cells(main, dtype)),
            "</details>",
            "",
        ]
    bad = [r for r in main.rows if r["status"] != "ok" and not r["wrong_demo"]]
    if bad:
        md += ["## Failed checks", ""]
        md += [
            f"- {r['variant']} {r['dtype']} n={r['n']}: {r['status']} {r['message']}" for r in bad
        ]
        md.append("")
    if len(runs) == 2:
        a, b = runs
        common = {d: refs.get(d) or reference_n(a, d) for d in a.dtypes() if d in b.dtypes()}
        common = {d: n for d, n in common.items() if n in b.sizes(d)}
        md += ["## Comparison", "", f"A = {a.label}, B = {b.label}.", ""]
        if common:
            plots["compare.png"] = plot_compare(a, b, common, out / "compare.png")
            for d, n in common.items():
                rows = compare_rows(a, b, d, n)
                md += [
                    f"{d}, n = {size_label(n)}: time in A / time in B (above 1: B faster)",
                    "",
                    markdown_table(
                        ("variant", "A µs", "B µs", "A / B"),
                        (
                            [r["variant"], _us(r["ms_a"]), _us(r["ms_b"]), f"{r['ratio']:.2f}"]
                            for r in rows
                        ),
                    ),
                ]
            md += ["![comparison](compare.png)", ""]
        else:
            md += ["The two runs share no dtype and size; nothing to compare.", ""]
    report = out / "report.md"
    try:
        report.write_text("\n".join(md))
    except OSError as e:
        raise ReportError(f"cannot write {report}: {e.strerror or e}") from None
    return Rendered(out, report, plots, refs, runs)


def _small_section(run: Run, dtype: str, sizes: list[int]) -> list[str]:
    rows = [r for r in run.rows if r["dtype"] == dtype and r["n"] in sizes]
    by = {(r["variant"], r["n"]): r for r in rows}
    header = ["variant", *[f"{size_label(n)} graph / call µs" for n in sizes]]
    body = []
    for vid in variant_order(rows):
        cells = [vid]
        for n in sizes:
            r = by.get((vid, n))
            cells.append("-" if r is None else f"{_us(r['graph_ms'])} / {_us(r['call_ms'])}")
        body.append(cells)
    return [
        f"### Small sizes: launch overhead ({dtype})",
        "",
        "Device time per call from CUDA-graph replay (what the kernels cost) beside the host wall "
        "time of one synchronized Python call (what a caller pays):",
        "",
        markdown_table(header, body),
    ]


def readme_block(rendered: Rendered, readme: Path, command: str) -> str:
    run = rendered.runs[0]
    lines = [
        README_BEGIN,
        f"<!-- generated by: {command} -- do not edit by hand -->",
        "",
        f"Measured on **{run.device}** (`{_rel(Path(run.path), readme.parent)}`, {run.created}).",
        "",
    ]
    for dtype, n in rendered.ref_n.items():
        lines += [f"**{dtype}, n = {size_label(n)}**", "", markdown_ladder(run, dtype, n)]
    main_plot = rendered.out_dir / _plot_names(run.dtypes()[0], 1)[0]
    lines += [
        f"![effective bandwidth vs n]({_rel(main_plot, readme.parent)})",
        "",
        f"Full report: [{_rel(rendered.markdown, readme.parent)}]"
        f"({_rel(rendered.markdown, readme.parent)}).",
        README_END,
    ]
    return "\n".join(lines)


def check_readme(readme: str | Path) -> str:
    """The README's text, or a ReportError when it cannot be read or lacks the marker block."""
    p = Path(readme)
    try:
        text = p.read_text()
    except OSError as e:
        raise ReportError(f"cannot read {p}: {e.strerror or e}") from None
    i, j = text.find(README_BEGIN), text.find(README_END)
    if i < 0 or j < i:
        raise ReportError(
            f"{p} has no {README_BEGIN} ... {README_END} block; add those two marker lines "
            "where the ladder table and plot should go"
        )
    return text


def update_readme(readme: str | Path, rendered: Rendered, command: str) -> None:
    """Replace the block between README_BEGIN and README_END in readme."""
    p = Path(readme)
    text = check_readme(p)
    i, j = text.find(README_BEGIN), text.find(README_END)
    new = text[:i] + readme_block(rendered, p, command) + text[j + len(README_END) :]
    try:
        p.write_text(new)
    except OSError as e:
        raise ReportError(f"cannot write {p}: {e.strerror or e}") from None
