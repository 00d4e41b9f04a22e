"""Per call from Python: the fastest pair as users call it, beside torch.sum, CUB and torch.compile.

    python -m harness.studies.callable_bench --json callable.json [--sizes 2^10 2^20 ...]
        [--dtypes float32 int32 bfloat16] [--loops 5]

For each dtype and n, every entry (ENTRIES) is called back to back in a Python loop, CUDA events
recorded around the whole loop; the time per call is the loop's event time over its calls, and
the figure is the median over `loops` loops (min kept beside it). Where one input fits in L2
twice over, the loop rotates over views of one buffer, as many as cover twice the L2 size (at
most MAX_VIEWS: below about 2^14 elements the views touch less than L2, recorded per row as
touched_bytes; those sizes are launch bound). Each entry is warmed first (plan-cache misses,
Triton's tuner, torch.compile's compile) so the loops time hits.

Default sizes: n = 2^10, 2^12, ..., 2^30 (even exponents, DEFAULT_SIZES) for float32, int32 and
bfloat16: estimated at about three minutes on an H100 (most of it torch.compile compiling one
graph per (dtype, n) and Triton's tuner), not measured here. Entries that do not support a dtype
(cupy.sum has no bfloat16) are left out of that dtype's rows.

Prints, per (dtype, n), the microseconds per call of each entry and its ratio to torch.sum
(torch.sum time / entry time: >= 1.00 is at least as fast), and writes a CALLABLE_SCHEMA document
(harness.report.records): device, method, entry descriptions and one row per (entry, dtype, n).
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harness.core import sizes as sizes_mod
from harness.report import documents, records

DEFAULT_SIZES = tuple(2**k for k in range(10, 31, 2))
DEFAULT_DTYPES = ("float32", "int32", "bfloat16")
MAX_VIEWS = 256
FASTEST = ("cuda/fastest", "triton/fastest")


@dataclass(frozen=True)
class Entry:
    id: str
    description: str
    # (dtype, views) -> the call timed (one input per call), or None where unsupported
    make: Callable[[str, list], Callable[[object], object] | None]


def _api(vid: str):
    from harness.launch.api import reduce_sum  # what `harness.reduce_sum` is

    return lambda dtype, views: lambda x: reduce_sum(x, vid)


def _api_out(vid: str):
    """reduce_sum(x, vid, out=o) with one preallocated o: the call without the result's
    allocation (beside torch.sum(x, out=o), which saves the same)."""

    def make(dtype, views):
        import torch

        from harness.launch.api import reduce_sum, result_dtype

        o = torch.empty((), dtype=result_dtype(vid, views[0].dtype), device=views[0].device)
        return lambda x: reduce_sum(x, vid, out=o)

    return make


def _torch_sum_out(dtype, views):
    import torch

    o = torch.empty((), dtype=views[0].dtype, device=views[0].device)
    return lambda x: torch.sum(x, dim=0, out=o)  # torch.sum takes out= only with a dim (1-D x)


def _launch(vid: str, mode: str):
    """The cached launch alone (no API checks, a preallocated output): what reduce_sum adds to."""

    def make(dtype, views):
        import torch

        from harness.core import catalogue
        from harness.launch import plan_cache

        v = catalogue.get(vid)
        launch = plan_cache.PlanCache(launch_modes={v.backend: mode}).get(v, dtype, views[0])
        out = torch.empty((), dtype=launch.out_dtype, device=views[0].device)
        return lambda x: launch(x, out)

    return make


def _plan(vid: str):
    """A reused plan per view (harness.launch.plan.make_plan, made once): plan.run()."""

    def make(dtype, views):
        from harness.core import catalogue
        from harness.launch.plan import make_plan

        plans = {id(x): make_plan(catalogue.get(vid), x) for x in views}
        return lambda x: plans[id(x)].run()

    return make


def _op(vid: str):
    def make(dtype, views):
        import torch

        from harness.launch import torch_op  # noqa: F401  (registers the op)

        op = torch.ops.reduce_ladder.sum
        return lambda x: op(x, vid)

    return make


def _noop_op(dtype, views):
    """torch.ops.reduce_ladder.noop: what torch.ops dispatch costs alone (harness.launch.torch_op),
    so the op's figure can be split into dispatch and the API below it."""
    import torch

    from harness.launch import torch_op  # noqa: F401  (registers the ops)

    noop = torch.ops.reduce_ladder.noop
    return lambda x: noop(x, "cuda/fastest")


