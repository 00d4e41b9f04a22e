"""Kernel-level evidence for benchmarks/FASTEST.md: run cuda/fastest and cupy.sum (CUB) once per
size so that `ncu` can time each kernel alone (no launch gaps) and count what they do.

    ncu --clock-control none --metrics gpu__time_duration.sum,dram__bytes_read.sum,\
launch__grid_size,launch__block_size python benchmarks/ncu_fastest.py [--int32] 2^12 2^16 2^20

Each size runs a warm-up pair first (compilation, CUB's plan) and then the profiled pair inside
an NVTX range named after the size.
"""

from __future__ import annotations

import sys

import cupy
import torch

import harness
from harness.core.sizes import parse_size


def main(argv: list[str]) -> int:
    as_int = "--int32" in argv
    sizes = [parse_size(a) for a in argv if a != "--int32"] or [2**12, 2**16, 2**20]
    for n in sizes:
        x = torch.randint(0, 100, (n,), dtype=torch.int32, device="cuda")
        x = x if as_int else x.float()
        a = cupy.from_dlpack(x)
        with cupy.cuda.Device():
            cupy._core.set_routine_accelerators(["cub"])
        for _ in range(2):  # warm-up, then the profiled pair
            s1 = harness.reduce_sum(x, "cuda/fastest")
            s2 = a.sum(dtype=a.dtype)
        torch.cuda.synchronize()
        print(f"n={n}: fastest {float(s1)} cub {float(s2)}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
