"""The axis suite's report, a pivot of its rows (harness.studies.axis_bench; config "MxN dim=D"):
per (dtype, shape, dim) the best CUDA and Triton stage, the fastest pair, each peer (peer time /
ours: >= 1.00 at least as fast) and the pair's % of the read limit (reading x once at the copy's
bandwidth: half the copy's time); the targets, each with its misses; a plot of % by shape."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from statistics import geometric_mean

from harness.report import documents
from harness.report.markdown import Column, column_table, num, times, verdict
from harness.report.records import Row

FASTEST = ("cuda/axis-fastest", "triton/axis-fastest")
TORCH = "peer/torch.sum"
PEERS = {TORCH: "x torch.sum", "peer/torch.compile": "x compile", "peer/cupy.sum": "x cupy",
         "peer/cuda.compute": "x cuda.compute"}  # fmt: skip
# The targets' thresholds: every shape, short rows and narrow column sums, the
# large-input geomean, and the Triton fastest against the CUDA one.
EVERY_SHAPE = 1.00
SHORT_ROWS_MAX, NARROW_COLUMNS_MAX, NARROW_TARGET = 128, 1024, 1.5
LARGE_BYTES, LARGE_GEOMEAN = 32 * 2**20, 0.85
TRITON_OVER_CUDA = 0.9


@dataclass(frozen=True)
class Line:
    dtype: str
    shape: tuple[int, ...]
    dim: int
    ms: dict[str, float]  # subject -> median device time (ms), timed subjects only
    read_bytes: int

    def best(self, prefix: str) -> tuple[str, float]:
        got = [(v, t) for v, t in self.ms.items() if v.startswith(prefix)]
        return min(got, key=lambda p: p[1]) if got else ("", math.nan)

    @property
    def pair_ms(self) -> float:
        return min((self.ms[v] for v in FASTEST if v in self.ms), default=math.nan)

    def ratio(self, peer: str) -> float:
        return self.ms.get(peer, math.nan) / self.pair_ms

    @property
    def read_limit(self) -> float:
        """The pair's time as a fraction of the read limit (1.0 = at the copy's bandwidth)."""
        return self.ms.get("copy", math.nan) / 2 / self.pair_ms

    @property
    def triton_over_cuda(self) -> float:
        return self.ms.get(FASTEST[0], math.nan) / self.ms.get(FASTEST[1], math.nan)

    @property
    def label(self) -> str:
        return f"{self.dtype} {'x'.join(map(str, self.shape))} dim {self.dim}"


def lines(rows: Iterable[Row]) -> list[Line]:
    """One line per (dtype, shape, dim), in the rows' order."""
    cells: dict[tuple, dict[str, float]] = {}
    nbytes: dict[tuple, int] = {}
    for r in rows:
        if r.suite != "axis" or r.metric != "total" or r.median_ms is None:
            continue
        key = (r.dtype, tuple(r.shape), int(r.config.split("dim=")[1]))
        cells.setdefault(key, {})[r.variant] = r.median_ms
        if r.variant == "copy" and r.bytes:
            nbytes[key] = r.bytes // 2
    return [Line(*k, ms, nbytes.get(k, 0)) for k, ms in cells.items()]


def _us(ms: float) -> str:
    return num(ms * 1e3, ",.1f")


def _best(prefix: str) -> Callable[[Line], str]:
    """The stage of `prefix` ("cuda/axis-") fastest on the line, and its time."""
    return lambda ln: f"{ln.best(prefix)[0].removeprefix(prefix)} {_us(ln.best(prefix)[1])}"


COLUMNS = (
    Column("dtype, shape, dim", lambda ln: ln.label),
    Column("best CUDA stage (us)", _best("cuda/axis-")),
    Column("best Triton stage (us)", _best("triton/axis-")),
    Column("pair (us)", lambda ln: _us(ln.pair_ms)),
    *(Column(h, lambda ln, p=p: times(ln.ratio(p))) for p, h in PEERS.items()),
    Column("% read limit", lambda ln: f"{100 * ln.read_limit:.0f}%"),
    Column("Triton/CUDA", lambda ln: times(ln.triton_over_cuda)),
)


