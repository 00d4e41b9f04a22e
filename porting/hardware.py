"""The guide's Nsight Compute parts, from the newest committed profile.json: per stage, each
CUDA variant's counters beside its Triton twins' (the guide: the summary columns; the appendix:
every column at every profiled size), whether this GPU shows the seeds' lesson about the stage,
and a link to the seeds' own tables (the profile's rendering: harness.report.profile_tables).
"""

from __future__ import annotations

import os
from pathlib import Path

from harness.core.catalogue import Variant
from harness.core.sizes import size_label
from harness.report import profile_tables
from harness.report.documents import ReportError, load_document
from harness.report.markdown import RIGHT, markdown_lines

PROFILE_NAME = profile_tables.PROFILE_NAME
RENDERING_DIR = profile_tables.RENDERING_DIR
RENDER_CMD = "reduce-ladder profile --render results/<device>/profile.json --out " + (
    "results/<device>/report/profile"
)


def newest(root: Path, name: str) -> tuple[str, dict] | None:
    """(path relative to root, document) of the newest readable results/*/<name>, else None:
    the largest "created" stamp, then the last path in sorted order."""
    found = []
    for p in sorted((root / "results").glob(f"*/{name}")):
        try:
            doc = load_document(p).raw
        except ReportError:
            continue
        if doc:
            found.append((str(doc.get("created", "")), p.relative_to(root).as_posix(), doc))
    if not found:
        return None
    _, rel, doc = max(found, key=lambda t: (t[0], t[1]))
    return rel, doc


def committed(root: Path) -> tuple[str, dict] | None:
    """The newest device folder's profile.json with the profile-*.json beside it (runs over
    variants added since) merged into one document; the path names every file read."""
    found = newest(root, PROFILE_NAME)
    if found is None:
        return None
    rel, doc = found
    names, results = [rel], list(doc.get("results", []))
    for p in sorted((root / rel).parent.glob("profile-*.json")):
        try:
            results += load_document(p, "profile").raw.get("results", [])
        except ReportError:
            continue
        names.append(p.name)
    return " + ".join(names), {**doc, "results": results}


def _at(n: int | None, dtype: str) -> str:
    return f"n = {size_label(n)} {dtype}" if n else dtype


def device_name(doc: dict) -> str:
    return doc.get("device", {}).get("name", "?")


def counters(doc: dict, vid: str, n: int, dtype: str) -> dict | None:
    """The variant's summed metrics and derived ratios at (n, dtype) (None: not profiled)."""
    for r in doc.get("results", []):
        if (r["variant"], r.get("n"), r["dtype"]) == (vid, n, dtype):
            return r["total"]["metrics"] | r["total"]["derived"]
    return None


def _num(x: float | None, digits: int = 0) -> str:
    return "-" if x is None else f"{x:,.{digits}f}"


def _millions(x: float | None) -> str:
    return "-" if x is None else f"{x / 1e6:,.1f}M"


# The counter columns: header, metric, digits ("M": in millions), whether the guide shows it (its
# table tells the ladder's story; the appendix's has every column); MEANING: the legends' words.
COLUMNS = (
    ("µs", "duration_ns", 1, True),
    ("DRAM %", "dram_throughput_pct", 1, True),
    ("ld sectors / req", "gld_sectors_per_request", 2, True),
    ("st sectors / req", "gst_sectors_per_request", 2, False),
    ("bank conflicts ld", "shared_ld_bank_conflicts", 0, True),
    ("bank conflicts st", "shared_st_bank_conflicts", 0, False),
    ("threads / warp instr.", "threads_per_inst", 1, True),
    ("warp instr.", "inst_executed", "M", True),
    ("occupancy %", "occupancy_pct", 1, False),
    ("top stall", "top_stalls", None, True),
)
SUMMARY = tuple(col for col in COLUMNS if col[3])
MEANING = {
    "µs": "kernel time as Nsight Compute replays it, every pass summed",
    "DRAM %": "DRAM throughput as a % of peak",
    "ld sectors / req": "32-byte sectors per global load request (4: a coalesced warp of 4-byte "
    "loads)",
    "st sectors / req": "the same per global store request",
    "bank conflicts ld": "shared-memory load bank conflicts",
    "bank conflicts st": "shared-memory store bank conflicts",
    "threads / warp instr.": "threads not predicated off per warp instruction (32: no divergence)",
    "warp instr.": "warp instructions executed",
    "occupancy %": "achieved occupancy",
    "top stall": "the largest warp-stall reason's share of the cycles between issued instructions",
}


def _cell(c: dict, metric: str, digits) -> str:
    x = c.get(metric)
    if metric == "top_stalls":
        return f"{x[0][0]} {100 * x[0][1]:.0f}%" if x else "-"
    if metric == "duration_ns" and x is not None:
        x /= 1e3
    return _millions(x) if digits == "M" else _num(x, digits)


