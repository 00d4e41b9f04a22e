"""Devices compared (`reduce-ladder compare`): N result folders (results/<device>/, the first the
baseline), per result source, variant, dtype and n each device's time, t(baseline) / t(device)
and the datasheets' ratio (README.md says how to read it). Renders OUT/README.md and
compare.json; its plots are harness.report.plots.plot_devices. The runs of one report
(`reduce-ladder report A.json B.json ...`) are compared the same way (run_points)."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from statistics import median
from string import ascii_uppercase

from harness.core import dtypes
from harness.core.device import datasheet_bw
from harness.core.sizes import size_label
from harness.report import markdown as md
from harness.report.documents import Document, ReportError, load_document
from harness.report.documents import rows as doc_rows
from harness.report.ladder_table import variant_order
from harness.report.markdown import num, numbers, us
from harness.report.records import COMPARE_SCHEMA

# source -> (its files' glob inside the folder, read in name order; what its time is)
SOURCES = {
    "ladder": ("ladder-*.json", "device time of the whole reduction (CUDA events)"),
    "fastest": ("fastest.json", "device time, the fastest pair and the peers"),
    "fastest-more-dtypes": ("fastest-more-dtypes.json", "device time, every dtype"),
    "bench": ("bench.json", "device time (pytest-benchmark sweep, every n)"),
    "seed004": ("seed004.json", "device time, seed 004's stages"),
    "callable": ("callable.json", "time per call from Python, back to back"),
}
ENV_FILE = "env.txt"
BANDWIDTH_BOUND_N = 2**24  # from here the ladder's good stages move data at near the datasheet
LAUNCH_BOUND_N = 2**16  # up to here a call is launch latency, not bandwidth
NEAR = 0.10  # "near the datasheet": within 10 % of its ratio
BOUND_FRACTION = 0.5  # the baseline reads at half its datasheet bandwidth or more
OUTLIERS = 6

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
    points: dict[Key, tuple[str, float]] = field(default_factory=dict)  # -> (family, ms)
    order: list[str] = field(default_factory=list)  # variants, ladder order

    @property
    def bandwidth(self) -> float | None:
        return datasheet_bw(self.device)


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


def result_files(folder: Path) -> dict[str, list[Path]]:
    """source -> the files of that source in folder (sorted), only sources that have some."""
    found = ((s, sorted(p for p in folder.glob(g) if p.is_file())) for s, (g, _) in SOURCES.items())
    return {s: ps for s, ps in found if ps}


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
            globs = ", ".join(glob for glob, _ in SOURCES.values())
            raise ReportError(f"{p}: holds no result file ({globs})")
    if len({p.resolve() for p in paths}) != len(paths):
        raise ReportError("a folder is named twice; name each device folder once")
    if len(paths) < 2:
        raise ReportError("give two device folders or more: the first is the baseline")
    return paths


def load_device(folder: Path) -> DeviceRun:
    """Every point of every result file in folder (the first file of a source wins a key it
    shares with a later one), with env.txt as the GPU session writes it: nvidia-smi's CSV header
    and row, then free lines."""
    env, env_file = {}, folder / ENV_FILE
    lines = [ln.strip() for ln in env_file.read_text().splitlines()] if env_file.is_file() else []
    lines = [ln for ln in lines if ln]
    if len(lines) >= 2 and "," in lines[0]:
        heads, vals = ([c.strip() for c in ln.split(",")] for ln in lines[:2])
        env, lines = dict(zip(heads, vals, strict=False)), lines[2:]
    run = DeviceRun(folder, folder.name, env.get("name", ""), env, tuple(lines))
    found = []
    for source, paths in result_files(folder).items():
        run.files[source] = [p.name for p in paths]
        for doc in map(load_document, paths):
            found += doc.results
            run.device = run.device or (doc.device if doc.results else "")
            for key, point in points(doc, source).items():
                run.points.setdefault(key, point)
    run.order = variant_order(found)
    return run


def points(doc: Document, source: str) -> dict[Key, tuple[str, float]]:
    """The document's passing timed points (a case's whole reduction, a callable entry's time
    per call; no wrong demonstrations): key -> (variant family, ms)."""
    ident = {r.variant: (r.v.family or r.v.backend, r.v.wrong) for r in doc.results}
    out: dict[Key, tuple[str, float]] = {}
    for x in doc_rows(doc):
        family, wrong = ident.get(x.variant, ("callable", False))
        metric = "call" if x.suite == "callable" else "total"
        if x.metric == metric and x.check in ("ok", "") and x.median_ms and not wrong:
            out.setdefault((source, x.variant, x.dtype, x.n), (family, x.median_ms))
    return out


def expected_ratios(runs: list[DeviceRun]) -> tuple[float | None, ...]:
    """Per device after the first: bw(device) / bw(baseline) (None where one is unknown)."""
    base = runs[0].bandwidth
    return tuple(r.bandwidth / base if base and r.bandwidth else None for r in runs[1:])


def device_rows(runs: list[DeviceRun]) -> list[DeviceRow]:
    """Every key the baseline timed and another device timed too, by source (SOURCES order),
    dtype, variant (ladder order; callable entries by name) and n."""
    rank = {v: i for i, v in enumerate(dict.fromkeys(v for r in runs for v in r.order))}
    src_rank = {s: i for i, s in enumerate(SOURCES)}
    out = []
    for key, (family, _) in runs[0].points.items():
        ms = tuple(r.points[key][1] if key in r.points else None for r in runs)
        ratios = tuple(ms[0] / m if m else None for m in ms[1:])
        if any(x is not None for x in ratios):
            out.append(DeviceRow(key[0], family, *key[1:], ms, ratios))
    out.sort(key=lambda r: (src_rank[r.source], r.dtype != "float32", r.dtype,
                            rank.get(r.variant, len(rank)), r.variant, r.n))  # fmt: skip
    return out


def rel(path: Path, start: Path) -> str:
    return Path(os.path.relpath(path.resolve(), start.resolve())).as_posix()


def stand_out(runs: list[DeviceRun], rows: list[DeviceRow]) -> list[str]:
    """Bullets computed from the rows, per other device and shared source: the median ratio where
    the baseline reads at BOUND_FRACTION of its datasheet bandwidth or more (the datasheet ratio
    applies), at large n below that, at launch-bound n; the rows furthest from the datasheet;
    and the files only some folders have."""
    base, out = runs[0], []

    def bound(r: DeviceRow) -> bool:  # the baseline's input bytes / time over its datasheet's
        if not base.bandwidth or not r.ms[0] or r.dtype not in dtypes.NAMES:
            return False
        gbps = r.n * dtypes.get(r.dtype).itemsize / (r.ms[0] * 1e-3)
        return gbps / base.bandwidth >= BOUND_FRACTION

    big, small = size_label(BANDWIDTH_BOUND_N), size_label(LAUNCH_BOUND_N)
    groups = (  # (what, which rows, whether the datasheet ratio applies)
        (f"where {base.label} reads at >= {BOUND_FRACTION:.0%} of its datasheet bandwidth", bound,
         True),
        (f"n >= {big} below that", lambda r: r.n >= BANDWIDTH_BOUND_N and not bound(r), True),
        (f"n <= {small} (launch-bound)", lambda r: r.n <= LAUNCH_BOUND_N, False),
    )  # fmt: skip
    for k, (dev, exp) in enumerate(zip(runs[1:], expected_ratios(runs), strict=True)):
        out.append(
            f"- **{dev.label}** against **{base.label}** (t({base.label}) / t({dev.label})):"
        )
        for source in [s for s in SOURCES if all(s in r.files for r in runs)]:
            mine = [r for r in rows if r.source == source and r.ratios[k] is not None]
            for what, which, applies in groups:
                if not (ratios := [r.ratios[k] for r in mine if which(r)]):
                    continue
                x, line = median(ratios), f"  - {source}, {what}: median over {len(ratios)}"
                line += f" results = {x:.2f}"
                if applies and exp:
                    near = sum(1 for r in ratios if abs(r / exp - 1) <= NEAR)
                    line += f" (datasheet {exp:.2f}, measured / datasheet {x / exp:.2f}); {near}"
                    line += f" of {len(ratios)} within {NEAR:.0%} of the datasheet ratio"
                out.append(line + ".")
        far = [r for r in rows if r.n >= BANDWIDTH_BOUND_N and r.ratios[k] is not None]
        if exp is not None and far:
            far.sort(key=lambda r: (-abs(math.log(r.ratios[k] / exp)), r.source, r.variant,
                                    r.dtype, r.n))  # fmt: skip
            out.append(f"  - furthest from the datasheet ratio {exp:.2f}, n >= {big}:")
            out += [f"    - `{r.variant}` ({r.source}, {r.dtype}, n = {size_label(r.n)}): "
                    f"{us(r.ms[0])} µs on {base.label}, {us(r.ms[k + 1])} µs on {dev.label}: "
                    f"ratio {r.ratios[k]:.2f}, {r.ratios[k] / exp:.2f} x the datasheet's."
                    for r in far[:OUTLIERS]]  # fmt: skip
    for s, (glob, _) in SOURCES.items():
        have = [r.label for r in runs if s in r.files]
        if have and len(have) < len(runs):
            compared = base.label in have and len(have) > 1
            how = "compared where the folders have it." if compared else "not compared."
            out.append(f"- {s} ({glob}) is only in {', '.join(have)}: {how}")
    return out


def ratio_tables(
    rows: list[DeviceRow], sizes: dict[str, int], labels: list[str],
    expected: tuple[float | None, ...] = (), variant=str,
) -> Iterator[tuple[str, list[md.Column], list[DeviceRow]]]:  # fmt: skip
    """Per dtype -> n of sizes: its title, the columns and its rows at that n. The columns: per
    row variant(its id), each device's µs, the ratio t(first) / t(device) per other device and,
    given the datasheets' ratios, the measured one over the datasheet's."""
    others = list(enumerate(labels[1:]))

    def ratio(k: int, over: float | None = 1.0) -> Callable[[DeviceRow], str]:
        return lambda r: num(r.ratios[k] / over if r.ratios[k] and over else None, ".2f")

    columns = [md.Column("variant", lambda r: variant(r.variant)),
               *(numbers(f"{x} µs", lambda r, k=k: us(r.ms[k])) for k, x in enumerate(labels)),
               *(numbers(f"{labels[0]} / {o}", ratio(k)) for k, o in others),
               *(numbers(f"/ datasheet ({o})", ratio(k, e))
                 for (k, o), e in zip(others, expected, strict=False))]  # fmt: skip
    for d, n in sizes.items():
        yield f"{d}, n = {size_label(n)}", columns, [r for r in rows if r.dtype == d and r.n == n]


def render(runs: list[DeviceRun], out_dir: Path, plots: list[str], command: str) -> str:
    """README.md."""
    rows, exp = device_rows(runs), (None, *expected_ratios(runs))
    base, others = runs[0], runs[1:]
    header = ("folder", "device", "driver", "memory", "datasheet bandwidth", "expected ratio",
              "versions (env.txt)", "result files read")  # fmt: skip
    cells = [[f"[{r.label}]({rel(r.folder, out_dir)})" + (" (baseline)" if k == 0 else ""),
              r.device or "?", r.env.get("driver_version", "?"),
              r.env.get("memory.total [MiB]", "?"),
              "unknown" if r.bandwidth is None else f"{r.bandwidth / 1e12:.2f} TB/s",
              "1" if k == 0 else num(exp[k], ".2f"), "<br>".join(r.env_notes) or "-",
              "; ".join(f"{s}: {', '.join(fs)}" for s, fs in r.files.items())]
             for k, r in enumerate(runs)]  # fmt: skip
    lines = [
        "# Devices compared", "", f"<!-- generated by: {command} -- do not edit by hand -->", "",
        f"Baseline: **{base.label}** ({base.device}). Ratio = t({base.label}) / t(device): above "
        "1 the device is faster. Expected ratio = the device's datasheet memory bandwidth over "
        f"the baseline's (harness.core.device.DATASHEET_BYTES_PER_S): what a sum bound by memory "
        "bandwidth should show; a launch-bound or latency-bound one sits elsewhere.", "",
        "## Devices", "", *md.markdown_lines(header, cells), "",
        "## What stands out", "", *stand_out(runs, rows), "",
        "## Ratio against n", "",
        "Per variant family (columns) and dtype (rows): each variant a thin line, the family's "
        "median a thick one, the datasheet's expected ratio dashed; one colour per device "
        f"compared with {base.label}.", "", *[f"![{p}]({p})" for p in plots], "",
        "## Tables", "",
        "Per result source and dtype, at the largest n timed on the baseline and another device "
        f"(every n: compare.json). Compared with {base.label}: "
        + ", ".join(o.label for o in others) + ".", "",
    ]  # fmt: skip
    for s, (glob, measure) in SOURCES.items():
        if mine := [r for r in rows if r.source == s]:
            lines += [f"### {s}", "", f"{measure}; from {glob}.", ""]
            dts = sorted({r.dtype for r in mine}, key=lambda d: (d != "float32", d))
            sizes = {d: max(r.n for r in mine if r.dtype == d) for d in dts}
            labels, variant = [r.label for r in runs], "`{}`".format
            for title, columns, at in ratio_tables(mine, sizes, labels, exp[1:], variant):
                lines += [f"**{title}**", "", md.column_table(columns, at)]
    return "\n".join(lines).rstrip() + "\n"


def compare_json(runs: list[DeviceRun], out_dir: Path) -> dict:
    exp, labels = (None, *expected_ratios(runs)), [r.label for r in runs]

    def by_label(labels: list[str], values: tuple) -> dict:
        return {k: x for k, x in zip(labels, values, strict=True) if x is not None}

    devices = [{"label": r.label, "folder": rel(r.folder, out_dir), "device": r.device,
                "env": r.env, "env_notes": list(r.env_notes),
                "datasheet_bytes_per_s": r.bandwidth, "expected_ratio": exp[k], "files": r.files}
               for k, r in enumerate(runs)]  # fmt: skip
    rows = [{**{k: v for k, v in asdict(row).items() if k not in ("ms", "ratios")},
             "ms": by_label(labels, row.ms), "ratio_to_baseline": by_label(labels[1:], row.ratios)}
            for row in device_rows(runs)]  # fmt: skip
    return {"schema": COMPARE_SCHEMA, "baseline": runs[0].label,
            "ratio": "t(baseline) / t(device); expected: bandwidth(device) / bandwidth(baseline)",
            "devices": devices, "rows": rows}  # fmt: skip


# ---------------------------------------------------------------------------------------------
# runs compared with the first (`reduce-ladder report A.json B.json ...`)


def run_points(runs: list[Document]) -> list[DeviceRun]:
    """The runs as the devices of a comparison, lettered A, B, ..., each a ladder file's points."""
    return [DeviceRun(Path(run.path).parent, ascii_uppercase[k], run.device,
                      points=points(run, "ladder"), order=variant_order(run.results))
            for k, run in enumerate(runs)]  # fmt: skip


