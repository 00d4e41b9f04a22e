"""The cross-device plots: per result source one PNG, compare_<source>.png; a panel per dtype
(rows) and variant family (columns); in each, t(baseline) / t(device) against log2 n, a thin line
per variant, a thick one for the family's median, and the datasheet's expected ratio dashed, one
colour per device compared with the baseline. Returns the file names it wrote."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from harness.report.devices import SOURCES, DeviceRow, DeviceRun, expected_ratios, median
from harness.report.documents import ReportError

DEVICE_COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown")
RATIO_TICKS = (0.1, 0.25, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 2.0, 3.0, 4.0, 6.0, 10.0)
FAMILY_ORDER = ("ladder", "004", "001", "fastest", "peer", "callable")


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _families(rows: list[DeviceRow]) -> list[str]:
    found = {r.family for r in rows}
    rank = {f: i for i, f in enumerate(FAMILY_ORDER)}
    return sorted(found, key=lambda f: (rank.get(f, len(rank)), f))


def _dtypes(rows: list[DeviceRow]) -> list[str]:
    return sorted({r.dtype for r in rows}, key=lambda d: (d != "float32", d))


OUTLIER = 0.04  # a variant this far (relative) from its family's median at the largest n is named
CAP = 1.3  # the shared y axis ends here at most; a ratio beyond it is drawn at the edge, named


def _name_lines(ax, names: list[tuple[float, float, str]], colour, ylim) -> None:
    """Each (x, y, text) at the right of its line's end, pushed apart so that none overlap (at
    least 1/14 of the log axis between neighbours); a ratio beyond the axis with its value."""
    import math

    lo, hi = ylim
    step = math.log(hi / lo) / 14
    placed: list[float] = []
    for x, y, text in sorted(names, key=lambda t: t[1]):
        at = math.log(min(max(y, lo), hi))
        if placed and at - placed[-1] < step:
            at = placed[-1] + step
        at = min(at, math.log(hi) - step / 2)  # inside the axis, clear of the title
        placed.append(at)
        label = f"{text} ({y:.2f})" if not lo <= y <= hi else text
        ax.annotate(label, (x, min(max(y, lo), hi)), xytext=(x + 0.08, math.exp(at)),
                    fontsize=6, color=colour, va="center", annotation_clip=False)  # fmt: skip


def _panel(ax, rows: list[DeviceRow], runs: list[DeviceRun], expected, ylim) -> None:
    ns = sorted({r.n for r in rows})
    for k, dev in enumerate(runs[1:]):
        colour = DEVICE_COLOURS[k % len(DEVICE_COLOURS)]
        by_variant: dict[str, list[tuple[int, float]]] = defaultdict(list)
        for r in rows:
            if r.ratios[k] is not None:
                by_variant[r.variant].append((r.n.bit_length() - 1, r.ratios[k]))
        last = [pts[-1][1] for pts in map(sorted, by_variant.values())]
        centre = median(last) if last else 1.0
        names = []
        for variant, pts in by_variant.items():
            xs, ys = zip(*sorted(pts), strict=True)
            ax.plot(
                xs,
                [min(max(y, ylim[0]), ylim[1]) for y in ys],
                color=colour,
                alpha=0.3,
                linewidth=0.8,
                marker=".",
                markersize=3,
                label=f"{dev.label}, one variant",
            )
            if abs(ys[-1] / centre - 1) > OUTLIER:  # the lines away from the median, named
                names.append((xs[-1], ys[-1], variant.split("/", 1)[-1]))
        _name_lines(ax, names, colour, ylim)
        med = []
        for n in ns:
            at = [r.ratios[k] for r in rows if r.n == n and r.ratios[k] is not None]
            if at:
                med.append((n.bit_length() - 1, median(at)))
        if med:
            xs, ys = zip(*med, strict=True)
            ax.plot(xs, ys, color=colour, linewidth=2.4, marker="o", label=f"{dev.label} median")
        if expected[k] is not None:
            ax.axhline(
                expected[k],
                color=colour,
                linestyle="--",
                linewidth=1.2,
                label=f"{dev.label} datasheet",
            )
    ax.axhline(1.0, color="gray", linewidth=0.6)
    _ratio_axis(ax, *ylim)
    lo = [n.bit_length() - 1 for n in ns]
    ax.set_xticks(lo, [str(x) for x in lo])
    ax.set_xlim(min(lo) - 0.5, max(lo) + 1.3)  # room on the right for the names


def y_range(rows: list[DeviceRow], expected) -> tuple[float, float]:
    """One ratio range for every panel of a figure (panels compare at a glance), 0.65..1.05 at
    least, with a margin, and no higher than CAP (one far outlier squeezed every other line)."""
    values = [x for r in rows for x in r.ratios if x is not None]
    values += [e for e in expected if e is not None]
    return min([0.65, *values]) * 0.97, min(max([1.05, *values]) * 1.03, CAP)


def _ratio_axis(ax, lo: float, hi: float) -> None:
    """A log y axis labelled with plain ratios (0.70, 1.00, 4.00), not powers of ten, the ticks
    evenly spread (a tick closer than a tenth of the axis to the last one kept is left out)."""
    import math

    from matplotlib.ticker import NullLocator

    ax.set_yscale("log")
    ax.set_ylim(lo, hi)
    gap = math.log(hi / lo) / 10
    ticks: list[float] = []
    for t in (t for t in RATIO_TICKS if lo <= t <= hi):
        if t == 1.0 or not ticks or math.log(t / ticks[-1]) >= gap:
            if ticks and ticks[-1] != 1.0 and math.log(t / ticks[-1]) < gap:
                ticks.pop()  # 1.00 wins over a neighbour too close to it
            ticks.append(t)
    ax.set_yticks(ticks, [f"{t:.2f}" for t in ticks])
    ax.yaxis.set_minor_locator(NullLocator())


def plot_source(path: Path, source: str, rows: list[DeviceRow], runs: list[DeviceRun]) -> None:
    plt = _plt()
    fams, dts = _families(rows), _dtypes(rows)
    expected = expected_ratios(runs)
    ylim = y_range(rows, expected)
    fig, axes = plt.subplots(
        len(dts),
        len(fams),
        figsize=(max(3.6 * len(fams), 6.0) + 0.6, 2.9 * len(dts) + 1.2),
        squeeze=False,
    )
    for i, d in enumerate(dts):
        for j, f in enumerate(fams):
            ax = axes[i][j]
            mine = [r for r in rows if r.dtype == d and r.family == f]
            if mine:
                _panel(ax, mine, runs, expected, ylim)
            else:
                ax.set_axis_off()
                ax.text(0.5, 0.5, "not timed on both", ha="center", va="center", fontsize=8)
            ax.set_title(f"{f}, {d}", fontsize=9)
            if j == 0:
                ax.set_ylabel(f"t({runs[0].label}) / t(device)", fontsize=8)
            if i == len(dts) - 1:
                ax.set_xlabel("log2 n", fontsize=8)
            ax.tick_params(labelsize=7)
    handles, labels = axes[0][0].get_legend_handles_labels()
    for row in axes:
        for ax in row:
            h, lab = ax.get_legend_handles_labels()
            if len(h) > len(handles):
                handles, labels = h, lab
    unique = dict(zip(labels, handles, strict=True))  # one entry per label
    handles, labels = list(unique.values()), list(unique)
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 4) or 1, fontsize=8)
    fig.suptitle(f"{source}: time on {runs[0].label} / time on each device", fontsize=10)
    fig.tight_layout(rect=(0, 0.05, 1, 0.96))
    try:
        fig.savefig(path, dpi=100)
    except OSError as e:
        raise ReportError(f"cannot write {path}: {e.strerror or e}") from None
    finally:
        plt.close(fig)


def plot_all(out_dir: Path, rows: list[DeviceRow], runs: list[DeviceRun]) -> list[str]:
    """compare_<source>.png per source with rows, in SOURCES order; the names written."""
    names = []
    for s in SOURCES:
        mine = [r for r in rows if r.source == s.name]
        if mine:
            name = f"compare_{s.name}.png"
            plot_source(out_dir / name, s.name, mine, runs)
            names.append(name)
    return names
