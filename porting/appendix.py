"""The porting guide's appendix, docs/porting-appendix.md: per family its stages at a glance,
per stage the whole census, every committed measurement and every hardware counter; then the
counterparts' CUDA kernels, every helper, the wrong demonstrations, the peers, a link to the
seeds' counter tables and what compute-sanitizer found, from porting.doc's context.
"""

from __future__ import annotations

from harness.report.markdown import markdown_lines
from porting import hardware as porting_hardware
from porting import sanitizer as porting_sanitizer
from porting import stages
from porting.kernel_sources import cuda_kernel_text, has_kernel, kernel_name, triton_helpers
from porting.lessons import LESSONS, TEXTS
from porting.stages import Stage, short

EVERY_DTYPE = ("fastest", "reproducible")  # families whose census shows every dtype they list


def _stage(st: Stage, ctx: dict, guide: str) -> list[str]:
    out = [f'### <a id="{st.anchor}"></a>Stage {st.stage}: {st.title}', ""]
    out += [f"Back to [the stage in the guide]({guide}#{st.anchor}).", ""]
    out += ["**Census.**", ""]
    variants = [*st.cuda, *st.twins]
    out += stages.census_table(variants, ctx["census"], every_dtype=st.family in EVERY_DTYPE)
    out += ["", "**Measured** (median device time of the whole reduction, and bandwidth):", ""]
    if st.family == stages.AXIS:
        out += stages.grid(variants, st.dtype, ctx["axis"], axis=True)
    else:
        out += stages.grid(variants, st.dtype, ctx["results"])
    out += porting_hardware.stage_section(
        ctx["profile"], st.family, st.stage, list(st.cuda), list(st.twins)
    )
    return out


def _family_table(sts: list[Stage], guide: str) -> list[str]:
    """The family's stages at a glance: each CUDA stage, its Triton partners, what it became."""
    rows = []
    for st in sts:
        mark = "" if st.word == "twin" else " (counterpart)"
        rows.append(
            [
                _at(st, guide),
                ", ".join(f"`{short(v.id)}`" for v in st.cuda),
                ", ".join(f"`{short(t.id)}`{mark}" for t in st.twins),
                LESSONS.get((st.family, st.stage), ("not described yet", ""))[0],
            ]
        )
    return [*markdown_lines(("stage", "CUDA", "Triton", "in Triton"), rows), ""]


def _part(anchor: str, title: str, intro: str, entries: list[list[str]]) -> list[str]:
    """An appendix part: its anchor, heading and intro, then its entries (none: no part)."""
    head = [f'<a id="{anchor}"></a>', "", f"## {title}", "", intro, ""]
    return head + [line for entry in entries for line in entry] if entries else []


def _entry(anchor: str, title: str, caption: str, code: str, lang: str = "cuda") -> list[str]:
    """One printed source: its anchor, heading, a caption and the text."""
    caption = [caption, ""] if caption else []
    head = [f'<a id="{anchor}"></a>', "", f"### {title}", "", *caption]
    return [*head, f"```{lang}", code, "```", ""]


def _at(st: Stage, guide: str) -> str:
    return f"[stage {st.stage}]({guide}#{st.anchor})"


def _cuda_variants(word: str | None = None):
    """(stage, variant) of every CUDA variant, in guide order (of the stages called `word`)."""
    for fam in stages.families():
        for st in stages.stages(fam):
            if word in (None, st.word):
                yield from ((st, v) for v in st.cuda)


def _wrong(guide: str) -> list[str]:
    entries = []
    for st, v in _cuda_variants():
        if v.wrong:
            kernel, helpers = cuda_kernel_text(v)
            calls = ", ".join(f"`{name}`" for name, _ in helpers) or "none"
            caption = f"{v.title}: {v.change}. {v.notes}".rstrip() + "\n\n"
            caption += f"`{kernel_name(v)}` (`cuda_kernels/{v.source}`; helpers it calls: {calls}):"
            entries.append(
                _entry(f"wrong-{short(v.id)}", f"`{v.id}` ({_at(st, guide)})", caption, kernel)
            )
    intro = TEXTS["appendix-wrong"]
    return _part("wrong", "The labelled wrong demonstrations", intro, entries)


