"""Devices compared: N result folders (results/<device>/, one GPU session each), the same variant
timed on each. Per result source (a kind of file the session writes), variant, dtype and n: each
device's time, the ratio to the first folder (the baseline) and the ratio the datasheets' memory
bandwidth predicts. `reduce-ladder compare` renders it (harness.report.devices_markdown, the plots
in harness.report.devices_plot).

Ratio convention (as in harness.report.comparison): t(baseline) / t(device), above 1 the device
is faster. The datasheet's expectation for a kernel bound by memory bandwidth is
bw(device) / bw(baseline) (H100 SXM against H200: 3.35 / 4.8 = 0.70); launch-bound sizes and
latency-bound code sit near 1 instead, which is what the comparison is there to show.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from harness.core import dtypes
from harness.core.device import datasheet_bw
from harness.report.documents import Document, ReportError, load_document
from harness.report.ladder_table import variant_order
from harness.report.records import ResultRecord
from harness.report.rows import rows


@dataclass(frozen=True)
class Source:
    """One kind of result file in a device folder."""

    name: str
    patterns: tuple[str, ...]  # globs inside the folder, read in this order
    measure: str  # what its time is


SOURCES = (
    Source("ladder", ("ladder-*.json",), "device time of the whole reduction (CUDA events)"),
    Source("fastest", ("fastest.json",), "device time, the fastest pair and the peers"),
    Source("fastest-more-dtypes", ("fastest-more-dtypes.json",), "device time, every dtype"),
    Source("bench", ("bench.json",), "device time (pytest-benchmark sweep, every n)"),
    Source("seed004", ("seed004.json",), "device time, seed 004's stages"),
    Source("callable", ("callable.json",), "time per call from Python, back to back"),
)
ENV_FILE = "env.txt"


@dataclass(frozen=True)
class Point:
    """One timed result: a variant (or peer, or callable entry) at one dtype and n."""

    source: str
    family: str
    variant: str
    dtype: str
    n: int
    ms: float


Key = tuple[str, str, str, int]  # source, variant, dtype, n


@dataclass
class DeviceRun:
    """One folder: its device, environment, the files read per source, and their timed points."""

    folder: Path
    label: str  # the folder's name, e.g. nvidia-h200
    device: str  # the GPU's name as the result files give it
    env: dict[str, str] = field(default_factory=dict)  # env.txt's columns
    env_notes: tuple[str, ...] = ()  # env.txt's other lines (versions)
    files: dict[str, list[str]] = field(default_factory=dict)  # source -> file names
    points: dict[Key, Point] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)  # variants, ladder order

    @property
    def bandwidth(self) -> float | None:
        return datasheet_bw(self.device)


def result_files(folder: Path) -> dict[str, list[Path]]:
    """source -> the files of that source in folder (sorted), only sources that have some."""
    out = {}
    for s in SOURCES:
        found = sorted({p for pat in s.patterns for p in folder.glob(pat) if p.is_file()})
        if found:
            out[s.name] = found
    return out


def check_folders(folders: Iterable[str | Path]) -> list[Path]:
    """The folders as paths; a ReportError (exit 2) for one that does not exist, is not a folder
    or holds no result file, for a folder named twice, or for fewer than two."""
    paths = [Path(f) for f in folders]
    for p in paths:
        if not p.exists():
            raise ReportError(f"{p}: no such folder")
        if not p.is_dir():
            raise ReportError(
                f"{p}: not a folder (expected a device folder like results/nvidia-h200)"
            )
        if not result_files(p):
            globs = ", ".join(pat for s in SOURCES for pat in s.patterns)
            raise ReportError(f"{p}: holds no result file ({globs})")
    resolved = [p.resolve() for p in paths]
    if len(set(resolved)) != len(resolved):
        raise ReportError("a folder is named twice; name each device folder once")
    if len(paths) < 2:
        raise ReportError("give two device folders or more: the first is the baseline")
    return paths


def read_env(path: Path) -> tuple[dict[str, str], tuple[str, ...]]:
    """env.txt as the GPU session writes it: nvidia-smi's CSV header and row, then free lines."""
    if not path.is_file():
        return {}, ()
    lines = [ln.strip() for ln in path.read_text().splitlines() if ln.strip()]
    if len(lines) >= 2 and "," in lines[0]:
        heads = [h.strip() for h in lines[0].split(",")]
        vals = [v.strip() for v in lines[1].split(",")]
        return dict(zip(heads, vals, strict=False)), tuple(lines[2:])
    return {}, tuple(lines)


