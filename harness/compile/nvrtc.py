"""Compile the CUDA sources with NVRTC directly, on a machine with or without a GPU.

CuPy's compile path asks the driver for the device's architecture, so it needs a GPU. NVRTC itself
does not: this module loads libnvrtc (from the nvidia-cuda-nvrtc wheel, or a CUDA toolkit) through
ctypes and compiles for an explicit architecture. CI uses it to prove every source compiles for
sm_80 and sm_90, and ptxas's verbose report (registers, stack frame, spills) comes back in the log.
"""

from __future__ import annotations

import ctypes
import glob
import os
import re
import site
import sys
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from harness.compile import cuda_source

COMPILE_OPTIONS = ("-std=c++17", "-default-device", "-lineinfo")


class NvrtcUnavailable(RuntimeError):
    """No libnvrtc could be loaded."""


class CudaCompileError(RuntimeError):
    """NVRTC rejected a source; the message holds the file, line and NVRTC's log."""


@dataclass
class KernelResources:
    registers: int
    stack_bytes: int
    spill_store_bytes: int
    spill_load_bytes: int
    smem_bytes: int


@dataclass
class CompileResult:
    source: str
    arch: str
    cubin: bytes
    log: str
    lowered: dict[str, str]  # name expression -> mangled name
    resources: dict[str, KernelResources] = field(default_factory=dict)  # by mangled name
    ptx: str = ""  # the PTX NVRTC produced on the way (empty if this NVRTC does not give it)


def _candidate_paths() -> list[str]:
    roots = [*site.getsitepackages(), site.getusersitepackages(), *sys.path]
    pats = [f"nvidia/{d}/lib/libnvrtc.so*" for d in ("cu13", "cuda_nvrtc", "cu12")]
    found = [p for r in roots if r for pat in pats for p in glob.glob(os.path.join(r, pat))]
    for env in ("CUDA_PATH", "CUDA_HOME"):
        if os.environ.get(env):
            found += glob.glob(os.path.join(os.environ[env], "lib64", "libnvrtc.so*"))
    found += glob.glob("/usr/local/cuda/lib64/libnvrtc.so*")
    # Prefer the real library over builtins / alt names.
    return [p for p in dict.fromkeys(found) if "builtins" not in p and "alt" not in p]


@cache
def _lib() -> ctypes.CDLL:
    errors = []
    for path in _candidate_paths():
        try:
            return ctypes.CDLL(path)
        except OSError as e:  # try the next candidate
            errors.append(f"{path}: {e}")
    try:
        return ctypes.CDLL("libnvrtc.so")
    except OSError as e:
        errors.append(str(e))
    raise NvrtcUnavailable(
        "libnvrtc not found: install the nvidia-cuda-nvrtc wheel (pip install -e '.[cuda13]') "
        "or a CUDA toolkit. Tried: " + "; ".join(errors or ["nothing found"])
    )


def available() -> bool:
    try:
        _lib()
        return True
    except NvrtcUnavailable:
        return False


def version() -> str:
    major, minor = ctypes.c_int(), ctypes.c_int()
    _lib().nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
    return f"{major.value}.{minor.value}"


@cache
def supported_archs() -> list[str]:
    """The architectures this NVRTC compiles for ("sm_75", ..., "sm_120"), as it reports them
    (nvrtcGetSupportedArchs): the CLI checks --arch against this before compiling anything."""
    lib = _lib()
    count = ctypes.c_int()
    _check(lib.nvrtcGetNumSupportedArchs(ctypes.byref(count)), "nvrtcGetNumSupportedArchs")
    archs = (ctypes.c_int * count.value)()
    _check(lib.nvrtcGetSupportedArchs(archs), "nvrtcGetSupportedArchs")
    return [f"sm_{a}" for a in archs]