def common_sizes(runs: list[Document], preferred: dict[str, int]) -> dict[str, int]:
    """dtype -> the n to compare at: the first run's reference n, where every run has it."""
    return {d: n for d in runs[0].dtypes() if (n := preferred.get(d)) is not None
            and all(n in r.sizes(d) for r in runs[1:])}  # fmt: skip


def _run_tables(runs: list[Document], sizes: dict[str, int]):
    """ratio_tables of the variants that passed in A and in another run, in ladder order."""
    letters = list(ascii_uppercase[: len(runs)])
    return ratio_tables(device_rows(run_points(runs)), sizes, letters)


def runs_line(runs: list[Document]) -> str:
    return ", ".join(f"{ascii_uppercase[k]} = {r.label}" for k, r in enumerate(runs)) + "."


def runs_markdown(runs: list[Document], sizes: dict[str, int]) -> list[str]:
    """report.md's comparison: one table per dtype at its n."""
    out = ["## Comparison", "", runs_line(runs), ""]
    if not sizes:
        return [*out, "The runs share no dtype and size; nothing to compare.", ""]
    others = " / ".join(ascii_uppercase[1 : len(runs)])
    for title, columns, rows in _run_tables(runs, sizes):
        what = f"time in A / time in {others} (above 1: {others} faster)"
        out += [f"{title}: {what}", "", md.column_table(columns, rows, align=False)]
    return [*out, "![comparison](compare.png)", ""]


def runs_rich_tables(runs: list[Document], sizes: dict[str, int]) -> list:
    """The same tables for the terminal."""
    what = "time in A / time in the other run (above 1: the other run is faster)"
    return [md.terminal_table(f"{title}: {what}", columns, rows, caption=runs_line(runs))
            for title, columns, rows in _run_tables(runs, sizes)]  # fmt: skip
