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

from harness.catalogue import Launch


@dataclass(frozen=True)
class Pass:
    n: int  # elements in
    blocks: int  # blocks (CUDA) = programs (Triton) = partials out
    per_thread: int  # elements each thread sums serially before the block tree (>= 1)

    def elements_per_block(self, launch: Launch) -> int:
        return launch.threads * self.per_thread


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def one_pass(launch: Launch, n: int) -> Pass:
    if n < 1:
        raise ValueError(f"a pass needs n >= 1, got {n}")
    t = launch.threads
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
    lanes is a tree of the same depth). Used for the float error bound in harness.verify.
    """
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

    if launch.mapping == "tiles":
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
