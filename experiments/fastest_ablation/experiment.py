"""What each design choice of the fastest variants buys, and where small-n time goes: one run.

    reduce-ladder ablation --json out.json [--log2 12 13 16 20 24 27 28]
    (or python -m experiments.fastest_ablation with the same options)

For float32 at each n = 2^k (random integers 0..99, 16-byte aligned), in one process:
- cuda/fastest as the catalogue launches it, and its kernel in the shapes of CUDA_SHAPES: FLAGS 0
  (grid-stride tiles, fence + atomicAdd ticket, UNROLL 4: the first measured design), each FAST_*
  switch of cuda_kernels/fastest.cu alone (the helpers prefetch_ticket_line, block_vectors and
  last_block_done hold the alternatives), then other UNROLL / threads / blocks per SM / grid
  policies (all with today's last-tile loads: issued together);
- triton/fastest with EVEN False (grid-stride) and True, and with the balanced grid, each
  autotuned here over triton_kernels.fastest.CONFIGS;
- the peers cupy.sum (CUB) and torch.sum.
Each is checked against the golden (harness.check.verify.compare, the variant's error bound), then
timed
in two interleaved rounds (harness.core.timing.time_ms: CUDA events, warm-up, queued behind a gate,
L2 flushed by a read, median), so one version's round-to-round spread is printed beside the gaps
between versions; for n <= 2^20 also from a CUDA graph (harness.core.timing.graph_ms).

At the smallest n, the launch probe: the launch floor (cuda_kernels/fastest.cu: one block writing
a zero) beside the sums, each timed (a) "ungated": as time_ms but without its gate, so a call
whose host side outlasts the flush is timed with the host gap (what time_ms did before the gate),
(b) "gated": as time_ms times everything, (c) "warm": gated, without the L2 flush, (d) from a CUDA
graph; and the catalogue's kernel with the shared-memory carveout preference at 0 and 100 %.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from harness.core import dtypes, mappings

if TYPE_CHECKING:
    from harness.launch.single_launch import FastestPlan
    from triton_kernels.fastest import Config

# How many blocks (programs) a persistent grid gets for `tiles` tiles when at most `cap` fit:
# "capped" (production: harness.launch.single_launch, triton_kernels.fastest): min(tiles, cap), so
# the last grid-stride round may hold only a few blocks, which then read their extra tile alone;
# "balanced": the same number of rounds, cdiv(tiles, cap), with the fewest blocks that still cover
# the tiles, so every round but the last is full and the last one nearly so. Both are measured here.
GRID_POLICIES = ("capped", "balanced")
SUITE = "fastest-ablation"  # its ROWS document's suite


def grid_size(tiles: int, cap: int, policy: str) -> int:
    if policy not in GRID_POLICIES:
        raise ValueError(f"grid policy {policy!r}; known: {', '.join(GRID_POLICIES)}")
    tiles, cap = max(tiles, 1), max(cap, 1)
    if policy == "capped" or tiles <= cap:
        return min(tiles, cap)
    return mappings.cdiv(tiles, mappings.cdiv(tiles, cap))


# cuda/fastest's kernel in other shapes: label -> (FLAGS, threads, UNROLL, per_sm, grid policy).
# FLAGS are cuda_kernels/fastest.cu's FAST_* switches (1 even share, 2 prefetched ticket, 4 acq_rel
# ticket); the grid policies are GRID_POLICIES above.
CUDA_SHAPES: dict[str, tuple[int, int, int, int, str]] = {
    "F0 fence ticket": (0, 256, 4, 4, "capped"),
    "F1 even share": (1, 256, 4, 4, "capped"),
    "F2 prefetched ticket": (2, 256, 4, 4, "capped"),
    "F4 acq_rel ticket": (4, 256, 4, 4, "capped"),
    "F4 balanced grid": (4, 256, 4, 4, "balanced"),
    "F4 unroll 8": (4, 256, 8, 4, "capped"),
    "F4 unroll 8 balanced": (4, 256, 8, 4, "balanced"),
    "F4 6 blocks/SM": (4, 256, 4, 6, "capped"),
    "F4 1024 threads": (4, 1024, 1, 2, "capped"),
}
DEFAULT_LOG2 = (12, 13, 16, 20, 24, 27, 28)
GRAPH_MAX_N = 2**20


def cuda_expression(flags: int, threads: int = 256, unroll: int = 4, ctype: str = "float") -> str:
    return f"reduce_fastest<{ctype}, {threads}, {unroll}, {flags}>"


def catalogue_label() -> str:
    """The label that stands for the catalogue's kernel: the catalogue's own row."""
    return "catalogue (cuda/fastest)"


LAUNCH_FLOOR = "launch_floor<0>"


def cuda_shape_launch(
    plan: FastestPlan, flags: int, threads: int, unroll: int, per_sm: int, policy: str
) -> Callable[[], None]:
    """cuda/fastest's kernel instantiated with FLAGS / threads / UNROLL, on `plan`'s input and
    workspace, with a grid of per_sm blocks per SM under `policy`, on torch's current stream."""
    from harness.compile import cuda_loader
    from harness.launch import single_launch
    from harness.launch.stream import on_torch_stream

    v = plan.variant
    kern = cuda_loader.kernel_by_expression(v.source, cuda_expression(flags, threads, unroll))
    tiles = single_launch.vector_tiles(plan.dtype, plan.n, threads, unroll)
    cap = min(v.launch.max_blocks, per_sm * mappings.sm_count())
    grid, block = (grid_size(tiles, cap, policy),), (threads,)
    args = single_launch.cuda_args(plan.x, plan.outs[0], *plan.workspace)

    def go() -> None:
        with on_torch_stream():
            kern(grid, block, args)

    return go


