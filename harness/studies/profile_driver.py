"""The process Nsight Compute and compute-sanitizer watch (docs/correctness.md: what it runs, the
NVTX ranges, the manifest), and the tools over it (Job, find_tool, start: a tool that cannot answer
here is a ToolUnavailable, exit 2).

    python -m harness.studies.profile_driver --variant ID [ID ...] --n N [N ...] --dtype D \
        [--mode profile|sanitize] [--shapes MxN:DIM ...] [--manifest PATH]

profile (default): per n and variant, the check, then the passes once inside range_name(id);
sanitize: each variant once per n and dtype through the checked path.
Exit: 0; 1 a non-demonstration variant gave a wrong sum; 2 no GPU or bad usage (one line).
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import itertools
import json
import math
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from subprocess import CompletedProcess

from harness.core import catalogue, device, dtypes, records_beyond
from harness.core.catalogue import Variant
from harness.core.sizes import parse_size
from harness.report import documents


def range_name(variant_id: str) -> str:
    """The NVTX range of a variant's profiled launch: "/" is ncu's range separator, so "."."""
    return "rl." + variant_id.replace("/", ".")


# What the tools run: a catalogue record (1-D or axis), or a sanitizer demonstration (kept apart)
BY_ID = catalogue.BY_ID | catalogue.AXIS_BY_ID | records_beyond.DEMO_BY_ID


def lookup(variant_id: str) -> Variant:
    if variant_id not in BY_ID:
        raise KeyError(f"unknown variant {variant_id!r}")
    return BY_ID[variant_id]


# sanitize: partial tiles, rows not 16-byte aligned, a 3-D middle dim, few long rows and tall-skinny
# columns (r4 splits rows past about 2^17, hence 200,003: sums of ~10^7, exact in float32).
AXIS_SANITIZE_CASES = (((37, 1003), 1), ((1003, 37), 0), ((5, 37, 131), 1), ((3, 40_003), 1),
                       ((3, 200_003), 1), ((40_003, 5), 0))  # fmt: skip
Shape = tuple[tuple[int, ...], int]  # (shape, dim): a sum along dim


def parse_shape(text: str) -> Shape:
    """ "2048x120:0" -> ((2048, 120), 0): a 2-D or 3-D shape and the dim summed along."""
    try:
        dims, dim = text.split(":")
        shape = tuple(int(d) for d in dims.lower().split("x"))
        if len(shape) not in (2, 3) or min(shape) < 1 or not 0 <= int(dim) < len(shape):
            raise ValueError
        return shape, int(dim)
    except ValueError:
        msg = f"a shape is MxN:DIM or BxMxN:DIM (e.g. 2048x120:0), got {text!r}"
        raise ValueError(msg) from None


def axis_cases(v: Variant, n: int, mode: str, shapes: list[Shape] | None = None) -> list[Shape]:
    """(shape, dim) an axis variant runs at (each its mapping takes): sanitize, the
    AXIS_SANITIZE_CASES; profile, ONE shape of n elements in rows of 256 (where the row stages
    differ most), along dim 1 (dim 0 for a column stage); or the shapes given (--shapes)."""
    from harness.launch import axis_plan

    def takes(shape: tuple[int, ...], dim: int) -> bool:
        try:
            axis_plan.check(v, shape, dim)
        except ValueError:
            return False
        return True

    along = 0 if v.launch.mapping.along == "columns" else 1
    profiled = (((max(1, n // 256), 256), along),)
    wanted = shapes or (AXIS_SANITIZE_CASES if mode == "sanitize" else profiled)
    return [(shape, dim) for shape, dim in wanted if takes(shape, dim)]


def _work(variants, sizes, dtype_names, mode, shapes=None):
    """(variant, dtype, n, shape or None, dim or None) in run order; with shapes, the axis
    variants and the peers (torch.sum(x, dim)) at those."""
    for dtype, n, v in itertools.product(dtype_names, sizes, variants):
        if dtype not in v.dtypes:
            continue
        if shapes and v.backend == "peer":
            for shape, dim in shapes if n == sizes[0] else ():
                yield v, dtype, n, shape, dim
        elif v.family != "axis":
            yield v, dtype, n, None, None
        elif (mode == "profile" and not shapes) or n == sizes[0]:  # else the shapes once
            for shape, dim in axis_cases(v, n, mode, shapes):
                yield v, dtype, n, shape, dim


def _passes(v: Variant, x, dim: int | None):
    """(restore, run, launches, out) of v's passes on x: launches None for a library call; out, a
    demonstration's partials (its plan's first pass only: no bounds check past whole tiles)."""
    import torch

    if dim is not None and v.backend == "peer":
        return (lambda: None), (lambda: torch.sum(x, dim=dim)), None, None
    if dim is not None:
        from harness.launch import axis_plan

        plan = axis_plan.make_plan(v, x, axis_plan.check(v, tuple(x.shape), dim, x.dtype.itemsize))
        return plan.poison, plan.run, len(plan.launch.kernels), None
    from harness.studies.session import timed_call

    run, restore, plan = timed_call(v, x)  # what the suites time: a peer's call, a plan's run
    if v.family == records_beyond.DEMO_FAMILY:
        first = lambda: plan.run(first_pass_only=True, restore=False)  # noqa: E731
        return plan.restore, first, 1, plan.outs[0]
    launches = None if plan is None else plan.launch_count
    return restore or (lambda: None), run, launches, None


def _check(v: Variant, x, dim: int | None, mode: str, exact: bool = False) -> dict:
    """The checked run (exact: x is verify.exact_input's): the sum along dim for an axis case
    (torch.sum(x, dim) exact on these integers while every |sum| is an integer float32 holds
    exactly, 2^24, else not judged); a demonstration's first pass's partials against the exact
    sum; else the variant's check."""
    import torch

    from harness.check import verify

    if dim is not None:  # the axis checks, imported only where the run has axis cases
        from harness.check import axis_verify

        if v.backend == "peer":
            g = axis_verify.golden(x, dim)
            if float(g.abs_sum.max()) > 2**24:
                return {"ok": None, "message": "not checked: sums past 2^24"}
            got = torch.sum(x, dim=dim)  # 16-bit floats: added in float32, rounded once
            same = torch.equal(got, g.value.to(got.dtype))
            return {"ok": same, "message": "" if same else "differs from the exact sums"}
        r = axis_verify.check_axis(v, x, dim, golden_on_cpu=mode == "sanitize")
        return {"ok": bool(r.ok), "message": r.message, "worst_ratio": r.worst_ratio}
    if v.family != records_beyond.DEMO_FAMILY:
        r = verify.check_variant(v, x, exact=exact)
        return {"ok": bool(r.ok), "value": r.value, "expected": r.golden, "message": r.message}
    out = _once(v, x, None, in_range=False)[1]
    got, want = float(out.double().sum().item()), float(x.double().sum().item())
    return {"ok": got == want, "value": got, "expected": want, "launches": 1}


def _once(v: Variant, x, dim: int | None, in_range: bool) -> tuple:
    """The variant's passes once (inside its NVTX range: in_range): (launches, out) as _passes
    gives them."""
    import torch

    restore, run, launches, out = _passes(v, x, dim)
    restore()
    torch.cuda.synchronize()
    with torch.cuda.nvtx.range(range_name(v.id)) if in_range else contextlib.nullcontext():
        run()
        torch.cuda.synchronize()
    return launches, out


def run_variants(
    variants: list[Variant], sizes: list[int], dtype_names: list[str], mode: str, shapes=None
) -> list[dict]:
    from harness.check import verify

    if mode == "sanitize":
        # CuPy's pool off: each buffer its own allocation, so memcheck knows its end (the study
        # sets PYTORCH_NO_CUDA_MEMORY_CACHING=1 for torch's allocator)
        with contextlib.suppress(ImportError):
            import cupy

            cupy.cuda.set_allocator(None)
    manifest = []
    for v, dtype, n, shape, dim in _work(variants, sizes, dtype_names, mode, shapes):
        entry = dict(variant=v.id, dtype=dtype, n=n, range=range_name(v.id), wrong=v.wrong)
        if shape is not None:
            entry.update(n=math.prod(shape), shape=list(shape), dim=dim)
        # profile: exact data (the sum must equal the exact one); sanitize, and a demonstration:
        # the seeds' data in an allocation of exactly n, so that memcheck sees a read past it
        exact = mode == "profile" and v.family != records_beyond.DEMO_FAMILY
        try:
            x = (verify.exact_input if exact else verify.seed_like_input)(entry["n"], dtype, "cuda")
            x = x if shape is None else x.view(shape)
            entry.update(_check(v, x, dim, mode, exact))
            if mode == "profile":
                entry["launches"] = _once(v, x, dim, in_range=True)[0]
        except Exception as e:  # recorded, and the next variant still runs
            # (a CUDA error is sticky: what follows it fails too, and says so)
            msg = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            entry.update(ok=False, message=msg, launches=0, error=True)
        manifest.append(entry)
        verdict = "ok" if entry["ok"] else entry.get("message") or "WRONG sum"
        if v.wrong and not entry["ok"] and not entry.get("error"):
            verdict = "wrong sum (a demonstration)"
        where = f"shape={tuple(shape)} dim={dim}" if shape else f"n={n}"
        print(f"driver: {v.id} {dtype} {where}: {verdict}", file=sys.stderr, flush=True)
    return manifest


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m harness.studies.profile_driver")
    p.add_argument("--variant", "--variants", dest="variants", nargs="+", required=True)
    p.add_argument("--n", "--sizes", dest="sizes", nargs="+", required=True)
    p.add_argument("--dtype", "--dtypes", dest="dtypes", nargs="+", default=["float32"])
    p.add_argument("--mode", choices=("profile", "sanitize"), default="profile")
    p.add_argument("--manifest", help="write the manifest (JSON) here")
    p.add_argument("--shapes", nargs="*", default=[], help="MxN:DIM: axis variants, peers")
    args = p.parse_args(argv)
    try:
        variants = [lookup(i) for i in args.variants]
        sizes = [parse_size(s) for s in args.sizes]
        shapes = [parse_shape(s) for s in args.shapes]
        if bad := [d for d in args.dtypes if d not in dtypes.NAMES]:
            raise ValueError(f"unknown dtype(s) {', '.join(bad)}")
    except (KeyError, ValueError) as e:
        print(f"profile_driver: error: {e.args[0] if e.args else e}", file=sys.stderr)
        return 2
    if not device.gpu_available():
        print(f"profile_driver: no GPU: {device.torch_gpu()[1]}", file=sys.stderr)
        return 2
    manifest = run_variants(variants, sizes, args.dtypes, args.mode, shapes)
    if args.manifest:
        Path(args.manifest).write_text(json.dumps(manifest, indent=1, default=str) + "\n")
    failed = [e for e in manifest if e["ok"] is False and (e.get("error") or not e["wrong"])]
    return 1 if failed else 0


# ---------------------------------------------------------------------------------------------
# The host side: a tool (ncu, compute-sanitizer) over this process


class ToolUnavailable(RuntimeError):
    """The tool cannot produce results on this machine (one line; exit 2)."""


# Per tool: its environment variable, what ships it, where its own package puts it.
TOOLS = {
    "ncu": ("NCU", "Nsight Compute (also in the CUDA toolkit)", "/opt/nvidia/nsight-compute/*/ncu"),
    "compute-sanitizer": ("COMPUTE_SANITIZER", "the CUDA toolkit",
                          "/usr/local/cuda/compute-sanitizer/compute-sanitizer"),
}  # fmt: skip
# Output that means the tool ran but could not measure anything: (marker, what to tell the user).
FAILURE_MARKERS: tuple[tuple[str, str], ...] = (
    ("ERR_NVGPUCTRPERM", "ncu may not read the GPU performance counters (ERR_NVGPUCTRPERM): run as "
     "root or load the driver with NVreg_RestrictProfilingToAdminUsers=0"),
    ("LibraryNotLoaded", "the profiler's injection library did not load (LibraryNotLoaded): the "
     "tool does not match the driver, or the process could not be instrumented"),
    ("Failed to initialize profiler", "the profiler could not initialize on this GPU / driver"),
    ("Device not supported", "the tool does not support this GPU"),
    ("no CUDA-capable device", "no CUDA device is visible to the process"),
)  # fmt: skip


def find_tool(name: str) -> str:
    """Path of `name`: $NCU / $COMPUTE_SANITIZER, then PATH, then the toolkits' usual places."""
    env, shipped, own = TOOLS[name]
    places = (f"/usr/local/cuda/bin/{name}", own, f"/usr/local/cuda-*/bin/{name}")
    if path := os.environ.get(env):
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
        raise ToolUnavailable(f"{env}={path} is not an executable file")
    found = shutil.which(name) or next(
        (p for pat in places for p in sorted(glob.glob(pat), reverse=True)), None
    )
    if found and os.access(found, os.X_OK):
        return found
    raise ToolUnavailable(
        f"{name} not found: it comes with {shipped}; put it on PATH; or set {env} to its path"
    )


def start(name: str, schema: str, raw_dir: Path | None) -> tuple[str, dict]:
    """(the tool's path, the document's header, with the last line of the tool's `--version`);
    raw_dir made (None: none). ToolUnavailable where the tool or a GPU is missing, before anything
    is made."""
    path = find_tool(name)
    ok, why = device.torch_gpu()
    if not ok:
        raise ToolUnavailable(f"no GPU: {why}")
    if raw_dir is not None:
        raw_dir.mkdir(parents=True, exist_ok=True)
    try:
        said = [ln.strip() for ln in run_tool([path, "--version"], timeout=60).stdout.splitlines()]
        version = next((ln for ln in reversed(said) if ln), "unknown")
    except OSError as e:
        version = f"unknown ({e})"
    head = {"schema": schema, "device": device.device_info(), name.replace("-", "_"): version}
    return path, head


def run_tool(cmd: list[str], timeout: float, env: dict[str, str] | None = None) -> CompletedProcess:
    """Run a command, capturing its output; never raises for a failing or hanging command (one
    killed at the timeout has returncode None and says so in stderr)."""
    full_env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=full_env)
    except subprocess.TimeoutExpired as e:
        out, err = (x.decode(errors="replace") if isinstance(x, bytes) else x or ""
                    for x in (e.stdout, e.stderr))  # fmt: skip
        return CompletedProcess(cmd, None, out, err + f"\n[killed after {timeout:.0f} s]")


