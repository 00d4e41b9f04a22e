"""What cuobjdump says of a CUBIN (resources, SASS) and its PTX (integer divides, which SASS has
not, and static `.shared` arrays), counted: text in, numbers out. Counts are static (instructions
in the binary), not executed instructions.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path


class ToolMissing(RuntimeError):
    """A compiler or disassembler the census needs is not installed."""


@cache
def find_tool(name: str) -> str:
    """Path of a CUDA binary tool (cuobjdump): Triton's wheel first, then PATH, then CUDA_HOME,
    CUDA_PATH and /usr/local/cuda."""
    spec = importlib.util.find_spec("triton")
    homes = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    candidates = [*(Path(p, "backends", "nvidia", "bin", name)
                    for p in (spec and spec.submodule_search_locations) or []),
                  *(Path(w) for w in [shutil.which(name)] if w),
                  *(Path(h, "bin", name) for h in homes if h)]  # fmt: skip
    if found := next((c for c in candidates if c.is_file() and os.access(c, os.X_OK)), None):
        return str(found)
    raise ToolMissing(
        f"{name} not found: it ships in Triton's wheel (triton/backends/nvidia/bin), or install a "
        f"CUDA toolkit and set CUDA_HOME. Looked in: {', '.join(map(str, candidates)) or '-'}"
    )


def tool_version(name: str) -> str:
    """The release of a CUDA binary tool ("13.1.80"), or "unavailable" when it is missing."""
    try:
        out = subprocess.run([find_tool(name), "--version"], capture_output=True, text=True,
                             timeout=30).stdout  # fmt: skip
    except (ToolMissing, OSError, subprocess.SubprocessError):
        return "unavailable"
    return m.group(1) if (m := re.search(r"release [\d.]+, V([\d.]+)", out)) else "unknown"


def cuobjdump(cubin: bytes, *flags: str) -> str:
    """cuobjdump's text for the CUBIN (--dump-sass and --dump-resource-usage: both sections)."""
    with tempfile.TemporaryDirectory() as d:
        (path := Path(d) / "k.cubin").write_bytes(cubin)
        r = subprocess.run(
            [find_tool("cuobjdump"), *flags, str(path)], capture_output=True, text=True
        )
    if r.returncode != 0:
        raise RuntimeError(f"cuobjdump {' '.join(flags)} failed: {r.stderr.strip()}")
    return r.stdout


_FUNCTION = re.compile(r"^\s*Function\s*:\s*(\S+)")
_INSN = re.compile(
    r"^\s*/\*([0-9a-f]+)\*/\s+(?:@!?U?P(?:T|\d+)\s+)?([A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)*)([^;]*);"
)
_RESOURCE = re.compile(r"^\s*Function\s+(\S+):\s*$")


def split_sass(sass: str) -> dict[str, list[tuple[int, str, str]]]:
    """cuobjdump --dump-sass text -> {function: [(address, opcode, operands), ...]}."""
    out: dict[str, list[tuple[int, str, str]]] = {}
    current: list | None = None
    for line in sass.splitlines():
        if m := _FUNCTION.match(line):
            current = out.setdefault(m.group(1), [])
        elif current is not None and (m := _INSN.match(line)):
            current.append((int(m.group(1), 16), m.group(2), m.group(3).strip()))
    return out


def parse_resource_usage(text: str) -> dict[str, dict[str, int]]:
    """cuobjdump --dump-resource-usage -> {function: {"REG": .., "STACK": .., "SHARED": ..}}."""
    out: dict[str, dict[str, int]] = {}
    current = None
    for line in text.splitlines():
        if m := _RESOURCE.match(line):
            current = m.group(1)
        elif current and "REG:" in line:
            out[current] = {k: int(v) for k, v in re.findall(r"([A-Z_]+(?:\[\d+\])?):(\d+)", line)}
            current = None
    return out


def split_ptx(ptx: str) -> dict[str, str]:
    """PTX module -> {entry name: its text} (from one `.entry` to the next)."""
    parts = re.split(r"(?m)^\s*(?:\.(?:visible|weak)\s+)?\.entry\s+", ptx)[1:]
    return {m.group(1): part for part in parts if (m := re.match(r"([A-Za-z_$][\w$]*)", part))}


def ptx_int_divrem(ptx_entry: str) -> int:
    """Integer divide / remainder instructions (div.u32, rem.s64, ...) in one PTX entry."""
    divrem = r"^\s*(?:@%?!?\w+\s+)?(?:div|rem)(?:\.\w+)*\.[us](?:16|32|64)\b"
    return len(re.findall(divrem, ptx_entry, re.M))


def ptx_static_shared(ptx: str) -> int:
    """Bytes of non-extern `.shared` arrays declared in a PTX module (Triton declares none)."""
    shared = r"^(?!.*\.extern).*\.shared\s+\.align\s+\d+\s+\.b8\s+[\w$]+\[(\d+)\]"
    return sum(map(int, re.findall(shared, ptx, re.M)))


@dataclass
class Counts:
    """Static SASS counts of one kernel (instructions in the binary, not executed ones)."""

    barriers: int = 0  # BAR.* (__syncthreads and friends)
    shuffles: int = 0  # SHFL.*
    warp_reductions: int = 0  # REDUX (redux.sync: a warp-wide integer reduction in one instruction)
    warpsyncs: int = 0  # WARPSYNC (__syncwarp, where the compiler keeps one)
    lds: int = 0
    sts: int = 0
    sts_addresses: int = 0  # distinct address operands of the STS (1: every store hits slot tid)
    ldg: dict[str, int] = field(default_factory=lambda: {"32": 0, "64": 0, "128": 0})
    stg: int = 0
    atomics: int = 0  # ATOM, ATOMG, ATOMS, RED, REDG
    local_ops: int = 0  # LDL / STL (spills, or arrays the compiler put in local memory)
    back_edges: int = 0  # branches to a lower address (loops), the final self-loop excluded
    instructions: int = 0


# SASS opcode (before its first ".") -> the Counts field it adds to; LDG, STS, BRA/JMP below.
_OPS = {"barriers": "BAR", "shuffles": "SHFL", "warp_reductions": "REDUX", "lds": "LDS",
        "sts": "STS", "warpsyncs": "WARPSYNC", "stg": "STG", "atomics": "ATOM ATOMG ATOMS RED REDG",
        "local_ops": "LDL STL"}  # fmt: skip
_COUNTED = {op: f for f, ops in _OPS.items() for op in ops.split()}


def count_sass(insns: list[tuple[int, str, str]]) -> Counts:
    """The Counts of one function's instructions, as split_sass gives them."""
    c = Counts(instructions=len(insns))
    sts_addresses = set()
    for addr, op, operands in insns:
        head, *mods = op.split(".")
        if head in _COUNTED:
            setattr(c, _COUNTED[head], getattr(c, _COUNTED[head]) + 1)
        if head == "STS":
            sts_addresses.add(operands.split(",")[0].strip())
        elif head == "LDG":
            c.ldg["128" if "128" in mods else "64" if "64" in mods else "32"] += 1
        elif head in ("BRA", "JMP"):
            m = re.search(r"0x([0-9a-f]+)", operands)
            c.back_edges += bool(m and int(m.group(1), 16) < addr)
    c.sts_addresses = len(sts_addresses)
    return c
