"""Read a ladder .cu file with its local #include "..." lines expanded in place: what both compile
paths see (CuPy, the NVRTC wheel). Expanding here, not passing -I, because CuPy's kernel cache
keys on the source text: an edit to common.cuh must change the key. `#line` directives keep
compiler messages pointing at the real file and line. Sources and includes: docs/architecture.md.
"""

from __future__ import annotations

import re
from pathlib import Path

from cuda_kernels import SOURCE_DIR, source_path

_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"\s*$')


def expand(name: str | Path) -> str:
    """The source of cuda_kernels/<name> (or of the file at a Path) with local includes inlined
    (each header once)."""
    return _expand(name if isinstance(name, Path) else source_path(name), set())


def _expand(path: Path, seen: set[str]) -> str:
    out = [f'#line 1 "{path.name}"']
    for lineno, line in enumerate(path.read_text().splitlines(), start=1):
        m = _INCLUDE.match(line)
        if m:
            header = m.group(1)
            if header not in seen:
                seen.add(header)
                beside = path.parent / header
                out.append(_expand(beside if beside.is_file() else SOURCE_DIR / header, seen))
            out.append(f'#line {lineno + 1} "{path.name}"')
        elif line.strip() == "#pragma once":
            out.append("")
        else:
            out.append(line)
    return "\n".join(out) + "\n"


def sources() -> list[str]:
    """Every .cu file of the ladder (headers are not compiled on their own)."""
    return sorted(p.name for p in SOURCE_DIR.glob("*.cu"))
