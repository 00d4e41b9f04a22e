"""Plan, the class every 1-D plan is (plan.make_plan builds them), and the single-launch family's
(fastest): one launch, a workspace of a partial per block and a ticket counter zeroed once (the
last block resets it, so launches and graph replays need no memset, but two launches of one plan
must not run at once on two streams), the sum in the accumulator's dtype (float16 / bfloat16 as
float32, unrounded).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch

from harness.compile import cuda_loader
from harness.core import dtypes, mappings
from harness.core.catalogue import FASTEST_UNROLL, Variant
from harness.core.mappings import Pass
from harness.launch.errors import no_room
from harness.launch.stream import COUNTER_DTYPE as COUNTER_DTYPE  # re-exported
from harness.launch.stream import cupy_view, off_thread, on_torch_stream


@dataclass
class Plan:
    """A variant bound to one input: launch k reads the input (an in-place first pass: its scratch
    copy), then launch k - 1's partials, and writes outs[k]; the last writes the sum."""

    variant: Variant
    dtype: str
    x: torch.Tensor
    outs: list[torch.Tensor]
    launches: list[Callable[[], None]]
    first_blocks: int  # the first launch's grid (blocks / programs)
    passes: list[Pass] = field(default_factory=list)
    scratch: torch.Tensor | None = None
    workspace: list[torch.Tensor] = field(default_factory=list)  # a one-launch kernel's

    @property
    def n(self) -> int:
        return self.x.numel()

    @property
    def launch_count(self) -> int:
        return len(self.launches)

    def restore(self) -> None:
        """Refill the scratch copy an in-place first pass destroys (no-op otherwise)."""
        if self.scratch is not None:
            self.scratch.copy_(self.x)

    def run(self, first_pass_only: bool = False, restore: bool = True) -> torch.Tensor:
        """Launch the passes; returns the buffer that will hold the result. restore=False: timing
        loops refill the scratch copy in their untimed setup, not as the kernel's time."""
        if restore:
            self.restore()
        for launch in self.launches[:1] if first_pass_only else self.launches:
            launch()
        return self.outs[0] if first_pass_only else self.outs[-1]

    def poison(self) -> None:
        """The outputs and a one-launch plan's partials (its workspace but the counter, last)."""
        for o in (*self.outs, *self.workspace[:-1]):
            dtypes.poison_(o)

    def bytes_moved(self, first_pass_only: bool = False) -> int:
        """Each pass's input read once, its partials written once."""
        size = self.x.element_size()
        ps = self.passes[:1] if first_pass_only else self.passes
        return sum((p.n + p.blocks) * size for p in ps)


def on_stream(kern, blocks: int, threads: int, args: tuple, smem: int = 0) -> Callable[[], None]:
    """kern(args) on `blocks` x `threads` (smem: shared bytes) on torch's current stream."""
    grid, block = (blocks,), (threads,)

    def go() -> None:
        with on_torch_stream():
            kern(grid, block, args, shared_mem=smem)

    return go


@dataclass
class FastestPlan(Plan):
    """A one-launch plan: workspace [partials, counter]; its one pass is the whole run."""

    def run(self, first_pass_only: bool = False, restore: bool = True) -> torch.Tensor:
        # nothing to restore: Plan.run's work without its checks (timed per call)
        self.launches[0]()
        return self.outs[0]

    def bytes_moved(self, first_pass_only: bool = False) -> int:
        return (self.n + 1) * self.x.element_size()  # n read, one written


def make_plan(variant: Variant, dtype: str, x: torch.Tensor) -> FastestPlan:
    """cuda/fastest or triton/fastest over x (plan.make_plan has checked the dtype and n)."""
    partials, counter = workspace(variant, dtype, x.device)
    with no_room(f"{variant.id}: no room for its result"):
        out = torch.empty(1, dtype=dtypes.get(dtype).sum_torch, device=x.device)
    if variant.backend == "cuda":
        kern, grid, threads = cuda_kernel(variant, dtype, x.numel())
        launch = on_stream(kern, grid, threads, cuda_args(x, out, partials, counter))
    else:
        from triton_kernels import fastest

        launch, grid = fastest.tuned_launch(dtype, x, out, partials, counter)
    return FastestPlan(variant, dtype, x, [out], [launch], grid, workspace=[partials, counter])