def _check(rc: int, what: str) -> None:
    if rc != 0:
        lib = _lib()
        lib.nvrtcGetErrorString.restype = ctypes.c_char_p
        raise RuntimeError(f"{what} failed: {lib.nvrtcGetErrorString(rc).decode()}")


def compile_source(
    code: str,
    name: str,
    name_expressions: list[str],
    arch: str = "sm_90",
) -> CompileResult:
    """Compile `code` (already include-expanded) to a CUBIN for `arch`."""
    lib = _lib()
    prog = ctypes.c_void_p()
    _check(
        lib.nvrtcCreateProgram(ctypes.byref(prog), code.encode(), name.encode(), 0, None, None),
        "nvrtcCreateProgram",
    )
    try:
        for expr in name_expressions:
            _check(lib.nvrtcAddNameExpression(prog, expr.encode()), f"name expression {expr}")
        opts = [*COMPILE_OPTIONS, f"-arch={arch}", "-Xptxas=-v"]
        arr = (ctypes.c_char_p * len(opts))(*(o.encode() for o in opts))
        rc = lib.nvrtcCompileProgram(prog, len(opts), arr)
        log = _output(lib, prog, "ProgramLog").split(b"\0", 1)[0].decode(errors="replace")
        if rc != 0:
            raise CudaCompileError(f"NVRTC could not compile {name} for {arch}:\n{log.strip()}")
        lowered = {}
        for expr in name_expressions:
            out = ctypes.c_char_p()
            _check(lib.nvrtcGetLoweredName(prog, expr.encode(), ctypes.byref(out)), "lowered name")
            lowered[expr] = out.value.decode()
        cubin = _output(lib, prog, "CUBIN", required=True)
        ptx = _output(lib, prog, "PTX").split(b"\0", 1)[0].decode(errors="replace")
        return CompileResult(name, arch, cubin, log, lowered, parse_ptxas_log(log), ptx)
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))


def _output(lib: ctypes.CDLL, prog: ctypes.c_void_p, what: str, required: bool = False) -> bytes:
    """NVRTC's `what` ("ProgramLog", "CUBIN", "PTX") of prog; b"" where NVRTC gives none (no PTX
    kept for a real sm_XX target), unless required."""
    size = ctypes.c_size_t()
    rc = getattr(lib, f"nvrtcGet{what}Size")(prog, ctypes.byref(size))
    buf = ctypes.create_string_buffer(size.value)
    if rc == 0 and size.value:
        rc = getattr(lib, f"nvrtcGet{what}")(prog, buf)
    if required:
        _check(rc, f"nvrtcGet{what}")
    return buf.raw if rc == 0 and size.value else b""


def compile_file(
    source: str | Path, arch: str = "sm_90", name_expressions: list[str] | None = None
) -> CompileResult:
    """Compile cuda_kernels/<source> with every instantiation the catalogue asks of it (or a
    .cu file at a Path, an experiment's, with the instantiations given)."""
    from harness.core.catalogue import name_expressions as catalogue_exprs

    if name_expressions is None:
        name_expressions = [] if isinstance(source, Path) else catalogue_exprs(source)
    name = Path(source).name  # what compiler messages and results name it by
    return compile_source(cuda_source.expand(source), name, name_expressions, arch)


_ENTRY = re.compile(r"Compiling entry function '([^']+)'")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers(?:.*?(\d+) bytes smem)?")


def parse_ptxas_log(log: str) -> dict[str, KernelResources]:
    """Registers, stack frame, spills and static shared memory per kernel from ptxas -v."""
    out: dict[str, KernelResources] = {}
    current = None
    frame = (0, 0, 0)
    for line in log.splitlines():
        if m := _ENTRY.search(line):
            current, frame = m.group(1), (0, 0, 0)
        elif (m := _FRAME.search(line)) and current:
            frame = tuple(int(g) for g in m.groups())
        elif (m := _USED.search(line)) and current:
            out[current] = KernelResources(int(m.group(1)), *frame, int(m.group(2) or 0))
            current = None
    return out
