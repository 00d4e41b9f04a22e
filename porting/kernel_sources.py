"""Kernel text for the porting guide, read from the committed sources (CUDA: the kernel and the
helpers it calls; Triton: read with ast, no Triton import), and each stage's sources as the guide
prints them, each once (stage_sources; Shown: where each was printed).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from harness.core.catalogue import Variant
from porting import stages
from porting.stages import Stage, short

ROOT = stages.ROOT

_DEF = re.compile(r"__(?:global|device)__\s+(?:__forceinline__\s+)?[\w:<>,\s*]*?\b(\w+)\s*\(")
_LAUNCH_BOUNDS = re.compile(r"__launch_bounds__\s*\([^)]*\)")


def cuda_functions(path: Path) -> dict[str, str]:
    """name -> text (leading comment block, template line, body) of every __global__ and
    __device__ function defined in a CUDA source file."""
    lines = path.read_text().splitlines()
    out: dict[str, str] = {}
    i = 0
    while i < len(lines):
        m = None
        if lines[i].lstrip().startswith("__"):
            # `__global__ void __launch_bounds__(B, k)` may put the name on the next line
            head = _LAUNCH_BOUNDS.sub("", lines[i])
            m = _DEF.search(head)
            if not m and i + 1 < len(lines) and "(" not in head:
                m = _DEF.search(head + " " + lines[i + 1])
        if not m:
            i += 1
            continue
        start = i
        if start > 0 and lines[start - 1].lstrip().startswith("template"):
            start -= 1
        while start > 0 and lines[start - 1].lstrip().startswith("//"):
            start -= 1
        depth, end, seen = 0, i, False
        for j in range(i, len(lines)):
            depth += lines[j].count("{") - lines[j].count("}")
            seen = seen or "{" in lines[j]
            if seen and depth == 0:
                end = j
                break
        out[m.group(1)] = "\n".join(lines[start : end + 1])
        i = end + 1
    return out


def _all_cuda_functions(source: str) -> tuple[dict[str, str], dict[str, str]]:
    """(functions of the source file, functions of the headers it includes) by name."""
    path = ROOT / "cuda_kernels" / source
    headers: dict[str, str] = {}
    for inc in re.findall(r'#include\s+"([^"]+)"', path.read_text()):
        headers.update(cuda_functions(ROOT / "cuda_kernels" / inc))
    return cuda_functions(path), headers


def kernel_name(v: Variant) -> str:
    return (v.kernel or "").split("<")[0].strip()


def cuda_kernel_text(v: Variant) -> tuple[str, list[tuple[str, str]]]:
    """The kernel's own text and [(name, text)] of the helpers it calls, transitively."""
    own, headers = _all_cuda_functions(v.source)
    every = {**headers, **own}
    name = kernel_name(v)
    if name not in own:
        raise ValueError(f"{v.id}: no function {name} in cuda_kernels/{v.source}")
    helpers: list[tuple[str, str]] = []
    todo, seen = [own[name]], {name}
    while todo:
        body = todo.pop(0)
        for other, text in every.items():
            if other not in seen and re.search(rf"\b{re.escape(other)}\b\s*[<(]", body):
                seen.add(other)
                helpers.append((other, text))
                todo.append(text)
    return own[name], helpers


def _triton_functions(v: Variant) -> dict[str, tuple[ast.FunctionDef, str]]:
    """{name: (node, text from decorator to last line)} of the functions in v's Triton file, read
    with ast so that no Triton import (nor its interpreter mode) is involved."""
    text = (ROOT / "triton_kernels" / (v.source or "tiles.py")).read_text()
    lines = text.splitlines()
    out = {}
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef):
            first = min([d.lineno for d in node.decorator_list] + [node.lineno])
            out[node.name] = (node, "\n".join(lines[first - 1 : node.end_lineno]))
    return out


def triton_kernel_text(v: Variant) -> str:
    """The @triton.jit function's text (decorator to last line)."""
    found = _triton_functions(v).get(v.kernel)
    if found is None:
        raise ValueError(f"{v.id}: no function {v.kernel} in triton_kernels/{v.source}")
    return found[1]


def triton_helpers(v: Variant) -> list[tuple[str, str]]:
    """[(name, text)] of the functions of the same file the kernel calls, transitively."""
    funcs = _triton_functions(v)
    helpers: list[tuple[str, str]] = []
    todo, seen = [v.kernel], {v.kernel}
    while todo:
        for node in ast.walk(funcs[todo.pop(0)][0]):
            name = getattr(node.func, "id", None) if isinstance(node, ast.Call) else None
            if name in funcs and name not in seen:
                seen.add(name)
                helpers.append((name, funcs[name][1]))
                todo.append(name)
    return helpers


