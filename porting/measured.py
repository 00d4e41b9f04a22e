"""What the committed results say of the guide's variants: the timed runs, one line per GPU;
Nsight Compute's counters (a stage's line, its note's numbers); compute-sanitizer's findings.
Every table of every size is the report layer's (results/<device>/report/), linked, not copied.
"""

from __future__ import annotations

import contextlib
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from harness.core.catalogue import Variant
from harness.core.records_beyond import DEMO_BY_ID as SEED_BUGS
from harness.core.records_beyond import DEMO_FAMILY as SEED_BUG_FAMILY
from harness.core.sizes import size_label
from harness.report import profile_tables
from harness.report.devices import rel
from harness.report.documents import Document, ReportError, load_document, merge_documents, rows
from harness.report.profile_tables import TOOLS, flagged_by, records_of, tools_of
from harness.report.records import Row

LADDER_GLOB = "ladder-*.json"
OTHER_RESULTS = ("host.json", "repro-bench.json")  # families the ladder run does not time
REF_N = 2**25  # the guide's one line per device: this n where measured, else the largest
AXIS_RESULTS, AXIS_DTYPE, AXIS_PEER = "axis.json", "float32", "peer/torch.sum"


def load(root: Path, names: tuple[str, ...], kind: str | tuple = (), folder: str = "*"):
    """[(path relative to the repo, document)] of the readable results/<folder>/<name>, name by
    name."""
    out: list[tuple[str, Document]] = []
    for p in (p for name in names for p in sorted((root / "results").glob(f"{folder}/{name}"))):
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


def _cell(r: Row, kernels: float | None) -> str:
    """A row's time and bandwidth; seed 001's host study's end to end, with the kernels' share
    (its own row: the streams overlap copies and kernels, so the trip does not split them)."""
    if r.metric == "e2e":
        of_which = f", kernels {kernels * 1e3:,.0f} µs" if kernels is not None else ""
        return f"{r.median_ms:,.2f} ms end to end{of_which}"
    gbps = f" ({r.bytes / r.median_ms / 1e6:,.0f} GB/s)" if r.bytes else ""
    return f"{r.median_ms * 1e3:,.1f} µs{gbps}"


def _points(runs: list[tuple[str, Document]], dtype: str, at: str) -> dict[tuple[str, Any], dict]:
    """{(device, the row's n or config: `at`): {variant: (median ms, cell)}} of the passing timed
    rows in `dtype` (the whole reduction; the host study's end to end), read through the one
    loader's rows, documents in order; a variant the ladder runs hold is read from them only."""
    held = {r.variant for p, d in runs if Path(p).match(LADDER_GLOB) for r in d.results}
    found: dict[tuple[str, Any], dict[str, tuple[float, str]]] = {}
    for p, doc in runs:
        table = [r for r in rows(doc) if r.metric == "total" or not r.config]  # host: its table
        kernels = {(r.variant, r.n): r.median_ms for r in table if r.metric == "kernels"}
        for r in table:
            ok = r.check in ("ok", "") and r.metric in ("total", "e2e") and r.dtype == dtype
            if ok and (Path(p).match(LADDER_GLOB) or r.variant not in held):
                cell = _cell(r, kernels.get((r.variant, r.n)))
                found.setdefault((doc.device, getattr(r, at)), {})[r.variant] = (r.median_ms, cell)
    return found


def lines(variants: list[Variant], dtype: str, results) -> list[tuple[str, str, list]]:
    """(device, where, [(variant, cell)]) one per device, at REF_N in `dtype` (else the largest
    n measured): the ladder runs' rows, the other documents' for the variants they lack."""
    ids = [v.id for v in variants if not v.wrong]
    found = {k: at for k, at in _points(results, dtype, "n").items() if set(ids) & at.keys()}
    out = []
    for dev in dict.fromkeys(d for d, _ in found):
        n = REF_N if (dev, REF_N) in found else max(n for d, n in found if d == dev)
        cells = [(v, found[(dev, n)][v][1]) for v in ids if v in found[(dev, n)]]
        out.append((dev, f"n = {size_label(n)} {dtype}", cells))
    return out


def axis_config(vid: str, runs: list[tuple[str, Document]]) -> str | None:
    """The shape where `vid` comes closest to the fastest CUDA stage, in the first run."""
    at = {config: p for (_, config), p in _points(runs[:1], AXIS_DTYPE, "config").items()}

    def gap(config: str) -> float:
        cuda = [ms for v, (ms, _) in at[config].items() if v.startswith("cuda/")]
        return at[config][vid][0] / min(cuda)

    return min((c for c in at if vid in at[c]), key=gap, default=None)


def axis_lines(variants: list[Variant], runs) -> list[tuple[str, str, list]]:
    """The axis family's lines: each device at axis_config's shape, beside the peer."""
    ids = [*(v.id for v in variants), AXIS_PEER]
    config = axis_config(ids[0], runs)
    return [(dev, f"{c.replace(' dim=', ' along dim ')}, {AXIS_DTYPE}",
             [(v, at[v][1]) for v in ids if v in at])
            for (dev, c), at in _points(runs, AXIS_DTYPE, "config").items()
            if c == config and ids[0] in at]  # fmt: skip


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
    path, first = found
    beside = load(root, (f"{Path(name).stem}-*.json",), kind, Path(path).parent.name)
    doc = merge_documents([first, *(d.raw for _, d in beside)])
    path = " + ".join([path, *(Path(p).name for p, _ in beside)])
    return {"path": path, "doc": doc, "device": doc.get("device", {}).get("name", "?")}


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


def note_fields(doc: dict | None, ids: list[str]) -> dict | None:
    """The counters of a note's variants (lessons.md), at the largest float32 n the first was
    profiled at (the fastest pair's DRAM share settles there); None where there is no note, or a
    variant it needs (not marked "?") was not profiled."""
    if not (sizes := [n for n, dt in profiled(doc, ids[:1]) if dt == "float32"] if doc else []):
        return None
    got = [counters(doc, vid.rstrip("?"), max(sizes), "float32") for vid in ids]
    if any(c is None and not vid.endswith("?") for vid, c in zip(ids, got, strict=True)):
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
