"""Triton twins: one program per CUDA block, the same tile(s), the same order inside a lane.

Where a CUDA stage differs from the previous one only in what Triton's compiler decides by itself
(shared memory or not, divergence, bank conflicts, unrolling, warp shuffles), the stages share one
twin: `tl.sum` over a tile is all Triton lets you say, and the compiler picks the tree. What Triton
does let you say is which elements a program reads, how many programs there are, and how many
warps run a program (`num_warps`, set to the CUDA block's threads / 32). Those are the kernels here.
"""

import triton
import triton.language as tl


@triton.jit
def adjacent_tiles_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, TILES: tl.constexpr):
    """Program p sums tiles TILES*p .. TILES*p + TILES-1 (TILES adjacent tiles of BLOCK elements).

    TILES = 1 twins stages 0-3 (one tile per block); TILES = 2 twins the first add during load with
    adjacent pairing (000 v4..v6, 002 Reduction 4's third plan); TILES = 4 twins seed 004's
    four-block unroll. The lane-wise add of the tiles is the CUDA thread's add during load.
    """
    pid = tl.program_id(0).to(tl.int64)
    lanes = tl.arange(0, BLOCK)
    base = pid * (TILES * BLOCK)
    offs = base + lanes
    acc = tl.load(x_ptr + offs, mask=offs < n, other=0)
    for t in tl.static_range(1, TILES):
        offs = base + t * BLOCK + lanes
        acc += tl.load(x_ptr + offs, mask=offs < n, other=0)
    tl.store(out_ptr + pid, tl.sum(acc, axis=0))


@triton.jit
def split_pair_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """Program p sums tile p of the first half and tile p of the second half of the grid's span.

    Twins seed 002's Reduction 4 plans A/B and its Reductions 5 and 6 (as intended: the second
    element sits gridDim * BLOCK after the first).
    """
    pid = tl.program_id(0).to(tl.int64)
    half = tl.num_programs(0).to(tl.int64) * BLOCK
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    a = tl.load(x_ptr + offs, mask=offs < n, other=0)
    b = tl.load(x_ptr + offs + half, mask=offs + half < n, other=0)
    tl.store(out_ptr + pid, tl.sum(a + b, axis=0))


@triton.jit
def grid_stride_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """A fixed number of programs; program p reads tiles p, p + G, p + 2G, ... (G programs).

    Twins seed 002's Reductions 7 and 8 (grid-stride loop). The per-lane accumulator is the CUDA
    thread's register (or shared slot) sum; `tl.sum` is the block tree / the shuffles.
    """
    pid = tl.program_id(0).to(tl.int64)
    stride = tl.num_programs(0).to(tl.int64) * BLOCK
    lanes = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=x_ptr.dtype.element_ty)
    for start in range(pid * BLOCK, n, stride):
        offs = start + lanes
        acc += tl.load(x_ptr + offs, mask=offs < n, other=0)
    tl.store(out_ptr + pid, tl.sum(acc, axis=0))


@triton.jit
def chunked_kernel(x_ptr, out_ptr, n, per_thread, BLOCK: tl.constexpr):
    """A fixed number of programs; program p reads the contiguous chunk of per_thread tiles it owns.

    Twins seed 000's v7/v8 indexing (block b owns [b*BLOCK*K, (b+1)*BLOCK*K)).
    """
    pid = tl.program_id(0).to(tl.int64)
    lanes = tl.arange(0, BLOCK)
    base = pid * BLOCK * per_thread
    acc = tl.zeros([BLOCK], dtype=x_ptr.dtype.element_ty)
    for k in range(0, per_thread):
        offs = base + k * BLOCK + lanes
        acc += tl.load(x_ptr + offs, mask=offs < n, other=0)
    tl.store(out_ptr + pid, tl.sum(acc, axis=0))
