"""The report's plots (matplotlib, Agg; no GPU needed). Each returns what it drew, for the tests:

- bandwidth_vs_n_<dtype>.png: effective GB/s against log2 n, one panel per group of stages (at
  most PANEL_LINES variants, so no panel has more than about 8 lines with the peers, which are
  on every panel), integer log2 n ticks, a distinct colour and marker per line;
- ladder_<dtype>_<n>.png: the ladder at one n, a CUDA bar and its Triton twin's bar per row;
- compare.png: per variant, t(run A) / t(other run) on a log axis centred on 1.
"""

from __future__ import annotations

import math
from pathlib import Path

from harness.core import catalogue
from harness.core.sizes import size_label
from harness.report.comparison import compare_rows, run_letter
from harness.report.documents import Document, ReportError
from harness.report.ladder_table import ladder_rows, variant_order
from harness.report.ratios import COPY_ID, CUB_ID, NOCUB_ID, PEER_LABELS, TORCH_ID
from harness.report.records import ResultRecord


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


PEER_STYLE = {
    CUB_ID: {"color": "black", "linestyle": "--"},
    NOCUB_ID: {"color": "gray", "linestyle": ":"},
    TORCH_ID: {"color": "tab:red", "linestyle": "-."},
    COPY_ID: {"color": "black", "linestyle": "-", "linewidth": 2.5},
}
# On the bandwidth panels: CuPy without CUB is three decades below the rest at large n and would
# squash every panel's axis; it stays in the tables.
PANEL_PEERS = (CUB_ID, TORCH_ID, COPY_ID)
PANEL_LINES = 5  # variants per panel; with the three peers, at most 8 lines
MARKERS = ("o", "s", "^", "D", "v", "P", "X")
# Lines of one panel often nearly coincide (stage 4's four pairings): each its own dash as well
# as its own colour and marker, so that overlapping lines stay apart.
DASHES = ("-", "--", "-.", ":", (0, (5, 1, 1, 1)))


def grid_shape(panels: int) -> tuple[int, int]:
    """(rows, cols) of 3 or 4 columns with the fewest empty cells (one is kept for the peers'
    legend where there is room; none is left empty beyond it)."""
    best = min((math.ceil((panels + 1) / c) * c - panels - 1, c) for c in (3, 4))
    cols = best[1] if panels > 2 else max(1, panels)
    return math.ceil((panels + (1 if panels > 2 else 0)) / cols), cols


def _group(r: ResultRecord) -> str:
    """A panel's unit: the stage of a ladder variant, the family of a seed's own rungs."""
    v = catalogue.BY_ID.get(r.variant)
    return v.family if v is not None and v.family not in ("ladder",) else f"stage {r.stage}"


def bandwidth_panels(records: list[ResultRecord]) -> list[tuple[str, list[str]]]:
    """[(title, variant ids)]: CUDA then Triton, consecutive stages packed while they fit
    PANEL_LINES, a group larger than that split evenly."""
    first: dict[str, ResultRecord] = {}
    for r in records:
        first.setdefault(r.variant, r)
    panels: list[tuple[str, list[str]]] = []
    for backend, title in (("cuda", "CUDA"), ("triton", "Triton")):
        ids = [v for v in variant_order(first.values()) if first[v].backend == backend]
        groups: dict[str, list[str]] = {}
        for vid in ids:
            groups.setdefault(_group(first[vid]), []).append(vid)
        chunks: list[tuple[list[str], list[str]]] = []  # (group names, ids)
        for name, members in groups.items():
            parts = math.ceil(len(members) / PANEL_LINES)
            size = math.ceil(len(members) / parts)
            for i in range(0, len(members), size):
                part = members[i : i + size]
                if chunks and len(chunks[-1][1]) + len(part) <= PANEL_LINES:
                    chunks[-1][0].append(name)
                    chunks[-1][1].extend(part)
                else:
                    chunks.append(([name], list(part)))
        for names, members in chunks:
            names = list(dict.fromkeys(names))
            label = names[0] if len(names) == 1 else f"{names[0]} to {names[-1]}"
            panels.append((f"{title}: {label}", members))
    return panels


