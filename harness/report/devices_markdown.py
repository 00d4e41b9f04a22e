"""results/compare/README.md and compare.json: the devices compared (from each folder's env.txt
and result files), what stands out (computed from the rows: nothing typed in), and per result
source and dtype the table at the largest n every device timed. Rows from harness.report.devices.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from harness.core.sizes import size_label
from harness.report import documents
from harness.report.devices import (
    SOURCES,
    DeviceRow,
    DeviceRun,
    device_rows,
    expected_ratios,
    log_distance,
    median,
    read_fraction,
    shared_sources,
)
from harness.report.markdown import RIGHT, markdown_lines, num, us
from harness.report.records import COMPARE_SCHEMA

BANDWIDTH_BOUND_N = 2**24  # from here the ladder's good stages move data at near the datasheet
LAUNCH_BOUND_N = 2**16  # up to here a call is launch latency, not bandwidth
NEAR = 0.10  # "near the datasheet": within 10 % of its ratio
BOUND_FRACTION = 0.5  # the baseline reads at half its datasheet bandwidth or more
OUTLIERS = 6


def rel(path: Path, start: Path) -> str:
    return Path(os.path.relpath(path.resolve(), start.resolve())).as_posix()


def _ratio(x: float | None) -> str:
    return num(x, ".2f")


def _tbps(bw: float | None) -> str:
    return "unknown" if bw is None else f"{bw / 1e12:.2f} TB/s"


def devices_table(runs: list[DeviceRun], out_dir: Path) -> list[str]:
    exp = (None, *expected_ratios(runs))
    rows = []
    for k, r in enumerate(runs):
        files = "; ".join(f"{s}: {', '.join(fs)}" for s, fs in r.files.items())
        rows.append(
            [
                f"[{r.label}]({rel(r.folder, out_dir)})" + (" (baseline)" if k == 0 else ""),
                r.device or "?",
                r.env.get("driver_version", "?"),
                r.env.get("memory.total [MiB]", "?"),
                _tbps(r.bandwidth),
                "1" if k == 0 else _ratio(exp[k]),
                "<br>".join(r.env_notes) or "-",
                files,
            ]
        )
    header = (
        "folder",
        "device",
        "driver",
        "memory",
        "datasheet bandwidth",
        "expected ratio",
        "versions (env.txt)",
        "result files read",
    )
    return markdown_lines(header, rows)


def _sentence_ratio(x: float, exp: float | None) -> str:
    if exp is None:
        return f"{x:.2f}"
    return f"{x:.2f} (datasheet {exp:.2f}, measured / datasheet {x / exp:.2f})"


def _values(rows: Iterable[DeviceRow], k: int) -> list[float]:
    return [r.ratios[k] for r in rows if r.ratios[k] is not None]


def _group_line(what: str, ratios: list[float], exp: float | None) -> str:
    line = f"{what}: median over {len(ratios)} results = " + _sentence_ratio(median(ratios), exp)
    if exp is not None:
        near = sum(1 for x in ratios if abs(x / exp - 1) <= NEAR)
        line += f"; {near} of {len(ratios)} within {NEAR:.0%} of the datasheet ratio"
    return line + "."


def stand_out(runs: list[DeviceRun], rows: list[DeviceRow]) -> list[str]:
    """Bullets computed from the rows, per other device and shared source: the median ratio where
    the baseline reads at BOUND_FRACTION of its datasheet bandwidth or more (bandwidth-bound:
    the datasheet ratio applies), at large n below that (other limits), at launch-bound n; the
    rows furthest from the datasheet; and the files only some folders have."""
    out = []
    base = runs[0]
    for k, (dev, exp) in enumerate(zip(runs[1:], expected_ratios(runs), strict=True)):
        out.append(
            f"- **{dev.label}** against **{base.label}** (t({base.label}) / t({dev.label})):"
        )
        for source in shared_sources(runs):
            mine = [r for r in rows if r.source == source]
            frac = {id(r): read_fraction(r, base.bandwidth) for r in mine}
            bound = _values((r for r in mine if (frac[id(r)] or 0) >= BOUND_FRACTION), k)
            big = [
                r for r in mine if r.n >= BANDWIDTH_BOUND_N and (frac[id(r)] or 0) < BOUND_FRACTION
            ]
            small = _values((r for r in mine if r.n <= LAUNCH_BOUND_N), k)
            if bound:
                what = (
                    f"{source}, where {base.label} reads at >= {BOUND_FRACTION:.0%} of its "
                    "datasheet bandwidth"
                )
                out.append("  - " + _group_line(what, bound, exp))
            if _values(big, k):
                what = f"{source}, n >= {size_label(BANDWIDTH_BOUND_N)} below that"
                out.append("  - " + _group_line(what, _values(big, k), exp))
            if small:
                what = f"{source}, n <= {size_label(LAUNCH_BOUND_N)} (launch-bound)"
                out.append("  - " + _group_line(what, small, None))
        if exp is not None:
            out += _outliers(rows, k, exp, dev, base)
    for s in SOURCES:
        have = [r.label for r in runs if s.name in r.files]
        if have and len(have) < len(runs):
            compared = base.label in have and len(have) > 1
            out.append(
                f"- {s.name} ({', '.join(s.patterns)}) is only in {', '.join(have)}: "
                + ("compared where the folders have it." if compared else "not compared.")
            )
    return out


def _outliers(rows: list[DeviceRow], k: int, exp: float, dev: DeviceRun, base: DeviceRun):
    far = [r for r in rows if r.n >= BANDWIDTH_BOUND_N and r.ratios[k] is not None]
    far.sort(key=lambda r: (-log_distance(r.ratios[k], exp), r.source, r.variant, r.dtype, r.n))
    if not far:
        return []
    out = [
        f"  - furthest from the datasheet ratio {exp:.2f}, n >= {size_label(BANDWIDTH_BOUND_N)}:"
    ]
    for r in far[:OUTLIERS]:
        x = r.ratios[k]
        out.append(
            f"    - `{r.variant}` ({r.source}, {r.dtype}, n = {size_label(r.n)}): "
            f"{us(r.ms[0])} µs on {base.label}, {us(r.ms[k + 1])} µs on {dev.label}: "
            f"ratio {x:.2f}, {x / exp:.2f} x the datasheet's."
        )
    return out


def reference_n(rows: Iterable[DeviceRow]) -> int | None:
    """The largest n of the rows (their table is shown there)."""
    return max((r.n for r in rows), default=None)


def source_tables(runs: list[DeviceRun], rows: list[DeviceRow]) -> list[str]:
    exp = expected_ratios(runs)
    others = runs[1:]
    out = []
    for s in SOURCES:
        mine = [r for r in rows if r.source == s.name]
        if not mine:
            continue
        out += [f"### {s.name}", "", f"{s.measure}; from {', '.join(s.patterns)}.", ""]
        for dtype in sorted({r.dtype for r in mine}, key=lambda d: (d != "float32", d)):
            at = [r for r in mine if r.dtype == dtype]
            n = reference_n(at)
            at = [r for r in at if r.n == n]
            header = [
                "variant",
                *[f"{r.label} µs" for r in runs],
                *[f"{runs[0].label} / {o.label}" for o in others],
                *[f"/ datasheet ({o.label})" for o in others],
            ]
            cells = (
                [
                    f"`{r.variant}`",
                    *[us(m) for m in r.ms],
                    *[_ratio(x) for x in r.ratios],
                    *[
                        _ratio(x / e if x and e else None)
                        for x, e in zip(r.ratios, exp, strict=True)
                    ],
                ]
                for r in at
            )
            out += [f"**{dtype}, n = {size_label(n)}**", ""]
            out += markdown_lines(header, cells, ("l", *[RIGHT] * (len(header) - 1)))
            out.append("")
    return out


def render(runs: list[DeviceRun], out_dir: Path, plots: list[str], command: str) -> str:
    rows = device_rows(runs)
    base, others = runs[0], runs[1:]
    lines = [
        "# Devices compared",
        "",
        f"<!-- generated by: {command} -- do not edit by hand -->",
        "",
        f"Baseline: **{base.label}** ({base.device}). Ratio = t({base.label}) / t(device): above "
        "1 the device is faster. Expected ratio = the device's datasheet memory bandwidth over "
        f"the baseline's (harness.core.device.DATASHEET_BYTES_PER_S): what a sum bound by memory "
        "bandwidth should show; a launch-bound or latency-bound one sits elsewhere.",
        "",
        "## Devices",
        "",
        *devices_table(runs, out_dir),
        "",
        "## What stands out",
        "",
        *stand_out(runs, rows),
        "",
        "## Ratio against n",
        "",
        "Per variant family (columns) and dtype (rows): each variant a thin line, the family's "
        "median a thick one, the datasheet's expected ratio dashed; one colour per device "
        f"compared with {base.label}.",
        "",
        *[f"![{p}]({p})" for p in plots],
        "",
        "## Tables",
        "",
        "Per result source and dtype, at the largest n timed on the baseline and another device "
        f"(every n: compare.json). Compared with {base.label}: "
        + ", ".join(o.label for o in others)
        + ".",
        "",
        *source_tables(runs, rows),
    ]
    return "\n".join(lines).rstrip() + "\n"


def compare_json(runs: list[DeviceRun], out_dir: Path) -> dict:
    exp = (None, *expected_ratios(runs))
    return {
        "schema": COMPARE_SCHEMA,
        "baseline": runs[0].label,
        "ratio": "t(baseline) / t(device); expected: bandwidth(device) / bandwidth(baseline)",
        "devices": [
            {
                "label": r.label,
                "folder": rel(r.folder, out_dir),
                "device": r.device,
                "env": r.env,
                "env_notes": list(r.env_notes),
                "datasheet_bytes_per_s": r.bandwidth,
                "expected_ratio": exp[k],
                "files": r.files,
            }
            for k, r in enumerate(runs)
        ],
        "rows": [row.to_json(runs) for row in device_rows(runs)],
    }


def write_json(path: Path, doc: dict) -> None:
    documents.write_document(path, doc)