def _torch_sum(dtype, views):
    import torch

    return torch.sum


def _torch_compile(dtype, views):
    import torch

    # A fresh function per (dtype, n): its own Dynamo cache, so no recompile limit is reached.
    return torch.compile(lambda t: torch.sum(t), dynamic=False)


def _cupy_cub(dtype, views):
    if dtype == "bfloat16":
        return None  # CuPy has no bfloat16
    import cupy

    arrays = {id(x): cupy.from_dlpack(x) for x in views}

    def go(x):
        a = arrays[id(x)]
        return cupy.sum(a, dtype=a.dtype)  # CUB (accelerators set around the loops)

    return go


ENTRIES: tuple[Entry, ...] = (
    Entry("torch.sum", "torch.sum(x)", _torch_sum),
    Entry("torch.sum out=", "torch.sum(x, dim=0, out=o), o preallocated", _torch_sum_out),
    *(Entry(f"api {v}", f"harness.reduce_sum(x, {v!r}) (plan cache)", _api(v)) for v in FASTEST),
    *(Entry(f"api {v} out=", f"harness.reduce_sum(x, {v!r}, out=o), o preallocated",
            _api_out(v)) for v in FASTEST),
    *(Entry(f"op {v}", f"torch.ops.reduce_ladder.sum(x, {v!r}), eager", _op(v)) for v in FASTEST),
    Entry("op noop (dispatch)", "torch.ops.reduce_ladder.noop(x): dispatch, no work", _noop_op),
    *(Entry(f"plan {v}", f"make_plan({v!r}, x) once, run() per call", _plan(v)) for v in FASTEST),
    Entry("launch cuda/fastest driver", "cached launch, cuda.bindings cuLaunchKernel, params "
          "packed once (where cuda-python imports)", _launch("cuda/fastest", "driver")),
    Entry("launch cuda/fastest function", "cached launch, CuPy Function, args packed once",
          _launch("cuda/fastest", "function")),
    Entry("launch cuda/fastest rawkernel", "cached launch, RawKernel + DLPack views per call",
          _launch("cuda/fastest", "rawkernel")),
    Entry("launch triton/fastest bound", "cached launch, CompiledKernel.run, args bound once",
          _launch("triton/fastest", "bound")),
    Entry("launch triton/fastest jit", "cached launch, fastest_kernel[grid](...) per call",
          _launch("triton/fastest", "jit")),
    Entry("cupy.sum-cub", "cupy.sum(a, dtype=a.dtype), CUB accelerators on", _cupy_cub),
    Entry("torch.compile sum", "torch.compile(lambda t: torch.sum(t)), default mode",
          _torch_compile),
)  # fmt: skip


