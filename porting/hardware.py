"""The guide's Nsight Compute parts, from the newest committed profile.json: per stage, each
CUDA variant's counters beside its Triton twins' (the guide: the summary columns; the appendix:
every column at every profiled size), the seeds' lessons worded from the counters (the words:
lessons.md's `note-*`), and a link to the seeds' own tables (harness.report.profile_tables).
"""

from __future__ import annotations

import os
from pathlib import Path

from harness.core.catalogue import Variant
from harness.core.sizes import size_label
from harness.report import profile_tables
from harness.report.documents import ReportError, load_document
from harness.report.markdown import RIGHT, markdown_lines
from porting.lessons import render
from porting.stages import load

PROFILE_NAME = profile_tables.PROFILE_NAME


def newest(root: Path, name: str) -> tuple[str, dict] | None:
    """(path relative to root, document) of the newest readable results/*/<name>, else None:
    the largest "created" stamp, then the last path in sorted order."""
    found = [(str(d.raw.get("created", "")), p, d.raw) for p, d in load(root, (name,)) if d.raw]
    return max(found, key=lambda t: t[:2])[1:] if found else None


def _concat(docs: list[dict]) -> dict:
    return {**docs[0], "results": [r for d in docs for r in d.get("results", [])]}


def committed(root: Path, name=PROFILE_NAME, kind="profile", merge=_concat):
    """The newest device folder's <name> with the <stem>-*.json beside it (runs over variants
    added since) merged into one document; the path names every file read. None: no document."""
    found = newest(root, name)
    if found is None:
        return None
    rel, doc = found
    names, docs = [rel], [doc]
    for p in sorted((root / rel).parent.glob(f"{Path(name).stem}-*.json")):
        try:
            docs.append(load_document(p, kind).raw)
        except ReportError:
            continue
        names.append(p.name)
    return " + ".join(names), merge(docs)


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


# The counter columns: header, metric, digits ("M": in millions), whether the guide's one line
# shows it (the ladder's story; the appendix has every column); their meaning: porting/shared.md.
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


def _cell(c: dict, metric: str, digits) -> str:
    x = c.get(metric)
    if metric == "top_stalls":
        return f"{x[0][0]} {100 * x[0][1]:.0f}%" if x else "-"
    if x is None:
        return "-"
    if metric == "duration_ns":
        x /= 1e3
    return f"{x / 1e6:,.1f}M" if digits == "M" else f"{x:,.{digits}f}"


def stage_keys(doc: dict, ids: list[str]) -> list[tuple[int, str]]:
    """The (n, dtype) pairs the profile holds for these variants, in document order."""
    keys = [(r.get("n"), r["dtype"]) for r in doc.get("results", []) if r["variant"] in ids]
    return list(dict.fromkeys(keys))


def stage(doc: dict | None, fam: str, stage: str, cuda: list[Variant], twins: list[Variant]):
    """A stage's counters (None: no profile): `tables`, every column of each variant (CUDA, then
    its Triton twins) at every (n, dtype) the profile holds for the stage (the appendix);
    `missing`, its CUDA variants not profiled; `line`, the guide's one line (the SUMMARY columns at
    the first (n, dtype)); `note`, the seeds' lesson worded from the counters."""
    if doc is None:
        return None
    ids = [v.id for v in cuda if not v.wrong]
    keys = stage_keys(doc, ids)

    def rows(n: int, dtype: str, columns) -> list[tuple[str, list[tuple[str, str]]]]:
        return [
            (vid, [(h, _cell(c, metric, digits)) for h, metric, digits, _ in columns])
            for vid in [*ids, *(t.id for t in twins)]
            if (c := counters(doc, vid, n, dtype)) is not None
        ]

    def table(n: int, dtype: str) -> str:
        body = [[f"`{vid}`", *(c for _, c in cells)] for vid, cells in rows(n, dtype, COLUMNS)]
        align = "l" + RIGHT * (len(COLUMNS) - 1) + "l"
        return "\n".join(markdown_lines(("variant", *(h for h, *_ in COLUMNS)), body, align))

    return {
        "tables": [(_at(*key), table(*key)) for key in keys],
        "missing": [vid for vid in ids if not stage_keys(doc, [vid])],
        "line": (_at(*keys[0]), rows(*keys[0], SUMMARY)) if keys else None,
        "note": note(doc, fam, stage),
    }


# ---------------------------------------------------------------------------------------------
# The seeds' lessons (lessons.md, `note FAMILY-STAGE`), worded from the data: whether this GPU
# shows them, and what it shows instead

N_LADDER, LADDER_DTYPE = 2**24, "float32"
SEED = {
    "tpi": profile_tables.SEED000_THREADS_PER_WARP,
    "conflicts": profile_tables.SEED000_BANK_CONFLICTS["v2"],
}
# (family, stage) -> the ladder variants whose counters its note reads (a, b, c)
NOTES = {
    ("ladder", "1"): ("cuda/v0-gmem-interleaved", "cuda/v1-smem-interleaved"),
    ("ladder", "2"): ("cuda/v1-smem-interleaved", "cuda/v2-strided-index"),
    ("ladder", "3"): ("cuda/v2-strided-index", "cuda/v3-sequential"),
    ("ladder", "8"): ("cuda/v8-shuffle-chunked", "cuda/v7-fixed-chunked", "cuda/v6-unroll-256"),
}


def note(doc: dict, fam: str, stage: str) -> str | None:
    """The stage's note (lessons.md), from the counters at the ladder's profiled size (the
    fastest pair's: at its largest profiled n); None where one of its variants was not profiled."""
    if (fam, stage) == ("fastest", "fastest"):
        sizes = [n for n, dtype in stage_keys(doc, ["cuda/fastest"]) if dtype == LADDER_DTYPE]
        if not sizes:
            return None
        n = max(sizes)  # the largest n: where the pair's DRAM share settles
        ab = [counters(doc, f"{b}/fastest", n, LADDER_DTYPE) for b in ("cuda", "triton")]
        fields = {"n": size_label(n), "a": ab[0], "b": ab[1]}
    elif (fam, stage) in NOTES:
        got = [counters(doc, vid, N_LADDER, LADDER_DTYPE) for vid in NOTES[(fam, stage)]]
        if None in got:
            return None
        fields = dict(zip("abc", got, strict=False))
    else:
        return None
    return render(f"note-{fam}-{stage}", seed=SEED, **fields)


def view(found: tuple[str, dict] | None, root: Path, doc_dir: Path) -> dict | None:
    """What the guide and its appendix say of the committed counters (None: none committed):
    where they come from, the legends, the link to the profile's rendering (the seeds' tables)."""
    if found is None:
        return None
    path, doc = found
    rendering = (root / path.split(" + ")[0]).parent / profile_tables.RENDERING_DIR / "profile.md"
    return {
        "path": path,
        "doc": doc,
        "device": device_name(doc),
        "ncu": doc.get("ncu", "ncu"),
        "columns": [h for h, *_ in COLUMNS],
        "summary": [h for h, *_ in SUMMARY],
        "rendering": Path(os.path.relpath(rendering, doc_dir)).as_posix()
        if rendering.is_file()
        else None,
    }
