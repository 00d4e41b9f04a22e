"""What the porting guide and its appendix are made of: the stages of every family (each CUDA
stage with its Triton twin or counterpart), the committed census and results, and the lines and
tables built from them. Results (results/<device>/): the timed ladder runs, then seed 001's host
study and the reproducible pair's bench; the axis family's suite (axis.json).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path

from harness.core import catalogue
from harness.core.catalogue import Variant
from harness.core.sizes import size_label
from harness.report import records
from harness.report.documents import Document, ReportError, load_document
from harness.report.markdown import RIGHT, markdown_lines
from porting.census import compiled
from porting.census import load_document as census_document

ROOT = Path(__file__).resolve().parents[1]
CENSUS = ROOT / "docs" / "census-sm_90.json"
LADDER_GLOB = "ladder-*.json"
OTHER_RESULTS = ("host.json", "repro-bench.json")  # families the ladder run does not time
REF_N = 2**25  # the guide's one line per device: this n where measured, else the largest
MIN_OTHER_N = 2**20  # the appendix shows the other documents from here up (bandwidth-bound)
AXIS = "axis"  # the family of sums along a dim: its records apart (catalogue.AXIS_VARIANTS)
AXIS_RESULTS = "axis.json"
AXIS_DTYPE, AXIS_PEER = "float32", "peer/torch.sum"


@dataclass(frozen=True)
class Stage:
    """One stage of a family: its CUDA variants and the Triton variants shown beside them."""

    family: str
    stage: str
    cuda: tuple[Variant, ...]
    twins: tuple[Variant, ...]

    anchor = property(lambda self: f"{self.family}-stage-{self.stage}")
    title = property(lambda self: self.cuda[0].title)
    # "twin" (the same tiles as the CUDA block) or "counterpart" (its own tiles)
    word = property(lambda self: "twin" if all(v.twin for v in self.cuda) else "counterpart")
    dtype = property(lambda self: doc_dtype(self.cuda[0]))


def doc_dtype(v: Variant) -> str:
    return "float32" if "float32" in v.dtypes else v.dtypes[0]


def all_variants() -> list[Variant]:
    return [*catalogue.VARIANTS, *catalogue.AXIS_VARIANTS]


def record(vid: str) -> Variant:
    return catalogue.AXIS_BY_ID.get(vid) or catalogue.get(vid)


def triton_partner(v: Variant) -> str | None:
    """The Triton variant shown beside a CUDA one: its tile twin, else its counterpart (families
    "fastest", "reproducible": built for the same goal with their own tiles)."""
    return v.twin or v.counterpart


def families() -> list[str]:
    return list(dict.fromkeys(v.family for v in all_variants() if v.backend == "cuda"))


def stages(family: str) -> list[Stage]:
    """The family's stages: in ladder order, the axis family's in its records' order."""
    cuda_all = [v for v in all_variants() if v.backend == "cuda" and v.family == family]
    out = []
    ordered = cuda_all if family == AXIS else catalogue.ladder_order(cuda_all)
    for st in dict.fromkeys(v.stage for v in ordered):
        cs = tuple(v for v in cuda_all if v.stage == st)
        partners = dict.fromkeys(p for v in cs if (p := triton_partner(v)))
        out.append(Stage(family, st, cs, tuple(record(t) for t in partners)))
    return out


def family_seeds(family: str) -> list[str]:
    cuda = [v for v in all_variants() if v.backend == "cuda" and v.family == family]
    return sorted({s.split(":")[0] for v in cuda for s in v.seeds})


def peers() -> list[Variant]:
    """Catalogue records that are library calls (no kernel here to compile or port)."""
    return [v for v in catalogue.VARIANTS if not compiled(v)]


def short(vid: str) -> str:
    return vid.split("/", 1)[1]


# ---------------------------------------------------------------------------------------------
# Inputs: the census and the results


def load_census(path: Path) -> tuple[dict, dict]:
    if not path.is_file():
        return {}, {}
    doc, rows = census_document(path)
    return doc, {(r.variant, r.dtype): r for r in rows}


