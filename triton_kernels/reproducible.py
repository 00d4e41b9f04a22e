"""triton/reproducible: a sum whose bits depend only on the input's values and n (issue 18).

The design (the same in cuda_kernels/reproducible.cu and in `reference_sum` below, bit for bit):
- Fixed chunks. C(n) = max(C_MIN, next_pow2(ceil(n / MAX_CHUNKS))), a function of n only;
  M = ceil(n / C) chunks (<= MAX_CHUNKS); chunk c is the elements [c*C, min(c*C + C, n)).
- Fixed lanes. LANES = 1024 double-double accumulators per chunk: lane l visits the elements
  c*C + l + LANES*j, j = 0 .. C/LANES - 1, in j order, starting from (+0.0, +0.0). An element past
  n is read as +0.0 and the update still done (never skipped), so every backend performs the same
  operations. The update is Knuth's TwoSum in float64, in this order:
      v = double(x); s = hi + v; bp = s - hi; e = (hi - (s - bp)) + (v - bp); lo = lo + e; hi = s
- Fixed trees. The 1024 lanes of a chunk are combined by adjacent pairs, level by level
  (node[i] = dd_add(node[2i], node[2i+1]), 10 levels) into the chunk partial (hi, lo), stored as
  two float64 arrays. A final pass gives lane l the partials l + LANES*j in j order
  (acc = dd_add(acc, P), from (0, 0); a missing partial is (0, 0), added all the same), then the
  same lane tree. Result: float32(hi + lo) if hi is finite, else float32(hi) (float64 input:
  float64). dd_add(a, b), a the lower index: s = a.hi + b.hi; bp = s - a.hi;
  e = (a.hi - (s - bp)) + (b.hi - bp); e = e + (a.lo + b.lo); hi = s + e; lo = e - (hi - s);
  and (hi, lo) = (s, 0.0) when s is not finite.
- Why the bits depend only on the values and n: every addition above, its operands and its order
  are fixed by n (C, M, the lane of each element, the trees); the grid only decides WHICH program
  computes a chunk's partial, never how. So neither the GPU, its SM count, the grid, the stream nor
  the run changes the result; there is no tuner (the grid is a free launch parameter: the tests
  sweep it).
- Why CUDA equals Triton (and this numpy model) bit for bit: each is the same sequence of IEEE
  binary64 additions and subtractions (round to nearest even), plus exact widenings and one final
  rounding to float32. There is no multiplication, so no fused multiply-add can be formed, and
  neither compiler runs with fast-math, so nothing is reassociated. The finiteness test reads the
  exponent bits, not a comparison a compiler could fold.
- NaN / Inf: a lane that meets an infinity or NaN gets a non-finite hi (its lo may become NaN:
  inf - inf), and hi stays non-finite from there on; dd_add then keeps s = a.hi + b.hi with lo = 0,
  so the result is what a plain sum gives: NaN if any NaN or both infinities, else the infinity.
- Accuracy: faithful rounding of the float32 result below a condition-number limit (the accuracy
  engineer's harness/check/exact.py states it); the double-double error is far below half a float32
  ulp for ordinary data.

The kernels: `reproducible_chunks_kernel` (phase 1, persistent: program p takes chunks p, p + G,
...; BLOCK = LANES, the j loop inside) and `reproducible_final_kernel` (phase 2, one program over
the partials). Two launches; the bits do not depend on it. Imports harness.core only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import triton
import triton.language as tl

from harness.core.mappings import LANES, chunk_count, chunk_size

if TYPE_CHECKING:
    import torch

# phase 1: 1024 lanes over 64 threads (16 lanes each). Measured on an H100 (reproducible_sweep,
# results/nvidia-h100/repro-sweep.txt): 2 warps 0.72-0.98x the better of CUB and torch.sum at
# 2^21..2^30, 4 warps 0.61-0.91x, 8 warps 0.44-0.84x: fewer threads, more lanes each, fewer
# shared-memory levels in the lane tree.
NUM_WARPS = 2
NUM_STAGES = 3  # phase 1 (measured: 1-4 all alike on an H100; the loads wait on the chains)
# Phase 1: rows per iteration loaded as one tile before their updates. With one row (4 KB) per
# program and 512 programs only ~2 MB were in flight and the fp64 chains waited on memory
# (0.63-0.87x the best peer on an H100); UNROLL rows put UNROLL times as much in flight.
UNROLL = 4


# ---------------------------------------------------------------------------------------------
# The numpy model: the bit oracle on the CPU.


def _dd_add(ahi, alo, bhi, blo):
    """dd_add, vectorized. The same lines as _dd_add_tl below on purpose: this is the model the
    kernels are checked against, written out, not shared with them."""
    s = ahi + bhi
    bp = s - ahi
    e = (ahi - (s - bp)) + (bhi - bp)
    e = e + (alo + blo)
    hi = s + e
    lo = e - (hi - s)
    fin = np.isfinite(s)
    return np.where(fin, hi, s), np.where(fin, lo, 0.0)


def _tree(hi: np.ndarray, lo: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Adjacent pairs along the last axis, level by level, down to one node."""
    while hi.shape[-1] > 1:
        h = hi.reshape(*hi.shape[:-1], -1, 2)
        lw = lo.reshape(*lo.shape[:-1], -1, 2)
        hi, lo = _dd_add(h[..., 0], lw[..., 0], h[..., 1], lw[..., 1])
    return hi[..., 0], lo[..., 0]


