"""Read a ladder .cu file with its local #include "..." lines expanded in place.

The expanded text is what both compile paths see (CuPy on a GPU machine, the NVRTC wheel on a
machine without one). Expanding here, rather than passing -I, matters because CuPy's kernel cache
keys on the source text: an edit to common.cuh must change the key. `#line` directives keep
compiler messages pointing at the real file and line.
"""

from __future__ import annotations

import re
from pathlib import Path

from cuda_kernels import SOURCE_DIR, source_path

_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"\s*$')


def expand(name: str, _seen: frozenset[str] = frozenset()) -> str:
    """The source of cuda_kernels/<name> with local includes inlined (each header once)."""
    path = source_path(name)
    return _expand(path, set(_seen))


def _expand(path: Path, seen: set[str]) -> str:
    out = [f'#line 1 "{path.name}"']
    for lineno, line in enumerate(path.read_text().splitlines(), start=1):
        m = _INCLUDE.match(line)
        if m:
            header = m.group(1)
            if header not in seen:
                seen.add(header)
                out.append(_expand(SOURCE_DIR / header, seen))
            out.append(f'#line {lineno + 1} "{path.name}"')
        elif line.strip() == "#pragma once":
            out.append("")
        else:
            out.append(line)
    return "\n".join(out) + "\n"


def sources() -> list[str]:
    """Every .cu file of the ladder (headers are not compiled on their own)."""
    return sorted(p.name for p in SOURCE_DIR.glob("*.cu"))
