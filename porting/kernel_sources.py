"""The stages of every family, read from the catalogue: each CUDA stage with the Triton variants
shown beside it, what the committed census says of them, and their kernels' text as the guide
prints it (each once; what the appendix prints instead: stage_sources).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path

from harness.compile import cuda_source
from harness.core import catalogue
from harness.core.catalogue import Variant
from harness.report.markdown import short_id

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
    """Its tile twin, else its counterpart (built for the same goal with its own tiles)."""
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


# ---------------------------------------------------------------------------------------------
# Kernel text

# a function: the comment lines and template line above it, then the __global__ / __device__ line
# up to its name (which may follow __launch_bounds__(...) on the next line)
_FN = re.compile(
    r"^(?:[ \t]*//.*\n)*(?:template\b.*\n)?__(?:global|device)__\s[^;{]*?"
    r"\b(?!__launch_bounds__\b)(\w+)\s*\(",
    re.M,
)


def _cuda_functions(path: Path) -> dict[str, str]:
    """name -> text (leading comments, template line, body) of every __global__ and __device__
    function defined in a CUDA file and its headers."""
    text = cuda_source.expand(path)
    out = {}
    for m in _FN.finditer(text):
        depth, start = 0, text.index("{", m.end())
        for end in range(start, len(text)):
            depth += {"{": 1, "}": -1}.get(text[end], 0)
            if depth == 0:
                break
        out[m.group(1)] = text[m.start() : end + 1]
    return out


def _triton_functions(path: Path) -> dict[str, str]:
    """{name: text from decorator to last line} of a Triton file's functions (ast: no import)."""
    text = path.read_text()
    lines = text.splitlines()
    fns = [n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef)]
    first = {n.name: min([n.lineno, *(d.lineno for d in n.decorator_list)]) for n in fns}
    return {n.name: "\n".join(lines[first[n.name] - 1 : n.end_lineno]) for n in fns}


def kernel_name(v: Variant) -> str:
    return (v.kernel or "").split("<")[0].strip()


def has_kernel(v: Variant) -> bool:
    """Whether `v` names a kernel of its own (axis-fastest launches the stages' kernels)."""
    return kernel_name(v).isidentifier()


def kernel_text(v: Variant) -> tuple[str, list[tuple[str, str]]]:
    """The kernel's own text and [(name, text)] of the helpers it calls, transitively (CUDA: its
    file's and its headers')."""
    cuda = v.backend == "cuda"
    path = ROOT / ("cuda_kernels" if cuda else "triton_kernels") / (v.source or "tiles.py")
    every = (_cuda_functions if cuda else _triton_functions)(path)
    name = kernel_name(v)
    if name not in every:
        raise ValueError(f"{v.id}: no function {name} in {path.relative_to(ROOT)}")
    found: dict[str, str] = {}  # the functions it calls, transitively
    todo = [every[name]]
    while todo:
        body = code_only(todo.pop(0))
        for other, text in every.items():
            if other != name and other not in found and re.search(rf"\b{other}\b\s*[<(]", body):
                found[other] = text
                todo.append(text)
    return every[name], list(found.items())


def code_only(text: str) -> str:
    """A kernel as the guide prints it: without the comment block above a CUDA kernel or the
    docstring of a Triton one (@-decorated or def: the guide's idea says it, the file has it)."""
    lines = text.splitlines()
    if not text.startswith(("@", "def ")):
        return "\n".join(lines[next(i for i, ln in enumerate(lines) if ln[:2] != "//") :])
    body = ast.parse(text).body[0].body
    if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        del lines[body[0].lineno - 1 : body[0].end_lineno]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Kernel sources, each printed once


def _key(v: Variant) -> str:
    return f"{v.backend}:{v.source}:{kernel_name(v)}"


