"""The Triton axis fastest's splits: its c3 and r4 kernels over a grid of launch shapes, beside
torch.sum and both fastest pairs, one GPU call.

    python -m experiments.axis_triton_splits [--along columns|rows] [--dtype float32|bfloat16]

For each shape (the axis suite's Triton misses, and shapes it must not lose), device time per
call (harness.core.timing.time_ms: CUDA events, L2 flushed by reading, gated, median) of
torch.sum, cuda/axis-fastest, triton/axis-fastest, then triton_kernels.axis's
columns_vector_kernel (c3: lanes x warps x splits) or rows_split_kernel (r4: warps x tile x
splits) launched directly on every candidate (not through harness.launch.axis_plan, whose
launcher fixes the warps and the r4 tile that this sweep varies). Each candidate's output is
poisoned first and compared exactly with torch.sum on integer-valued data (every partial sum is
an integer far below 2^24: exact in float32 and bfloat16's float32 accumulator); a wrong one is
counted on its line.
A line names the five fastest candidates as `us@(lanes, warps)/splits(programs)` for c3 and
`us@(warps, tile)/splits(programs)` for r4.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

COLUMNS = [(512, 32768), (288, 32768), (360, 32768), (440, 32768), (80, 32768), (2048, 32768),
           (288, 131072), (32768, 512), (32768, 288), (32768, 168), (131072, 80), (131072, 168),
           (131072, 288), (262144, 128), (65536, 1024), (4096, 4096), (1024, 262144),
           (8192, 8192), (2**20, 64), (2048, 80), (512, 512), (8, 2**24)]  # fmt: skip
ROWS = [(80, 32768), (120, 32768), (80, 131072), (80, 8192), (168, 8192), (288, 32768),
        (224, 32768), (4096, 4096), (8, 2**24), (1024, 2**18), (440, 131072)]  # fmt: skip
SIXTEEN_BIT = [(4096, 4096), (65536, 1024), (262144, 128), (1024, 262144), (2**20, 64)]
SPLITS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def column_candidates(columns: int) -> list[tuple[int, int, int]]:
    """(lanes, warps, splits) for c3 over `columns` columns: lanes a power of two from an eighth
    of the widest useful strip (a quad a lane) up to it, 4 or 8 warps with at least one row
    group (lanes <= 32 x warps)."""
    top = min(256, 1 << max(0, cdiv(columns, 4) - 1).bit_length())
    lanes = [1 << k for k in range(9) if top // 8 <= 1 << k <= top]
    return [(la, w, s) for la in lanes for w in (4, 8) if la <= 32 * w for s in SPLITS]


def row_candidates() -> list[tuple[int, int, int]]:
    """(warps, tile, splits) for r4."""
    return [(w, t, s) for w in (4, 8) for t in (2048, 4096, 8192) for s in SPLITS if s <= 64]


def launcher(x, out, along: str, cand: tuple[int, int, int]) -> tuple[Callable[[], None], int, int]:
    """The candidate's kernel over x (2-D, summed along dim 0 for columns, 1 for rows) into out,
    with its workspace; (launch, splits, programs)."""
    import torch

    from triton_kernels import axis as tk

    acc = tk.ACC["int32" if x.dtype == torch.int32 else "float32"]
    part_dtype = torch.int32 if x.dtype == torch.int32 else torch.float32
    m, n = x.shape
    if along == "columns":
        lanes, warps, s = cand
        groups = 32 * warps // lanes
        chunk = cdiv(cdiv(m, s), groups) * groups
        s = cdiv(m, chunk)
        grid = (cdiv(n, 4 * lanes), s)
        part = torch.empty(s * n, dtype=part_dtype, device=x.device)
        count = torch.zeros(grid[0], dtype=torch.int32, device=x.device)
        meta = {"GROUPS": groups, "UNROLL": 8, "WIDTH": 4 * lanes, "EVEN": n % 4 == 0,
                "SPLIT": s > 1, "ACC": acc, "num_warps": warps}  # fmt: skip

        def go() -> None:
            tk.columns_vector_kernel[grid](x, out, part, count, m, n, chunk, **meta)

        return go, s, grid[0] * s
    warps, tile, s = cand
    chunk = cdiv(cdiv(n, s), tile) * tile
    s = cdiv(n, chunk)
    part = torch.empty(m * s, dtype=part_dtype, device=x.device)
    count = torch.zeros(m, dtype=torch.int32, device=x.device)
    meta = {"TILE": tile, "EVEN": n % 4 == 0, "SPLIT": s > 1, "ACC": acc, "num_warps": warps}

    def go() -> None:
        tk.rows_split_kernel[(m, s)](x, out, part, count, n, chunk, **meta)

    return go, s, m * s


def sweep_shape(shape: tuple[int, int], along: str, dtype: str) -> str:
    """One shape's line (module docstring)."""
    import torch

    import harness
    from harness.core import dtypes, timing

    def us(fn: Callable[[], object], reps: int = 40) -> float:
        fn()
        return timing.time_ms(fn, reps=reps).median_ms * 1e3

    dim = 0 if along == "columns" else 1
    tdt = dtypes.get(dtype).torch
    x = torch.randint(-8, 8, shape, device="cuda").to(tdt)
    golden = torch.sum(x.float(), dim=dim).to(tdt)
    torch_us = us(lambda: torch.sum(x, dim=dim))
    cuda_us = us(lambda: harness.reduce_sum(x, "cuda/axis-fastest", dim=dim))
    triton_us = us(lambda: harness.reduce_sum(x, "triton/axis-fastest", dim=dim))
    out = torch.empty(golden.numel(), dtype=tdt, device="cuda")
    cands = column_candidates(shape[1]) if along == "columns" else row_candidates()
    timed, seen, wrong = [], set(), 0
    for cand in cands:
        go, s, programs = launcher(x, out, along, cand)
        if (cand[:2], s) in seen:
            continue  # a split count rounded to one already timed
        seen.add((cand[:2], s))
        dtypes.poison_(out)
        go()
        ok = torch.equal(out.float(), golden.float())
        wrong += not ok
        timed.append((us(go, reps=25), cand[:2], s, programs, ok))
    timed.sort()
    best = " ".join(f"{t:.1f}@{c}/{s}({p}){'' if ok else '!WRONG'}" for t, c, s, p, ok in timed[:5])
    return (
        f"{dtype:8s} {shape!s:16s} d{dim} torch {torch_us:7.1f} CUDA {cuda_us:7.1f} "
        f"TRI {triton_us:7.1f} T/C {cuda_us / triton_us:.2f} best {timed[0][0]:7.1f} "
        f"({cuda_us / timed[0][0]:.2f}x CUDA) wrong={wrong} | {best}"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m experiments.axis_triton_splits",
                                 description=__doc__.split("\n\n")[0])  # fmt: skip
    ap.add_argument("--along", choices=("columns", "rows"), default="columns")
    ap.add_argument("--dtype", choices=("float32", "bfloat16"), default="float32")
    args = ap.parse_args(argv)
    if args.along == "rows" and args.dtype != "float32":
        ap.error("the rows sweep is float32 only")
    from harness.core import device

    ok, why = device.torch_gpu()
    if not ok:
        print(f"needs an NVIDIA GPU: {why}", file=sys.stderr)
        return 2
    shapes = COLUMNS if args.along == "columns" else ROWS
    if args.dtype != "float32":
        shapes = [s for s in shapes if s in SIXTEEN_BIT]
    wrong = 0
    for shape in shapes:
        line = sweep_shape(shape, args.along, args.dtype)
        wrong += "wrong=0" not in line
        print(line, flush=True)
    return 1 if wrong else 0