def legend(columns=COLUMNS) -> str:
    return "; ".join(f"{h} = {MEANING[h]}" for h, *_ in columns) + "."


SUMMARY_LEGEND = legend(SUMMARY)


def stage_keys(doc: dict, ids: list[str]) -> list[tuple[int, str]]:
    """The (n, dtype) pairs the profile holds for these variants, in document order."""
    keys = [(r.get("n"), r["dtype"]) for r in doc.get("results", []) if r["variant"] in ids]
    return list(dict.fromkeys(keys))


def _table(doc: dict, ids: list[str], n: int, dtype: str) -> list[str]:
    rows = [
        [f"`{vid}`", *(_cell(c, metric, digits) for _, metric, digits, _ in COLUMNS)]
        for vid in ids
        if (c := counters(doc, vid, n, dtype)) is not None
    ]
    header = ("variant", *(h for h, *_ in COLUMNS))
    return [*markdown_lines(header, rows, align="l" + RIGHT * (len(COLUMNS) - 1) + "l"), ""]


def stage_section(
    doc: dict | None, fam: str, stage: str, cuda: list[Variant], twins: list[Variant]
) -> list[str]:
    """Every counter of the stage (CUDA rows, then its Triton twins) at every (n, dtype) the
    profile holds for it: the appendix's table."""
    if doc is None:
        return []
    ids = [v.id for v in cuda if not v.wrong]
    out: list[str] = []
    for n, dtype in stage_keys(doc, ids):
        head = f"**Measured by the hardware ({device_name(doc)}, {_at(n, dtype)}).**"
        out += [head, "", *_table(doc, [*ids, *(t.id for t in twins)], n, dtype)]
    missing = [vid for vid in ids if not stage_keys(doc, [vid])]
    if out and missing:
        out += ["Not profiled: " + ", ".join(f"`{m}`" for m in missing) + ".", ""]
    return out


def stage_summary(
    doc: dict | None, fam: str, stage: str, cuda: list[Variant], twins: list[Variant]
) -> list[str]:
    """The guide's counters for a stage: the SUMMARY columns of each variant at the first
    (n, dtype) the profile holds for it, in one line, and the sentence that says whether this
    GPU shows the seeds' lesson."""
    if doc is None:
        return []
    ids = [v.id for v in cuda if not v.wrong]
    keys = stage_keys(doc, ids)
    out: list[str] = []
    if keys:
        n, dtype = keys[0]
        cells = [
            f"`{vid}` ("
            + ", ".join(f"{h} {_cell(c, metric, digits)}" for h, metric, digits, _ in SUMMARY)
            + ")"
            for vid in [*ids, *(t.id for t in twins)]
            if (c := counters(doc, vid, n, dtype)) is not None
        ]
        head = f"**Hardware counters** ({device_name(doc)}, {_at(n, dtype)}): "
        out += [head + "; ".join(cells) + ".", ""]
    text = _note(doc, *LESSON_NOTES[(fam, stage)]) if (fam, stage) in LESSON_NOTES else None
    return out + ([text, ""] if text else [])


# ---------------------------------------------------------------------------------------------
# The seeds' lessons, worded from the data: whether this GPU shows them, and what it shows instead

N_LADDER, LADDER_DTYPE = 2**24, "float32"


def _note(doc: dict, ids: tuple[str, ...], note) -> str | None:
    """The note from the counters of `ids` at the ladder's profiled size (none: from the
    document); None where one of them was not profiled."""
    if not ids:
        return note(doc)
    got = [counters(doc, i, N_LADDER, LADDER_DTYPE) for i in ids]
    return None if None in got else note(*got)


def _v0_beats_v1(v0: dict, v1: dict) -> str:
    faster = v0["duration_ns"] < v1["duration_ns"]
    return (
        "Seed 000 measured v0 (the tree in global memory) ahead of v1 and explained it by v0's "
        f"cache hits. Here v0's L1 / L2 hit rates are {_num(v0['l1_hit_pct'], 1)}% / "
        f"{_num(v0['l2_hit_pct'], 1)}% (v1: {_num(v1['l1_hit_pct'], 1)}% / "
        f"{_num(v1['l2_hit_pct'], 1)}%) and v0 stores {v0['gst_sectors'] / v1['gst_sectors']:.0f}x "
        f"v1's global sectors; "
        + (
            "v0 is ahead here too"
            if faster
            else "the seed's ordering does not show on this GPU: v1 is the faster"
        )
        + f" (v0 {_num(v0['duration_ns'] / 1e3, 1)} µs, v1 {_num(v1['duration_ns'] / 1e3, 1)} µs)."
    )