def load(root: Path, names: tuple[str, ...], kind: str | tuple = ()) -> list[tuple[str, Document]]:
    """[(path relative to the repo, document)] of results/*/<name>, name by name; an unreadable
    file is left out, as a missing one would be."""
    out = []
    for p in (p for name in names for p in sorted((root / "results").glob(f"*/{name}"))):
        with contextlib.suppress(ReportError):
            out.append((p.relative_to(root).as_posix(), load_document(p, kind)))
    return out


def load_results(root: Path = ROOT) -> list[tuple[str, Document]]:
    """The timed ladder runs (any version: the loader's "cli" family), then the other documents
    (OTHER_RESULTS)."""
    found = load(root, (LADDER_GLOB, *OTHER_RESULTS))
    return [(p, d) for p, d in found if d.kind != "cli" or d.meta.get("mode") == "timed"]


def load_axis(root: Path = ROOT) -> list[tuple[str, Document]]:
    """The axis suite's committed runs."""
    return load(root, (AXIS_RESULTS,), "rows")


def _is_ladder(path: str) -> bool:
    return Path(path).match(LADDER_GLOB)


def _cell(r) -> str:
    """A record's time and bandwidth (seed 001's host study: end to end, the kernels' share)."""
    if isinstance(r, records.Row):  # the axis suite's rows
        gbps = f" ({r.bytes / r.median_ms / 1e6:,.0f} GB/s)" if r.bytes else ""
        return f"{r.median_ms * 1e3:,.1f} µs{gbps}"
    if r.timed:
        gbps = f" ({r.gbps_total:,.0f} GB/s)" if r.gbps_total is not None else ""
        return f"{r.ms * 1e3:,.1f} µs{gbps}"
    kernels = r.extra.get("kernels_ms")  # the streams overlap copies and kernels: not split
    of_which = f", kernels {kernels * 1e3:,.0f} µs" if kernels is not None else ""
    return f"{r.extra['e2e_ms']:,.2f} ms end to end{of_which}"


# Measurements: {(device, where): {variant: cell}}, where = (n, dtype) or the axis's (shape,),
# from the files named beside them


def _measured(variants, dtype, results) -> tuple[dict[tuple, dict[str, str]], list[str]]:
    """Every committed measurement of the variants: the ladder runs' at every size and dtype;
    the other documents' in `dtype` from MIN_OTHER_N up, for the variants no ladder run holds."""
    ids = [v.id for v in variants if not v.wrong]
    held = {r.variant for p, d in results if _is_ladder(p) for r in d.records if r.variant in ids}
    out: dict[tuple, dict[str, str]] = {}
    sources: list[str] = []
    for path, doc in sorted(results, key=lambda pd: not _is_ladder(pd[0])):
        ladder = _is_ladder(path)
        for r in doc.records:
            if r.variant not in ids or not (r.ok and (r.timed or "e2e_ms" in r.extra)):
                continue
            if not ladder and (r.variant in held or r.dtype != dtype or r.n < MIN_OTHER_N):
                continue
            out.setdefault((doc.device, r.n, r.dtype), {})[r.variant] = _cell(r)
            sources += [path] if path not in sources else []
    return out, sources


def _axis_measured(variants, runs) -> tuple[dict[tuple, dict[str, str]], list[str]]:
    """The axis suite's timed AXIS_DTYPE rows, beside the peer, by (device, shape)."""
    ids = [*(v.id for v in variants), AXIS_PEER]
    out: dict[tuple, dict[str, str]] = {}
    for _, doc in runs:
        for config, at in _axis_rows(doc).items():
            if ids[0] in at:
                out[(doc.device, _shape(config))] = {v: _cell(at[v]) for v in ids if v in at}
    return out, [p for p, _ in runs]


def results_sources(results: list[tuple[str, Document]]) -> str:
    """The result files read, by name, each with the devices it was found for."""
    names = dict.fromkeys(Path(p).name for p, _ in results)
    devices = {
        n: ", ".join(Path(p).parent.name for p, _ in results if Path(p).name == n) for n in names
    }
    return ", ".join(f"`{name}` ({devs})" for name, devs in devices.items())


