"""Where a call of reduce_sum (and of torch.ops.reduce_ladder.sum) spends its time, from Python.

    python -m experiments.call_profile [--variant cuda/fastest] [--n 2^10] [--dtype float32]
        [--calls 20000] [--json call_profile.json]

Three views of one warm call (the plan cache hit, which is what a user's loop runs):
1. steps: each step of the hot path (harness.launch.api._hit and reduce_sum) run alone in a loop
   of `calls`, timed with time.perf_counter_ns, in nanoseconds per step: the argument checks, the
   device / stream / capture queries, the dtype's name, the key, the cache lookup, the output
   allocation, the launch and the return conversion. Their sum is compared with the whole call.
2. per call: host time per call of the whole calls, back to back (perf_counter_ns around the
   loop, one device synchronize after it, so on the GPU a loop the device cannot keep up with
   shows the device's time): reduce_sum, the op, the op `reduce_ladder::noop` (dispatch alone:
   harness.launch.torch_op), the cached launch alone, and torch.sum.
3. cProfile of `calls` calls of reduce_sum and of the op: the functions with the most own time.

On the GPU everything runs for real. Without one (the CPU build machine), the variant runs under
Triton's interpreter with its launch MOCKED (the cached entry's launch replaced by a function that
returns at once), so the figures are everything up to the launch: what the Python path costs.
cuda/* variants need a GPU (exit 2 without one). Output: the text below, and with --json the same
figures as a document {"device", "variant", "dtype", "n", "calls", "launch_mocked", "steps_ns",
"per_call_us", "profiles"}.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys
import time
from collections.abc import Callable
from pathlib import Path

import experiments
from harness.core import catalogue, device, sizes
from harness.report import documents
from harness.report.records import Row
from harness.studies.call_entries import api_variants
from harness.studies.suites import row_common

SUITE = "call-profile"  # its ROWS document's suite
TOP_FUNCTIONS = 12


def _loop_ns(fn: Callable[[], object], calls: int, sync: Callable[[], None]) -> float:
    """Nanoseconds per call of fn over `calls` back-to-back calls (best of 3 loops)."""
    best = float("inf")
    for _ in range(3):
        sync()
        t0 = time.perf_counter_ns()
        for _ in range(calls):
            fn()
        sync()
        best = min(best, (time.perf_counter_ns() - t0) / calls)
    return best


def _setup(variant: str, dtype: str, n: int, on_gpu: bool):
    """The input, the warm cache entry (its launch mocked without a GPU) and torch_op loaded."""
    import torch

    from harness.check import verify
    from harness.launch import api, plan_cache, torch_op  # noqa: F401  (registers the ops)

    x = verify.seed_like_input(n, dtype, "cuda" if on_gpu else "cpu")
    v = api._variant(variant)
    entry = plan_cache.default().get(v, dtype, x)
    if not on_gpu:
        entry.go = lambda x, out: None  # the mock: everything but the launch itself
    api.reduce_sum(x, variant)  # the checked path once: the id joins the hot path
    torch.ops.reduce_ladder.sum(x, variant)
    return x, entry


def steps_ns(variant: str, x, entry, calls: int, sync) -> dict[str, float]:
    """Each step of the hot path alone, ns per step (see the module docstring)."""
    import torch

    from harness.launch import api, plan_cache

    cache = plan_cache.default()
    dev = x.get_device()
    stream = api._raw_stream(dev) if dev >= 0 else 0
    name = api._DTYPE_NAMES.get(x.dtype)
    key = (api._HOT_IDS[variant], name, x.numel(), x.data_ptr() & 15, dev, stream)
    out = entry.proto.new_empty(())

    def noop() -> None:
        return None

    steps: dict[str, Callable[[], object]] = {
        "argument checks": lambda: (
            type(x) is torch.Tensor
            and type(variant) is str
            and api._HOT_IDS.get(variant)
            and x.is_contiguous()
        ),
        "device, stream, capture": (
            (lambda: (x.get_device(), api._raw_stream(dev), plan_cache.capturing()))
            if dev >= 0
            else (lambda: x.get_device())
        ),
        "dtype name": lambda: api._DTYPE_NAMES.get(x.dtype),
        "key": lambda: (variant, name, x.numel(), x.data_ptr() & 15, dev, stream),
        "cache lookup": lambda: cache.lookup(key),
        "output allocation": lambda: entry.proto.new_empty(()),
        "launch": lambda: entry.go(x, out),  # what the hot path calls
        "return conversion": noop,  # a torch tensor goes back as it is (CuPy: checked path)
    }
    floor = _loop_ns(noop, calls, sync)  # the loop and the lambda call themselves
    return {k: max(0.0, _loop_ns(fn, calls, sync) - floor) for k, fn in steps.items()}


def per_call_us(variant: str, x, entry, calls: int, sync) -> dict[str, float]:
    import torch

    from harness.launch import api

    out = entry.proto.new_empty(())
    given, given_t = entry.proto.new_empty(()), x.new_empty(())  # out= of each
    op, noop = torch.ops.reduce_ladder.sum, torch.ops.reduce_ladder.noop
    fns: dict[str, Callable[[], object]] = {
        "reduce_sum": lambda: api.reduce_sum(x, variant),
        "reduce_sum out=": lambda: api.reduce_sum(x, variant, out=given),
        "op": lambda: op(x, variant),
        "noop op (dispatch alone)": lambda: noop(x, variant),
        "cached launch alone": lambda: entry(x, out),
        "torch.sum": lambda: torch.sum(x),
        "torch.sum out=": lambda: torch.sum(x, dim=0, out=given_t),  # out= needs a dim
    }
    return {k: _loop_ns(fn, calls, sync) / 1000.0 for k, fn in fns.items()}


def profiles(variant: str, x, calls: int) -> dict[str, str]:
    """cProfile's table (own time first, TOP_FUNCTIONS rows) of `calls` calls of each entry."""
    import torch

    from harness.launch import api

    op = torch.ops.reduce_ladder.sum
    tables = {}
    for name, fn in (("reduce_sum", api.reduce_sum), ("op", op)):
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(calls):
            fn(x, variant)
        prof.disable()
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(TOP_FUNCTIONS)
        tables[name] = buf.getvalue()
    return tables


