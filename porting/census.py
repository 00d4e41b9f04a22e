"""The compiler census: what NVRTC and Triton (porting.triton_compile, with the meta-parameters
the harness launches) made of every variant for an explicit architecture and every dtype it lists,
without a GPU; porting.sass counts the CUBIN and PTX. The rows, their columns and the JSON document
of `reduce-ladder inspect --json` (docs/census-sm_90.json).
"""

from __future__ import annotations

import base64
import contextlib
import importlib
import re
from dataclasses import asdict, dataclass
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from operator import attrgetter
from pathlib import Path

from harness.core import dtypes
from harness.core.catalogue import Variant
from harness.report import documents, records
from porting import sass
from porting.triton_compile import run_triton_jobs

SCHEMA = records.CENSUS_SCHEMA
NOT_COMPILED = "not compiled here (library call)"


@dataclass
class Census:
    """One census row: one kernel (variant, dtype) compiled for one architecture."""

    variant: str
    backend: str
    stage: str
    family: str
    dtype: str
    arch: str
    symbol: str
    launch: str  # threads / num_warps / meta-parameters the kernel was compiled for
    registers: int
    static_smem: int
    dynamic_smem: int
    stack_bytes: int
    local_bytes: int
    spill_bytes: int  # ptxas spill stores + loads (CUDA); LDL/STL count stands in for Triton
    counts: sass.Counts
    int_divrem: int

    @classmethod
    def from_record(cls, d: dict) -> Census:
        return cls(**{**d, "counts": sass.Counts(**d["counts"])})

    spills = property(lambda r: r.spill_bytes > 0 or r.local_bytes > 0 or r.counts.local_ops > 0)
    # the cells of the columns below that are not one field
    smem = property(lambda r: r.static_smem + r.dynamic_smem)
    local = property(lambda r: r.stack_bytes + r.local_bytes)
    local_spill = property(
        lambda r: f"{r.local}" + f" (spill {r.spill_bytes})" * bool(r.spill_bytes)
    )
    ldg = property(lambda r: "/".join(str(r.counts.ldg[w]) for w in ("32", "64", "128")))


# The columns (inspect's table, the appendix's census): header, what it counts, the row's field.
# WIDE: every one (inspect --wide, the appendix); COMPACT (fits 100 columns): resources, then the
# two counts that tell the ladder's story (barriers give way to warp shuffles), then the size.
WIDE_COLUMNS = (
    ("regs", "registers per thread", "registers"),
    ("smem", "static shared memory, bytes", "static_smem"),
    ("dyn", "dynamic shared memory, bytes (Triton: its scratch)", "dynamic_smem"),
    ("local", "stack + local memory bytes (spilled bytes)", "local_spill"),
    ("BAR", "barriers", "counts.barriers"),
    ("SHFL", "warp shuffles", "counts.shuffles"),
    ("REDUX", "warp reductions (redux.sync)", "counts.warp_reductions"),
    ("LDS", "shared loads", "counts.lds"),
    ("STS", "shared stores", "counts.sts"),
    ("LDG 32/64/128", "global loads by width (bits)", "ldg"),
    ("ATOM", "atomics and reductions to memory", "counts.atomics"),
    ("div/rem", "integer divide/modulo (PTX)", "int_divrem"),
    ("loops", "backward branches", "counts.back_edges"),
    ("insns", "SASS instructions", "counts.instructions"),
)
COMPACT_COLUMNS = (
    ("regs", "registers per thread", "registers"),
    ("smem", "shared memory, static + dynamic, bytes", "smem"),
    ("local", "stack + local memory bytes", "local"),
    ("spill", "spilled bytes", "spill_bytes"),
    *(c for c in WIDE_COLUMNS if c[0] in ("BAR", "SHFL", "insns")),
)


def cell(r: Census, field: str) -> str:
    return str(attrgetter(field)(r))


def _capability(arch: str) -> int:  # sm_90a -> 90
    if not (m := re.fullmatch(r"sm_(\d+)[a-z]?", arch)):
        raise ValueError(f"bad architecture {arch!r}: write e.g. sm_80, sm_90, sm_100")
    return int(m.group(1))


@cache
def _disassemble(cubin: bytes) -> tuple[dict, dict]:
    """(SASS by function, resources by function) of a CUBIN (one per CUDA source)."""
    text = sass.cuobjdump(cubin, "--dump-sass", "--dump-resource-usage")
    return sass.split_sass(text), sass.parse_resource_usage(text)


def _row(v: Variant, dtype: str, arch: str, cubin: bytes, symbol: str, ptx: str, launch: str,
         smem: tuple[int, int], spill_bytes: int = 0) -> Census:  # fmt: skip
    """A census row, counted the same way for both backends: the CUBIN's SASS and resources
    (cuobjdump's registers, stack and local memory) and the kernel's PTX."""
    code, usage = _disassemble(cubin)
    symbol = symbol if symbol in code else next(iter(code), symbol)
    use = {"REG": 0, "STACK": 0, "LOCAL": 0} | usage.get(symbol, {})
    counts = sass.count_sass(code.get(symbol, []))
    return Census(v.id, v.backend, v.stage, v.family, dtype, arch, symbol, launch, use["REG"],
                  *smem, use["STACK"], use["LOCAL"], spill_bytes, counts,
                  sass.ptx_int_divrem(sass.split_ptx(ptx).get(symbol, ptx)))  # fmt: skip


@cache
def _nvrtc(source: str, arch: str):
    from harness.compile import nvrtc

    return nvrtc.compile_file(source, arch)