def plot_bandwidth_vs_n(run: Document, dtype: str, path: str | Path) -> dict:
    """Effective GB/s against log2 n, one panel per group of stages, the peers on each."""
    plt = _plt()
    from matplotlib.ticker import NullLocator

    rows = [
        r for r in run.records if r.dtype == dtype and r.ok and r.gbps_total and not r.wrong_demo
    ]
    panels = bandwidth_panels([r for r in rows if r.backend != "peer"])
    peers = [p for p in PANEL_PEERS if any(r.variant == p for r in rows)]
    nrows, cols = grid_shape(len(panels))
    fig, axes = plt.subplots(
        nrows, cols, figsize=(5.2 * cols, 4.3 * nrows), sharey=True, squeeze=False
    )
    palette = plt.get_cmap("tab10").colors
    log2s = sorted({math.log2(r.n) for r in rows})
    drawn = []
    for ax, (title, ids) in zip(axes.flat, panels, strict=False):
        labels = []
        for i, vid in enumerate(ids):
            pts = sorted((r.n, r.gbps_total) for r in rows if r.variant == vid)
            label = vid.split("/", 1)[1]
            ax.plot(
                [math.log2(n) for n, _ in pts],
                [g for _, g in pts],
                marker=MARKERS[i % len(MARKERS)],
                markersize=4,
                linewidth=1.4,
                linestyle=DASHES[i % len(DASHES)],
                color=palette[i % len(palette)],
                label=label,
            )
            labels.append(label)
        for vid in peers:
            pts = sorted((r.n, r.gbps_total) for r in rows if r.variant == vid)
            ax.plot(
                [math.log2(n) for n, _ in pts],
                [g for _, g in pts],
                label=PEER_LABELS[vid],
                **PEER_STYLE[vid],
            )
            labels.append(PEER_LABELS[vid])
        _integer_ticks(ax, log2s)
        ax.set_title(title, fontsize=10)
        # A linear axis: the stages differ at large n (hundreds to thousands of GB/s), which a
        # log axis from 1 GB/s squeezed into its top decade; small n (launch-bound) sits near 0.
        ax.set_ylim(bottom=0)
        ax.yaxis.set_minor_locator(NullLocator())
        ax.grid(True, alpha=0.3)
        handles, names = ax.get_legend_handles_labels()
        keep = len(ids) if nrows * cols > len(panels) else len(names)  # peers: the spare cell
        ax.legend(handles[:keep], names[:keep], fontsize=7, loc="upper left")
        ax.set_xlabel("log2 n")
        drawn.append({"title": title, "lines": labels})
    spare = list(axes.flat)[len(panels) :]
    for ax in spare:
        ax.set_visible(False)
    if spare and panels:  # the peers' legend, once, in the first spare cell
        first = axes.flat[0].get_legend_handles_labels()
        k = len(panels[0][1])
        spare[0].set_visible(True)
        spare[0].axis("off")
        spare[0].legend(
            first[0][k:], first[1][k:], loc="center", title="on every panel", fontsize=9
        )
    for ax in axes[:, 0]:
        ax.set_ylabel("effective GB/s (read + written)")
    fig.suptitle(
        f"{run.device}: {dtype} sum, effective bandwidth vs n "
        "(cupy.sum without CUB: see the tables)"
    )
    # Fixed margins (inches): tight_layout would measure every tick label of every panel, slowly.
    height, width = fig.get_figheight(), fig.get_figwidth()
    fig.subplots_adjust(
        left=0.8 / width,
        right=1 - 0.15 / width,
        bottom=0.55 / height,
        top=1 - 0.7 / height,
        wspace=0.06,
        hspace=0.45 * 4.3 / (4.3 - 0.4),
    )
    _save(fig, path)
    return {"path": str(path), "panels": drawn}


def _integer_ticks(ax, log2s: list[float]) -> None:
    """Ticks at whole log2 n only: every one when few, else every second."""
    if not log2s:
        return
    lo, hi = math.floor(log2s[0]), math.ceil(log2s[-1])
    step = 1 if hi - lo <= 10 else 2
    ax.set_xticks(range(lo, hi + 1, step))
    ax.set_xlim(lo - 0.5, hi + 0.5)