@dataclass
class Job:
    """One driver process under a tool: these variants at these sizes and dtypes (the axis
    variants and the peers at the shapes, if any); label names its raw files."""

    variants: list[Variant]
    sizes: tuple[int, ...]
    dtypes: tuple[str, ...]
    label: str
    shapes: tuple[Shape, ...] = ()

    def command(self, mode: str, manifest: Path) -> list[str]:
        """The driver as a process: what the tools run."""
        args = ["--mode", mode, "--dtype", *self.dtypes, "--n", *map(str, self.sizes)]
        if self.shapes:
            args += ["--shapes", *(f"{'x'.join(map(str, s))}:{d}" for s, d in self.shapes)]
        args += ["--manifest", str(manifest), "--variant", *(v.id for v in self.variants)]
        return [sys.executable, "-m", "harness.studies.profile_driver", *args]

    def run(
        self, tool: list[str], mode: str, folder: Path, log: str, timeout: float,
        env: dict | None = None,
    ) -> tuple[int | None, str, list | None]:  # fmt: skip
        """The tool (its command line up to the driver) over this job, its manifest and log
        (command, stdout then stderr) written in folder: (the exit status, None where killed at
        the timeout; the output; the manifest, None where unreadable); ToolUnavailable where the
        output says the tool could not measure."""
        manifest = folder / f"{self.label}.manifest.json"
        manifest.unlink(missing_ok=True)
        cmd = [*tool, *self.command(mode, manifest)]
        done = run_tool(cmd, timeout=timeout, env=env)
        said = "\n".join(filter(None, (done.stdout, done.stderr)))
        (folder / log).write_text(" ".join(cmd) + "\n\n" + said)
        if reason := next((why for marker, why in FAILURE_MARKERS if marker in said), None):
            raise ToolUnavailable(reason)
        try:
            launched = documents.load_document(manifest, "manifest").raw["launches"]
        except documents.ReportError:
            launched = None
        return done.returncode, said, launched


if __name__ == "__main__":
    raise SystemExit(main())
