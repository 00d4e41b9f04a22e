"""What the committed results say of the guide's variants: the timed runs, one line per GPU;
Nsight Compute's counters (a stage's line, its note's numbers); compute-sanitizer's findings.
Every table of every size is the report layer's (results/<device>/report/), linked, not copied.
"""

from __future__ import annotations

import contextlib
from collections import Counter, defaultdict
from pathlib import Path

from harness.core.catalogue import Variant
from harness.core.demo_records import BY_ID as SEED_BUGS
from harness.core.demo_records import FAMILY as SEED_BUG_FAMILY
from harness.core.sizes import size_label
from harness.report import profile_tables, records
from harness.report.devices import rel
from harness.report.documents import Document, ReportError, load_document
from harness.report.profile_tables import TOOLS, flagged_by, records_of, tools_of

LADDER_GLOB = "ladder-*.json"
OTHER_RESULTS = ("host.json", "repro-bench.json")  # families the ladder run does not time
REF_N = 2**25  # the guide's one line per device: this n where measured, else the largest
AXIS_RESULTS, AXIS_DTYPE, AXIS_PEER = "axis.json", "float32", "peer/torch.sum"


def load(root: Path, names: tuple[str, ...], kind: str | tuple = ()) -> list[tuple[str, Document]]:
    """[(path relative to the repo, document)] of the readable results/*/<name>, name by name."""
    out = []
    for p in (p for name in names for p in sorted((root / "results").glob(f"*/{name}"))):
        with contextlib.suppress(ReportError):
            out.append((p.relative_to(root).as_posix(), load_document(p, kind)))
    return out


def load_results(root: Path) -> list[tuple[str, Document]]:
    """The timed ladder runs (the ladder suite's ROWS documents), then OTHER_RESULTS."""
    found = load(root, (LADDER_GLOB, *OTHER_RESULTS))
    timed = ("timed", None)  # `run --json` says timed; `bench ladder --json` has no mode
    return [
        (p, d) for p, d in found if d.raw.get("suite") != "ladder" or d.meta.get("mode") in timed
    ]


def results_sources(results: list[tuple[str, Document]]) -> str:
    devices: dict[str, list[str]] = {}
    for p in (Path(p) for p, _ in results):
        devices.setdefault(p.name, []).append(p.parent.name)
    return ", ".join(f"`{name}` ({', '.join(devs)})" for name, devs in devices.items())


def _cell(r) -> str:
    """A record's time and bandwidth; an axis row's the same."""
    if isinstance(r, records.Row):  # the axis suite's rows
        gbps = f" ({r.bytes / r.median_ms / 1e6:,.0f} GB/s)" if r.bytes else ""
        return f"{r.median_ms * 1e3:,.1f} µs{gbps}"
    gbps = f" ({r.gbps_total:,.0f} GB/s)" if r.gbps_total is not None else ""
    return f"{r.ms * 1e3:,.1f} µs{gbps}"


def _timed(doc: Document) -> list[tuple[str, str, int, str]]:
    """(variant, dtype, n, cell) of a document's timed records; of the host study's table rows,
    end to end with the kernels' share (the streams overlap copies and kernels: not split)."""
    out = [(r.variant, r.dtype, r.n, _cell(r)) for r in doc.records if r.ok and r.timed]
    table = {(r.variant, r.n, r.metric): r.median_ms for r in doc.rows if r.config == ""}
    for r in (r for r in doc.rows if r.metric == "e2e" and r.config == "" and r.check == "ok"):
        ms = table.get((r.variant, r.n, "kernels"))
        of_which = f", kernels {ms * 1e3:,.0f} µs" if ms is not None else ""
        out.append((r.variant, r.dtype, r.n, f"{r.median_ms:,.2f} ms end to end{of_which}"))
    return out


def lines(variants: list[Variant], dtype: str, results) -> list[tuple[str, str, list]]:
    """(device, where, [(variant, cell)]) one per device, at REF_N in `dtype` (else the largest
    n measured): the ladder runs' records, the other documents' for the variants they lack."""
    ids = [v.id for v in variants if not v.wrong]
    # the ladder runs first: a variant they hold is not read from the other documents
    runs = sorted(((d, Path(p).match(LADDER_GLOB)) for p, d in results), key=lambda x: not x[1])
    held = {r.variant for d, ladder in runs if ladder for r in d.records}
    found: dict[tuple[str, int], dict[str, str]] = {}
    for doc, ladder in runs:
        for vid, dt, n, cell in _timed(doc):
            if vid in ids and dt == dtype and (ladder or vid not in held):
                found.setdefault((doc.device, n), {})[vid] = cell
    out = []
    for dev in dict.fromkeys(d for d, _ in found):
        n = REF_N if (dev, REF_N) in found else max(n for d, n in found if d == dev)
        cells = [(v, found[(dev, n)][v]) for v in ids if v in found[(dev, n)]]
        out.append((dev, f"n = {size_label(n)} {dtype}", cells))
    return out


