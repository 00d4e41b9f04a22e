"""Kernel text for the porting doc, read from the committed sources: a CUDA kernel and the
helpers it calls (cuda_kernels/*.cu and the headers they include), a @triton.jit function
(triton_kernels/*.py, read with ast: no Triton import, no interpreter mode)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from harness.core.catalogue import Variant

ROOT = Path(__file__).resolve().parents[1]

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


def triton_kernel_text(v: Variant) -> str:
    """The @triton.jit function's text (decorator to last line), read from the file with ast so
    that no Triton import (nor its interpreter mode) is involved."""
    path = ROOT / "triton_kernels" / (v.source or "tiles.py")
    text = path.read_text()
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef) and node.name == v.kernel:
            first = min([d.lineno for d in node.decorator_list] + [node.lineno])
            return "\n".join(text.splitlines()[first - 1 : node.end_lineno])
    raise ValueError(f"{v.id}: no function {v.kernel} in {path.relative_to(ROOT)}")


def side_by_side(cuda_title: str, cuda: str, word: str, tri_title: str, tri: str) -> list[str]:
    """The CUDA kernel and its Triton partner in a two-column HTML table (Markdown inside)."""
    return [
        "<table>",
        f"<tr><th>CUDA: {cuda_title}</th><th>Triton {word}: {tri_title}</th></tr>",
        '<tr><td valign="top">',
        "",
        "```cuda",
        cuda,
        "```",
        "",
        '</td><td valign="top">',
        "",
        "```python",
        tri,
        "```",
        "",
        "</td></tr>",
        "</table>",
        "",
    ]