def _counterparts(guide: str) -> list[str]:
    """The CUDA kernels of the stages with a Triton counterpart (its own tiles, not a twin): the
    guide prints the Triton kernel and links these."""
    entries: dict[str, list[str]] = {}
    for st, v in _cuda_variants("counterpart"):
        name = kernel_name(v)
        if v.wrong or name in entries or not has_kernel(v):
            continue
        kernel, helpers = cuda_kernel_text(v)
        calls = ", ".join(f"[`{h}`](#helper-{h})" for h, _ in helpers) or "none"
        caption = f"`cuda_kernels/{v.source}`; the helpers it calls: {calls}."
        entries[name] = _entry(f"kernel-{name}", f"`{name}` ({_at(st, guide)})", caption, kernel)
    intro = TEXTS["appendix-counterparts"]
    return _part(
        "counterparts", "The CUDA kernels of the counterpart pairs", intro, [*entries.values()]
    )


def _helpers(guide: str) -> list[str]:
    """Every helper a kernel calls, CUDA and Triton, each once, at the first stage that calls
    it."""
    found: dict[str, list[str]] = {}
    for fam in stages.families():
        for st in stages.stages(fam):
            cuda = [v for v in st.cuda if has_kernel(v) and not v.wrong]
            calls = [("cuda", h) for v in cuda for h in cuda_kernel_text(v)[1]]
            calls += [("python", h) for t in st.twins if has_kernel(t) for h in triton_helpers(t)]
            for lang, (name, text) in calls:
                title = f"`{name}` (first called at {_at(st, guide)})"
                found.setdefault(name, _entry(f"helper-{name}", title, "", text, lang))
    intro = TEXTS["appendix-helpers"]
    return _part("helpers", "The helpers the kernels call", intro, [*found.values()])


def _peers(ctx: dict) -> list[str]:
    ps = stages.peers()
    table = markdown_lines(
        ("peer", "what it is", "dtypes"),
        ([f"`{v.id}`", f"{v.title}: {v.change}", ", ".join(v.dtypes)] for v in ps),
    )
    intro = TEXTS["appendix-peers"]
    body = [*table, "", "**Measured.**", "", *stages.grid(ps, "float32", ctx["results"])]
    body += porting_hardware.stage_section(ctx["profile"], "peer", "peer", ps, [])
    return _part("peers", "Peers: library calls (not compiled here)", intro, [body] if ps else [])


def render(ctx: dict, guide: str, generated: list[str]) -> str:
    out = [
        "# Porting guide, appendix: every number",
        "",
        *generated,
        TEXTS["appendix-intro"].format(guide=guide),
        "",
    ]
    if ctx["cdoc"]:
        out += [stages.census_intro(ctx["cdoc"], ctx["census_path"], ctx["root"]), ""]
        out += [stages.CENSUS_LEGEND, ""]
    out += porting_hardware.intro(ctx["profile_found"])
    for fam in stages.families():
        title = f"Family `{fam}` (seeds: {', '.join(stages.family_seeds(fam)) or 'none'})"
        out += [f"## {title}", "", *_family_table(stages.stages(fam), guide)]
        for st in stages.stages(fam):
            out += _stage(st, ctx, guide)
    out += _counterparts(guide)
    out += _helpers(guide)
    out += _wrong(guide)
    out += _peers(ctx)
    out += porting_hardware.seed_tables_section(ctx["profile_found"], ctx["doc_dir"], ctx["root"])
    out += porting_sanitizer.section(ctx["sanitize"])
    return "\n".join(out).rstrip() + "\n"
