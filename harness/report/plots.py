"""Every plot of the reports (matplotlib, Agg; no GPU needed) goes through chart: a value by size
or shape from long-format rows, a line, bar or dot per hue, a panel per group; each report only
names its columns. Drawn here: bandwidth_vs_n_<dtype>.png (GB/s against n, a panel per group of
stages, the peers on each), ladder_<dtype>_<n>.png (a CUDA bar and its Triton twin's per row) and
the device comparisons (t(baseline) / t(device) against n, a panel per dtype and family)."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from statistics import median

from harness.core.catalogue import COPY_ID, CUB_ID, NOCUB_ID, TORCH_SUM_ID
from harness.core.sizes import size_label
from harness.report.devices import SOURCES, DeviceRow, DeviceRun, expected_ratios
from harness.report.documents import Document, ReportError
from harness.report.ladder_table import PEER_LABELS, ladder_rows, variant_order
from harness.report.records import Result


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


PEER_STYLE = {CUB_ID: {"color": "black", "linestyle": "--"},
              NOCUB_ID: {"color": "gray", "linestyle": ":"},
              TORCH_SUM_ID: {"color": "tab:red", "linestyle": "-."},
              COPY_ID: {"color": "black", "linestyle": "-", "linewidth": 2.5}}  # fmt: skip
# On the bandwidth panels: CuPy without CUB is three decades below the rest at large n and would
# squash every panel's axis; it stays in the tables.
PANEL_PEERS = (CUB_ID, TORCH_SUM_ID, COPY_ID)
PANEL_LINES = 5  # variants per panel; with the three peers, at most 8 lines
PANEL_COLUMNS = 4  # the committed figures: 7 panels (float32), 10 (int32)
MARKERS = ("o", "s", "^", "D", "v", "P", "X")
# Lines of one panel often nearly coincide (stage 4's four pairings): each its own dash as well
# as its own colour and marker, so that overlapping lines stay apart.
DASHES = ("-", "--", "-.", ":", (0, (5, 1, 1, 1)))


def _style(k: int, count: int, kind: str) -> dict:
    """The k-th of count hues: its own colour, marker and (for lines) dash."""
    colours = _plt().get_cmap("tab10" if count <= 10 else "tab20").colors
    style = {"color": colours[k % len(colours)]}
    if kind == "line":
        style |= {"marker": MARKERS[k % len(MARKERS)], "markersize": 4, "linewidth": 1.4,
                  "linestyle": DASHES[k % len(DASHES)]}  # fmt: skip
    elif kind == "dot":
        style |= {"marker": MARKERS[k // len(colours) % len(MARKERS)], "s": 14}
    return style


def chart(
    rows: Iterable[dict], path: str | Path, *, x: str, y: str, hue: str, panel: str | None = None,
    kind: str = "line", cols: int = 0, porder: Sequence = (), xorder: Sequence = (),
    xscale: str = "linear", yscale: str | Mapping[str, str] = "linear", ylim: tuple | None = None,
    yticks: Sequence[float] = (), title: str = "", xlabel: str = "", ylabel: str = "",
    refs: Sequence[tuple[float, str | None, dict]] = (), styles: Mapping[str, dict] | None = None,
    size: tuple[float, float] = (8, 4.5), rotate: int = 0, legend: str = "each", dpi: int = 110,
) -> dict:  # fmt: skip
    """One figure from long-format rows (dicts): a panel per value of `panel` (in porder, else
    first seen; `cols` to a row), in each a line, bar or dots per value of `hue` of `y` against
    `x` (categorical where its values are strings: in xorder, else first seen, bars
    and dots side by side). xscale "log2" is a base-2 log axis, yscale one per panel or for all;
    refs (y, label, style) horizontal lines; styles a hue's matplotlib keywords (the rest cycle);
    yticks the only ticks; `size` one panel's; legend "each" panel or one "right" of the last.
    Returns what it drew: {panel: {hue: [(x, y), ...]}} (panel None without panels)."""
    rows = list(rows)
    panels = (list(porder or dict.fromkeys(r[panel] for r in rows)) if panel else []) or [None]
    hues = list(dict.fromkeys(r[hue] for r in rows))
    cats = list(xorder or dict.fromkeys(r[x] for r in rows))
    categorical = any(isinstance(c, str) for c in cats)
    cols = cols or len(panels)
    nrows = math.ceil(len(panels) / cols)
    fig, axes = _plt().subplots(nrows, cols, figsize=(size[0] * cols, size[1] * nrows),
                                squeeze=False, sharex=cols == 1)  # fmt: skip
    styles = {h: (styles or {}).get(h) or _style(k, len(hues), kind) for k, h in enumerate(hues)}
    drawn: dict = {}
    for ax, name in zip(axes.flat, panels, strict=False):
        ax.set_title(name if panel else title, fontsize=10)
        drawn[name] = by_hue = {}  # this panel's hues, first seen first: their points
        for r in rows:
            if not panel or r[panel] == name:
                by_hue.setdefault(r[hue], []).append((r[x], r[y]))
        if panel and not by_hue:  # a panel of porder with no rows: its title on an empty cell
            ax.set_axis_off()
            continue
        if xscale == "log2":
            ax.set_xscale("log", base=2)
        ax.set_yscale(yscale.get(name, "linear") if isinstance(yscale, Mapping) else yscale)
        for h, pts in by_hue.items():
            width = (0.8 if kind == "bar" else 0.6) / len(hues)  # bars and dots side by side
            if categorical:
                shift = (hues.index(h) - (len(hues) - 1) / 2) * width if kind != "line" else 0
                xs = [cats.index(p[0]) + shift for p in pts]
            else:
                pts.sort()
                xs = [p[0] for p in pts]
            style, ys = {"label": h, **styles[h]}, [p[1] for p in pts]
            if kind == "bar":
                ax.bar(xs, ys, width, **style)
            else:
                (ax.scatter if kind == "dot" else ax.plot)(xs, ys, **style)
        for at, label, style in refs:
            ax.axhline(at, label=label, **style)
        if categorical:
            ax.set_xticks(range(len(cats)), cats, rotation=rotate, fontsize=7 if rotate else None,
                          ha="right" if 0 < rotate < 90 else "center")  # fmt: skip
        if ylim:
            ax.set_ylim(*ylim)
        if yticks:  # plain numbers (0.70, 1.00), not powers of ten
            ax.set_yticks(yticks, [f"{t:.2f}" for t in yticks], minor=False)
            ax.set_yticks([], minor=True)
        ax.grid(True, alpha=0.3)
        ax.set_xlabel(xlabel)
        if legend == "each" and ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7, loc="upper left")
    for ax in list(axes.flat)[len(panels) :]:
        ax.set_visible(False)
    for ax in axes[:, 0]:
        ax.set_ylabel(ylabel)
    if legend == "right":  # every panel's entries, one per label
        found: dict = {}
        for ax in axes.flat:
            found |= dict(zip(*ax.get_legend_handles_labels()[::-1], strict=True))
        axes.flat[len(panels) - 1].legend(found.values(), found, fontsize=6, loc="center left",
                                          ncol=2 if len(found) > 12 else 1,
                                          bbox_to_anchor=(1.01, 0.5))  # fmt: skip
    if panel and title:
        fig.suptitle(title)
    save(fig, path, dpi=dpi)
    return drawn


def bandwidth_panels(found: list[Result]) -> list[tuple[str, list[str]]]:
    """[(title, variant ids)]: CUDA then Triton, consecutive stages packed while they fit
    PANEL_LINES, a group larger than that split evenly ("004 (1 of 2)": each title its own)."""
    first: dict[str, Result] = {}
    for r in found:
        first.setdefault(r.variant, r)
    panels: list[tuple[str, list[str]]] = []
    for backend, title in (("cuda", "CUDA"), ("triton", "Triton")):
        groups: dict[str, list[str]] = defaultdict(list)
        for vid in variant_order(first.values()):  # a panel's unit: a stage, or a seed's family
            v = first[vid].v
            if v.backend == backend:  # a seed's own family, else the ladder's stage
                groups[v.family if v.family != "ladder" else f"stage {v.stage}"].append(vid)
        chunks: list[tuple[str, str, list[str]]] = []  # (first group, last group, ids)
        for name, ids in groups.items():
            parts = math.ceil(len(ids) / PANEL_LINES)
            size = math.ceil(len(ids) / parts)
            for i in range(0, len(ids), size):
                label = f"{name} ({i // size + 1} of {parts})" if parts > 1 else name
                if chunks and len(chunks[-1][2]) + len(ids[i : i + size]) <= PANEL_LINES:
                    chunks[-1] = (chunks[-1][0], label, chunks[-1][2] + ids[i : i + size])
                else:
                    chunks.append((label, label, ids[i : i + size]))
        panels += [(f"{title}: {' to '.join(dict.fromkeys([a, b]))}", ids) for a, b, ids in chunks]
    return panels


def plot_bandwidth_vs_n(run: Document, dtype: str, path: str | Path) -> dict:
    """Effective GB/s against n, one panel per group of stages, the peers on each; a linear
    axis from 0 (the stages differ at large n, hundreds to thousands of GB/s, which a log axis
    squeezed into its top decade; small n, launch-bound, sits near 0)."""
    rows = [r for r in run.results if r.dtype == dtype and r.ok and r.gbps and not r.v.wrong]
    panels = bandwidth_panels([r for r in rows if r.v.backend != "peer"])
    peers = [p for p in PANEL_PEERS if any(r.variant == p for r in rows)]
    long = [{"panel": title, "line": PEER_LABELS.get(vid) or vid.split("/", 1)[1], "n": r.n,
             "gbps": r.gbps} for title, ids in panels for vid in [*ids, *peers]
            for r in rows if r.variant == vid]  # fmt: skip
    styles = {vid.split("/", 1)[1]: _style(i, PANEL_LINES, "line")
              for _, ids in panels for i, vid in enumerate(ids)}  # fmt: skip
    styles |= {PEER_LABELS[p]: PEER_STYLE[p] for p in peers}
    drawn = chart(long, path, x="n", y="gbps", hue="line", panel="panel", cols=PANEL_COLUMNS,
                  xscale="log2", ylim=(0, None), size=(5.2, 4.3), xlabel="n", styles=styles,
                  ylabel="effective GB/s (read + written)",
                  title=f"{run.device}: {dtype} sum, effective bandwidth vs n "
                  "(cupy.sum without CUB: see the tables)")  # fmt: skip
    return {"path": str(path), "panels": [{"title": t, "lines": list(drawn[t])} for t, _ in panels]}


def plot_ladder(run: Document, dtype: str, n: int, path: str | Path) -> dict:
    """The ladder at one n: per row a CUDA bar and its Triton twin's bar (GB/s); a Triton variant
    no CUDA row twins has only its Triton bar; the peers and the copy as horizontal lines."""
    rows = ladder_rows(run.results, dtype, n)
    entries = [e for e in rows if e.kind == "stage" and not (e.main and e.main.v.wrong)]
    long = [{"row": f"{e.stage}: {e.short_id}", "bar": bar,
             "gbps": r.gbps if r and r.ok and r.gbps else 0.0}
            for bar in ("CUDA", "Triton twin") for e in entries
            for r in [e.main if bar == "CUDA" else e.twin]]  # fmt: skip
    peers = [e.main for e in rows if e.kind == "peer" and e.main.variant in PEER_STYLE
             and e.main.ok and e.main.gbps]  # fmt: skip
    refs = [(r.gbps, f"{PEER_LABELS[r.variant]} {r.gbps:.0f} GB/s",
             PEER_STYLE[r.variant]) for r in peers]  # fmt: skip
    drawn = chart(long, path, x="row", y="gbps", hue="bar", kind="bar", refs=refs, rotate=60,
                  size=(max(10, 0.55 * len(entries) + 4), 6), ylabel="effective bandwidth, GB/s",
                  title=f"{run.device}: the ladder at n = {size_label(n)}, {dtype}")  # fmt: skip
    return {"path": str(path), "bars": list(drawn[None]),
            "lines": [PEER_LABELS[r.variant] for r in peers],
            "categories": [e.short_id for e in entries]}  # fmt: skip


def save(fig, path: str | Path, dpi: int = 110) -> None:
    """fig laid out tight and written to path; closed either way, a ReportError where the file
    cannot be written."""
    fig.tight_layout()
    try:
        fig.savefig(path, dpi=dpi)
    except OSError as e:
        raise ReportError(f"cannot write {path}: {e.strerror or e}") from None
    finally:
        _plt().close(fig)


DEVICE_TICKS = (0.1, 0.25, 0.5, 0.7, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 2.0, 3.0, 4.0, 6.0, 10.0)
FAMILY_ORDER = ("ladder", "004", "001", "fastest", "peer", "callable")
CAP = 1.3  # the shared y axis ends here at most; a ratio beyond it is drawn at the edge


def y_range(rows: list[DeviceRow], expected) -> tuple[float, float]:
    """One ratio range for every panel of a figure (panels compare at a glance), 0.65..1.05 at
    least, with a margin, and no higher than CAP (one far outlier squeezed every other line)."""
    values = [x for r in rows for x in r.ratios if x is not None]
    values += [e for e in expected if e is not None]
    return min([0.65, *values]) * 0.97, min(max([1.05, *values]) * 1.03, CAP)


def plot_device_source(path: Path, title: str, rows: list[DeviceRow], runs: list[DeviceRun]):
    """One source's figure: a panel per family and dtype (a row of families per dtype), in each
    t(baseline) / t(device) against n: a thin line per variant, a thick one for the median, the
    datasheet's ratio dashed, one colour per device; returns what it drew (the title, the
    panels, the variants)."""
    rank = {f: i for i, f in enumerate(FAMILY_ORDER)}
    fams = sorted({r.family for r in rows}, key=lambda f: (rank.get(f, len(rank)), f))
    dts = sorted({r.dtype for r in rows}, key=lambda d: (d != "float32", d))
    grid = [f"{f}, {d}" for d in dts for f in fams]
    expected = expected_ratios(runs)
    lo, hi = y_range(rows, expected)
    long, styles, refs = [], {}, [(1.0, None, {"color": "gray", "linewidth": 0.6})]
    for k, dev in enumerate(runs[1:]):
        colour = _style(k, len(runs), "bar")["color"]  # tab10's k-th
        mine = [r for r in rows if r.ratios[k] is not None]
        at = defaultdict(list)  # (panel, n) -> ratios, for the median
        for r in mine:
            panel = f"{r.family}, {r.dtype}"
            at[panel, r.n].append(r.ratios[k])
            long.append({"panel": panel, "n": r.n, "line": f"{dev.label} {r.variant}",
                         "ratio": min(max(r.ratios[k], lo), hi)})  # fmt: skip
            styles[f"{dev.label} {r.variant}"] = {"color": colour, "alpha": 0.3, "linewidth": 0.8,
                "marker": ".", "markersize": 3, "label": f"{dev.label}, one variant"}  # fmt: skip
        long += [{"panel": p, "n": n, "line": f"{dev.label} median", "ratio": median(v)}
                 for (p, n), v in at.items()]  # fmt: skip
        styles[f"{dev.label} median"] = {"color": colour, "linewidth": 2.4, "marker": "o"}
        if expected[k] is not None:
            refs.append((expected[k], f"{dev.label} datasheet",
                         {"color": colour, "linestyle": "--", "linewidth": 1.2}))  # fmt: skip
    drawn = chart(long, path, x="n", y="ratio", hue="line", panel="panel", cols=len(fams),
                  porder=grid, xscale="log2", yscale="log", ylim=(lo, hi), styles=styles, refs=refs,
                  yticks=[t for t in DEVICE_TICKS if lo <= t <= hi], legend="right",
                  size=(max(3.6, 6.6 / len(fams)), 2.9), xlabel="n", title=title, dpi=100,
                  ylabel=f"t({runs[0].label}) / t(device)")  # fmt: skip
    return {"path": str(path), "title": title, "panels": [p for p in grid if drawn[p]],
            "variants": list(dict.fromkeys(r.variant for r in rows))}  # fmt: skip


def plot_devices(out_dir: Path, rows: list[DeviceRow], runs: list[DeviceRun]) -> list[str]:
    """compare_<source>.png per source with rows, in SOURCES order; the names written."""
    names = []
    for s in SOURCES:
        if mine := [r for r in rows if r.source == s]:
            names.append(f"compare_{s}.png")
            title = f"{s}: time on {runs[0].label} / time on each device"
            plot_device_source(out_dir / names[-1], title, mine, runs)
    return names