def plot_ladder(run: Document, dtype: str, n: int, path: str | Path) -> dict:
    """The ladder at one n: per row a CUDA bar and its Triton twin's bar (GB/s); a Triton variant
    no CUDA row twins has only its Triton bar; the peers and the copy as horizontal lines."""
    plt = _plt()
    rows = ladder_rows(run.records, dtype, n)
    entries = [
        e for e in rows if e.kind == "stage" and not (e.main is not None and e.main.wrong_demo)
    ]
    fig, ax = plt.subplots(figsize=(max(10, 0.55 * len(entries) + 4), 6))

    def gb(r: ResultRecord | None) -> float:
        return r.gbps_total if r and r.ok and r.gbps_total else 0.0

    xs = list(range(len(entries)))
    w = 0.4
    bar_labels = []
    if entries:
        ax.bar([x - w / 2 for x in xs], [gb(e.main) for e in entries], w, label="CUDA")
        ax.bar([x + w / 2 for x in xs], [gb(e.twin) for e in entries], w, label="Triton twin")
        bar_labels = ["CUDA", "Triton twin"]
    lines = []
    for e in rows:
        r = e.main
        if e.kind == "peer" and r.variant in PEER_STYLE and r.ok and r.gbps_total:
            label = f"{PEER_LABELS[r.variant]} {r.gbps_total:.0f} GB/s"
            ax.axhline(r.gbps_total, label=label, **PEER_STYLE[r.variant])
            lines.append(PEER_LABELS[r.variant])
    cats = [e.short_id for e in entries]
    ax.set_xticks(xs, [f"{e.stage}: {c}" for e, c in zip(entries, cats, strict=True)])
    ax.tick_params(axis="x", rotation=60, labelsize=8)
    for t in ax.get_xticklabels():
        t.set_horizontalalignment("right")
    ax.set_ylabel("effective bandwidth, GB/s")
    ax.set_title(f"{run.device}: the ladder at n = {size_label(n)}, {dtype}")
    if bar_labels or lines:
        ax.legend(fontsize=8, loc="upper left")
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    _save(fig, path)
    return {"path": str(path), "bars": bar_labels, "lines": lines, "categories": cats}


def plot_compare(runs: list[Document], n_by_dtype: dict[str, int], path: str | Path) -> dict:
    """Per variant, t(A) / t(other run) at one n per dtype, on a log axis centred on 1 (so
    a few per cent either way is visible); titled with every run's device and date."""
    plt = _plt()
    series = []  # (label, rows, index of the ratio)
    for d, n in n_by_dtype.items():
        rows = compare_rows(runs, d, n)
        for k in range(1, len(runs)):
            pts = [r for r in rows if r.ratios[k - 1] is not None]
            if pts:
                label = f"{d}, n = {size_label(n)}: A / {run_letter(k)}"
                series.append((label, pts, k - 1))
    variants: list[str] = []
    for _, pts, _ in series:
        variants += [r.variant for r in pts if r.variant not in variants]
    fig, ax = plt.subplots(figsize=(10, max(4, 0.28 * len(variants) * max(1, len(series)) + 2.5)))
    h = 0.8 / max(1, len(series))
    ys = {v: i for i, v in enumerate(variants)}
    spread = 1.05
    for k, (label, pts, i) in enumerate(series):
        ratios = [r.ratios[i] for r in pts]
        spread = max(spread, *[max(x, 1 / x) for x in ratios])
        ax.barh(
            [ys[r.variant] + (k - (len(series) - 1) / 2) * h for r in pts],
            [x - 1 for x in ratios],  # bars grow from 1 either way
            h,
            left=1,
            label=label,
        )
    _ratio_axis(ax, spread * 1.05)
    ax.axvline(1.0, color="black", linewidth=1)
    ax.set_yticks(range(len(variants)), variants, fontsize=7)
    ax.set_ylim(len(variants) - 0.5, -0.5)  # the first variant on top, no empty margin
    ax.set_xlabel("time in A / time in the other run (log scale; above 1: the other run faster)")
    title = "\n".join(
        f"{run_letter(k)}: {r.device}, {r.created or 'no date'} ({Path(r.path).name})"
        for k, r in enumerate(runs)
    )
    ax.set_title(title, fontsize=9)
    if series:
        ax.legend(fontsize=8)
    ax.grid(True, axis="x", which="both", alpha=0.3)
    fig.tight_layout()
    _save(fig, path)
    return {
        "path": str(path),
        "series": [label for label, _, _ in series],
        "variants": variants,
        "title": title,
    }


RATIO_TICKS = (1.02, 1.05, 1.1, 1.25, 1.5, 2.0, 3.0, 5.0, 10.0, 100.0)


def _ratio_axis(ax, limit: float) -> None:
    """A log x axis from 1 / limit to limit (symmetric about 1), ticks at plain ratios."""
    from matplotlib.ticker import NullLocator

    ax.set_xscale("log")
    ax.set_xlim(1 / limit, limit)
    gap = math.log(limit) / 6  # no two ticks closer than a sixth of the half-range
    ticks = sorted({1.0, *RATIO_TICKS, *(1 / t for t in RATIO_TICKS)})
    ticks = [t for t in ticks if 1 / limit <= t <= limit and (t == 1 or abs(math.log(t)) >= gap)]
    ax.set_xticks(ticks, [f"{t:.2f}" for t in ticks])
    ax.xaxis.set_minor_locator(NullLocator())


def _save(fig, path: str | Path) -> None:
    plt = _plt()
    try:
        fig.savefig(path, dpi=110)
    except OSError as e:
        raise ReportError(f"cannot write {path}: {e.strerror or e}") from None
    finally:
        plt.close(fig)