def _points(source: str, doc: Document) -> list[Point]:
    """The document's long-format rows (report.rows) as points: a record's whole reduction, a
    callable entry's time per call; passing results only, no wrong demonstrations."""
    metric = "call" if doc.kind == "callable" else "total"
    ident = {r.variant: (r.family or r.backend, r.wrong_demo) for r in doc.records}
    out = []
    for x in rows(doc):
        family, wrong = ident.get(x.variant, ("callable", False))
        if x.metric == metric and x.check in ("ok", "") and x.median_ms and not wrong:
            out.append(Point(source, family, x.variant, x.dtype, x.n, x.median_ms))
    return out


def load_device(folder: Path) -> DeviceRun:
    """Every timed point of every result file in folder (the first file of a source wins a key
    it shares with a later one)."""
    env, notes = read_env(folder / ENV_FILE)
    run = DeviceRun(folder, folder.name, env.get("name", ""), env, notes)
    records: list[ResultRecord] = []
    for source, paths in result_files(folder).items():
        run.files[source] = [p.name for p in paths]
        for p in paths:
            doc = load_document(p)
            records += doc.records
            run.device = run.device or (doc.device if doc.records else "")
            for pt in _points(source, doc):
                run.points.setdefault((pt.source, pt.variant, pt.dtype, pt.n), pt)
    run.order = variant_order(records)
    return run


@dataclass(frozen=True)
class DeviceRow:
    """One (source, variant, dtype, n) timed on the baseline and at least one other device."""

    source: str
    family: str
    variant: str
    dtype: str
    n: int
    ms: tuple[float | None, ...]  # per device, baseline first
    ratios: tuple[float | None, ...]  # t(baseline) / t(device), one per device after the first

    def to_json(self, runs: list[DeviceRun]) -> dict:
        return {
            "source": self.source,
            "family": self.family,
            "variant": self.variant,
            "dtype": self.dtype,
            "n": self.n,
            "ms": {r.label: m for r, m in zip(runs, self.ms, strict=True) if m is not None},
            "ratio_to_baseline": {
                r.label: x for r, x in zip(runs[1:], self.ratios, strict=True) if x is not None
            },
        }


def expected_ratios(runs: list[DeviceRun]) -> tuple[float | None, ...]:
    """Per device after the first: bw(device) / bw(baseline) from the datasheets (None where a
    bandwidth is unknown)."""
    base = runs[0].bandwidth
    return tuple(r.bandwidth / base if base and r.bandwidth else None for r in runs[1:])


def _rank(runs: list[DeviceRun]) -> dict[str, int]:
    order: list[str] = []
    for r in runs:
        order += [v for v in r.order if v not in order]
    return {v: i for i, v in enumerate(order)}


def device_rows(runs: list[DeviceRun]) -> list[DeviceRow]:
    """Every key the baseline timed and another device timed too, by source (SOURCES order),
    dtype, variant (ladder order; callable entries by name) and n."""
    rank = _rank(runs)
    src_rank = {s.name: i for i, s in enumerate(SOURCES)}
    base = runs[0]
    out = []
    for key, pt in base.points.items():
        ms = tuple(r.points[key].ms if key in r.points else None for r in runs)
        ratios = tuple(ms[0] / m if m else None for m in ms[1:])
        if any(x is not None for x in ratios):
            out.append(DeviceRow(pt.source, pt.family, pt.variant, pt.dtype, pt.n, ms, ratios))
    out.sort(
        key=lambda r: (
            src_rank[r.source],
            r.dtype != "float32",
            r.dtype,
            rank.get(r.variant, len(rank)),
            r.variant,
            r.n,
        )
    )
    return out


def shared_sources(runs: list[DeviceRun]) -> list[str]:
    """Sources every folder has, in SOURCES order."""
    return [s.name for s in SOURCES if all(s.name in r.files for r in runs)]


def read_fraction(row: DeviceRow, bandwidth: float | None) -> float | None:
    """The baseline's input bytes / its time as a fraction of its datasheet bandwidth: near 1 the
    sum is bound by memory bandwidth there, and the datasheet ratio is the one to expect."""
    if not bandwidth or not row.ms[0] or row.dtype not in dtypes.NAMES:
        return None
    return row.n * dtypes.get(row.dtype).itemsize / (row.ms[0] * 1e-3) / bandwidth


def log_distance(ratio: float, expected: float) -> float:
    """How far a measured ratio is from the expected one, symmetric: |ln(ratio / expected)|."""
    return abs(math.log(ratio / expected))


def median(values: list[float]) -> float:
    s = sorted(values)
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2
