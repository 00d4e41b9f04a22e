"""The compiler census: what NVRTC and Triton made of every variant, on a machine without a GPU.

Each CUDA variant is compiled by NVRTC (harness.compile.nvrtc), each Triton kernel by
porting.triton_compile with the meta-parameters the harness launches it with, for an explicit
architecture and every dtype a variant lists; porting.sass counts the CUBIN and PTX. Peers
(library calls) are listed as `not_compiled`. Counts are static: instructions in the binary.
Here: the rows and their columns, the selection and the JSON document of `reduce-ladder inspect
--json` (docs/census-sm_90.json).
"""

from __future__ import annotations

import base64
import contextlib
import importlib
import re
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path

from harness.core import dtypes
from harness.core.catalogue import Variant
from harness.report import documents, records
from porting import sass
from porting.triton_compile import run_triton_jobs

SCHEMA = records.CENSUS_SCHEMA
TRITON_DTYPES = {"float32": "fp32", "int32": "i32", "float16": "fp16", "bfloat16": "bf16"}
TRITON_DTYPES["float64"] = "fp64"
NOT_COMPILED = "not compiled here (library call)"
_LAUNCH_KEYS = ("num_warps", "num_stages")


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

    @property
    def spills(self) -> bool:
        return self.spill_bytes > 0 or self.local_bytes > 0 or self.counts.local_ops > 0


def _local_cell(r: Census) -> str:
    return f"{r.stack_bytes + r.local_bytes}" + (
        f" (spill {r.spill_bytes})" if r.spill_bytes else ""
    )


# Every column (inspect --wide, the guide's appendix): header, what it counts, the cell.
WIDE_COLUMNS = (
    ("regs", "registers per thread", lambda r: str(r.registers)),
    ("smem", "static shared memory, bytes", lambda r: str(r.static_smem)),
    ("dyn", "dynamic shared memory, bytes (Triton: its scratch)", lambda r: str(r.dynamic_smem)),
    ("local", "stack + local memory bytes (spilled bytes)", _local_cell),
    ("BAR", "barriers", lambda r: str(r.counts.barriers)),
    ("SHFL", "warp shuffles", lambda r: str(r.counts.shuffles)),
    ("REDUX", "warp reductions (redux.sync)", lambda r: str(r.counts.warp_reductions)),
    ("LDS", "shared loads", lambda r: str(r.counts.lds)),
    ("STS", "shared stores", lambda r: str(r.counts.sts)),
    (
        "LDG 32/64/128",
        "global loads by width (bits)",
        lambda r: "/".join(str(r.counts.ldg[w]) for w in ("32", "64", "128")),
    ),
    ("ATOM", "atomics and reductions to memory", lambda r: str(r.counts.atomics)),
    ("div/rem", "integer divide/modulo (PTX)", lambda r: str(r.int_divrem)),
    ("loops", "backward branches", lambda r: str(r.counts.back_edges)),
    ("insns", "SASS instructions", lambda r: str(r.counts.instructions)),
)
# The default (fits 100 columns): resources, then the two counts that tell the ladder's story
# (barriers give way to warp shuffles), then the size of the kernel.
COMPACT_COLUMNS = (
    ("regs", "registers per thread", lambda r: str(r.registers)),
    (
        "smem",
        "shared memory, static + dynamic, bytes",
        lambda r: str(r.static_smem + r.dynamic_smem),
    ),
    ("local", "stack + local memory bytes", lambda r: str(r.stack_bytes + r.local_bytes)),
    ("spill", "spilled bytes", lambda r: str(r.spill_bytes)),
    ("BAR", "barriers", lambda r: str(r.counts.barriers)),
    ("SHFL", "warp shuffles", lambda r: str(r.counts.shuffles)),
    ("insns", "SASS instructions", lambda r: str(r.counts.instructions)),
)


def _arch_number(arch: str) -> int:
    m = re.fullmatch(r"sm_(\d+)[a-z]?", arch)
    if not m:
        raise ValueError(f"bad architecture {arch!r}: write e.g. sm_80, sm_90, sm_100")
    return int(m.group(1))


def _disassemble(cubin: bytes) -> tuple[dict, dict]:
    """(SASS by function, resources by function) of a CUBIN."""
    usage = sass.parse_resource_usage(sass.cuobjdump(cubin, "--dump-resource-usage"))
    return sass.split_sass(sass.cuobjdump(cubin, "--dump-sass")), usage