def workspace(
    variant: Variant, dtype: str, device: torch.device, stream_ptr: int | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """max_blocks partials (no grid is larger) and a zeroed counter, by stream.off_thread."""
    slots = variant.launch.max_blocks

    def make() -> tuple[torch.Tensor, torch.Tensor]:
        partials = torch.empty(slots, dtype=dtypes.get(dtype).sum_torch, device=device)
        return partials, torch.zeros(1, dtype=COUNTER_DTYPE, device=device)

    with no_room(f"{variant.id} could not allocate its {slots}-slot workspace"):
        return off_thread(make, device, stream_ptr)


def vector_tiles(dtype: str, n: int, threads: int, unroll: int) -> int:
    """Tiles of `threads` x `unroll` 16-byte vectors that cover n elements of dtype (>= 1)."""
    return max(1, mappings.cdiv(n, threads * unroll * (16 // dtypes.get(dtype).itemsize)))


def cuda_grid(variant: Variant, dtype: str, n: int) -> int:
    """One block per vector tile, at most min(per_sm x SMs, max_blocks)."""
    launch = variant.launch
    tiles = vector_tiles(dtype, n, launch.threads, FASTEST_UNROLL[dtype])
    return min(tiles, mappings.single_launch_cap(launch))


# The small-n path: up to SMALL_MAX_BYTES of input, cuda/fastest launches reduce_fastest_small (one
# block of SMALL_BLOCK threads, no workspace or ticket, 32-bit indices): 32 KiB is one round of 512
# threads x 4 16-byte vectors, every load in flight at once (experiments.small_n_sweep measured it;
# its README has the finding). SMALL_MAX_BYTES = 0 switches the path off.
SMALL_MAX_BYTES = 32 * 1024
SMALL_BLOCK = 512
SMALL_ROUND_BYTES = 32 * 1024  # one round of the small kernel: BLOCK x UNROLL 16-byte vectors


def small_expression(dtype: str, block: int = SMALL_BLOCK) -> str:
    """reduce_fastest_small's instantiation for dtype and `block` threads."""
    unroll = SMALL_ROUND_BYTES // (16 * block)
    return f"reduce_fastest_small<{dtypes.get(dtype).cxx}, {block}, {unroll}>"


def takes_small_path(dtype: str, n: int, max_bytes: int = SMALL_MAX_BYTES) -> bool:
    return n * dtypes.get(dtype).itemsize <= max_bytes


def cuda_kernel(
    variant: Variant, dtype: str, n: int, max_bytes: int = SMALL_MAX_BYTES, block: int = SMALL_BLOCK
):
    """(the CuPy kernel, blocks, threads) of cuda/fastest over n elements: the small-n kernel up to
    max_bytes, else cuda_grid's. Every cuda/fastest launch picks here, so all add in one order."""
    if takes_small_path(dtype, n, max_bytes):
        exprs = tuple(small_expression(d, block) for d in variant.dtypes)  # one module, all dtypes
        mod = cuda_loader.module(variant.source, exprs)
        kern = mod.get_function(small_expression(dtype, block))
        return kern, 1, block
    kern = cuda_loader.kernel(variant, dtype)
    return kern, cuda_grid(variant, dtype, n), variant.launch.threads


def cuda_args(x: torch.Tensor, out: torch.Tensor, *workspace: torch.Tensor) -> tuple:
    """reduce_fastest's (and reduce_reproducible's) arguments: CuPy views, then n."""
    return (*(cupy_view(t) for t in (x, out, *workspace)), np.uint64(x.numel()))