def run(variant: str, dtype: str, n: int, calls: int) -> dict:
    on_gpu = device.gpu_available()
    sync = _sync(on_gpu)
    x, entry = _setup(variant, dtype, n, on_gpu)
    return {
        "device": device.device_info(),
        "variant": variant,
        "dtype": dtype,
        "n": n,
        "calls": calls,
        "launch_mocked": not on_gpu,
        "steps_ns": steps_ns(variant, x, entry, calls, sync),
        "per_call_us": per_call_us(variant, x, entry, calls, sync),
        "profiles": profiles(variant, x, max(1, calls // 10)),
    }


def document(doc: dict) -> dict:
    """The profile's ROWS document: the per-call times a row per entry ("call", microseconds
    written in ms, the variant profiled its config), the steps and profiles beside them."""
    common = row_common(SUITE, doc["device"])
    rows = [Row(**common, variant=entry, config=doc["variant"], dtype=doc["dtype"],
                shape=doc["n"], metric="call", median_ms=us / 1e3)
            for entry, us in doc["per_call_us"].items() if us is not None]  # fmt: skip
    return experiments.as_rows(doc, SUITE, rows, said=("per_call_us",))


def _sync(on_gpu: bool) -> Callable[[], None]:
    if not on_gpu:
        return lambda: None
    import torch

    return torch.cuda.synchronize


def render(doc: dict) -> str:
    """The text form: steps, their sum beside the whole call, per-call times, the profiles."""
    mocked = " (launch MOCKED: no GPU)" if doc["launch_mocked"] else ""
    lines = [
        f"call profile: {doc['variant']} {doc['dtype']} n={sizes.size_label(doc['n'])}, "
        f"{doc['calls']} calls{mocked}",
        "hot path steps (ns per step, each alone, loop overhead subtracted):",
    ]
    lines += [f"  {k:<28} {v:9.0f}" for k, v in doc["steps_ns"].items()]
    total = sum(doc["steps_ns"].values())
    lines.append(f"  {'sum of steps':<28} {total:9.0f}")
    lines.append("per call, back to back (us):")
    per = doc["per_call_us"]
    lines += [f"  {k:<28} {v:9.2f}" for k, v in per.items()]
    lines.append(
        f"  reduce_sum - launch alone: {per['reduce_sum'] - per['cached launch alone']:+.2f} us "
        f"(out=: {per['reduce_sum out='] - per['cached launch alone']:+.2f} us); "
        f"op - reduce_sum: {per['op'] - per['reduce_sum']:+.2f} us "
        f"(dispatch alone: {per['noop op (dispatch alone)']:.2f} us)"
    )
    for name, table in doc["profiles"].items():
        lines.append(f"cProfile, {name} (own time first):")
        rows = [r for r in table.splitlines() if r.strip() and "function calls" not in r]
        lines += ["  " + r for r in rows[: TOP_FUNCTIONS + 4]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m experiments.call_profile")
    ap.add_argument("--variant", help="any variant reduce_sum takes (every family's cached call); "
                    "default: cuda/fastest on a GPU, triton/fastest interpreted (launch mocked) "
                    "without one")  # fmt: skip
    ap.add_argument("--n", default="2^10", help="elements (e.g. 2^10, 4096)")
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--json", help="also write the figures here")
    args = ap.parse_args(argv)
    on_gpu = device.use_interpreter_if_no_gpu() is False and device.gpu_available()
    variant = args.variant or ("cuda/fastest" if on_gpu else "triton/fastest")
    if variant not in api_variants():
        ap.error(f"--variant {variant}: not a variant reduce_sum takes (reduce-ladder list)")
    if variant.startswith("cuda/") and not on_gpu:
        ap.error(f"{variant} needs a GPU; without one profile triton/fastest (launch mocked)")
    try:
        n = sizes.parse_size(args.n)
    except ValueError as e:
        ap.error(f"--n {args.n}: {e}")
    from harness.core import dtypes

    if args.dtype not in dtypes.DTYPES:
        ap.error(f"--dtype {args.dtype}: one of {', '.join(dtypes.DTYPES)}")
    if args.dtype not in catalogue.get(variant).dtypes:
        ap.error(
            f"--dtype {args.dtype}: {variant} takes {', '.join(catalogue.get(variant).dtypes)}"
        )
    if n < 1 or args.calls < 10:
        ap.error("--n must be >= 1 and --calls >= 10")
    if args.json and not Path(args.json).resolve().parent.is_dir():
        ap.error(f"--json {args.json}: the folder {Path(args.json).parent} does not exist")
    doc = run(variant, args.dtype, n, args.calls)
    print(render(doc))
    if args.json:
        documents.write_document(args.json, document(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
