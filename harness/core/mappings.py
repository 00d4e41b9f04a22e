"""Tile mappings: which elements each block (CUDA) / program (Triton) of a launch reads. A Launch
(the catalogue's launch record) is a tile mapping object plus its sizes; both backends derive
their grid from it (docs/architecture.md, docs/development.md). The pass policy (one_pass,
plan_passes): docs/correctness.md#how-a-variant-reduces-any-n. The reproducible family's fixed
chunks, a function of n only, are REPRODUCIBLE's geometry (chunk_size, chunk_count, ...).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from typing import Any, ClassVar

from harness.core import device, dtypes

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


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def tree_depth(width: int) -> int:
    """Levels of an adjacent-pair tree over `width` values (0 for one)."""
    return math.ceil(math.log2(width)) if width > 1 else 0


# The reproducible family's fixed decomposition (issue 18): chunk size C(n), chunk count M(n), lanes
# per chunk. The CUDA kernel (cuda_kernels/reproducible.cu) computes the same on the device; the
# Triton kernel and its numpy model (triton_kernels/reproducible.py) and REPRODUCIBLE read it here.
# Changing any constant changes every reproducible result's bits.
LANES = 1024  # double-double accumulators per chunk (every dtype)
C_MIN = 4096  # smallest chunk, elements
# Most chunks (partials) for any n: long chunks amortize each chunk's lane tree, and 512 still give
# every SM several blocks (8192 measured slower: docs/reproducible.md, "The lane trees").
MAX_CHUNKS = 512
TREE_LEVELS = 10  # log2(LANES): levels of each adjacent-pair lane tree


def next_pow2(k: int) -> int:
    return 1 if k <= 1 else 1 << (k - 1).bit_length()


def chunk_size(n: int) -> int:
    """C(n) = max(C_MIN, next_pow2(ceil(n / MAX_CHUNKS))): elements per chunk, a power of two."""
    return max(C_MIN, next_pow2(cdiv(n, MAX_CHUNKS)))


def chunk_count(n: int) -> int:
    """M(n) = ceil(n / C(n)) <= MAX_CHUNKS (0 for n = 0)."""
    return cdiv(n, chunk_size(n))


def lane_steps(n: int) -> int:
    """Elements each lane adds per chunk: C(n) / LANES (a power of two >= 4)."""
    return chunk_size(n) // LANES


def dd_chain_length(n: int) -> int:
    """m(n): the most double-double additions one element passes through: C/LANES lane updates,
    the lane tree, M/LANES updates of the chunk sums (M = ceil(n / C)), their tree."""
    return lane_steps(n) + TREE_LEVELS + cdiv(chunk_count(n), LANES) + TREE_LEVELS


def sm_count() -> int:
    """SM count of the current GPU (the input's: the API makes it current), CPU_SM_COUNT
    without one."""
    if not device.gpu_available():
        return CPU_SM_COUNT
    import torch

    return sm_count_of(torch.cuda.current_device())


@cache
def sm_count_of(index: int) -> int:
    """SM count of GPU `index`, read once per device (two GPUs may differ)."""
    import torch

    return torch.cuda.get_device_properties(index).multi_processor_count


@dataclass(frozen=True)
class Launch:
    """How a variant covers the input: shared by a CUDA stage and its Triton twin."""

    threads: int  # CUDA threads per block = Triton lanes per program (BLOCK)
    mapping: Mapping  # one of MAPPINGS' objects
    # tiles of `threads` elements per block ("tiles", "split-pair"), or the most elements a lane
    # adds per grid-stride step ("single-launch": the error bound's step)
    tiles: int = 1
    max_blocks: int | None = None  # the fixed grid's cap (grid-stride, chunked, single-launch)
    in_place: bool = False  # the first pass writes into its input (given a scratch copy)
    dynamic_smem: bool = False  # the CUDA kernel's shared memory is sized at launch
    per_sm: int = 0  # single-launch: blocks per SM (the grid is read off the device)

    def __post_init__(self) -> None:
        if self.mapping not in MAPPINGS.values():
            raise TypeError(
                f"mapping must be one of the mapping objects {', '.join(MAPPINGS)} "
                f"(harness.core.mappings), got {self.mapping!r}"
            )
        if self.threads < 32 or self.threads > 1024 or self.threads & (self.threads - 1):
            raise ValueError(f"threads must be a power of two in 32..1024, got {self.threads}")
        missing = [f for f in self.mapping.needs if not getattr(self, f)]
        if missing:
            raise ValueError(f"mapping {self.mapping.name!r} needs {' and '.join(missing)}")

    def describe(self) -> str:
        return self.mapping.describe(self)

    def chain_length(self, n: int) -> int:
        """The most additions any element goes through (the error bound: harness.check.verify)."""
        return self.mapping.chain_length(self, n)


@dataclass(frozen=True)
class Mapping:
    """What every mapping answers; the defaults are the multi-pass mappings' answers."""

    name: ClassVar[str]
    one_launch: ClassVar[bool] = False
    cuda_takes_per_thread: ClassVar[bool] = False  # per_thread an argument of the kernel
    triton_takes_per_thread: ClassVar[bool] = False
    needs: ClassVar[tuple[str, ...]] = ()  # the Launch fields the mapping cannot do without
    summary: ClassVar[str] = ""  # describe()'s line, formatted with the Launch's fields

    def grid(self, launch: Launch, n: int) -> Pass:
        _need_n(n)
        return Pass(n, cdiv(n, launch.threads * launch.tiles), launch.tiles)

    def block_of(self, launch: Launch, p: Pass, index: Any) -> Any:
        """The block that reads element `index` (an int or a tensor of them): block b reads
        per_thread adjacent tiles of `threads` elements (tiles, chunked)."""
        return index // (launch.threads * p.per_thread)

    def chain_length(self, launch: Launch, n: int) -> int:
        """Per pass: the thread's serial sum (per_thread additions, the exact add onto the zero
        start counted) plus the block tree (tree_depth(threads) levels, as Triton's tl.sum)."""
        return sum(p.per_thread + tree_depth(launch.threads) for p in plan_passes(launch, n))

    def triton_meta(self, launch: Launch) -> dict[str, int]:
        return {"BLOCK": launch.threads, "num_warps": launch.threads // 32}

    def sum_dtype(self, dtype: str) -> str:
        return dtype

    def describe(self, launch: Launch) -> str:
        return self.summary.format_map(vars(launch))


@dataclass(frozen=True)
class Tiles(Mapping):
    """Block b reads `tiles` adjacent tiles of `threads` elements: [b*T*k, (b+1)*T*k)."""

    name: ClassVar[str] = "tiles"

    def triton_meta(self, launch: Launch) -> dict[str, int]:
        return {**super().triton_meta(launch), "TILES": launch.tiles}

    def describe(self, launch: Launch) -> str:
        what = "1 tile" if launch.tiles == 1 else f"{launch.tiles} adjacent tiles"
        return f"{what} of {launch.threads} per block"


@dataclass(frozen=True)
class SplitPair(Mapping):
    """Block b reads tile b and tile b + gridDim (two halves of the grid's span): a grid-stride
    walk over the two halves (its grid covers n with 2 tiles a block, so there is no third)."""

    name: ClassVar[str] = "split-pair"
    summary: ClassVar[str] = "tile b + tile b+grid of {threads} per block"

    def block_of(self, launch: Launch, p: Pass, index: Any) -> Any:
        return (index // launch.threads) % p.blocks


@dataclass(frozen=True)
class _FixedGrid(Mapping):
    """A grid of at most max_blocks blocks covering n elements, per_thread elements a thread."""

    cuda_takes_per_thread: ClassVar[bool] = True
    needs: ClassVar[tuple[str, ...]] = ("max_blocks",)

    def grid(self, launch: Launch, n: int) -> Pass:
        _need_n(n)
        blocks = min(launch.max_blocks or 1, cdiv(n, launch.threads))
        return Pass(n, blocks, cdiv(n, blocks * launch.threads))


@dataclass(frozen=True)
class GridStride(_FixedGrid):
    """A fixed grid of at most max_blocks; thread t of block b reads b*T + t + i*G*T."""

    name: ClassVar[str] = "grid-stride"
    summary: ClassVar[str] = "{max_blocks} blocks x {threads}, grid-stride"
    block_of = SplitPair.block_of  # split-pair's walk, over as many grid spans as n needs


@dataclass(frozen=True)
class Chunked(_FixedGrid):
    """A fixed grid of at most max_blocks; block b owns per_thread consecutive tiles."""

    name: ClassVar[str] = "chunked"
    summary: ClassVar[str] = "{max_blocks} blocks x {threads}, contiguous chunk per block"
    triton_takes_per_thread: ClassVar[bool] = True

    def grid(self, launch: Launch, n: int) -> Pass:
        per_thread = super().grid(launch, n).per_thread
        # Block b owns per_thread whole tiles; fewer blocks may be needed than the cap.
        return Pass(n, cdiv(n, launch.threads * per_thread), per_thread)


def single_launch_cap(launch: Launch) -> int:
    """Most blocks a "single-launch" kernel runs with on this device."""
    return max(1, min(launch.max_blocks or 1, launch.per_sm * sm_count()))


@dataclass(frozen=True)
class SingleLaunch(Mapping):
    """One launch returns the sum: a persistent grid of min(per_sm * SMs, max_blocks) blocks
    walks the input grid-stride, every lane adding at most `tiles` elements a step, and the last
    block combines the partials (its plan: harness.launch.single_launch)."""

    name: ClassVar[str] = "single-launch"
    one_launch: ClassVar[bool] = True
    needs: ClassVar[tuple[str, ...]] = ("max_blocks", "per_sm")
    summary: ClassVar[str] = (
        "grid >= {per_sm}/SM (<= {max_blocks}) x >= {threads} lanes, one launch"
    )

    def grid(self, launch: Launch, n: int) -> Pass:
        """One launch, one value out. per_thread bounds the busiest lane's serial additions:
        grid-stride steps of `tiles` adds each, plus the scalar head and tail element."""
        _need_n(n)
        steps = cdiv(cdiv(n, launch.threads * launch.tiles), single_launch_cap(launch))
        return Pass(n, 1, steps * launch.tiles + 2)

    def block_of(self, launch: Launch, p: Pass, index: Any) -> Any:
        raise ValueError(
            "a single-launch kernel has no fixed per-block partials (its grid is the device's)"
        )

    def chain_length(self, launch: Launch, n: int) -> int:
        # The lane's serial sum, its block's reduction, then the last block's combine of the
        # partials (at most max_blocks of them spread over >= 32 lanes) and its reduction.
        serial = self.grid(launch, n).per_thread
        final = cdiv(launch.max_blocks or 1, 32) + BLOCK_REDUCE_BOUND
        return serial + BLOCK_REDUCE_BOUND + final

    def triton_meta(self, launch: Launch) -> dict[str, int]:
        raise ValueError(
            "a single-launch Triton kernel's meta-parameters come from its tuner "
            "(harness.launch.single_launch.triton_census_spec, triton_kernels.fastest)"
        )

    def sum_dtype(self, dtype: str) -> str:
        # Its accumulator: float16 / bfloat16 are summed and returned in float32.
        return dtypes.get(dtype).sum_dtype


@dataclass(frozen=True)
class Reproducible(SingleLaunch):
    """Family "reproducible" (docs/reproducible.md): fixed chunks (chunk_size above), a free
    grid. Its own plan (harness.launch.reproducible_plan), so one_launch is False."""

    name: ClassVar[str] = "reproducible"
    one_launch: ClassVar[bool] = False
    summary: ClassVar[str] = f"any grid x {{threads}} threads; {LANES} dd lanes per chunk"

    def grid(self, launch: Launch, n: int) -> Pass:  # per_thread: what a lane adds per chunk
        _need_n(n)
        return Pass(n, 1, lane_steps(n))

    def chain_length(self, launch: Launch, n: int) -> int:
        # Additions on an element's way, as if each rounded like a plain sum (loose but true: the
        # double-double lanes err far less): lane updates, tree, final updates, tree, hi + lo.
        return dd_chain_length(n) + 1


def _need_n(n: int) -> None:
    if n < 1:
        raise ValueError(f"a pass needs n >= 1, got {n}")


TILES = Tiles()
SPLIT_PAIR = SplitPair()
GRID_STRIDE = GridStride()
CHUNKED = Chunked()
SINGLE_LAUNCH = SingleLaunch()
REPRODUCIBLE = Reproducible()
MAPPINGS: dict[str, Mapping] = {
    m.name: m for m in (TILES, SPLIT_PAIR, GRID_STRIDE, CHUNKED, SINGLE_LAUNCH, REPRODUCIBLE)
}


def one_pass(launch: Launch, n: int) -> Pass:
    return launch.mapping.grid(launch, n)


def plan_passes(launch: Launch, n: int) -> list[Pass]:
    """The chain of passes for n elements; the last one has a single block (a one-launch mapping:
    its single pass)."""
    passes = [launch.mapping.grid(launch, n)]
    while passes[-1].blocks > 1:
        passes.append(launch.mapping.grid(launch, passes[-1].blocks))
    return passes