def _cuda_census(v: Variant, dtype: str, arch: str) -> Census:
    """NVRTC's spills and static shared memory (ptxas's log) beside the CUBIN's counts."""
    r = _nvrtc(v.source, arch)
    symbol, threads = r.lowered[v.name_expression(dtype)], v.launch.threads
    res = r.resources.get(symbol)
    spill = res.spill_store_bytes + res.spill_load_bytes if res else 0
    # harness.launch.plan launches with threads * element size bytes of dynamic shared memory
    dynamic = dtypes.get(dtype).itemsize * threads * v.launch.dynamic_smem
    smem = (res.smem_bytes if res else 0, dynamic)
    return _row(v, dtype, arch, r.cubin, symbol, r.ptx, f"{threads} threads", smem, spill)


def _own_spec(v: Variant, dtype: str | None = None) -> dict | None:
    """The triton_census_spec of a kernel outside tiles.py (None: a tile twin)."""
    if Path(v.source or "tiles.py").stem == "tiles":
        return None
    module = importlib.import_module(f"triton_kernels.{Path(v.source).stem}")
    spec = module.triton_census_spec(dtype or v.dtypes[0])
    if spec["kernel"] != v.kernel:
        raise ValueError(f"{v.id}: census spec is for {spec['kernel']}, catalogue says {v.kernel}")
    return spec


def triton_meta(v: Variant, dtype: str | None = None) -> dict:
    """The constexprs, num_warps (and num_stages where set) the harness launches `v` with (in
    `dtype`, for a kernel with a census spec: its first dtype by default)."""
    spec = _own_spec(v, dtype)
    return dict(spec["meta"]) if spec else v.launch.mapping.triton_meta(v.launch)


def triton_job(v: Variant, dtype: str, arch: str) -> dict:
    """One compile job for porting.triton_compile (JSON-ready): the kernel, its arguments as the
    census spec beside its launcher types them (a tile twin: the worker's defaults) and the
    meta-parameters the harness launches it with, in the launcher's order (the `launch` text)."""
    return {
        "module": Path(v.source or "tiles.py").stem,
        "kernel": v.kernel,
        "dtype": dtype,
        "args": (_own_spec(v, dtype) or {}).get("args"),
        "meta": triton_meta(v, dtype),
        "capability": _capability(arch),
    }


# ---------------------------------------------------------------------------------------------
# The census of a selection

_CACHE: dict[tuple[str, str, str], Census] = {}


def compiled(v: Variant) -> bool:  # CUDA and Triton kernels of this repository
    return v.backend in ("cuda", "triton") and v.launch is not None


def census_pairs(variants: list[Variant], dtype: str | None) -> list[tuple[Variant, str]]:
    """(variant, dtype) pairs: every dtype a variant supports when dtype is None ("all")."""
    return [(v, d) for v in variants if compiled(v) for d in v.dtypes if dtype in (None, d)]


def census(variants: list[Variant], dtype: str | None = "float32", arch: str = "sm_90"):
    """Census of every CUDA and Triton variant of the selection (cached per process)."""
    _capability(arch)
    pairs = census_pairs(variants, dtype)
    todo = [(v, d) for v, d in pairs if (v.id, d, arch) not in _CACHE]
    for v, d in (p for p in todo if p[0].backend == "cuda"):
        _CACHE[(v.id, d, arch)] = _cuda_census(v, d, arch)
    tri = [(v, d) for v, d in todo if v.backend == "triton"]  # compiled in one batch
    jobs = [triton_job(v, d, arch) for v, d in tri]
    for (v, d), job, art in zip(tri, jobs, run_triton_jobs(jobs), strict=True):
        launch = ", ".join(f"{k}={val}" for k, val in job["meta"].items())
        smem = (sass.ptx_static_shared(art["ptx"]), art["shared"])
        cubin = base64.b64decode(art["cubin"])
        _CACHE[(v.id, d, arch)] = _row(v, d, arch, cubin, art["name"], art["ptx"], launch, smem)
    return [_CACHE[(v.id, d, arch)] for v, d in pairs]


def not_compiled(variants: list[Variant], dtype: str | None = None) -> list[dict]:
    """The selected peers (nothing to compile), with the reason; dtype: those that support it."""
    return [
        {"variant": v.id, "backend": v.backend, "dtypes": list(v.dtypes), "reason": NOT_COMPILED}
        for v in variants
        if not compiled(v) and (dtype is None or dtype in v.dtypes)
    ]


def document(rows: list[Census], arch: str, skipped: list[dict] | None = None) -> dict:
    """The JSON document `reduce-ladder inspect --json` writes (docs/census-*.json)."""
    from harness.compile import nvrtc

    tools = {"nvrtc": "unavailable", "triton": "unavailable"}
    with contextlib.suppress(nvrtc.NvrtcUnavailable):
        tools["nvrtc"] = nvrtc.version()
    with contextlib.suppress(PackageNotFoundError):
        tools["triton"] = version("triton")
    return {
        "schema": SCHEMA,
        "arch": arch,
        "tools": {"cuobjdump": sass.tool_version("cuobjdump"), **tools},
        "note": "static SASS instruction counts per kernel (cuobjdump); int_divrem from the PTX",
        "census": [asdict(r) for r in rows],
        "not_compiled": list(skipped or []),
    }


def load_document(path: str | Path) -> tuple[dict, list[Census]]:
    """A census document (ReportError: not one) and its rows."""
    doc = documents.load_document(path, "census").raw
    return doc, [Census.from_record(r) for r in doc["census"]]
