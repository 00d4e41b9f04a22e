"""The porting guide, docs/porting.md, and its appendix beside it (`reduce-ladder inspect
--write-doc docs/porting.md`): the Jinja2 templates porting/guide.md and appendix.md (the words:
lessons.md, per stage) rendered with what kernel_sources and measured read from the committed
catalogue, sources, census and results; a pure function of those (a test regenerates it).
"""

from __future__ import annotations

import re
from pathlib import Path

import jinja2

from harness.core import catalogue
from harness.report import documents, profile_tables
from harness.report.markdown import short_id
from porting import census, measured
from porting import kernel_sources as ks
from porting.census import WIDE_COLUMNS, cell, triton_meta
from porting.kernel_sources import AXIS, CENSUS, ROOT, Stage

DOC = ROOT / "docs" / "porting.md"
REGEN = (
    "reduce-ladder inspect --dtype all --json docs/census-sm_90.json\n"
    "reduce-ladder inspect --write-doc docs/porting.md"
)
INDUCTOR_PAGE = "porting-inductor.md"  # experiments/inductor_code's page, beside the guide


def unwrap(text: str) -> str:
    """Wrapped paragraphs, each on one line (as the generated lines are), a blank line between."""
    paragraphs = text.strip("\n").split("\n\n")
    return "\n\n".join(" ".join(ln.strip() for ln in p.split("\n")) for p in paragraphs)


_LESSONS_MD = Path(__file__).with_name("lessons.md").read_text()
# lessons.md: `## FAMILY STAGE: HOW` -> LESSONS[(family, stage)] = (how, why), and `## note FAMILY
# STAGE: VARIANTS` -> NOTES[(family, stage)] = (the variants its words read as a, b, c; the words)
_HEADS = re.findall(r"^## (note )?(\S+) (\S+): (.+)\n((?:(?!## ).*\n?)*)", _LESSONS_MD, re.M)
LESSONS = {(fam, st): (how, unwrap(why)) for note, fam, st, how, why in _HEADS if not note}
NOTES = {(fam, st): (ids.split(), unwrap(text)) for note, fam, st, ids, text in _HEADS if note}
ENV = jinja2.Environment(loader=jinja2.FileSystemLoader(Path(__file__).parent), trim_blocks=True,
                         lstrip_blocks=True, keep_trailing_newline=True,
                         undefined=jinja2.StrictUndefined)  # fmt: skip
ENV.filters["unwrap"] = lambda text: unwrap(text) + "\n"
ENV.filters["num"] = lambda x, digits=0: "-" if x is None else f"{x:,.{digits}f}"
ENV.globals |= {
    "short": short_id,
    "cells": lambda r: [cell(r, f) for *_, f in WIDE_COLUMNS],
    "meta": lambda t: ", ".join(f"{k} = {v}" for k, v in triton_meta(t).items()),
}


def appendix_path(doc: Path) -> Path:  # beside the guide
    return doc.with_name(f"{doc.stem}-appendix.md")


def _stage(st: Stage, ctx: dict, shown: dict, parts: dict) -> dict:
    """What the guide's screen and the appendix's section of one stage show."""
    sources, also = ks.stage_sources(st, shown, ctx["guide"], ctx["appendix"], parts)
    variants, profile = [*st.cuda, *st.twins], ctx["profile"] and ctx["profile"]["doc"]
    if st.family == AXIS:
        lines = measured.axis_lines(variants, ctx["axis"])
    else:
        lines = measured.lines(variants, st.dtype, ctx["results"])
    ids, words = NOTES.get((st.family, st.stage), ([], ""))  # the counters' note, if profiled
    fields = measured.note_fields(profile, ids)
    note = fields and ENV.from_string(words).render(fields, seed=profile_tables)
    how, why = LESSONS[(st.family, st.stage)]
    return {"st": st, "sources": sources, "how": how, "why": why, "also": also, "note": note,
            "facts": ks.census_facts(st, ctx["census"]), "measured": lines,
            "hw": measured.counter_line(profile, variants)}  # fmt: skip


def context(census_path: Path = CENSUS, root: Path = ROOT, doc: Path = DOC) -> dict:
    cdoc, rows = census.load_document(census_path) if census_path.is_file() else ({}, [])
    results = measured.load_results(root)
    axis = measured.load(root, (measured.AXIS_RESULTS,), "rows")
    ctx = {"regen": REGEN, "cdoc": cdoc, "census": {(r.variant, r.dtype): r for r in rows},
           "census_path": census_path.as_posix().removeprefix(f"{ROOT.as_posix()}/"),
           "columns": WIDE_COLUMNS, "results": results, "axis": axis,
           "results_sources": measured.results_sources(results),
           "axis_sources": ", ".join(f"`{p}`" for p, _ in axis) or "no committed run yet",
           "axis_dtype": measured.AXIS_DTYPE, "axis_peer": measured.AXIS_PEER,
           "profile": measured.profile_view(root, doc.parent),
           "sanitize": measured.sanitize_view(root), "guide": doc.name,
           "appendix": appendix_path(doc).name, "inductor": INDUCTOR_PAGE}  # fmt: skip
    profile = ctx["profile"] and ctx["profile"]["doc"]
    shown, parts, ctx["families"] = {}, {}, []
    for fam in ks.families():
        sts = ks.stages(fam)
        ids = [v.id for st in sts for v in (*st.cuda, *st.twins) if not v.wrong]
        ctx["families"].append({"name": fam, "seeds": ks.family_seeds(fam),
            "profiled": bool(profile and measured.profiled(profile, ids)),
            "sanitized": measured.sanitized(ctx["sanitize"], ids),
            "stages": [_stage(st, ctx, shown, parts) for st in sts]})  # fmt: skip
    ps = catalogue.select(backend="peer")  # library calls: no kernel here to compile or port
    ctx["peers"] = ps and {"variants": ps, "measured": measured.lines(ps, "float32", results)}
    return ctx | {
        part: [*parts.get(part, {}).values()] for part in ("counterparts", "helpers", "wrong")
    }


def render_all(census_path: Path = CENSUS, root: Path = ROOT, doc: Path = DOC) -> dict[Path, str]:
    """{path: text} of the guide and its appendix."""
    ctx = context(census_path, root, doc)
    pages = {doc: "guide.md", appendix_path(doc): "appendix.md"}
    return {path: ENV.get_template(name).render(ctx) for path, name in pages.items()}


def write(path: str | Path = DOC, census_path: str | Path | None = None) -> list[Path]:
    texts = render_all(Path(census_path).resolve() if census_path else CENSUS, ROOT, Path(path))
    for p, text in texts.items():
        documents.output_path(p).write_text(text)
    return list(texts)