def triton_shape_launcher(
    plan: FastestPlan, even: bool, policy: str
) -> Callable[[Config], Callable[[], None]]:
    """cfg -> a launch of triton/fastest's kernel on `plan`'s input and workspace with the EVEN
    split on or off and a grid under `policy`."""
    from triton_kernels import fastest

    args = fastest.kernel_args(plan.x, plan.outs[0], *plan.workspace)
    n_bulk, sms = args[-1], mappings.sm_count()

    def launcher(cfg: Config) -> Callable[[], None]:
        g = grid_size(cfg.tiles(n_bulk), cfg.cap(sms), policy)
        meta = {**fastest.triton_meta(cfg, plan.dtype, g), "EVEN": even}
        return fastest.launch(args, g, meta)

    return launcher


def _candidates(n: int, x) -> tuple[dict[str, Callable[[], object]], dict[str, object]]:
    """label -> launch, and label -> the tensor (or callable) that holds the result."""
    from harness.core import catalogue
    from harness.launch import peers
    from harness.launch.plan import make_plan
    from triton_kernels import fastest

    fns: dict[str, Callable[[], object]] = {}
    outs: dict[str, object] = {}
    cv = catalogue.get("cuda/fastest")
    plan = make_plan(cv, x)
    key = f"cuda {catalogue_label()}"
    fns[key], outs[key] = plan.launches[0], plan.outs[0]
    for label, shape in CUDA_SHAPES.items():
        plan = make_plan(cv, x)
        key = f"cuda {label}"
        fns[key], outs[key] = cuda_shape_launch(plan, *shape), plan.outs[0]
    tv = catalogue.get("triton/fastest")
    for even, policy in ((False, "capped"), (True, "capped"), (False, "balanced")):
        plan = make_plan(tv, x)
        launcher = triton_shape_launcher(plan, even, policy)
        times = {cfg: fastest.measure_ms(launcher(cfg), n) for cfg in fastest.CONFIGS}
        best = min(times, key=times.get)
        key = f"triton {'even' if even else 'grid-stride'} {policy} {best.label()}"
        fns[key] = launcher(best)
        outs[key] = plan.outs[0]
    for pid, key in (("peer/torch.sum", "torch.sum"), ("peer/cupy.sum-cub", "cupy.sum (CUB)")):
        fns[key] = peers.prepare(catalogue.get(pid), x)
    return fns, outs


def _check(fns, outs, x) -> dict[str, str]:
    """Poison, run once, compare with the golden under the variant's bound: label -> verdict."""
    import torch

    from harness.check import verify
    from harness.core import catalogue

    g = verify.golden(x)
    verdicts = {}
    for key, out in outs.items():
        v = catalogue.get("cuda/fastest" if key.startswith("cuda") else "triton/fastest")
        dtypes.poison_(out)
        fns[key]()
        torch.cuda.synchronize()
        r = verify.compare(v, "float32", x.numel(), verify.as_number(out[0]), g, True)
        verdicts[key] = "ok" if r.ok else f"WRONG: {r.message}"
    return verdicts