def _verdict(name: str, ls: list[Line], figure: Callable[[Line], float], least: float) -> str:
    """A target (figure(line) >= least on every line of ls) met, or its misses."""
    misses = [f"{ln.label} {times(figure(ln))}" for ln in ls if not figure(ln) >= least]
    if not ls:
        return f"- {name}: no shape measured"
    return verdict(name, len(misses), len(ls), ": " + "; ".join(misses))


def _short_or_narrow(ln: Line) -> bool:
    if ln.dim == len(ln.shape) - 1:
        return ln.shape[-1] <= SHORT_ROWS_MAX
    return len(ln.shape) == 2 and ln.dim == 0 and ln.shape[1] <= NARROW_COLUMNS_MAX


def targets(ls: list[Line]) -> list[str]:
    x_torch = lambda ln: ln.ratio(TORCH)  # noqa: E731
    narrow = [ln for ln in ls if _short_or_narrow(ln)]
    large = [ln.read_limit for ln in ls if ln.read_bytes >= LARGE_BYTES and ln.read_limit > 0]
    geo_got = "no input of 32 MB or more measured"
    if large:
        geo = geometric_mean(large)
        short = "" if geo >= LARGE_GEOMEAN else f", short by {LARGE_GEOMEAN - geo:.1%} points"
        geo_got = f"{geo:.1%} over {len(large)} cases{short}"
    return [
        _verdict(f"the pair >= {EVERY_SHAPE:.2f}x torch.sum", ls, x_torch, EVERY_SHAPE),
        _verdict(f"the pair >= {NARROW_TARGET}x torch.sum on rows of <= {SHORT_ROWS_MAX} and "
                 f"dim-0 sums of <= {NARROW_COLUMNS_MAX} columns", narrow, x_torch, NARROW_TARGET),
        f"- geomean % of the read limit over inputs >= 32 MB (target >= {LARGE_GEOMEAN:.0%}): "
        + geo_got,
        _verdict(f"Triton fastest >= {TRITON_OVER_CUDA}x the CUDA fastest", ls,
                 lambda ln: ln.triton_over_cuda, TRITON_OVER_CUDA),
    ]  # fmt: skip


def markdown(rows: Iterable[Row], device: str) -> str:
    ls = lines(rows)
    out = [f"# The axis suite on {device}", "", "Device time per call (CUDA events, L2 flushed "
           "by reading, median); ratios are peer time / the better of the fastest pair.", "",
           "## Targets", "", *targets(ls), "", "## Per shape", "",
           column_table(COLUMNS, ls, align=False)]  # fmt: skip
    return "\n".join(out)


def plot(rows: Iterable[Row], path: Path, device: str) -> dict:
    """% of the read limit by shape, a panel per dtype: the pair and each peer at its input's
    size (the copy's time over the sum's, the copy reading and writing the input once each)."""
    from harness.report.plots import chart

    ls = lines(rows)
    long = [{"dtype": ln.dtype, "mb": ln.read_bytes / 2**20, "line": name.removeprefix("peer/"),
             "pct": 100 * ln.read_limit / (1 if name == "pair" else ln.ratio(name))}
            for name in ("pair", *PEERS) for ln in ls]  # fmt: skip
    return chart([r for r in long if math.isfinite(r["pct"])], path, x="mb", y="pct",
                 hue="line", panel="dtype", kind="dot", xscale="log2", ylim=(0, 115),
                 refs=[(100, "read limit", {"color": "black", "linewidth": 1})],
                 xlabel="input (MiB)", ylabel="% of the read limit", size=(6, 4.5),
                 title=f"Sums along an axis, {device}")  # fmt: skip


PLOT_NAME = "axis.png"


def load(*paths: str | Path) -> list[Row]:
    """The axis rows of one or more ROWS documents (`reduce-ladder bench axis --json`), in order;
    ReportError naming the file that holds none."""
    found: list[Row] = []
    for path in paths:
        mine = [r for r in documents.rows(documents.load_document(path)) if r.suite == "axis"]
        if not lines(mine):
            raise documents.ReportError(
                f"{path}: no timed axis rows (`reduce-ladder bench axis --json`)"
            )
        found += mine
    return found


def page(rows: list[Row], out_dir: Path, run: object = None) -> str:
    """axis.md (the report's page, harness.report.run_report.PAGES), axis.png drawn beside it."""
    plot(rows, out_dir / PLOT_NAME, rows[0].device)
    return markdown(rows, rows[0].device) + f"\n![% of the read limit by shape]({PLOT_NAME})"
