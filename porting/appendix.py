"""The porting guide's appendix, docs/porting-appendix.md: every number the guide's stages
summarize. Per stage: the whole compiler census (every column; the fastest pair in every dtype it
is built for), every committed measurement (each device, size and dtype) and every hardware
counter; then the labelled wrong demonstrations' sources, the library peers, the seeds' own
counter tables regenerated, and what compute-sanitizer found. Built from the context
porting.doc reads (census, results, profile, sanitize documents); nothing is typed in.
"""

from __future__ import annotations

from harness.report.markdown import markdown_lines
from porting import hardware as porting_hardware
from porting import sanitizer as porting_sanitizer
from porting import stages
from porting.kernel_sources import cuda_kernel_text, kernel_name
from porting.lessons import TEXTS
from porting.stages import Stage, short

EVERY_DTYPE = ("fastest", "reproducible")  # families whose census shows every dtype they list


def _stage(st: Stage, ctx: dict, guide: str) -> list[str]:
    out = [f'<a id="{st.anchor}"></a>', "", f"### Stage {st.stage}: {st.title}", ""]
    out += [f"Back to [the stage in the guide]({guide}#{st.anchor}).", ""]
    out += ["**Census.**", ""]
    variants = [*st.cuda, *st.twins]
    out += stages.census_table(variants, ctx["census"], every_dtype=st.family in EVERY_DTYPE)
    out += ["", "**Measured** (median device time of the whole reduction, and bandwidth):", ""]
    out += stages.results_grid(variants, st.dtype, ctx["results"])
    out += porting_hardware.stage_section(
        ctx["profile"], st.family, st.stage, list(st.cuda), list(st.twins)
    )
    return out


def _part(anchor: str, title: str, intro: str, entries: list[list[str]]) -> list[str]:
    """An appendix part: its anchor, heading and intro, then its entries (none: no part)."""
    head = [f'<a id="{anchor}"></a>', "", f"## {title}", "", intro, ""]
    return head + [line for entry in entries for line in entry] if entries else []


def _entry(anchor: str, title: str, caption: str, code: str) -> list[str]:
    """One printed source: its anchor, heading, a caption and the CUDA text."""
    caption = [caption, ""] if caption else []
    return [f'<a id="{anchor}"></a>', "", f"### {title}", "", *caption, "```cuda", code, "```", ""]


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


def _helper_homes() -> tuple[dict[str, Stage], dict[str, tuple[str, Stage]]]:
    """({helper: stage} printed in the guide, {helper: (text, stage)} printed here): the guide
    prints the helpers of stages.GUIDE_HELPERS' families, this appendix the others, each at the
    first stage that calls it."""
    in_guide: dict[str, Stage] = {}
    later: dict[str, tuple[str, Stage]] = {}
    for st, v in _cuda_variants():
        for name, text in [] if v.wrong else cuda_kernel_text(v)[1]:
            if st.family in stages.GUIDE_HELPERS:
                in_guide.setdefault(name, st)
            elif name not in in_guide:
                later.setdefault(name, (text, st))
    return in_guide, later


def _counterparts(guide: str) -> list[str]:
    """The CUDA kernels of the stages with a Triton counterpart (its own tiles, not a twin): the
    guide prints the Triton kernel and links these."""
    in_guide, _ = _helper_homes()
    entries: dict[str, list[str]] = {}
    for st, v in _cuda_variants("counterpart"):
        name = kernel_name(v)
        if v.wrong or name in entries:
            continue
        kernel, helpers = cuda_kernel_text(v)
        calls = ", ".join(
            f"[`{h}`]({guide}#{in_guide[h].anchor})" if h in in_guide else f"[`{h}`](#helper-{h})"
            for h, _ in helpers
        )
        caption = f"`cuda_kernels/{v.source}`; the helpers it calls: {calls or 'none'}."
        entries[name] = _entry(f"kernel-{name}", f"`{name}` ({_at(st, guide)})", caption, kernel)
    intro = TEXTS["appendix-counterparts"]
    return _part(
        "counterparts", "The CUDA kernels of the counterpart pairs", intro, [*entries.values()]
    )


def _helpers(guide: str) -> list[str]:
    """The CUDA helpers the guide does not print (those of the later families), each once."""
    _, later = _helper_homes()
    intro = TEXTS["appendix-helpers"]
    entries = [
        _entry(f"helper-{name}", f"`{name}` (first called at {_at(st, guide)})", "", text)
        for name, (text, st) in later.items()
    ]
    return _part("helpers", "CUDA helpers of the later families", intro, entries)


def _peers(ctx: dict) -> list[str]:
    ps = stages.peers()
    table = markdown_lines(
        ("peer", "what it is", "dtypes"),
        ([f"`{v.id}`", f"{v.title}: {v.change}", ", ".join(v.dtypes)] for v in ps),
    )
    intro = TEXTS["appendix-peers"]
    body = [*table, "", "**Measured.**", "", *stages.results_grid(ps, "float32", ctx["results"])]
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
        out += [f"## {title}", ""]
        for st in stages.stages(fam):
            out += _stage(st, ctx, guide)
    out += _counterparts(guide)
    out += _helpers(guide)
    out += _wrong(guide)
    out += _peers(ctx)
    out += porting_hardware.seed_tables_section(ctx["profile_found"], ctx["doc_dir"], ctx["root"])
    out += porting_sanitizer.section(ctx["sanitize"])
    return "\n".join(out).rstrip() + "\n"