def _row(v: Variant, dtype: str, arch: str, symbol: str, code: dict, ptx: str, **fields):
    """A census row: the fields every backend counts the same way, then the backend's own."""
    return Census(
        variant=v.id,
        backend=v.backend,
        stage=v.stage,
        family=v.family,
        dtype=dtype,
        arch=arch,
        symbol=symbol,
        counts=sass.count_sass(code.get(symbol, [])),
        int_divrem=sass.ptx_int_divrem(ptx),
        **fields,
    )


@cache
def _cuda_compiled(source: str, arch: str):
    """(CompileResult, SASS by function, resources by function, PTX by entry) of one .cu file."""
    from harness.compile import nvrtc

    r = nvrtc.compile_file(source, arch)
    return r, *_disassemble(r.cubin), sass.split_ptx(r.ptx)


def _cuda_census(v: Variant, dtype: str, arch: str) -> Census:
    r, code, usage, ptx = _cuda_compiled(v.source, arch)
    symbol = r.lowered[v.name_expression(dtype)]
    res, use, launch = r.resources.get(symbol), usage.get(symbol, {}), v.launch
    # harness.launch.plan launches with threads * element size bytes of dynamic shared memory
    dyn = launch.threads * dtypes.get(dtype).itemsize if launch.dynamic_smem else 0
    return _row(
        v,
        dtype,
        arch,
        symbol,
        code,
        ptx.get(symbol, ""),
        launch=f"{launch.threads} threads",
        registers=use.get("REG", res.registers if res else 0),
        static_smem=res.smem_bytes if res else 0,
        dynamic_smem=dyn,
        stack_bytes=use.get("STACK", res.stack_bytes if res else 0),
        local_bytes=use.get("LOCAL", 0),
        spill_bytes=(res.spill_store_bytes + res.spill_load_bytes) if res else 0,
    )


# ---------------------------------------------------------------------------------------------
# Triton


def _own_spec(v: Variant, dtype: str | None = None) -> dict | None:
    """The census spec of a Triton kernel outside tiles.py (fastest.py, reproducible.py state
    their own arguments and meta-parameters: triton_census_spec), None for the tile twins."""
    if Path(v.source or "tiles.py").stem == "tiles":
        return None
    module = importlib.import_module(f"triton_kernels.{Path(v.source).stem}")
    spec = module.triton_census_spec(dtype or v.dtypes[0])
    if spec["kernel"] != v.kernel:
        raise ValueError(f"{v.id}: census spec is for {spec['kernel']}, catalogue says {v.kernel}")
    return spec


def triton_meta(v: Variant) -> dict:
    """The constexprs, num_warps (and num_stages where set) the harness launches `v` with: the
    launch's mapping for the tile twins, the module's census spec for the others."""
    spec = _own_spec(v)
    return dict(spec["meta"]) if spec else v.launch.mapping.triton_meta(v.launch)


def triton_job(v: Variant, dtype: str, arch: str) -> dict:
    """One compile job for porting.triton_compile (JSON-ready). args maps each non-constexpr
    parameter to a Triton type and `aligned` names the pointers declared 16-byte aligned, from the
    module's census spec (the tile twins: None, the worker's defaults); tl_dtypes names the
    constexprs whose value is a triton.language dtype."""
    args, aligned, meta, tl_dtypes = None, None, None, []
    spec = _own_spec(v, dtype)
    if spec is None:
        meta = v.launch.mapping.triton_meta(v.launch)
    else:
        # an argument is a dtype name, or (dtype name, aligned) for a pointer
        ptr = {k: t for k, t in spec["args"].items() if isinstance(t, tuple)}
        args = {
            k: "*" + TRITON_DTYPES[t[0]] if k in ptr else TRITON_DTYPES[t]
            for k, t in spec["args"].items()
        }
        aligned = [k for k, (_, a) in ptr.items() if a]
        meta, tl_dtypes = spec["meta"], ["ACC"]
    return {
        "module": Path(v.source or "tiles.py").stem,
        "kernel": v.kernel,
        "dtype": TRITON_DTYPES[dtype],
        "args": args,
        "aligned": aligned,
        "constexprs": {k: val for k, val in meta.items() if k not in _LAUNCH_KEYS},
        "tl_dtypes": tl_dtypes,
        "options": {k: meta[k] for k in _LAUNCH_KEYS if k in meta},
        "meta": meta,  # all of the above in the launcher's order (the census's `launch` text)
        "capability": _arch_number(arch),
    }


