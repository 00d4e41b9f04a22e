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


def _source(fn, job: dict):
    """A triton.compiler.ASTSource (Triton 3.3+: the signature names every argument, constexprs
    keyed by (index,)) for `fn` (a JITFunction): argument types from job["args"] (by default
    pointers `*_ptr` of job["dtype"], declared 16-byte aligned, other arguments i32), constexprs
    from the job, those named in job["tl_dtypes"] a triton.language dtype."""
    import triton.language as tl
    from triton.compiler import ASTSource

    args, aligned = job.get("args"), set(job.get("aligned") or ())
    runtime = {p.name for p in fn.params if not p.is_constexpr}
    if args is None:  # torch allocations are 16-byte aligned
        args = {p: "*" + job["dtype"] if p.endswith("_ptr") else "i32" for p in runtime}
        aligned = {p for p in runtime if p.endswith("_ptr")}
    if runtime != set(args):
        raise ValueError(
            f"{fn.__name__}: census spec names {sorted(args)}, the kernel takes "
            f"{sorted(runtime)} (update the spec beside its launcher)"
        )
    consts, tl_dtypes = job["constexprs"], set(job.get("tl_dtypes", ()))
    if missing := [p.name for p in fn.params if p.is_constexpr and p.name not in consts]:
        raise ValueError(f"{fn.__name__}: no value for constexpr {missing[0]}")
    sig = {p.name: "constexpr" if p.is_constexpr else args[p.name] for p in fn.params}
    constexprs = {(i,): getattr(tl, consts[p.name]) if p.name in tl_dtypes else consts[p.name]
                  for i, p in enumerate(fn.params) if p.is_constexpr}  # fmt: skip
    attrs = {(i,): [["tt.divisibility", 16]] for i, p in enumerate(fn.params)
             if p.name in aligned and sig[p.name].startswith("*")}  # fmt: skip
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
            k = triton.compile(_source(fn, job), target=target, options=job["options"])
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
