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


def _wrong(guide: str) -> list[str]:
    wrong = [
        (st, v)
        for fam in stages.families()
        for st in stages.stages(fam)
        for v in st.cuda
        if v.wrong
    ]
    if not wrong:
        return []
    out = [
        '<a id="wrong"></a>',
        "",
        "## The labelled wrong demonstrations",
        "",
        "Kernels kept to show a bug the ladder avoids; never in a default run, never timed. Their "
        "helpers are printed in the guide.",
        "",
    ]
    for st, v in wrong:
        kernel, helpers = cuda_kernel_text(v)
        calls = ", ".join(f"`{name}`" for name, _ in helpers) or "none"
        out += [
            f'<a id="wrong-{short(v.id)}"></a>',
            "",
            f"### `{v.id}` ([stage {st.stage}]({guide}#{st.anchor}))",
            "",
            f"{v.title}: {v.change}. {v.notes}".rstrip(),
            "",
            f"`{kernel_name(v)}` (`cuda_kernels/{v.source}`; helpers it calls: {calls}):",
            "",
            "```cuda",
            kernel,
            "```",
            "",
        ]
    return out


def _helper_homes() -> tuple[dict[str, Stage], dict[str, tuple[str, Stage]]]:
    """({helper: stage} printed in the guide, {helper: (text, stage)} printed here): the guide
    prints the helpers of stages.GUIDE_HELPERS' families, this appendix the others, each at the
    first stage that calls it."""
    in_guide: dict[str, Stage] = {}
    later: dict[str, tuple[str, Stage]] = {}
    for fam in stages.families():
        for st in stages.stages(fam):
            for v in st.cuda:
                if v.wrong:
                    continue
                for name, text in cuda_kernel_text(v)[1]:
                    if fam in stages.GUIDE_HELPERS:
                        in_guide.setdefault(name, st)
                    elif name not in in_guide:
                        later.setdefault(name, (text, st))
    return in_guide, later


def _helper_link(name: str, guide: str) -> str:
    in_guide, _ = _helper_homes()
    st = in_guide.get(name)
    return f"[`{name}`]({guide}#{st.anchor})" if st else f"[`{name}`](#helper-{name})"


def _counterparts(guide: str) -> list[str]:
    """The CUDA kernels of the stages with a Triton counterpart (its own tiles, not a twin): the
    guide prints the Triton kernel and links these."""
    out: list[str] = []
    seen: set[str] = set()
    for fam in stages.families():
        for st in stages.stages(fam):
            if st.word != "counterpart":
                continue
            for v in st.cuda:
                name = kernel_name(v)
                if v.wrong or name in seen:
                    continue
                seen.add(name)
                kernel, helpers = cuda_kernel_text(v)
                calls = ", ".join(_helper_link(h, guide) for h, _ in helpers) or "none"
                out += [
                    f'<a id="kernel-{name}"></a>',
                    "",
                    f"### `{name}` ([stage {st.stage}]({guide}#{st.anchor}))",
                    "",
                    f"`cuda_kernels/{v.source}`; the helpers it calls: {calls}.",
                    "",
                    "```cuda",
                    kernel,
                    "```",
                    "",
                ]
    if not out:
        return []
    head = [
        '<a id="counterparts"></a>',
        "",
        "## The CUDA kernels of the counterpart pairs",
        "",
        "Where the Triton kernel is a counterpart (built for the same goal with its own tiles, "
        "not a twin), the two match goal for goal, not line for line: the guide prints the "
        "Triton kernel, and the CUDA one is here.",
        "",
    ]
    return head + out


def _helpers(guide: str) -> list[str]:
    """The CUDA helpers the guide does not print (those of the later families), each once."""
    _, later = _helper_homes()
    if not later:
        return []
    out = [
        '<a id="helpers"></a>',
        "",
        "## CUDA helpers of the later families",
        "",
        "The `__device__` functions the kernels of seed 004, seed 001, the fastest pair and the "
        "reproducible pair call (the ladder's are printed in the guide), each at the first stage "
        "that calls it.",
        "",
    ]
    for name, (text, st) in later.items():
        out += [
            f'<a id="helper-{name}"></a>',
            "",
            f"### `{name}` (first called at [stage {st.stage}]({guide}#{st.anchor}))",
            "",
            "```cuda",
            text,
            "```",
            "",
        ]
    return out


def _peers(ctx: dict) -> list[str]:
    ps = stages.peers()
    if not ps:
        return []
    out = [
        '<a id="peers"></a>',
        "",
        "## Peers: library calls (not compiled here)",
        "",
        "What a user would call instead, timed beside the ladder (`harness/launch/peers.py`). "
        "They are library calls, not kernels in this repository, so `reduce-ladder inspect` lists "
        "them as not compiled and there is nothing to port.",
        "",
    ]
    out += markdown_lines(
        ("peer", "what it is", "dtypes"),
        ([f"`{v.id}`", f"{v.title}: {v.change}", ", ".join(v.dtypes)] for v in ps),
    )
    out += ["", "**Measured.**", ""]
    out += stages.results_grid(ps, "float32", ctx["results"])
    return out + porting_hardware.stage_section(ctx["profile"], "peer", "peer", ps, [])


def render(ctx: dict, guide: str, generated: list[str]) -> str:
    out = [
        "# Porting guide, appendix: every number",
        "",
        *generated,
        f"The tables behind [the porting guide]({guide}), stage by stage: the whole compiler "
        "census, every committed measurement and every hardware counter; then the labelled wrong "
        "demonstrations, the library peers, the seeds' counter tables and what compute-sanitizer "
        "found.",
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
