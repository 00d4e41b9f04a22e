"""Compile Triton kernels for an explicit target, without a GPU: the Triton half of the census.

A job (porting.census.triton_job, JSON-ready) names a kernel of triton_kernels/, its argument
types, meta-parameters and the target's compute capability; `triton.compile` with a GPUTarget
needs no driver. Each comes back as its kernel name, dynamic shared memory, PTX and CUBIN
(base64). Under Triton's interpreter (TRITON_INTERPRET=1, as the CPU test suite runs) the jobs run
in a child process without it (`python -m porting.triton_compile --triton-worker`, JSON on stdin
and stdout).
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _make_source(fn, job: dict):
    """A triton.compiler.ASTSource for `fn` (a JITFunction): argument types from job["args"] (by
    default pointers `*_ptr` of job["dtype"], declared 16-byte aligned, other arguments i32),
    constexprs from the job. Written for Triton 3.3+ (signature names every argument, constexprs
    keyed by (index,)); older keyings are tried if that is refused."""
    import triton.language as tl
    from triton.compiler import ASTSource

    explicit, aligned = job.get("args"), set(job.get("aligned") or ())
    runtime = {p.name for p in fn.params if not p.is_constexpr}
    if explicit is not None and runtime != set(explicit):
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
            val = getattr(tl, val) if p.name in job.get("tl_dtypes", ()) else val
            sig[p.name], by_index[(i,)], by_name[p.name] = "constexpr", val, val
        elif explicit is not None:
            sig[p.name] = explicit[p.name]
        else:  # torch allocations are 16-byte aligned
            sig[p.name] = "*" + job["dtype"] if p.name.endswith("_ptr") else "i32"
            aligned |= {p.name} if p.name.endswith("_ptr") else set()
        if p.name in aligned and sig[p.name].startswith("*"):
            attrs[(i,)] = [["tt.divisibility", 16]]
    err: Exception | None = None
    for kw in (
        {"constexprs": by_index, "attrs": attrs},
        {"constexprs": by_index},
        {"constexprs": by_name},
    ):
        try:
            return ASTSource(fn=fn, signature=sig, **kw)
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
        md = k.metadata if isinstance(k.metadata, dict) else k.metadata._asdict()
        name, shared = md.get("name") or job["kernel"], int(md.get("shared") or 0)
        ptx, cubin = k.asm["ptx"], base64.b64encode(k.asm["cubin"]).decode()
        out.append({"name": name, "shared": shared, "ptx": ptx, "cubin": cubin})
    return out


def run_triton_jobs(jobs: list[dict]) -> list[dict]:
    """Compile in this process when Triton is not interpreting, else in a child process."""
    if not jobs:
        return []
    if os.environ.get("TRITON_INTERPRET", "0") in ("", "0"):
        return compile_triton_jobs(jobs)
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    r = subprocess.run(
        [sys.executable, "-m", "porting.triton_compile", "--triton-worker"],
        input=json.dumps(jobs),
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
    )
    if r.returncode != 0:
        raise RuntimeError(f"Triton compile worker failed:\n{r.stderr.strip()[-4000:]}")
    return json.loads(r.stdout)


if __name__ == "__main__":  # the worker: jobs as JSON on stdin, compiled ones on stdout
    if sys.argv[1:] != ["--triton-worker"]:
        sys.exit(
            "usage: python -m porting.triton_compile --triton-worker  (use `reduce-ladder inspect`)"
        )
    print(json.dumps(compile_triton_jobs(json.loads(sys.stdin.read()))))