def reference_partials(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The M chunk partials (hi, lo) of x (flat, any float dtype numpy has; bfloat16 data passed
    as its exact float32 values), by the same operations as the kernels, vectorized."""
    x = np.ascontiguousarray(x).reshape(-1)
    n = x.size
    c, m = chunk_size(n), chunk_count(n)
    padded = np.zeros(m * c, dtype=np.float64)
    padded[:n] = x.astype(np.float64)
    xs = padded.reshape(m, c // LANES, LANES)
    hi = np.zeros((m, LANES))
    lo = np.zeros((m, LANES))
    with np.errstate(invalid="ignore", over="ignore"):
        for j in range(c // LANES):
            v = xs[:, j, :]
            s = hi + v
            bp = s - hi
            e = (hi - (s - bp)) + (v - bp)
            lo = lo + e
            hi = s
        return _tree(hi, lo)


def reference_final(phi: np.ndarray, plo: np.ndarray, out_dtype=np.float32):
    """Phase 2 over the partials: lane l adds partials l + LANES*j in j order, then the tree."""
    m = phi.size
    steps = -(-m // LANES)
    ph = np.zeros(steps * LANES)
    pl = np.zeros(steps * LANES)
    ph[:m], pl[:m] = phi, plo
    hi = np.zeros(LANES)
    lo = np.zeros(LANES)
    with np.errstate(invalid="ignore", over="ignore"):
        for j in range(steps):
            part = slice(j * LANES, (j + 1) * LANES)
            hi, lo = _dd_add(hi, lo, ph[part], pl[part])
        h, lw = _tree(hi, lo)
        h, lw = float(h), float(lw)
        return out_dtype(h + lw) if np.isfinite(h) else out_dtype(h)


def reference_sum(x: np.ndarray) -> np.float32 | np.float64:
    """The reproducible sum of x as the kernels compute it, bit for bit: numpy float32 (float64
    for float64 input). n = 0 sums to +0.0."""
    out_dtype = np.float64 if np.asarray(x).dtype == np.float64 else np.float32
    if np.asarray(x).size == 0:
        return out_dtype(0.0)
    return reference_final(*reference_partials(x), out_dtype=out_dtype)


# ---------------------------------------------------------------------------------------------
# The Triton kernels.


@triton.jit
def _finite_tl(s):
    bits = s.to(tl.int64, bitcast=True)
    return (bits & 0x7FF0000000000000) != 0x7FF0000000000000


@triton.jit
def _dd_add_tl(ahi, alo, bhi, blo):
    s = ahi + bhi
    bp = s - ahi
    e = (ahi - (s - bp)) + (bhi - bp)
    e = e + (alo + blo)
    hi = s + e
    lo = e - (hi - s)
    fin = _finite_tl(s)
    return tl.where(fin, hi, s), tl.where(fin, lo, 0.0)


@triton.jit
def _pair_level(hi, lo, HALF: tl.constexpr):
    """One tree level: [2*HALF] nodes -> [HALF], node i = dd_add(node 2i, node 2i+1)."""
    h0, h1 = tl.split(tl.reshape(hi, [HALF, 2]))
    l0, l1 = tl.split(tl.reshape(lo, [HALF, 2]))
    return _dd_add_tl(h0, l0, h1, l1)


@triton.jit
def _lane_tree(hi, lo):
    """The 1024 lanes by adjacent pairs, 10 levels: two [1] tensors."""
    hi, lo = _pair_level(hi, lo, 512)
    hi, lo = _pair_level(hi, lo, 256)
    hi, lo = _pair_level(hi, lo, 128)
    hi, lo = _pair_level(hi, lo, 64)
    hi, lo = _pair_level(hi, lo, 32)
    hi, lo = _pair_level(hi, lo, 16)
    hi, lo = _pair_level(hi, lo, 8)
    hi, lo = _pair_level(hi, lo, 4)
    hi, lo = _pair_level(hi, lo, 2)
    hi, lo = _pair_level(hi, lo, 1)
    return hi, lo


@triton.jit
def _two_sum_update(hi, lo, v):
    # The design's TwoSum, as written. The CUDA twin gets the same e by Fast2Sum on the operands
    # ordered by magnitude (fewer float64 operations, the same bits); written that way here it
    # was slower (H100 and H200, 2^20..2^30: bfloat16 up to 16% slower), so Triton keeps TwoSum.
    s = hi + v
    bp = s - hi
    e = (hi - (s - bp)) + (v - bp)
    return s, lo + e


@triton.jit
def _update_rows(hi, lo, v, LANES: tl.constexpr, UNROLL: tl.constexpr):
    """The UNROLL rows of the tile v ([LANES, UNROLL] float64, column u = step j + u) into the
    lanes, in u = 0 .. UNROLL-1 order: the same chained updates as one row per step. tl.split
    halves the last axis by parity, so after reshaping u = 2i + k (or 4i + 2k + m) the columns
    come out by parity and are put back in u order by hand."""
    if UNROLL == 1:
        hi, lo = _two_sum_update(hi, lo, tl.reshape(v, [LANES]))
    elif UNROLL == 2:
        v0, v1 = tl.split(v)
        hi, lo = _two_sum_update(hi, lo, v0)
        hi, lo = _two_sum_update(hi, lo, v1)
    elif UNROLL == 4:
        even, odd = tl.split(tl.reshape(v, [LANES, 2, 2]))  # u = 2i + k: k = 0 / k = 1
        v0, v2 = tl.split(even)
        v1, v3 = tl.split(odd)
        hi, lo = _two_sum_update(hi, lo, v0)
        hi, lo = _two_sum_update(hi, lo, v1)
        hi, lo = _two_sum_update(hi, lo, v2)
        hi, lo = _two_sum_update(hi, lo, v3)
    else:
        tl.static_assert(UNROLL == 8, "UNROLL: 1, 2, 4 or 8")
        even, odd = tl.split(tl.reshape(v, [LANES, 2, 2, 2]))  # u = 4i + 2k + m: m = 0 / 1
        e0, e1 = tl.split(even)  # u = 4i + 0, 4i + 2
        o0, o1 = tl.split(odd)  # u = 4i + 1, 4i + 3
        v0, v4 = tl.split(e0)
        v2, v6 = tl.split(e1)
        v1, v5 = tl.split(o0)
        v3, v7 = tl.split(o1)
        hi, lo = _two_sum_update(hi, lo, v0)
        hi, lo = _two_sum_update(hi, lo, v1)
        hi, lo = _two_sum_update(hi, lo, v2)
        hi, lo = _two_sum_update(hi, lo, v3)
        hi, lo = _two_sum_update(hi, lo, v4)
        hi, lo = _two_sum_update(hi, lo, v5)
        hi, lo = _two_sum_update(hi, lo, v6)
        hi, lo = _two_sum_update(hi, lo, v7)
    return hi, lo


@triton.jit
def _load_rows(x_ptr, base, j, n, LANES: tl.constexpr, UNROLL: tl.constexpr, MASKED: tl.constexpr):
    """Steps j .. j + UNROLL-1 of the lanes at base as one [LANES, UNROLL] tile, float64: element
    base[l] + (j + u) * LANES, contiguous along l (vector loads); past n reads +0.0 (MASKED)."""
    offs = base[:, None] + (j + tl.arange(0, UNROLL)[None, :]) * LANES
    v = tl.load(x_ptr + offs, mask=offs < n, other=0) if MASKED else tl.load(x_ptr + offs)
    return v.to(tl.float64)


@triton.jit
def _chunk_lanes(
    x_ptr, base, steps, n, LANES: tl.constexpr, UNROLL: tl.constexpr, MASKED: tl.constexpr
):
    """One chunk's lanes (hi, lo) over its `steps` rows in j order. UNROLL rows per iteration, so
    UNROLL x 4 KB (float32) per program are in flight while the float64 chains wait; the rows
    past the last multiple of UNROLL (steps is a power of two >= 4: only when UNROLL = 8 and
    steps = 4) one at a time. The grouping changes which loads are in flight, never the order of
    the updates: the bits are those of one row per step."""
    hi = tl.zeros([LANES], dtype=tl.float64)
    lo = tl.zeros([LANES], dtype=tl.float64)
    grouped = steps // UNROLL * UNROLL
    for j in range(0, grouped, UNROLL):
        v = _load_rows(x_ptr, base, j, n, LANES, UNROLL, MASKED)
        hi, lo = _update_rows(hi, lo, v, LANES, UNROLL)
    for j in range(grouped, steps):
        v = _load_rows(x_ptr, base, j, n, LANES, 1, MASKED)
        hi, lo = _update_rows(hi, lo, v, LANES, 1)
    return hi, lo


@triton.jit(do_not_specialize=["n", "steps", "full_chunks", "chunks"])
def reproducible_chunks_kernel(
    x_ptr,  # n elements (any alignment)
    phi_ptr,  # chunks float64: the partials' hi
    plo_ptr,  # chunks float64: the partials' lo
    n,
    steps,  # C(n) / LANES (the chunk is steps * LANES: divisible by LANES, so vector loads)
    full_chunks,  # n // C: chunks with no element past n
    chunks,  # M(n)
    LANES: tl.constexpr,
    UNROLL: tl.constexpr,  # rows (steps) loaded per iteration as one tile: 1, 2, 4 or 8
):
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    lanes = tl.arange(0, LANES)
    one = tl.arange(0, 1)
    zero64 = pid.to(tl.int64) * 0  # 64-bit element offsets (n may pass 2^31)
    chunk = steps * LANES
    for c in range(pid, full_chunks, nprog):  # whole chunks: no mask
        base = (zero64 + c) * chunk + lanes
        hi, lo = _chunk_lanes(x_ptr, base, steps, n, LANES, UNROLL, False)
        hi, lo = _lane_tree(hi, lo)
        tl.store(phi_ptr + c + one, hi)
        tl.store(plo_ptr + c + one, lo)
    # The last chunk, when it runs past n: its owner in the same round-robin, masked loads (+0.0).
    owner = tl.where(chunks > full_chunks, full_chunks % nprog, -1)
    if pid == owner:
        base = (zero64 + full_chunks) * chunk + lanes
        hi, lo = _chunk_lanes(x_ptr, base, steps, n, LANES, UNROLL, True)
        hi, lo = _lane_tree(hi, lo)
        tl.store(phi_ptr + full_chunks + one, hi)
        tl.store(plo_ptr + full_chunks + one, lo)


@triton.jit(do_not_specialize=["chunks"])
def reproducible_final_kernel(
    phi_ptr, plo_ptr, out_ptr, chunks, LANES: tl.constexpr, OUT: tl.constexpr
):
    lanes = tl.arange(0, LANES)
    hi = tl.zeros([LANES], dtype=tl.float64)
    lo = tl.zeros([LANES], dtype=tl.float64)
    for start in range(0, chunks, LANES):
        idx = start + lanes
        bhi = tl.load(phi_ptr + idx, mask=idx < chunks, other=0.0)
        blo = tl.load(plo_ptr + idx, mask=idx < chunks, other=0.0)
        hi, lo = _dd_add_tl(hi, lo, bhi, blo)
    hi, lo = _lane_tree(hi, lo)
    res = tl.where(_finite_tl(hi), (hi + lo).to(OUT), hi.to(OUT))
    tl.store(out_ptr + tl.arange(0, 1), res)


# ---------------------------------------------------------------------------------------------
# The wrapper (what harness.launch.reproducible_plan calls).


def launch(
    x: torch.Tensor,
    out: torch.Tensor,
    phi: torch.Tensor,
    plo: torch.Tensor,
    programs: int,
    num_warps: int = NUM_WARPS,
    num_stages: int = NUM_STAGES,
    unroll: int = UNROLL,
) -> Callable[[], None]:
    """Both launches over the flat x (n >= 1) into out (one float32 / float64), with the
    partials phi / plo (>= M(n) float64 each) and a phase-1 grid of `programs`. num_warps,
    num_stages and unroll (1, 2, 4 or 8 rows per iteration) never change the bits."""
    if unroll not in (1, 2, 4, 8):
        raise ValueError(f"unroll: 1, 2, 4 or 8 rows per iteration, got {unroll}")
    scalars = chunk_scalars(x.numel())
    m = scalars[-1]
    args = (x, phi, plo, *scalars)
    out_tl = tl.float64 if out.dtype.itemsize == 8 else tl.float32
    grid = (max(1, min(programs, m)),)

    def go() -> None:
        reproducible_chunks_kernel[grid](*args, **chunk_meta(unroll, num_warps, num_stages))
        reproducible_final_kernel[(1,)](phi, plo, out, m, **final_meta(out_tl))

    return go


def chunk_meta(unroll: int = UNROLL, num_warps: int = NUM_WARPS, num_stages: int = NUM_STAGES):
    """The chunk kernel's constexprs and launch options (launch's; the plan cache's bound launch
    compiles the same)."""
    return {"LANES": LANES, "UNROLL": unroll, "num_warps": num_warps, "num_stages": num_stages}


def final_meta(out_tl) -> dict:
    return {"LANES": LANES, "OUT": out_tl, "num_warps": 8}


def chunk_scalars(n: int) -> tuple[int, int, int, int]:
    """The chunk kernel's arguments after its pointers: n, steps, full chunks, chunks M(n)."""
    c = chunk_size(n)
    return n, c // LANES, n // c, chunk_count(n)


def triton_census_spec(dtype: str) -> dict:
    """What `reduce-ladder inspect` compiles for triton/reproducible: phase 1 (the chunk kernel,
    all of the input's traffic), its arguments as `launch` passes them (x in the input dtype at
    any alignment, the partials float64 torch allocations, the scalars int32 below 2^31)."""
    return {
        "kernel": "reproducible_chunks_kernel",
        "args": {
            "x_ptr": (dtype, True),
            "phi_ptr": ("float64", True),
            "plo_ptr": ("float64", True),
            "n": "int32",
            "steps": "int32",
            "full_chunks": "int32",
            "chunks": "int32",
        },
        "meta": chunk_meta(),
    }