def code_only(text: str) -> str:
    """A kernel as the guide prints it: without the comment block above a CUDA kernel or the
    docstring of a Triton one (@-decorated; the guide's idea and what changed say it, the file
    has it)."""
    lines = text.splitlines()
    if not text.startswith("@"):
        return "\n".join(lines[next(i for i, ln in enumerate(lines) if ln[:2] != "//") :])
    body = ast.parse(text).body[0].body
    if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        del lines[body[0].lineno - 1 : body[0].end_lineno]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Kernel sources, each printed once


class Shown(dict):
    """Where each kernel and helper source was printed: {key: (link target, label)}."""

    def link(self, key: str) -> str:
        href, label = self[key]
        return f"[{label}]({href})"


def _code(lang: str, text: str) -> list[str]:
    return [f"```{lang}", text, "```", ""]


def _side_by_side(left: str, cuda: str, right: str, tri: str) -> list[str]:
    head = f'<table><tr><th>CUDA: {left}</th><th>Triton: {right}</th></tr><tr><td valign="top">'
    return [
        head,
        "",
        *_code("cuda", cuda)[:-1],
        '</td><td valign="top">',
        "",
        *_code("python", tri)[:-1],
        "</td></tr></table>",
        "",
    ]


def _ckey(v) -> str:
    return f"cuda:{v.source}:{kernel_name(v)}"


def _tkey(t) -> str:
    return f"triton:{t.source}:{t.kernel}"


def has_kernel(v: Variant) -> bool:
    """Whether `v` names a kernel of its own (axis-fastest launches the stages' kernels)."""
    return kernel_name(v).isidentifier() if v.backend == "cuda" else v.kernel.isidentifier()


def stage_sources(st: Stage, shown: Shown, appendix_name: str) -> tuple[list[str], str | None]:
    """The stage's kernels not printed before: CUDA beside the Triton ones it first meets (a
    counterpart's CUDA kernel, which matches the Triton one goal for goal, not line for line, is
    printed in the appendix and linked); and a list item that says where the others and the
    helpers (all in the appendix) were printed, None if there are none."""
    here = (f"#{st.anchor}", f"stage {st.stage}")
    out: list[str] = []
    earlier: list[str] = []

    def printed(key: str, name: str) -> bool:
        """Whether `key` was printed already (at an earlier stage: linked under the sources)."""
        if key in shown and shown[key] != here:
            earlier.append(f"`{name}` ({shown.link(key)})")
        return key in shown

    for v in st.cuda:
        if v.wrong:
            continue  # its source is in the appendix, with the other wrong demonstrations
        if not has_kernel(v):
            out += [f"`{v.id}` has no kernel of its own: it launches the picked stage's.", ""]
            continue
        key = _ckey(v)
        kernel, helpers = cuda_kernel_text(v)
        for name, _ in helpers:
            earlier.append(f"`{name}` ([appendix]({appendix_name}#helper-{name}))")
        if printed(key, kernel_name(v)):
            continue
        same = [u for u in st.cuda if _ckey(u) == key and not u.wrong]
        users = ", ".join(short(u.id) for u in same)
        if st.word == "counterpart":  # no line-by-line match: the CUDA kernel in the appendix
            href = f"{appendix_name}#kernel-{kernel_name(v)}"
            shown[key] = (href, "appendix")
            out += [
                f"CUDA: `{kernel_name(v)}` ({users}; `cuda_kernels/{v.source}`, "
                f"{len(kernel.splitlines())} lines): [in the appendix]({href}).",
                "",
            ]
            continue
        shown[key] = here
        tri = [t for u in same if (t := _partner(u, st)) is not None and _tkey(t) not in shown]
        tri = list({_tkey(t): t for t in tri}.values())
        if not tri:
            out += [f"CUDA: `{kernel_name(v)}` ({users}; `cuda_kernels/{v.source}`)", ""]
            out += _code("cuda", code_only(kernel))
            continue
        shown.update((_tkey(t), here) for t in tri)
        left = f"<code>{kernel_name(v)}</code> ({users}; <code>cuda_kernels/{v.source}</code>)"
        right = ", ".join(
            f"<code>{t.kernel}</code> (<code>triton_kernels/{t.source}</code>)" for t in tri
        )
        tri_text = "\n\n\n".join(code_only(triton_kernel_text(t)) for t in tri)
        out += _side_by_side(left, code_only(kernel), right, tri_text)
    for t in (t for t in st.twins if has_kernel(t)):
        if not printed(_tkey(t), t.kernel):
            shown[_tkey(t)] = here
            out += [f"Triton: `{t.kernel}` (`triton_kernels/{t.source}`)", ""]
            out += _code("python", code_only(triton_kernel_text(t)))
        for name, _ in triton_helpers(t):
            earlier.append(f"`{name}` ([appendix]({appendix_name}#helper-{name}))")
    also = ", ".join(dict.fromkeys(earlier))
    return out, f"- also called or launched: {also}." if also else None


def _partner(v, st: Stage):
    p = stages.triton_partner(v)
    return next((t for t in st.twins if t.id == p), None)