def launch_probe(n: int, x, fns, log) -> dict:
    """Where per-call time goes at small n (see the module docstring)."""
    import cupy
    import torch

    from harness.compile import cuda_loader
    from harness.core import catalogue, timing
    from harness.launch.stream import on_torch_stream

    cv = catalogue.get("cuda/fastest")
    floor = cuda_loader.kernel_by_expression(cv.source, LAUNCH_FLOOR)
    sink = cupy.from_dlpack(torch.empty(1, device="cuda"))

    def launch_floor() -> None:  # on torch's stream, as every harness launch
        with on_torch_stream():
            floor((1,), (256,), (sink,))

    probe = {"launch floor": launch_floor}
    cat = f"cuda {catalogue_label()}"
    probe |= {k: v for k, v in fns.items() if k in (cat, "cuda F4 1024 threads")}
    probe |= {k: v for k, v in fns.items() if k.startswith("triton grid-stride capped")}
    probe |= {k: fns[k] for k in ("cupy.sum (CUB)", "torch.sum")}
    out: dict = {}
    for key, fn in probe.items():
        out[key] = {
            "ungated": timing.time_ms(fn, target_ms=100, gate=False).record(),
            "gated": timing.time_ms(fn, target_ms=100).record(),
            "warm": timing.time_ms(fn, target_ms=100, flush=False).record(),
            "graph": timing.graph_ms(fn).record(),
        }
    kern = cuda_loader.kernel(cv, "float32")
    try:
        before = kern.preferred_shared_memory_carveout
    except Exception:
        before = -1  # CU_SHAREDMEM_CARVEOUT_DEFAULT
    for carve in (0, 100):
        try:
            kern.preferred_shared_memory_carveout = carve
            out[f"{cat}, carveout {carve}%"] = {
                "gated": timing.time_ms(fns[cat], target_ms=100).record()
            }
        except Exception as e:  # recorded, the run goes on
            out[f"{cat}, carveout {carve}%"] = {"error": f"{type(e).__name__}: {e}"}
        finally:
            kern.preferred_shared_memory_carveout = before
    log(f"\nlaunch probe, n = 2^{n.bit_length() - 1}: median us")
    log(f"{'':44} {'ungated':>8} {'gated':>8} {'warm':>8} {'graph':>8}")
    for key, r in out.items():
        cells = [r.get(c, {}).get("median_ms") for c in ("ungated", "gated", "warm", "graph")]
        log(f"{key:44} " + " ".join(_us(c) for c in cells))
    return out


def _us(v) -> str:
    return f"{v * 1e3:8.2f}" if isinstance(v, float) else f"{'-':>8}"


def ablate(log2s: list[int], log=print) -> dict:
    import torch

    from harness.check import verify
    from harness.core import device, timing

    doc: dict = {
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "device": device.device_info(),
        "dtype": "float32",
        "timing": "CUDA events, L2 flushed before each repetition, median (harness.core.timing."
        f"time_ms), two interleaved rounds; graph: harness.core.timing.graph_ms for n <= "
        f"{GRAPH_MAX_N}",
        "rows": [],
    }
    t0 = time.time()
    full = verify.seed_like_input(2 ** max(log2s), "float32", "cuda")
    for k in sorted(log2s):
        n = 2**k
        x = full[:n]
        fns, outs = _candidates(n, x)
        row: dict = {"n": n, "log2n": k, "verdicts": _check(fns, outs, x), "times": {}}
        for rnd in (1, 2):
            for key, fn in fns.items():
                t = timing.time_ms(fn, reps=5 if n >= 2**28 else None, target_ms=100)
                row["times"].setdefault(key, {})[f"round{rnd}"] = t.record()
        if n <= GRAPH_MAX_N:
            for key, fn in fns.items():
                row["times"][key]["graph"] = timing.graph_ms(fn).record()
        if k == min(log2s):
            row["launch_probe"] = launch_probe(n, x, fns, log)
        doc["rows"].append(row)
        log(_table(row))
        del fns, outs, x
        torch.cuda.synchronize()
    doc["wall_s"] = time.time() - t0
    return doc


def _table(row: dict) -> str:
    lines = [f"\nn = 2^{row['log2n']}: median us, round 1 / round 2 / graph; x F0 = F0 / this"]
    f0 = row["times"]["cuda F0 fence ticket"]
    base = min(f0["round1"]["median_ms"], f0["round2"]["median_ms"])
    for key, t in row["times"].items():
        r1, r2 = t["round1"]["median_ms"], t["round2"]["median_ms"]
        g = t.get("graph", {}).get("median_ms")
        verdict = row["verdicts"].get(key, "")
        lines.append(
            f"  {key:40} {_us(r1)} {_us(r2)} {_us(g)}  x{base / min(r1, r2):6.3f}  {verdict}"
        )
    return "\n".join(lines)


def main(
    argv: list[str] | None = None, prog: str = "python -m experiments.fastest_ablation"
) -> int:
    p = argparse.ArgumentParser(
        prog=prog, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--json", required=True, help="where to write the results")
    p.add_argument("--log2", nargs="+", type=int, default=list(DEFAULT_LOG2))
    a = p.parse_args(argv)
    from harness.core import device

    if not device.cupy_gpu()[0]:
        print(f"fastest_ablation needs a GPU with CuPy: {device.cupy_gpu()[1]}", file=sys.stderr)
        return 2
    import experiments

    return experiments.finish(ablate(a.log2), a.json, SUITE)


if __name__ == "__main__":
    sys.exit(main())
