"""What Hopper's memory paths buy the fastest sum at large n (issue 14): one run, float32.

    python -m experiments.hopper_loads --json out.json [--log2 24 26 27 28 30]

cuda/fastest reads its stream with __ldg (ld.global.nc.v4) and is within 1-2 % of CUB at n >=
2^27; what is left is a few percent of memory bandwidth. hopper_loads.cu (beside this file) holds
cuda/fastest's kernel with one thing changed each (its opening comment says what and why):
cache qualifiers on the 16-byte loads (L1 no-allocate, an L2 evict-first policy, the L2 256-byte
prefetch) and the tensor memory accelerator's 1-D bulk copy into a shared-memory ring. Each is
checked against the golden under an error bound from its own addition chains, then timed beside
the catalogue's cuda/fastest, CUB and torch.sum in two interleaved rounds
(harness.core.timing.time_ms: CUDA events, warm-up, L2 flushed by a read, median). The input is
random integers 0..99 (harness.check.verify.seed_like_input), 16-byte aligned. Not in the
catalogue: the catalogue keeps what measured fastest, and this experiment is the record of why.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path

from harness.core import mappings

SOURCE = Path(__file__).resolve().parent / "hopper_loads.cu"  # includes cuda_kernels/fastest.cu
THREADS = 256
UNROLL = 8  # cuda/fastest's float32 UNROLL (harness.core.variant.FASTEST_UNROLL)
# label -> (name expression, threads per block, vectors a thread adds per tile, per_sm, tile floats)
# hinted: cuda/fastest's grid (per_sm 4); bulk: tiles of TILE_BYTES, STAGES in flight per block.
HINTED = {
    "ldg (as cuda/fastest)": 0,
    "L1::no_allocate": 1,
    "L1::no_allocate + L2 evict_first policy": 2,
    "L1::no_allocate + L2::256B prefetch": 3,
}
BULK = {  # label -> (STAGES, TILE_BYTES, blocks per SM); STAGES * TILE_BYTES <= 48 KiB static
    "bulk copy 4 x 8 KiB, 4/SM": (4, 8192, 4),
    "bulk copy 4 x 8 KiB, 6/SM": (4, 8192, 6),
    "bulk copy 2 x 16 KiB, 4/SM": (2, 16384, 4),
    "bulk copy 8 x 4 KiB, 4/SM": (8, 4096, 4),
}
DEFAULT_LOG2 = (24, 26, 27, 28, 30)
SUITE = "hopper-loads"  # its ROWS document's suite


def hinted_expression(load: int) -> str:
    return f"reduce_hinted<{load}, {THREADS}, {UNROLL}>"


def bulk_expression(stages: int, tile_bytes: int) -> str:
    return f"reduce_bulk<{THREADS}, {stages}, {tile_bytes}>"


def name_expressions() -> list[str]:
    """Every instantiation the experiment launches (its test compiles these through NVRTC: no
    catalogue variant instantiates the source's templates)."""
    return [hinted_expression(load) for load in HINTED.values()] + [
        bulk_expression(stages, tile_bytes) for stages, tile_bytes, _ in BULK.values()
    ]


def _chain(n: int, threads: int, grid: int) -> int:
    """Longest chain of float additions in these kernels: a thread's accumulator (one of four
    lanes) adds one element of each of its vectors, then the lanes fold (2), the block tree
    (log2 threads), the partials loop (grid / threads) and its tree (log2 threads)."""
    per_lane = math.ceil(n / (4 * threads * grid)) + 1
    tree = 2 * int(math.log2(threads))
    return per_lane + 2 + tree + math.ceil(grid / threads)


def _candidates(x) -> dict[str, tuple[Callable[[], None], object, int]]:
    """label -> (launch, output tensor, chain length) for the experiment's kernels and the peers."""
    from harness.compile import cuda_loader
    from harness.core import catalogue
    from harness.launch import peers, single_launch
    from harness.launch.plan import make_plan
    from harness.launch.stream import on_torch_stream

    n, sms = x.numel(), mappings.sm_count()
    cv = catalogue.get("cuda/fastest")
    plan = make_plan(cv, x)
    out: dict[str, tuple[Callable[[], None], object, int]] = {
        "cuda/fastest (catalogue)": (plan.launches[0], plan.outs[0], 0)
    }

    def kernel_launch(expr: str, grid: int, threads: int):
        kern = cuda_loader.kernel_by_expression(SOURCE, expr)
        p = make_plan(cv, x)  # its own output and workspace (partials, counter)
        args = single_launch.cuda_args(p.x, p.outs[0], *p.workspace)

        def go() -> None:
            with on_torch_stream():
                kern((grid,), (threads,), args)

        return go, p.outs[0], _chain(n, threads, grid)

    grid = single_launch.cuda_grid(cv, "float32", n)
    for label, load in HINTED.items():
        out[label] = kernel_launch(hinted_expression(load), grid, THREADS)
    for label, (stages, tile_bytes, per_sm) in BULK.items():
        tiles = mappings.cdiv(n, tile_bytes // 4)
        g = max(1, min(tiles, per_sm * sms, cv.launch.max_blocks))
        out[label] = kernel_launch(bulk_expression(stages, tile_bytes), g, THREADS)
    for pid, label in (("peer/torch.sum", "torch.sum"), ("peer/cupy.sum-cub", "cupy.sum (CUB)")):
        out[label] = (peers.prepare(catalogue.get(pid), x), None, 0)
    return out


def _verdicts(cands, x) -> dict[str, str]:
    """Poison, run once, compare with the golden: the experiment's kernels under their own chains'
    bound (harness.check.verify.gamma), the catalogue's under its own (verify.compare)."""
    import torch

    from harness.check import verify
    from harness.core import catalogue, dtypes

    g = verify.golden(x)
    cv = catalogue.get("cuda/fastest")
    verdicts = {}
    for label, (fn, out, chain) in cands.items():
        if out is None:
            continue  # a peer: its own checks live in harness.launch.peers' tests
        dtypes.poison_(out)
        fn()
        torch.cuda.synchronize()
        value = verify.as_number(out[0])
        if chain == 0:
            r = verify.compare(cv, "float32", x.numel(), value, g, True)
            verdicts[label] = "ok" if r.ok else f"WRONG: {r.message}"
            continue
        bound = verify.gamma(chain, verify.UNIT_ROUNDOFF["float32"]) * g.abs_sum + g.own_error
        err = abs(value - g.value)
        verdicts[label] = "ok" if err <= bound else f"WRONG: |err| {err:.3g} > bound {bound:.3g}"
    return verdicts


def study(log2s: list[int], log=print) -> dict:
    import torch

    from harness.check import verify
    from harness.core import device, timing

    doc: dict = {
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "device": device.device_info(),
        "dtype": "float32",
        "timing": "CUDA events, L2 flushed before each repetition, median "
        "(harness.core.timing.time_ms), two interleaved rounds",
        "rows": [],
    }
    t0 = time.time()
    full = verify.seed_like_input(2 ** max(log2s), "float32", "cuda")
    for k in sorted(log2s):
        n = 2**k
        x = full[:n]
        cands = _candidates(x)
        row: dict = {"n": n, "log2n": k, "verdicts": _verdicts(cands, x), "times": {}}
        for rnd in (1, 2):
            for label, (fn, _, _) in cands.items():
                t = timing.time_ms(fn, reps=5 if n >= 2**28 else None, target_ms=100)
                row["times"].setdefault(label, {})[f"round{rnd}"] = t.record()
        doc["rows"].append(row)
        log(table(row))
        del cands, x
        torch.cuda.synchronize()
    doc["wall_s"] = time.time() - t0
    return doc


def best_ms(t: dict) -> float:
    return min(t["round1"]["median_ms"], t["round2"]["median_ms"])


def table(row: dict) -> str:
    """One n: each kernel's two rounds (us) and its ratio to the catalogue's cuda/fastest and to
    the better of CUB and torch.sum (above 1: faster)."""
    times = row["times"]
    base = best_ms(times["cuda/fastest (catalogue)"])
    peer = min(best_ms(times["torch.sum"]), best_ms(times["cupy.sum (CUB)"]))
    lines = [
        f"\nn = 2^{row['log2n']}: median us, round 1 / round 2; x fastest = fastest / this; "
        "x peer = best of CUB and torch.sum / this"
    ]
    for label, t in times.items():
        r1, r2 = (t[r]["median_ms"] * 1e3 for r in ("round1", "round2"))
        b = best_ms(t)
        verdict = row["verdicts"].get(label, "")
        lines.append(
            f"  {label:42} {r1:9.2f} {r2:9.2f}  x fastest {base / b:6.3f}  "
            f"x peer {peer / b:6.3f}  {verdict}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m experiments.hopper_loads", description=__doc__)
    p.add_argument("--json", required=True, help="where to write the results")
    p.add_argument("--log2", nargs="+", type=int, default=list(DEFAULT_LOG2))
    a = p.parse_args(argv)
    if any(k < 10 or k > 32 for k in a.log2):
        p.error("--log2 takes exponents 10..32")
    from harness.core import device

    ok, why = device.cupy_gpu()
    if not ok:
        print(f"hopper_loads needs a GPU with CuPy: {why}", file=sys.stderr)
        return 2
    import experiments

    return experiments.finish(study(a.log2), a.json, SUITE)


if __name__ == "__main__":
    sys.exit(main())
