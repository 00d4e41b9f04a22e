"""The porting guide, docs/porting.md, and its appendix beside it (`reduce-ladder inspect
--write-doc docs/porting.md`): the templates porting/guide.md and porting/appendix.md (Jinja2:
the layout and the words) rendered with what is built here from the committed catalogue, kernel
sources, census and results. A pure function of those (a test regenerates it byte for byte).
"""

from __future__ import annotations

from pathlib import Path

from porting import hardware, kernel_sources, sanitizer, stages
from porting.census import WIDE_COLUMNS, cell, triton_meta
from porting.lessons import ENV, LESSONS
from porting.stages import AXIS, ROOT, Stage, short

DOC = ROOT / "docs" / "porting.md"
CENSUS = stages.CENSUS
REGEN = (
    "reduce-ladder inspect --dtype all --json docs/census-sm_90.json\n"
    "reduce-ladder inspect --write-doc docs/porting.md"
)
INDUCTOR_PAGE = "porting-inductor.md"  # experiments/inductor_code's page, beside the guide
EVERY_DTYPE = ("fastest", "reproducible")  # families whose census shows every dtype they list


def appendix_path(doc: Path) -> Path:
    """The appendix written beside the guide: <stem>-appendix.md."""
    return doc.with_name(f"{doc.stem}-appendix.md")


ENV.globals |= {
    "short": short,
    "cells": lambda r: [cell(r, f) for *_, f in WIDE_COLUMNS],
    "meta": lambda t: ", ".join(f"{k} = {v}" for k, v in triton_meta(t).items()),
}


def _stage(st: Stage, ctx: dict, shown: dict, parts: dict) -> dict:
    """What the guide's screen and the appendix's section of one stage show."""
    sources, also = kernel_sources.stage_sources(st, shown, ctx["guide"], ctx["appendix"], parts)
    variants, profile = [*st.cuda, *st.twins], ctx["profile"] and ctx["profile"]["doc"]
    axis = st.family == AXIS
    measured = stages.measured(variants, st.dtype, ctx["axis" if axis else "results"], axis)
    parts = (profile, st.family, st.stage, list(st.cuda), list(st.twins))
    every = st.family in EVERY_DTYPE
    return {
        "st": st,
        "sources": sources,
        "how": LESSONS[(st.family, st.stage)][0],
        "why": LESSONS[(st.family, st.stage)][1],
        "also": also,
        "facts": stages.census_facts(st, ctx["census"]),
        "measured": measured,
        "hw": hardware.stage(*parts),
        "census": stages.census_rows(variants, ctx["census"], every_dtype=every),
    }


def context(census_path: Path = CENSUS, root: Path = ROOT, doc: Path = DOC) -> dict:
    cdoc, census = stages.load_census(census_path)
    ctx = {
        "regen": REGEN,
        "cdoc": cdoc,
        "census": census,
        "census_path": census_path.as_posix().removeprefix(f"{ROOT.as_posix()}/"),
        "columns": WIDE_COLUMNS,
        "arch": cdoc.get("arch", "?"),
        "results": stages.load_results(root),
        "axis": stages.load_axis(root),
        "axis_dtype": stages.AXIS_DTYPE,
        "axis_peer": stages.AXIS_PEER,
        "profile": hardware.view(hardware.committed(root), root, doc.parent),
        "sanitize": sanitizer.view(sanitizer.committed(root)),
        "guide": doc.name,
        "appendix": appendix_path(doc).name,
        "inductor": INDUCTOR_PAGE,
    }
    ctx["results_sources"] = stages.results_sources(ctx["results"])
    ctx["axis_sources"] = ", ".join(f"`{p}`" for p, _ in ctx["axis"]) or "no committed run yet"
    shown, parts = {}, {}
    ctx["families"] = []
    profile = ctx["profile"] and ctx["profile"]["doc"]
    for fam in stages.families():
        sts = stages.stages(fam)
        ids = [v.id for st in sts for v in (*st.cuda, *st.twins) if not v.wrong]
        ctx["families"].append(
            {
                "name": fam,
                "seeds": ", ".join(stages.family_seeds(fam)) or "none",
                "profiled": bool(profile and hardware.stage_keys(profile, ids)),
                "sanitized": sanitizer.family(ctx["sanitize"], ids),
                "stages": [_stage(st, ctx, shown, parts) for st in sts],
            }
        )
    ps = stages.peers()
    ctx["peers"] = ps and {
        "variants": ps,
        "measured": stages.measured(ps, "float32", ctx["results"]),
        "hw": hardware.stage(profile, "peer", "peer", ps, []),
    }
    return ctx | {
        part: [*parts.get(part, {}).values()] for part in ("counterparts", "helpers", "wrong")
    }


def render_guide(ctx: dict) -> str:
    return ENV.get_template("guide.md").render(ctx)


def render_all(census_path: Path = CENSUS, root: Path = ROOT, doc: Path = DOC) -> dict[Path, str]:
    """{path: text} of the guide and its appendix."""
    ctx = context(census_path, root, doc)
    return {doc: render_guide(ctx), appendix_path(doc): ENV.get_template("appendix.md").render(ctx)}


def write(path: str | Path = DOC, census_path: str | Path | None = None) -> list[Path]:
    path = Path(path)
    texts = render_all(Path(census_path).resolve() if census_path else CENSUS, ROOT, path)
    path.parent.mkdir(parents=True, exist_ok=True)
    for p, text in texts.items():
        p.write_text(text)
    return list(texts)
