"""The axis family's benchmark shape set: (shape, dim) pairs, as data for the benchmark suite.

Where each comes from:
- TRITONBENCH_2D: tritonbench's `sum` operator (tritonbench/operators/sum/operator.py, get_x_vals
  and get_input_iter with --input-dim 2 and --reduce-dim 0 or 1): every (M, N) with M and N in
  TRITONBENCH_DIMS, skipping tensors of 8e9 bytes or more as it does (for float32: M * N * 4),
  each along dim 0 and dim 1. TRITONBENCH_DIMS is its get_dim_vals over sizes range(9, 22, 2):
  2^n for n = 9, 11, ..., 21, and then (n - 1) * (n + 1) for the same n (80, 120, ..., 440: the
  operator's own definition, products of the exponents, not 2^n - 1 and 2^n + 1).
- TRITONBENCH_3D: the same operator with --input-dim 3 --reduce-dim 1, its "large middle dim"
  set: (M, N, K) with M, K in {8, 16} and N = 2^12, 2^14, ..., 2^20, reduced along N. (Its other
  3-D set, every (M, N, K) of TRITONBENCH_DIMS, is left out: the issue asks for the middle-dim
  one.)
- ISSUE: the shapes the issue's table measured, and the ones it names beside tritonbench's:
  (2^20, 64) along both dims, (4096, 4096) along both, (65536, 1024) along dim 0, (8, 2^24) along
  both, (1024, 2^18) along both, (262144, 128) along dim 0, (2^20, 4) along dim 1.
BENCH_SHAPES: all of them, each (shape, dim) once, in that order.
"""

from __future__ import annotations

import math

TRITONBENCH_SIZES = range(9, 22, 2)
TRITONBENCH_DIMS: tuple[int, ...] = tuple(2**n for n in TRITONBENCH_SIZES) + tuple(
    (n - 1) * (n + 1) for n in TRITONBENCH_SIZES
)
# tritonbench's TENSOR_BYTES_LIMIT, applied to float32 (its default dtype)
TENSOR_BYTES_LIMIT = 8e9
FLOAT32_BYTES = 4

Case = tuple[tuple[int, ...], int]


def _fits(shape: tuple[int, ...]) -> bool:
    return math.prod(shape) * FLOAT32_BYTES < TENSOR_BYTES_LIMIT


TRITONBENCH_2D: tuple[Case, ...] = tuple(
    ((m, n), dim)
    for dim in (0, 1)
    for m in TRITONBENCH_DIMS
    for n in TRITONBENCH_DIMS
    if _fits((m, n))
)
TRITONBENCH_3D: tuple[Case, ...] = tuple(
    ((m, n, k), 1) for m in (8, 16) for n in (2**e for e in range(12, 22, 2)) for k in (8, 16)
)
ISSUE: tuple[Case, ...] = (
    ((2**20, 64), 1),
    ((2**20, 64), 0),
    ((4096, 4096), 0),
    ((4096, 4096), 1),
    ((65536, 1024), 0),
    ((8, 2**24), 1),
    ((8, 2**24), 0),
    ((1024, 2**18), 0),
    ((1024, 2**18), 1),
    ((262144, 128), 0),
    ((2**20, 4), 1),
)
BENCH_SHAPES: tuple[Case, ...] = tuple(dict.fromkeys(TRITONBENCH_2D + TRITONBENCH_3D + ISSUE))