def measured(variants: list[Variant], dtype: str, results, axis: bool = False) -> dict:
    """What was measured of the variants: `lines`, (device, where, [(variant, cell)]) one per
    device, at REF_N in `dtype` (else the largest n; the axis family: at axis_config's shape,
    beside the peer); `grid`, every measurement in a table, a row per (device, n, dtype) or
    (device, shape), a column per variant, with the files read (None: nothing measured)."""
    ids = [v.id for v in variants if not v.wrong] + ([AXIS_PEER] if axis else [])
    found, sources = (
        _axis_measured(variants, results) if axis else _measured(variants, dtype, results)
    )
    config = _shape(axis_config(ids[0], results) or "") if axis else None
    lines = []
    for dev in dict.fromkeys(d for d, *_ in found):
        if axis and (dev, config) in found:
            lines.append((dev, f"{config}, {AXIS_DTYPE}", found[(dev, config)]))
        elif ns := {n for d, n, dt in found if (d, dt) == (dev, dtype)} if not axis else None:
            n = REF_N if REF_N in ns else max(ns)
            lines.append((dev, f"n = {size_label(n)} {dtype}", found[(dev, n, dtype)]))
    lines = [
        (dev, where, [(v, cells[v]) for v in ids if v in cells]) for dev, where, cells in lines
    ]
    shown = [v for v in ids if any(v in cells for cells in found.values())]
    rows = found.items() if axis else sorted(found.items())
    label = (lambda w: w) if axis else (lambda w: (size_label(w[0]), w[1]))
    body = [[dev, *label(w), *(c.get(v, "-") for v in shown)] for (dev, *w), c in rows]
    where = (f"shape ({AXIS_DTYPE})",) if axis else ("n", "dtype")
    header = ("device", *where, *(f"`{v}`" for v in shown))
    table = markdown_lines(header, body, align="l" * (1 + len(where)) + RIGHT * len(shown))
    grid = "\n".join(table) + "\n\nFrom " + ", ".join(f"`{p}`" for p in sources) + "."
    return {"lines": lines, "grid": grid if found else None}


# ---------------------------------------------------------------------------------------------
# The axis family's measurements: rows per (shape, dim), config "MxN dim=D"


def _axis_rows(doc: Document) -> dict[str, dict[str, records.Row]]:
    """{config: {variant: row}} of the timed AXIS_DTYPE rows."""
    out: dict[str, dict[str, records.Row]] = {}
    for r in doc.rows:
        if r.metric == "total" and r.median_ms is not None and r.dtype == AXIS_DTYPE:
            out.setdefault(r.config, {})[r.variant] = r
    return out


def _shape(config: str) -> str:
    return config.replace(" dim=", " along dim ")


def axis_config(vid: str, results: list[tuple[str, Document]]) -> str | None:
    """The shape where `vid` comes closest to the fastest CUDA stage, in the first run."""
    by_config = _axis_rows(results[0][1]) if results else {}

    def gap(config: str) -> float:
        cuda = [r.median_ms for v, r in by_config[config].items() if v.startswith("cuda/")]
        return by_config[config][vid].median_ms / min(cuda)

    return min((c for c in by_config if vid in by_config[c]), key=gap, default=None)


# ---------------------------------------------------------------------------------------------
# The census


def census_rows(variants: list[Variant], census: dict, every_dtype: bool = False) -> list:
    """(variant, dtype, its census row or None) per variant (its doc_dtype), or per variant and
    dtype it lists (every_dtype)."""
    dts = (lambda v: v.dtypes) if every_dtype else (lambda v: [doc_dtype(v)])
    return [(v, d, census.get((v.id, d))) for v in variants for d in dts(v)]


def census_facts(st: Stage, census: dict) -> list[dict] | None:
    """The stage's census facts (CUDA, then Triton: each count as a value or a min-max span),
    None where a variant is not in the census; the templates word them."""
    rows = [[census.get((v.id, doc_dtype(v))) for v in vs] for vs in (st.cuda, st.twins)]
    if not rows[0] or None in rows[0] + rows[1]:
        return None

    def span(rs: list, key: str) -> str:
        vals = sorted({attrgetter(key)(r) for r in rs})
        return str(vals[0]) if len(vals) == 1 else f"{vals[0]}-{vals[-1]}"

    keys = ("counts.barriers", "counts.shuffles", "counts.lds", "static_smem", "dynamic_smem")
    return [{k.split(".")[-1]: span(rs, k) for k in (*keys, "registers")} for rs in rows if rs]