def views_for(n: int, dtype: str, l2_bytes: int):
    """Views of one buffer that the loop rotates over (see the module docstring)."""
    import torch

    from harness.check import verify

    nbytes = n * torch.empty((), dtype=getattr(torch, dtype)).element_size()
    count = 1 if nbytes >= 2 * l2_bytes else min(MAX_VIEWS, -(-2 * l2_bytes // nbytes))
    buf = verify.seed_like_input(n * count, dtype, "cuda")
    return [buf[i * n : (i + 1) * n] for i in range(count)], nbytes


def per_call_us(fn, views: list, calls: int, loops: int) -> tuple[float, float]:
    """(median, min) over `loops` loops of `calls` back-to-back calls: event time / calls."""
    import torch

    for x in views[:2]:
        fn(x)
    torch.cuda.synchronize()
    k = len(views)
    times = []
    for _ in range(loops):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for i in range(calls):
            fn(views[i % k])
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000.0 / calls)
    return statistics.median(times), min(times)


def _calls(nbytes: int, views: int) -> int:
    """Calls per loop: every view once where several; else about 30 ms of an HBM-bound sum."""
    if views > 1:
        return views
    return max(10, min(MAX_VIEWS, int(0.03 / (nbytes / 3e12))))


def bench(sizes: list[int], dtypes: list[str], loops: int, log=print) -> dict:
    import torch

    from harness.core import device
    from harness.launch import peers, plan_cache
    from triton_kernels import fastest as tfast

    l2 = torch.cuda.get_device_properties(torch.cuda.current_device()).L2_cache_size
    rows = []
    with peers.cupy_accelerators(["cub"]):
        for dtype in dtypes:
            for n in sizes:
                views, nbytes = views_for(n, dtype, l2)
                calls = _calls(nbytes, len(views))
                row_base = dict(dtype=dtype, n=n, calls_per_loop=calls, loops=loops)
                row_base["touched_bytes"] = min(calls, len(views)) * nbytes
                for e in ENTRIES:
                    try:
                        fn = e.make(dtype, views)
                        if fn is None:
                            continue
                        med, lo = per_call_us(fn, views, calls, loops)
                        rows.append({**row_base, "entry": e.id, "us_per_call": med, "min_us": lo})
                    except Exception as exc:  # recorded, the run goes on
                        rows.append({**row_base, "entry": e.id, "error": f"{exc}"[:300]})
                        log(f"{e.id} {dtype} n={n}: {exc}")
                del views
                torch.cuda.empty_cache()
                log(_table_block(rows, dtype, n))
    return {
        "schema": records.CALLABLE_SCHEMA,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "device": device.device_info(),
        "method": "back-to-back calls in a Python loop, CUDA events around the loop, median "
        f"per call over {loops} loops; views rotated to cover 2x L2 (at most {MAX_VIEWS})",
        "entries": {e.id: e.description for e in ENTRIES},
        "triton_configs": tfast.chosen(),
        "plan_cache": dataclasses.asdict(plan_cache.info()),
        "results": rows,
    }


def _table_block(rows: list[dict], dtype: str, n: int) -> str:
    mine = [r for r in rows if r["dtype"] == dtype and r["n"] == n and "us_per_call" in r]
    base = next((r["us_per_call"] for r in mine if r["entry"] == "torch.sum"), None)
    out = [f"{dtype} n={sizes_mod.size_label(n)}"]
    for r in mine:
        ratio = f"{base / r['us_per_call']:.2f}x" if base else "-"
        out.append(f"  {r['entry']:<32} {r['us_per_call']:10.2f} us  {ratio:>7} torch.sum")
    return "\n".join(out)


def overheads(doc: dict) -> list[str]:
    """reduce_sum's cost over the cached launch it runs (api - launch, default modes), per row."""
    by = {(r["entry"], r["dtype"], r["n"]): r.get("us_per_call") for r in doc["results"]}
    lines = []
    from harness.launch.rebind import DEFAULT_MODE

    for v, mode in (("cuda/fastest", DEFAULT_MODE["cuda"]), ("triton/fastest", "bound")):
        for (entry, dtype, n), us in by.items():
            launch = by.get((f"launch {v} {mode}", dtype, n))
            if entry == f"api {v}" and us is not None and launch is not None:
                lines.append(f"{v} {dtype} {sizes_mod.size_label(n)}: +{us - launch:.2f} us")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m harness.studies.callable_bench")
    ap.add_argument("--json", required=True, help="where to write the CALLABLE_SCHEMA document")
    ap.add_argument("--sizes", nargs="*", help="e.g. 2^10 2^20,2^24 (default: 2^10..2^30, even)")
    ap.add_argument("--dtypes", nargs="*", default=list(DEFAULT_DTYPES))
    ap.add_argument("--loops", type=int, default=5)
    args = ap.parse_args(argv)
    try:
        sizes = sizes_mod.parse_sizes(args.sizes) or list(DEFAULT_SIZES)
    except ValueError as e:
        ap.error(str(e))
    bad = [d for d in args.dtypes if d not in DEFAULT_DTYPES]
    if bad:
        ap.error(f"dtypes {bad}: the per-call bench runs {', '.join(DEFAULT_DTYPES)}")
    if args.loops < 1:
        ap.error("--loops must be >= 1")
    if not Path(args.json).resolve().parent.is_dir():  # before minutes of timing, not after
        ap.error(f"--json {args.json}: the folder {Path(args.json).parent} does not exist")
    from harness.core import device

    ok, why = device.torch_gpu()
    if not ok:
        print(f"callable_bench needs a CUDA GPU: {why}", file=sys.stderr)
        return 2  # the project's policy for commands that need a GPU
    doc = bench(sizes, args.dtypes, args.loops)
    documents.write_document(args.json, doc)
    print("reduce_sum over its cached launch (api - launch):")
    print("\n".join(overheads(doc)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
