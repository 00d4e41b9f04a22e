"""The compiler census: what NVRTC and Triton made of every variant, on a machine without a GPU.

For each CUDA variant the source is compiled by NVRTC for an explicit architecture
(harness.compile.nvrtc);
for each Triton variant the kernel is compiled by `triton.compile` for an explicit GPUTarget with
the meta-parameters the harness launches it with (BLOCK, TILES, num_warps for the tile twins;
triton/fastest: the argument types and default configuration harness.launch.single_launch gives,
`triton_census_spec`). Neither needs a driver. Every dtype a variant lists is censused; peers
(library calls) have nothing to compile and are listed as such (`not_compiled`).
The CUBIN is then disassembled with the `cuobjdump` that Triton's wheel ships (or one on PATH /
in CUDA_HOME), and per kernel the census counts:

- resources (cuobjdump --dump-resource-usage): registers per thread, stack frame, local memory;
  static shared memory (ptxas for CUDA, the PTX's `.shared` declarations for Triton, which puts
  its scratch in dynamic shared memory: the `shared` bytes it asks for at launch);
- SASS opcodes that tell the ladder's story: barriers (BAR.*), warp shuffles (SHFL.*), warp
  reductions (REDUX), __syncwarp (WARPSYNC), shared loads/stores (LDS/STS), global loads by width
  (LDG: 32/64/128-bit), global stores (STG), atomics (ATOM*/RED*), local loads/stores (LDL/STL),
  backward branches (loops), all instructions;
- from the PTX: integer divide/modulo instructions (div/rem on integer types; SASS has no divide
  instruction, so the PTX is where a `%` or `/` by a run-time value is visible).

Counts are static (instructions in the binary), not executed instructions.

Triton's interpreter (TRITON_INTERPRET=1, which the test suite sets on a CPU machine) replaces the
kernels by interpreted functions at import, and compiling in such a process is unreliable; the
Triton part then runs in a child process without the variable (`python -m harness.compile.census
--triton-worker`, JSON on stdin and stdout).
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path

from harness.core import catalogue, dtypes
from harness.core.catalogue import Variant

SCHEMA = "reduce-ladder/census/1"
ROOT = Path(__file__).resolve().parents[2]
# catalogue dtype -> Triton signature type
TRITON_DTYPES = {
    "float32": "fp32",
    "int32": "i32",
    "float16": "fp16",
    "bfloat16": "bf16",
    "float64": "fp64",
}


class ToolMissing(RuntimeError):
    """A compiler or disassembler the census needs is not installed."""


# ---------------------------------------------------------------------------------------------
# Tools


@cache
def find_tool(name: str) -> str:
    """Path of a CUDA binary tool (cuobjdump, nvdisasm, ptxas): Triton's wheel first, then PATH,
    CUDA_HOME / CUDA_PATH and /usr/local/cuda."""
    candidates = []
    try:
        import importlib.util

        spec = importlib.util.find_spec("triton")
        if spec and spec.submodule_search_locations:
            for loc in spec.submodule_search_locations:
                candidates.append(Path(loc) / "backends" / "nvidia" / "bin" / name)
    except (ImportError, ValueError):
        pass
    if found := shutil.which(name):
        candidates.append(Path(found))
    for env in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(env):
            candidates.append(Path(os.environ[env]) / "bin" / name)
    candidates.append(Path("/usr/local/cuda/bin") / name)
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return str(c)
    raise ToolMissing(
        f"{name} not found: it ships in Triton's wheel (triton/backends/nvidia/bin), or install a "
        f"CUDA toolkit and set CUDA_HOME. Looked in: {', '.join(map(str, candidates)) or '-'}"
    )


def _tool_version(name: str) -> str:
    try:
        out = subprocess.run(
            [find_tool(name), "--version"], capture_output=True, text=True, timeout=30
        ).stdout
    except (ToolMissing, OSError, subprocess.SubprocessError):
        return "unavailable"
    m = re.search(r"release [\d.]+, V([\d.]+)", out)
    return m.group(1) if m else out.strip().splitlines()[-1] if out.strip() else "unknown"


def tool_versions() -> dict[str, str]:
    from harness.compile import nvrtc

    versions = {"cuobjdump": _tool_version("cuobjdump")}
    try:
        versions["nvrtc"] = nvrtc.version()
    except nvrtc.NvrtcUnavailable:
        versions["nvrtc"] = "unavailable"
    try:
        import triton

        versions["triton"] = triton.__version__
    except ImportError:
        versions["triton"] = "unavailable"
    return versions


def _cuobjdump(cubin: bytes, *flags: str) -> str:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "k.cubin"
        path.write_bytes(cubin)
        r = subprocess.run(
            [find_tool("cuobjdump"), *flags, str(path)], capture_output=True, text=True
        )
    if r.returncode != 0:
        raise RuntimeError(f"cuobjdump {' '.join(flags)} failed: {r.stderr.strip()}")
    return r.stdout


# ---------------------------------------------------------------------------------------------
# Parsing SASS, resource usage and PTX

_FUNCTION = re.compile(r"^\s*Function\s*:\s*(\S+)")
_INSN = re.compile(
    r"^\s*/\*([0-9a-f]+)\*/\s+(?:@!?U?P(?:T|\d+)\s+)?([A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)*)([^;]*);"
)
_RESOURCE = re.compile(r"^\s*Function\s+(\S+):\s*$")
_FIELD = re.compile(r"([A-Z_]+(?:\[\d+\])?):(\d+)")


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
            out[current] = {k: int(v) for k, v in _FIELD.findall(line)}
            current = None
    return out


def split_ptx(ptx: str) -> dict[str, str]:
    """PTX module -> {entry name: its text} (from one `.entry` to the next)."""
    parts = re.split(r"(?m)^\s*(?:\.(?:visible|weak)\s+)?\.entry\s+", ptx)
    out = {}
    for part in parts[1:]:
        m = re.match(r"([A-Za-z_$][\w$]*)", part)
        if m:
            out[m.group(1)] = part
    return out


_INT_DIVREM = re.compile(r"^\s*(?:@%?!?\w+\s+)?(?:div|rem)(?:\.\w+)*\.[us](?:16|32|64)\b", re.M)
_STATIC_SHARED = re.compile(r"\.shared\s+\.align\s+\d+\s+\.b8\s+[\w$]+\[(\d+)\]")


def ptx_int_divrem(ptx_entry: str) -> int:
    """Integer divide / remainder instructions (div.u32, rem.s64, ...) in one PTX entry."""
    return len(_INT_DIVREM.findall(ptx_entry))


def ptx_static_shared(ptx: str) -> int:
    """Bytes of non-extern `.shared` arrays declared in a PTX module (Triton declares none)."""
    return sum(
        int(m.group(1))
        for line in ptx.splitlines()
        if ".extern" not in line and (m := _STATIC_SHARED.search(line))
    )


@dataclass
class Counts:
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


def count_sass(insns: list[tuple[int, str, str]]) -> Counts:
    c = Counts(instructions=len(insns))
    sts_addresses = set()
    for addr, op, operands in insns:
        head, *mods = op.split(".")
        if head == "BAR":
            c.barriers += 1
        elif head == "SHFL":
            c.shuffles += 1
        elif head == "REDUX":
            c.warp_reductions += 1
        elif head == "WARPSYNC":
            c.warpsyncs += 1
        elif head == "LDS":
            c.lds += 1
        elif head == "STS":
            c.sts += 1
            sts_addresses.add(operands.split(",")[0].strip())
        elif head == "LDG":
            width = "128" if "128" in mods else "64" if "64" in mods else "32"
            c.ldg[width] += 1
        elif head == "STG":
            c.stg += 1
        elif head in ("ATOM", "ATOMG", "ATOMS", "RED", "REDG"):
            c.atomics += 1
        elif head in ("LDL", "STL"):
            c.local_ops += 1
        elif head in ("BRA", "JMP"):
            m = re.search(r"0x([0-9a-f]+)", operands)
            if m and int(m.group(1), 16) < addr:
                c.back_edges += 1
    c.sts_addresses = len(sts_addresses)
    return c


@dataclass
class Census:
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
    counts: Counts
    int_divrem: int

    def record(self) -> dict:
        return asdict(self)

    @classmethod
    def from_record(cls, d: dict) -> Census:
        return cls(**{**d, "counts": Counts(**d["counts"])})

    @property
    def spills(self) -> bool:
        return self.spill_bytes > 0 or self.local_bytes > 0 or self.counts.local_ops > 0


def _arch_number(arch: str) -> int:
    m = re.fullmatch(r"sm_(\d+)[a-z]?", arch)
    if not m:
        raise ValueError(f"bad architecture {arch!r}: write e.g. sm_80, sm_90, sm_100")
    return int(m.group(1))


# ---------------------------------------------------------------------------------------------
# CUDA


def element_bytes(dtype: str) -> int:

    return dtypes.get(dtype).itemsize


@cache
def _cuda_compiled(source: str, arch: str):
    """(CompileResult, SASS by function, resources by function) for one .cu file."""
    from harness.compile import nvrtc

    r = nvrtc.compile_file(source, arch)
    sass = split_sass(_cuobjdump(r.cubin, "--dump-sass"))
    usage = parse_resource_usage(_cuobjdump(r.cubin, "--dump-resource-usage"))
    return r, sass, usage, split_ptx(r.ptx)


def cuda_census(v: Variant, dtype: str, arch: str = "sm_90") -> Census:
    r, sass, usage, ptx = _cuda_compiled(v.source, arch)
    symbol = r.lowered[v.name_expression(dtype)]
    res = r.resources.get(symbol)
    use = usage.get(symbol, {})
    launch = v.launch
    # harness.launch.plan launches with threads * element size bytes of dynamic shared memory
    dyn = launch.threads * element_bytes(dtype) if launch.dynamic_smem else 0
    return Census(
        variant=v.id,
        backend="cuda",
        stage=v.stage,
        family=v.family,
        dtype=dtype,
        arch=arch,
        symbol=symbol,
        launch=f"{launch.threads} threads",
        registers=use.get("REG", res.registers if res else 0),
        static_smem=res.smem_bytes if res else 0,
        dynamic_smem=dyn,
        stack_bytes=use.get("STACK", res.stack_bytes if res else 0),
        local_bytes=use.get("LOCAL", 0),
        spill_bytes=(res.spill_store_bytes + res.spill_load_bytes) if res else 0,
        counts=count_sass(sass.get(symbol, [])),
        int_divrem=ptx_int_divrem(ptx.get(symbol, "")),
    )


# ---------------------------------------------------------------------------------------------
# Triton


def triton_meta(v: Variant) -> dict:
    """The constexpr meta-parameters, num_warps (and num_stages where the launcher sets it) the
    harness launches `v` with: harness.launch.plan for the tile twins,
    harness.launch.single_launch's census spec
    (its default configuration) for triton/fastest."""
    launch = v.launch
    if launch.mapping == "single-launch":
        return dict(_single_launch_spec(v, v.dtypes[0])["meta"])
    meta = {"BLOCK": launch.threads, "num_warps": launch.num_warps}
    if launch.mapping == "tiles":
        meta["TILES"] = launch.tiles
    return meta


def _single_launch_spec(v: Variant, dtype: str) -> dict:
    from triton_kernels.fastest import triton_census_spec

    spec = triton_census_spec(dtype)
    if spec["kernel"] != v.kernel:
        raise ValueError(f"{v.id}: census spec is for {spec['kernel']}, catalogue says {v.kernel}")
    return spec


_LAUNCH_KEYS = ("num_warps", "num_stages")


def triton_job(v: Variant, dtype: str, arch: str) -> dict:
    """One compile job (JSON-ready, for the worker): kernel, argument types, meta-parameters.

    args maps each non-constexpr parameter to a Triton type ("*fp32", "i32"); `aligned` names the
    pointers declared 16-byte aligned (what Triton specializes on at launch). The tile twins take
    pointers `*_ptr` of the element type (torch allocations: aligned) and i32 sizes; triton/fastest
    takes what harness.launch.single_launch.triton_census_spec says (pointer types differ per
    argument).
    tl_dtypes names constexprs whose value is a triton.language dtype (by name)."""
    if v.launch.mapping == "single-launch":
        spec = _single_launch_spec(v, dtype)
        args, aligned = {}, []
        for name, t in spec["args"].items():
            if isinstance(t, tuple):
                args[name] = "*" + TRITON_DTYPES[t[0]]
                if t[1]:
                    aligned.append(name)
            else:
                args[name] = TRITON_DTYPES[t]
        meta = spec["meta"]
        tl_dtypes = ["ACC"]
    else:
        args, aligned, meta, tl_dtypes = None, None, triton_meta(v), []
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


def _make_source(fn, job: dict):
    """A triton.compiler.ASTSource for `fn` (a JITFunction): argument types from job["args"] (by
    default pointers `*_ptr` of job["dtype"], declared 16-byte aligned, other arguments i32),
    constexprs from the job. Written for Triton 3.3+ (signature names every argument, constexprs
    keyed by (index,)); older keyings are tried if that is refused."""
    import triton.language as tl
    from triton.compiler import ASTSource

    explicit = job.get("args")
    aligned = set(job.get("aligned") or ())
    if explicit is not None:
        runtime = {p.name for p in fn.params if not p.is_constexpr}
        if runtime != set(explicit):
            raise ValueError(
                f"{fn.__name__}: census spec names {sorted(explicit)}, the kernel takes "
                f"{sorted(runtime)} (update the spec beside its launcher)"
            )
    sig, by_index, by_name, attrs = {}, {}, {}, {}
    for i, p in enumerate(fn.params):
        if p.is_constexpr:
            if p.name not in job["constexprs"]:
                raise ValueError(f"{fn.__name__}: no value for constexpr {p.name}")
            val = job["constexprs"][p.name]
            if p.name in job.get("tl_dtypes", ()):
                val = getattr(tl, val)
            sig[p.name] = "constexpr"
            by_index[(i,)] = val
            by_name[p.name] = val
            continue
        if explicit is not None:
            sig[p.name] = explicit[p.name]
            is_aligned = p.name in aligned
        elif p.name.endswith("_ptr"):
            sig[p.name] = "*" + job["dtype"]
            is_aligned = True  # torch allocations are 16-byte aligned
        else:
            sig[p.name] = "i32"
            is_aligned = False
        if is_aligned and sig[p.name].startswith("*"):
            attrs[(i,)] = [["tt.divisibility", 16]]
    attempts = (
        lambda: ASTSource(fn=fn, signature=sig, constexprs=by_index, attrs=attrs),
        lambda: ASTSource(fn=fn, signature=sig, constexprs=by_index),
        lambda: ASTSource(fn=fn, signature=sig, constexprs=by_name),
    )
    err: Exception | None = None
    for make in attempts:
        try:
            return make()
        except (TypeError, KeyError, AttributeError, ValueError) as e:
            err = e
    raise RuntimeError(f"this Triton's ASTSource refused every known signature form: {err}")


def compile_triton_jobs(jobs: list[dict]) -> list[dict]:
    """Compile each job in this process (needs real JITFunctions: no TRITON_INTERPRET)."""
    import importlib
    import warnings

    import triton
    from triton.backends.compiler import GPUTarget

    out = []
    for job in jobs:
        module = importlib.import_module(f"triton_kernels.{job['module']}")
        fn = getattr(module, job["kernel"])
        target = GPUTarget("cuda", job["capability"], 32)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            k = triton.compile(_make_source(fn, job), target=target, options=job["options"])
        md = k.metadata
        shared = md.get("shared", 0) if isinstance(md, dict) else getattr(md, "shared", 0)
        name = md.get("name") if isinstance(md, dict) else getattr(md, "name", job["kernel"])
        out.append(
            {
                "name": name or job["kernel"],
                "shared": int(shared or 0),
                "ptx": k.asm["ptx"],
                "cubin": base64.b64encode(k.asm["cubin"]).decode(),
            }
        )
    return out


def _in_process_ok() -> bool:
    if os.environ.get("TRITON_INTERPRET", "0") not in ("", "0"):
        return False
    from triton.runtime.jit import JITFunction

    from triton_kernels import fastest, tiles

    return all(
        isinstance(k, JITFunction) for k in (tiles.adjacent_tiles_kernel, fastest.fastest_kernel)
    )


def run_triton_jobs(jobs: list[dict]) -> list[dict]:
    """Compile in this process when Triton is not interpreting, else in a child process."""
    if not jobs:
        return []
    if _in_process_ok():
        return compile_triton_jobs(jobs)
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    r = subprocess.run(
        [sys.executable, "-m", "harness.compile.census", "--triton-worker"],
        input=json.dumps(jobs),
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
    )
    if r.returncode != 0:
        raise RuntimeError(f"Triton compile worker failed:\n{r.stderr.strip()[-4000:]}")
    return json.loads(r.stdout)


def _triton_census(v: Variant, dtype: str, arch: str, job: dict, art: dict) -> Census:
    cubin = base64.b64decode(art["cubin"])
    sass = split_sass(_cuobjdump(cubin, "--dump-sass"))
    usage = parse_resource_usage(_cuobjdump(cubin, "--dump-resource-usage"))
    name = art["name"] if art["name"] in sass else next(iter(sass), art["name"])
    use = usage.get(name, {})
    ptx = split_ptx(art["ptx"])
    meta = job["meta"]
    counts = count_sass(sass.get(name, []))
    return Census(
        variant=v.id,
        backend="triton",
        stage=v.stage,
        family=v.family,
        dtype=dtype,
        arch=arch,
        symbol=name,
        launch=", ".join(f"{k}={val}" for k, val in meta.items()),
        registers=use.get("REG", 0),
        static_smem=ptx_static_shared(art["ptx"]),
        dynamic_smem=art["shared"],
        stack_bytes=use.get("STACK", 0),
        local_bytes=use.get("LOCAL", 0),
        spill_bytes=0,
        counts=counts,
        int_divrem=ptx_int_divrem(ptx.get(name, art["ptx"])),
    )


# ---------------------------------------------------------------------------------------------
# The census of a selection

_CACHE: dict[tuple[str, str, str], Census] = {}


def census_pairs(variants: list[Variant], dtype: str | None) -> list[tuple[Variant, str]]:
    """(variant, dtype) pairs: every dtype a variant supports when dtype is None ("all")."""
    out = []
    for v in variants:
        if not compiled(v):
            continue
        for d in v.dtypes if dtype is None else [dtype]:
            if d in v.dtypes:
                out.append((v, d))
    return out


def census(variants: list[Variant], dtype: str | None = "float32", arch: str = "sm_90"):
    """Census of every CUDA and Triton variant of the selection (cached per process)."""
    _arch_number(arch)
    pairs = census_pairs(variants, dtype)
    todo = [(v, d) for v, d in pairs if (v.id, d, arch) not in _CACHE]
    for v, d in todo:
        if v.backend == "cuda":
            _CACHE[(v.id, d, arch)] = cuda_census(v, d, arch)
    tri = [(v, d) for v, d in todo if v.backend == "triton"]
    jobs = [triton_job(v, d, arch) for v, d in tri]
    arts = run_triton_jobs(jobs)
    for (v, d), job, art in zip(tri, jobs, arts, strict=True):
        _CACHE[(v.id, d, arch)] = _triton_census(v, d, arch, job, art)
    return [_CACHE[(v.id, d, arch)] for v, d in pairs]


NOT_COMPILED = "not compiled here (library call)"


def compiled(v: Variant) -> bool:
    """Whether the census compiles `v`: CUDA and Triton kernels of this repository."""
    return v.backend in ("cuda", "triton") and v.launch is not None


def not_compiled(variants: list[Variant], dtype: str | None = None) -> list[dict]:
    """The selected records the census has nothing to compile for (the peers: torch.sum, CuPy /
    CUB, the copy are library calls), each with the reason, so that they are listed rather than
    silently dropped. dtype: only those that support it (None: all)."""
    return [
        {"variant": v.id, "backend": v.backend, "dtypes": list(v.dtypes), "reason": NOT_COMPILED}
        for v in variants
        if not compiled(v) and (dtype is None or dtype in v.dtypes)
    ]


def document(rows: list[Census], arch: str, skipped: list[dict] | None = None) -> dict:
    """The JSON document `reduce-ladder inspect --json` writes (and docs/census-*.json holds).
    skipped: not_compiled(...) of the selection (listed under "not_compiled")."""
    return {
        "schema": SCHEMA,
        "arch": arch,
        "tools": tool_versions(),
        "note": "static SASS instruction counts per kernel (cuobjdump); int_divrem from the PTX",
        "census": [r.record() for r in rows],
        "not_compiled": list(skipped or []),
    }


def load_document(path: str | Path) -> tuple[dict, list[Census]]:
    doc = json.loads(Path(path).read_text())
    if doc.get("schema") != SCHEMA:
        raise ValueError(f"{path}: schema {doc.get('schema')!r}, expected {SCHEMA!r}")
    return doc, [Census.from_record(r) for r in doc["census"]]


def default_selection() -> list[Variant]:
    """Every CUDA and Triton variant, the wrong demonstrations included (they compile too)."""
    return [v for v in catalogue.VARIANTS if compiled(v)]


def _worker() -> int:
    jobs = json.loads(sys.stdin.read())
    print(json.dumps(compile_triton_jobs(jobs)))
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--triton-worker"]:
        sys.exit(_worker())
    sys.exit(
        "usage: python -m harness.compile.census --triton-worker  (use `reduce-ladder inspect`)"
    )
