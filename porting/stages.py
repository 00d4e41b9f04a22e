"""The stages of every family, read from the catalogue: each CUDA stage with the Triton variants
shown beside it (its tile twins, or the counterpart built for the same goal with its own tiles),
and what the committed census says of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path

from harness.core import catalogue
from harness.core.catalogue import Variant
from porting.census import compiled
from porting.census import load_document as census_document

ROOT = Path(__file__).resolve().parents[1]
CENSUS = ROOT / "docs" / "census-sm_90.json"
AXIS = "axis"  # the family of sums along a dim: its records apart (catalogue.AXIS_VARIANTS)


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


def _cuda(family: str | None = None) -> list[Variant]:
    every = [*catalogue.VARIANTS, *catalogue.AXIS_VARIANTS]
    return [v for v in every if v.backend == "cuda" and family in (None, v.family)]


def record(vid: str) -> Variant:
    return catalogue.AXIS_BY_ID.get(vid) or catalogue.get(vid)


def triton_partner(v: Variant) -> str | None:
    """The Triton variant shown beside a CUDA one: its tile twin, else its counterpart (families
    "fastest", "reproducible": built for the same goal with their own tiles)."""
    return v.twin or v.counterpart


def families() -> list[str]:
    return list(dict.fromkeys(v.family for v in _cuda()))


def stages(family: str) -> list[Stage]:
    """The family's stages: in ladder order, the axis family's in its records' order."""
    cuda = _cuda(family)
    ordered = cuda if family == AXIS else catalogue.ladder_order(cuda)
    out = []
    for st in dict.fromkeys(v.stage for v in ordered):
        cs = tuple(v for v in cuda if v.stage == st)
        partners = dict.fromkeys(p for v in cs if (p := triton_partner(v)))
        out.append(Stage(family, st, cs, tuple(map(record, partners))))
    return out


def family_seeds(family: str) -> str:
    return ", ".join(sorted({s.split(":")[0] for v in _cuda(family) for s in v.seeds})) or "none"


def peers() -> list[Variant]:
    """Catalogue records that are library calls (no kernel here to compile or port)."""
    return [v for v in catalogue.VARIANTS if not compiled(v)]


def short(vid: str) -> str:
    return vid.split("/", 1)[1]


def load_census(path: Path) -> tuple[dict, dict]:
    """(the census document, {(variant, dtype): row}); nothing when none is committed."""
    if not path.is_file():
        return {}, {}
    doc, rows = census_document(path)
    return doc, {(r.variant, r.dtype): r for r in rows}


def census_rows(variants: list[Variant], census: dict) -> list:
    """(variant, dtype, its census row or None) per variant and dtype it lists."""
    return [(v, d, census.get((v.id, d))) for v in variants for d in v.dtypes]


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
