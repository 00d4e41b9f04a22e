"""Compile Triton kernels for an explicit target, without a GPU (a GPUTarget needs no driver): a
job (porting.census.triton_job) comes back as its kernel name, dynamic shared memory, PTX and
CUBIN (base64). Under TRITON_INTERPRET=1 (the CPU test suite) the jobs run in a child process
without it (`python -m porting.triton_compile --triton-worker`, JSON on stdin and stdout).
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# the catalogue's dtypes as a Triton signature names them; the meta-parameters that are compile
# options (the others are the kernel's constexprs)
TYPES = {"float32": "fp32", "int32": "i32", "float16": "fp16", "bfloat16": "bf16"}
TYPES |= {"float64": "fp64"}
OPTIONS = ("num_warps", "num_stages")


def _source(fn, job: dict):
    """A triton.compiler.ASTSource (Triton 3.3+: the signature names every argument, constexprs
    keyed by (index,)) for `fn` (a JITFunction): the arguments as job["args"] gives them (a dtype,
    or [dtype, 16-byte aligned] for a pointer; by default pointers `*_ptr` of job["dtype"], aligned
    as torch allocates, the others int32), the constexprs from job["meta"] (a dtype's name: that
    triton.language dtype)."""
    import triton.language as tl
    from triton.compiler import ASTSource

    runtime = {p.name for p in fn.params if not p.is_constexpr}
    pointer = (job["dtype"], True)
    args = job.get("args") or {p: pointer if p.endswith("_ptr") else "int32" for p in runtime}
    if runtime != set(args):
        raise ValueError(
            f"{fn.__name__}: census spec names {sorted(args)}, the kernel takes "
            f"{sorted(runtime)} (update the spec beside its launcher)"
        )
    meta = {k: getattr(tl, x) if isinstance(x, str) else x for k, x in job["meta"].items()}
    if missing := [p.name for p in fn.params if p.is_constexpr and p.name not in meta]:
        raise ValueError(f"{fn.__name__}: no value for constexpr {missing[0]}")
    typed = {k: TYPES[t] if isinstance(t, str) else "*" + TYPES[t[0]] for k, t in args.items()}
    sig = {p.name: "constexpr" if p.is_constexpr else typed[p.name] for p in fn.params}
    constexprs = {(i,): meta[p.name] for i, p in enumerate(fn.params) if p.is_constexpr}
    aligned = {k for k, t in args.items() if not isinstance(t, str) and t[1]}
    attrs = {(i,): [["tt.divisibility", 16]] for i, p in enumerate(fn.params) if p.name in aligned}
    return ASTSource(fn=fn, signature=sig, constexprs=constexprs, attrs=attrs)


def compile_triton_jobs(jobs: list[dict]) -> list[dict]:
    """Compile each job in this process (needs real JITFunctions: no TRITON_INTERPRET)."""
    import importlib
    import warnings

    import triton
    from triton.backends.compiler import GPUTarget

    out = []
    for job in jobs:
        fn = getattr(importlib.import_module(f"triton_kernels.{job['module']}"), job["kernel"])
        with warnings.catch_warnings(action="ignore"):
            target = GPUTarget("cuda", job["capability"], 32)
            options = {k: job["meta"][k] for k in OPTIONS if k in job["meta"]}
            k = triton.compile(_source(fn, job), target=target, options=options)
        md = k.metadata if isinstance(k.metadata, dict) else k.metadata._asdict()
        cubin = base64.b64encode(k.asm["cubin"]).decode()
        out.append({"name": md.get("name") or job["kernel"], "shared": int(md.get("shared") or 0),
                    "ptx": k.asm["ptx"], "cubin": cubin})  # fmt: skip
    return out


def run_triton_jobs(jobs: list[dict]) -> list[dict]:
    """Compile in this process when Triton is not interpreting, else in a child process."""
    if not jobs:
        return []
    if os.environ.get("TRITON_INTERPRET", "0") in ("", "0"):
        return compile_triton_jobs(jobs)
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    worker = [sys.executable, "-m", "porting.triton_compile", "--triton-worker"]
    r = subprocess.run(worker, input=json.dumps(jobs), capture_output=True, text=True, cwd=ROOT,
                       env=env)  # fmt: skip
    if r.returncode != 0:
        raise RuntimeError(f"Triton compile worker failed:\n{r.stderr.strip()[-4000:]}")
    return json.loads(r.stdout)


if __name__ == "__main__":  # the worker: jobs as JSON on stdin, compiled ones on stdout
    if sys.argv[1:] != ["--triton-worker"]:
        sys.exit("usage: python -m porting.triton_compile --triton-worker  (reduce-ladder inspect)")
    print(json.dumps(compile_triton_jobs(json.loads(sys.stdin.read()))))