def _triton_census(v: Variant, dtype: str, arch: str, job: dict, art: dict) -> Census:
    code, usage = _disassemble(base64.b64decode(art["cubin"]))
    name = art["name"] if art["name"] in code else next(iter(code), art["name"])
    use = usage.get(name, {})
    return _row(
        v,
        dtype,
        arch,
        name,
        code,
        sass.split_ptx(art["ptx"]).get(name, art["ptx"]),
        launch=", ".join(f"{k}={val}" for k, val in job["meta"].items()),
        registers=use.get("REG", 0),
        static_smem=sass.ptx_static_shared(art["ptx"]),
        dynamic_smem=art["shared"],
        stack_bytes=use.get("STACK", 0),
        local_bytes=use.get("LOCAL", 0),
        spill_bytes=0,
    )


# ---------------------------------------------------------------------------------------------
# The census of a selection

_CACHE: dict[tuple[str, str, str], Census] = {}


def compiled(v: Variant) -> bool:
    """Whether the census compiles `v`: CUDA and Triton kernels of this repository."""
    return v.backend in ("cuda", "triton") and v.launch is not None


def census_pairs(variants: list[Variant], dtype: str | None) -> list[tuple[Variant, str]]:
    """(variant, dtype) pairs: every dtype a variant supports when dtype is None ("all")."""
    return [(v, d) for v in variants if compiled(v) for d in v.dtypes if dtype in (None, d)]


def census(variants: list[Variant], dtype: str | None = "float32", arch: str = "sm_90"):
    """Census of every CUDA and Triton variant of the selection (cached per process)."""
    _arch_number(arch)
    pairs = census_pairs(variants, dtype)
    todo = [(v, d) for v, d in pairs if (v.id, d, arch) not in _CACHE]
    for v, d in todo:
        if v.backend == "cuda":
            _CACHE[(v.id, d, arch)] = _cuda_census(v, d, arch)
    tri = [(v, d) for v, d in todo if v.backend == "triton"]
    jobs = [triton_job(v, d, arch) for v, d in tri]
    for (v, d), job, art in zip(tri, jobs, run_triton_jobs(jobs), strict=True):
        _CACHE[(v.id, d, arch)] = _triton_census(v, d, arch, job, art)
    return [_CACHE[(v.id, d, arch)] for v, d in pairs]


def not_compiled(variants: list[Variant], dtype: str | None = None) -> list[dict]:
    """The selected records with nothing to compile (the peers: library calls), each with the
    reason, listed rather than silently dropped; dtype: only those that support it."""
    return [
        {"variant": v.id, "backend": v.backend, "dtypes": list(v.dtypes), "reason": NOT_COMPILED}
        for v in variants
        if not compiled(v) and (dtype is None or dtype in v.dtypes)
    ]


def _tool_versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    from harness.compile import nvrtc

    versions = {"cuobjdump": sass.tool_version("cuobjdump"), "nvrtc": "unavailable"}
    versions["triton"] = "unavailable"
    with contextlib.suppress(nvrtc.NvrtcUnavailable):
        versions["nvrtc"] = nvrtc.version()
    with contextlib.suppress(PackageNotFoundError):
        versions["triton"] = version("triton")
    return versions


def document(rows: list[Census], arch: str, skipped: list[dict] | None = None) -> dict:
    """The JSON document `reduce-ladder inspect --json` writes (docs/census-*.json)."""
    return {
        "schema": SCHEMA,
        "arch": arch,
        "tools": _tool_versions(),
        "note": "static SASS instruction counts per kernel (cuobjdump); int_divrem from the PTX",
        "census": [asdict(r) for r in rows],
        "not_compiled": list(skipped or []),
    }


def load_document(path: str | Path) -> tuple[dict, list[Census]]:
    try:
        doc = documents.load_document(path, "census").raw
    except documents.ReportError as e:
        raise ValueError(str(e)) from None
    return doc, [Census.from_record(r) for r in doc["census"]]