def _entry(parts: dict, part: str, anchor: str, title: str, code: str, caption="", lang="cuda"):
    """An appendix entry (`parts`: {part: {anchor: entry}}), the first one of each anchor kept."""
    entry = {"anchor": anchor, "title": title, "caption": caption, "code": code, "lang": lang}
    parts.setdefault(part, {}).setdefault(anchor, entry)


def stage_sources(st: Stage, shown: dict, guide: str, appendix: str, parts: dict):
    """The stage's kernels not printed before (`shown`: {key: (link target, label)}), as blocks
    the guide's template prints: CUDA beside the Triton ones it first meets ("pair"), alone
    ("cuda", "triton"), a counterpart's CUDA kernel (which matches the Triton one goal for goal,
    not line for line) linked in the appendix ("appendix"), none of its own ("none"); a list item
    that says where the others and the helpers were printed, or None. What the appendix prints
    (that CUDA kernel, the helpers, the wrong demonstrations) goes to `parts`."""
    here, at = (f"#{st.anchor}", f"stage {st.stage}"), f"[stage {st.stage}]({guide}#{st.anchor})"
    out: list[dict] = []
    earlier: list[str] = []

    def printed(v: Variant, helpers) -> bool:
        """Whether v's kernel was printed already (at an earlier stage: linked under the sources);
        its helpers go to the appendix and are linked there."""
        for h, text in helpers:
            earlier.append(f"`{h}` ([appendix]({appendix}#helper-{h}))")
            lang = "cuda" if v.backend == "cuda" else "python"
            _entry(parts, "helpers", f"helper-{h}", f"`{h}` (first called at {at})", text, "", lang)
        if (key := _key(v)) in shown and shown[key] != here:
            earlier.append(f"`{kernel_name(v)}` ([{shown[key][1]}]({shown[key][0]}))")
        return key in shown

    for v in st.cuda:
        if not has_kernel(v):
            out.append({"kind": "none", "id": v.id})
            continue
        kernel, helpers = kernel_text(v)
        name, where = kernel_name(v), f"`cuda_kernels/{v.source}`"
        if v.wrong:  # in the appendix, never in a stage's screen
            calls = ", ".join(f"`{h}`" for h, _ in helpers) or "none"
            caption = f"{v.title}: {v.change}. {v.notes}".rstrip()
            caption += f"\n\n`{name}` ({where}; helpers it calls: {calls}):"
            _entry(parts, "wrong", f"wrong-{short_id(v.id)}", f"`{v.id}` ({at})", kernel, caption)
            continue
        if printed(v, helpers):
            continue
        same = [u for u in st.cuda if _key(u) == _key(v) and not u.wrong]
        block = {"name": name, "source": v.source, "code": code_only(kernel)}
        block["users"] = ", ".join(short_id(u.id) for u in same)
        if st.word == "counterpart":
            shown[_key(v)] = (f"{appendix}#kernel-{name}", "appendix")
            out.append(block | {"kind": "appendix", "lines": len(kernel.splitlines())})
            links = ", ".join(f"[`{h}`](#helper-{h})" for h, _ in helpers) or "none"
            caption = f"{where}; the helpers it calls: {links}."
            _entry(parts, "counterparts", f"kernel-{name}", f"`{name}` ({at})", kernel, caption)
            continue
        shown[_key(v)] = here
        partners = {triton_partner(u) for u in same}
        tri = {_key(t): t for t in st.twins if t.id in partners and _key(t) not in shown}
        shown.update(dict.fromkeys(tri, here))
        triton = [(t, code_only(kernel_text(t)[0])) for t in tri.values()]
        out.append(block | {"kind": "pair" if tri else "cuda", "triton": triton})
    for t in (t for t in st.twins if has_kernel(t)):
        own, helpers = kernel_text(t)
        if not printed(t, helpers):
            shown[_key(t)] = here
            out.append({"kind": "triton", "t": t, "code": code_only(own)})
    also = ", ".join(dict.fromkeys(earlier))
    return out, f"- also called or launched: {also}." if also else None
