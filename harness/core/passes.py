"""Pass policy: how a variant turns any n >= 1 into one value.

Every ladder variant reduces its input to one partial per block; the harness then runs the SAME
kernel again over the partials, with the same launch policy, until a single value is left (seed
001's host loop, applied to every stage). The first pass is what the seeds time; the harness times
it separately from the whole chain.

Both backends take their grids from here, so a CUDA stage and its Triton twin see the same tiles.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

from harness.core.catalogue import Launch

# "single-launch" grids without a GPU (interpreted Triton): a small SM count, so CPU tests at
# moderate n take several grid-stride steps and combine several partials.
CPU_SM_COUNT = 2
# Additions one block / program reduction puts on any value in a "single-launch" kernel: at most
# 32 serial adds inside a thread (tl.sum over <= 32 elements per thread; CUDA folds <= 8 vector
# lanes) plus <= 10 tree levels across <= 1024 lanes (shuffles, then across warps).
BLOCK_REDUCE_BOUND = 42


@dataclass(frozen=True)
class Pass:
    n: int  # elements in
    blocks: int  # blocks (CUDA) = programs (Triton) = partials out
    per_thread: int  # elements each thread sums serially before the block tree (>= 1)

    def elements_per_block(self, launch: Launch) -> int:
        return launch.threads * self.per_thread


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


@cache
def sm_count() -> int:
    """SM count of the current GPU (what "single-launch" grids are sized from), or CPU_SM_COUNT
    when kernels run interpreted / there is no GPU."""
    from harness.core import device

    if not device.gpu_available():
        return CPU_SM_COUNT
    import torch

    return torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count


def single_launch_cap(launch: Launch) -> int:
    """Most blocks a "single-launch" kernel runs with on this device."""
    return max(1, min(launch.max_blocks or 1, launch.per_sm * sm_count()))


def one_pass(launch: Launch, n: int) -> Pass:
    if n < 1:
        raise ValueError(f"a pass needs n >= 1, got {n}")
    t = launch.threads
    if launch.mapping == "single-launch":
        # One pass, one value out. per_thread bounds the serial additions of the busiest lane:
        # grid-stride steps over tiles of threads x tiles elements, `tiles` adds each, plus the
        # scalar head and tail element (see cuda_kernels/fastest.cu, triton_kernels/fastest.py).
        steps = cdiv(cdiv(n, t * launch.tiles), single_launch_cap(launch))
        return Pass(n, 1, steps * launch.tiles + 2)
    if launch.mapping in ("tiles", "split-pair"):
        return Pass(n, cdiv(n, t * launch.tiles), launch.tiles)
    blocks = min(launch.max_blocks or 1, cdiv(n, t))
    per_thread = cdiv(n, blocks * t)
    if launch.mapping == "chunked":
        # Block b owns per_thread whole tiles; fewer blocks may be needed than the cap.
        blocks = cdiv(n, t * per_thread)
    return Pass(n, blocks, per_thread)


def plan_passes(launch: Launch, n: int) -> list[Pass]:
    """The chain of passes for n elements; the last one has a single block."""
    passes = [one_pass(launch, n)]
    while passes[-1].blocks > 1:
        passes.append(one_pass(launch, passes[-1].blocks))
    return passes


def chain_length(launch: Launch, n: int) -> int:
    """Upper bound on the additions any input element goes through on its way to the result.

    Per pass: the thread's serial sum (per_thread additions, counting the add onto the zero start,
    which is exact) plus the block tree (ceil(log2 threads) levels; Triton's tl.sum over BLOCK
    lanes is a tree of the same depth). Used for the float error bound in harness.check.verify.
    """
    if launch.mapping == "single-launch":
        # The lane's serial sum, its block's reduction, then the last block's combine of the
        # partials (at most max_blocks of them spread over >= 32 lanes) and its reduction.
        serial = one_pass(launch, n).per_thread
        final = cdiv(launch.max_blocks or 1, 32) + BLOCK_REDUCE_BOUND
        return serial + BLOCK_REDUCE_BOUND + final
    depth = math.ceil(math.log2(launch.threads))
    return sum(p.per_thread + depth for p in plan_passes(launch, n))


def block_elements(launch: Launch, p: Pass, block: int) -> list[range]:
    """The input indices block `block` of pass `p` reads, as ranges (clipped to [0, p.n)).

    A pure-Python statement of each mapping, mirroring the CUDA index arithmetic; the CPU tests
    check that the blocks of every pass partition [0, n) exactly once.
    """
    t, n = launch.threads, p.n
    out: list[range] = []

    def tile(start: int) -> None:
        lo, hi = max(0, start), min(n, start + t)
        if lo < hi:
            out.append(range(lo, hi))

    if launch.mapping == "single-launch":  # one launch reads everything (its blocks: the kernel)
        out.append(range(0, n))
    elif launch.mapping == "tiles":
        for k in range(launch.tiles):
            tile((block * launch.tiles + k) * t)
    elif launch.mapping == "split-pair":
        tile(block * t)
        tile(block * t + p.blocks * t)
    elif launch.mapping == "grid-stride":
        for start in range(block * t, n, p.blocks * t):
            tile(start)
    else:  # chunked
        for k in range(p.per_thread):
            tile((block * p.per_thread + k) * t)
    return out