def _divergence(v1: dict, v2: dict) -> str:
    seed = profile_tables.SEED000_THREADS_PER_WARP
    shows = v2["threads_per_inst"] > v1["threads_per_inst"]
    tpi = f"{v2['threads_per_inst']:.1f} for v2 against {v1['threads_per_inst']:.1f} for v1"
    return (
        f"Seed 000 reads stage 2's gain as more working threads per warp ({seed['v1']} for v1, "
        f"{seed['v2']} for v2). "
        + (
            f"This GPU shows it: threads per warp instruction {tpi}. "
            if shows
            else "On this GPU that average does not show it: threads per warp instruction "
            f"(loads, loop and barriers included) is {tpi}. "
        )
        + "The divergence shows in the instruction counts: v1 executes "
        f"{v1['inst_executed'] / v2['inst_executed']:.1f}x v2's warp instructions "
        f"({_millions(v1['inst_executed'])} against {_millions(v2['inst_executed'])}), every warp "
        "issuing the tree's steps for its few working lanes."
    )


def _bank_conflicts(v2: dict, v3: dict) -> str:
    ld2, ld3 = v2["shared_ld_bank_conflicts"], v3["shared_ld_bank_conflicts"]
    return (
        f"v2's strided index has {ld2 / ld3:.0f}x the shared-load bank conflicts of v3's "
        f"sequential addressing ({_num(ld2)} against {_num(ld3)}; seed 000 read "
        f"{profile_tables.SEED000_BANK_CONFLICTS['v2']} for v2). The counter is not zero for "
        "conflict-free code: compare stages, not against 0."
    )


def _shuffles(*got: dict) -> str:
    v8, v7, v6 = (c["shared_ld_inst"] + c["shared_st_inst"] for c in got)
    return (
        f"The shuffle stage executes {_num(v8)} shared-memory instructions (loads and stores), "
        f"against {_num(v7)} for v7's shared-memory tree on the same grid and {_num(v6)} for "
        "the complete unroll at 256 threads."
    )


def _fastest(doc: dict) -> str | None:
    sizes = [n for n, dtype in stage_keys(doc, ["cuda/fastest"]) if dtype == LADDER_DTYPE]
    if not sizes:
        return None
    n = max(sizes)  # the largest n: where the pair's DRAM share settles
    c = counters(doc, "cuda/fastest", n, LADDER_DTYPE)
    parts = [f"`cuda/fastest` {_num(c['dram_throughput_pct'], 1)}%"]
    twin = counters(doc, "triton/fastest", n, LADDER_DTYPE)
    if twin is not None:
        parts.append(f"`triton/fastest` {_num(twin['dram_throughput_pct'], 1)}%")
    return (
        f"At n = {size_label(n)} the pair runs at " + ", ".join(parts) + " of the device's peak "
        "DRAM throughput over the kernel's elapsed time."
    )


# (family, stage) -> (the ladder variants whose counters the note reads, the note)
LESSON_NOTES = {
    ("ladder", "1"): (("cuda/v0-gmem-interleaved", "cuda/v1-smem-interleaved"), _v0_beats_v1),
    ("ladder", "2"): (("cuda/v1-smem-interleaved", "cuda/v2-strided-index"), _divergence),
    ("ladder", "3"): (("cuda/v2-strided-index", "cuda/v3-sequential"), _bank_conflicts),
    ("ladder", "8"): (
        ("cuda/v8-shuffle-chunked", "cuda/v7-fixed-chunked", "cuda/v6-unroll-256"),
        _shuffles,
    ),
    ("fastest", "fastest"): ((), _fastest),
}


# ---------------------------------------------------------------------------------------------
# Intro and the seeds' tables


def intro(found: tuple[str, dict] | None) -> list[str]:
    if found is None:
        return ["No hardware counters are committed yet (results/*/profile.json).", ""]
    path, doc = found
    return [
        f"Measured by the hardware: Nsight Compute counters from `{path}` ({device_name(doc)}, "
        f"{doc.get('ncu', 'ncu')}), each variant's passes summed. Columns: {legend()} What each "
        "metric is: `harness/studies/ncu_metrics.py`.",
        "",
    ]


def seed_tables_section(found: tuple[str, dict] | None, doc_dir: Path, root: Path) -> list[str]:
    """A link to the profile's rendering beside it: the seeds' own tables (seed 004's sectors,
    seed 000's column) and the counters along the ladder, plotted."""
    if found is None:
        return []
    path, doc = found
    rendering = (root / path).parent / RENDERING_DIR / "profile.md"
    out = ['<a id="hardware-seeds"></a>', "", f"## The seeds' counters ({device_name(doc)})", ""]
    if not rendering.is_file():
        return [*out, f"Not rendered yet: `{RENDER_CMD}`.", ""]
    rel = _rel(rendering, doc_dir)
    what = "Seed 004's global-memory sectors, seed 000's column and the counters along the ladder"
    return [*out, f"{what}, plotted, regenerated from `{path}`: [{rel}]({rel}).", ""]


def _rel(path: Path, start: Path) -> str:
    return Path(os.path.relpath(path, start)).as_posix()