def _axis_rows(doc: Document) -> dict[str, dict[str, records.Row]]:
    """{config ("MxN dim=D"): {variant: row}} of the timed AXIS_DTYPE rows."""
    out: dict[str, dict[str, records.Row]] = {}
    for r in doc.rows:
        if r.metric == "total" and r.median_ms is not None and r.dtype == AXIS_DTYPE:
            out.setdefault(r.config, {})[r.variant] = r
    return out


def axis_config(vid: str, runs: list[tuple[str, Document]]) -> str | None:
    """The shape where `vid` comes closest to the fastest CUDA stage, in the first run."""
    at = _axis_rows(runs[0][1]) if runs else {}

    def gap(config: str) -> float:
        cuda = [r.median_ms for v, r in at[config].items() if v.startswith("cuda/")]
        return at[config][vid].median_ms / min(cuda)

    return min((c for c in at if vid in at[c]), key=gap, default=None)


def axis_lines(variants: list[Variant], runs) -> list[tuple[str, str, list]]:
    """The axis family's lines: each run at axis_config's shape, beside the peer."""
    ids = [*(v.id for v in variants), AXIS_PEER]
    config, out = axis_config(ids[0], runs), []
    for _, doc in runs:
        if ids[0] in (at := _axis_rows(doc).get(config, {})):
            where = f"{config.replace(' dim=', ' along dim ')}, {AXIS_DTYPE}"
            out.append((doc.device, where, [(v, _cell(at[v])) for v in ids if v in at]))
    return out


# ---------------------------------------------------------------------------------------------
# Nsight Compute's counters and compute-sanitizer's findings: the newest device folder's


def newest(root: Path, name: str) -> tuple[str, dict] | None:
    """(path, document) of the readable results/*/<name> with the largest "created", then path."""
    found = [(str(d.raw.get("created", "")), p, d.raw) for p, d in load(root, (name,)) if d.raw]
    return max(found, key=lambda t: t[:2])[1:] if found else None


def committed(root: Path, name: str = profile_tables.PROFILE_NAME, kind: str = "profile"):
    """The newest device folder's <name> with the <stem>-*.json beside it (runs over variants
    added since) read as one: {"path": every file read, "doc": the document, "device": its GPU}.
    None: no document."""
    if (found := newest(root, name)) is None:
        return None
    rel, doc = found
    names, docs = [rel], [doc]
    for p in sorted((root / rel).parent.glob(f"{Path(name).stem}-*.json")):
        with contextlib.suppress(ReportError):
            docs.append(load_document(p, kind).raw)
            names.append(p.name)
    doc = profile_tables.merge(docs)
    return {"path": " + ".join(names), "doc": doc, "device": doc.get("device", {}).get("name", "?")}


def counters(doc: dict, vid: str, n: int, dtype: str) -> dict | None:
    """The variant's summed metrics and derived ratios at (n, dtype) (None: not profiled)."""
    r = profile_tables.find(doc, vid, n, dtype)
    return r and r["total"]["metrics"] | r["total"]["derived"]


# The guide's counter columns (the ladder's story): header, metric, digits ("M": in millions);
# their meaning: porting/shared.md.
COLUMNS = (
    ("µs", "duration_ns", 1),
    ("DRAM %", "dram_throughput_pct", 1),
    ("ld sectors / req", "gld_sectors_per_request", 2),
    ("bank conflicts ld", "shared_ld_bank_conflicts", 0),
    ("threads / warp instr.", "threads_per_inst", 1),
    ("warp instr.", "inst_executed", "M"),
    ("top stall", "top_stalls", None),
)


def _counter(c: dict, metric: str, digits) -> str:
    if (x := c.get(metric)) is None or metric == "top_stalls":
        return f"{x[0][0]} {100 * x[0][1]:.0f}%" if x else "-"
    x = x / 1e3 if metric == "duration_ns" else x
    return f"{x / 1e6:,.1f}M" if digits == "M" else f"{x:,.{digits}f}"


def profiled(doc: dict, ids: list[str]) -> list[tuple[int, str]]:
    """The (n, dtype) pairs the profile holds for these variants, in document order."""
    return [*dict.fromkeys((r.get("n"), r["dtype"]) for r in doc["results"] if r["variant"] in ids)]


def counter_line(doc: dict | None, variants: list[Variant]):
    """(where, [(variant, [(header, cell)])]): the variants' COLUMNS at the first (n, dtype) the
    profile holds for the CUDA ones (None: no profile, or none profiled)."""
    cuda = [v.id for v in variants if v.backend == "cuda" and not v.wrong]
    if doc is None or not (keys := profiled(doc, cuda)):
        return None
    n, dtype = keys[0]
    rows = [(v.id, counters(doc, v.id, n, dtype)) for v in variants if not v.wrong]
    cells = [(vid, [(h, _counter(c, m, d)) for h, m, d in COLUMNS]) for vid, c in rows if c]
    return (f"n = {size_label(n)} {dtype}" if n else dtype), cells


