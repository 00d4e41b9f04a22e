"""Compile the CUDA sources with NVRTC directly, on a machine with or without a GPU.

CuPy's compile path asks the driver for the device's architecture, so it needs a GPU; NVRTC does
not: libnvrtc (the nvidia-cuda-nvrtc wheel's, or a CUDA toolkit's) is loaded through ctypes and
compiles for an explicit architecture, ptxas's verbose report (registers, stack, spills) in its log.
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


@cache
def _lib() -> ctypes.CDLL:
    """The first libnvrtc that loads: a wheel's, $CUDA_PATH's or $CUDA_HOME's, /usr/local/cuda's
    (the real library, not its builtins or alt names), else the system loader's."""
    roots = [*site.getsitepackages(), site.getusersitepackages(), *sys.path]
    dirs = [f"{r}/nvidia/{d}/lib" for r in roots if r for d in ("cu13", "cuda_nvrtc", "cu12")]
    dirs += [f"{os.environ[e]}/lib64" for e in ("CUDA_PATH", "CUDA_HOME") if os.environ.get(e)]
    found = [p for d in [*dirs, "/usr/local/cuda/lib64"] for p in glob.glob(f"{d}/libnvrtc.so*")]
    found = [p for p in dict.fromkeys(found) if "builtins" not in p and "alt" not in p]
    errors = []
    for path in [*found, "libnvrtc.so"]:
        try:
            return ctypes.CDLL(path)
        except OSError as e:  # try the next candidate
            errors.append(f"{path}: {e}")
    raise NvrtcUnavailable(
        "libnvrtc not found: install the nvidia-cuda-nvrtc wheel (pip install -e '.[cuda13]') "
        "or a CUDA toolkit. Tried: " + "; ".join(errors)
    )


def available() -> bool:
    try:
        return bool(_lib())
    except NvrtcUnavailable:
        return False


def _call(function: str, *args, what: str = "") -> None:
    """lib.nvrtc<function>(*args); a RuntimeError naming `what` (else the function) if it fails."""
    _check(getattr(_lib(), "nvrtc" + function)(*args), what or "nvrtc" + function)


def _check(rc: int, what: str) -> None:
    if rc != 0:
        lib = _lib()
        lib.nvrtcGetErrorString.restype = ctypes.c_char_p
        raise RuntimeError(f"{what} failed: {lib.nvrtcGetErrorString(rc).decode()}")


def version() -> str:
    major, minor = ctypes.c_int(), ctypes.c_int()
    _call("Version", ctypes.byref(major), ctypes.byref(minor))
    return f"{major.value}.{minor.value}"


@cache
def supported_archs() -> list[str]:
    """The architectures this NVRTC compiles for ("sm_75", ..., "sm_120"), as it reports them
    (nvrtcGetSupportedArchs): the CLI checks --arch against this before compiling anything."""
    count = ctypes.c_int()
    _call("GetNumSupportedArchs", ctypes.byref(count))
    archs = (ctypes.c_int * count.value)()
    _call("GetSupportedArchs", archs)
    return [f"sm_{a}" for a in archs]


def compile_source(
    code: str,
    name: str,
    name_expressions: list[str],
    arch: str = "sm_90",
) -> CompileResult:
    """Compile `code` (already include-expanded) to a CUBIN for `arch`."""
    prog = ctypes.c_void_p()
    _call("CreateProgram", ctypes.byref(prog), code.encode(), name.encode(), 0, None, None)
    try:
        for expr in name_expressions:
            _call("AddNameExpression", prog, expr.encode(), what=f"name expression {expr}")
        opts = [o.encode() for o in (*COMPILE_OPTIONS, f"-arch={arch}", "-Xptxas=-v")]
        rc = _lib().nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
        log = _output(prog, "ProgramLog").split(b"\0", 1)[0].decode(errors="replace")
        if rc != 0:
            raise CudaCompileError(f"NVRTC could not compile {name} for {arch}:\n{log.strip()}")
        lowered = {}
        for expr in name_expressions:
            out = ctypes.c_char_p()
            _call("GetLoweredName", prog, expr.encode(), ctypes.byref(out), what="lowered name")
            lowered[expr] = out.value.decode()
        cubin = _output(prog, "CUBIN", required=True)
        ptx = _output(prog, "PTX").split(b"\0", 1)[0].decode(errors="replace")
        return CompileResult(name, arch, cubin, log, lowered, parse_ptxas_log(log), ptx)
    finally:
        _lib().nvrtcDestroyProgram(ctypes.byref(prog))


def _output(prog: ctypes.c_void_p, what: str, required: bool = False) -> bytes:
    """NVRTC's `what` ("ProgramLog", "CUBIN", "PTX") of prog; b"" where NVRTC gives none (no PTX
    kept for a real sm_XX target), unless required."""
    size, lib = ctypes.c_size_t(), _lib()
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