# (family, stage) -> the variants whose counters its note (lessons.md) reads (a, b, c)
NOTES = {
    ("ladder", "1"): ("cuda/v0-gmem-interleaved", "cuda/v1-smem-interleaved"),
    ("ladder", "2"): ("cuda/v1-smem-interleaved", "cuda/v2-strided-index"),
    ("ladder", "3"): ("cuda/v2-strided-index", "cuda/v3-sequential"),
    ("ladder", "8"): ("cuda/v8-shuffle-chunked", "cuda/v7-fixed-chunked", "cuda/v6-unroll-256"),
    ("fastest", "fastest"): ("cuda/fastest", "triton/fastest"),
}


def note_fields(doc: dict | None, fam: str, stage: str) -> dict | None:
    """The counters the stage's note is worded from, at the largest float32 n its first variant
    was profiled at (the fastest pair's DRAM share settles there); None where the stage has no
    note or a variant was not profiled (the fastest pair's Triton one may be missing)."""
    ids = NOTES.get((fam, stage), ()) if doc else ()
    if not (sizes := [n for n, dt in profiled(doc, ids[:1]) if dt == "float32"] if ids else []):
        return None
    got = [counters(doc, vid, max(sizes), "float32") for vid in ids]
    if None in (got[:1] if fam == "fastest" else got):
        return None
    return dict(zip("abc", got, strict=False)) | {"n": size_label(max(sizes))}


def profile_view(root: Path, doc_dir: Path) -> dict | None:
    """The committed counters (None: none) and the link to the report layer's rendering of them
    (the counters along the ladder, the seeds' tables)."""
    if (view := committed(root)) is None:
        return None
    rendering = (root / view["path"].split(" + ")[0]).parent / profile_tables.RENDERING_DIR
    link = rel(rendering / "profile.md", doc_dir) if (rendering / "profile.md").is_file() else None
    return view | {"rendering": link, "headers": [h for h, *_ in COLUMNS]}


def sanitized(view: dict | None, ids: list[str]) -> list[tuple[str, list[str]]]:
    """The family's variants the sanitize documents hold, each with the tools that report on it."""
    variants = view["doc"].get("variants", []) if view else []
    return [(v["variant"], flagged_by(v)) for v in variants if v["variant"] in ids]


def _bug(doc: dict, v: dict) -> dict:
    """A seed's kernel as written: the tools that flag it, with the kinds of report each printed."""
    kinds: dict[str, Counter] = defaultdict(Counter)
    for k in (k for k in doc.get("kernels", []) if v["variant"] in k["variants"]):
        kinds[k["tool"]].update(k["kinds"])
    said = [f"{t}: " + "; ".join(f"{n} x {kind!r}" for kind, n in kinds[t].items())
            for t in flagged_by(v)]  # fmt: skip
    demo = SEED_BUGS.get(v["variant"])
    return {"id": v["variant"], "title": f" ({demo.title})" if demo else "",
            "flagged": flagged_by(v), "kinds": "; ".join(said),
            "counts": ", ".join(f"{t} {records_of(v, t)}" for t in tools_of(v))}  # fmt: skip


def sanitize_view(root: Path) -> dict | None:
    """What the guide and the appendix say of the committed sanitize documents (None: none)."""
    if (view := committed(root, "sanitize.json", "sanitize")) is None:
        return None
    doc = view["doc"]
    variants = doc.get("variants", [])
    default = [v for v in variants if not v.get("wrong")]
    raced = [v for v in default if records_of(v, "racecheck")]
    others = {t: sum(records_of(v, t) for v in default) for t in TOOLS if t != "racecheck"}
    return view | {
        "summary": profile_tables.sanitize_summary(doc),
        "version": doc.get("compute_sanitizer", "compute-sanitizer"),
        "sizes": ", ".join(f"{n:,}" for n in doc.get("sizes", [])),
        "tools": ", ".join(TOOLS),
        "default": default,
        "clean": [v for v in default if not flagged_by(v)],
        "others": ", ".join(f"{t} {count}" for t, count in others.items()),
        "raced": [v for v in raced if v.get("volatile")],
        "unexpected": [v for v in raced if not v.get("volatile")],
        "volatile_clean": [v for v in default if v.get("volatile") and not flagged_by(v)],
        "wrong": [v for v in variants if v.get("wrong") and v.get("family") != SEED_BUG_FAMILY],
        "bugs": [_bug(doc, v) for v in variants if v.get("family") == SEED_BUG_FAMILY],
    }
