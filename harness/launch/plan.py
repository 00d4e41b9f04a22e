"""Plans: a variant bound to one input, buffers and launch closures made once, so timing loops
measure launches, not allocation or Python setup; every launch queues on torch's current stream.
make_plan checks the input, then the mapping picks the plan (this module's multi-pass Plan,
single_launch's, reproducible_plan's); all answer one interface (ReductionPlan): variant, dtype,
x, outs, n, launch_count, first_blocks, run(first_pass_only, restore), poison, restore, bytes_moved.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import torch

from harness.compile import cuda_loader
from harness.core import dtypes
from harness.core.catalogue import MAX_N_32BIT, Variant
from harness.core.mappings import REPRODUCIBLE
from harness.core.passes import Pass, plan_passes
from harness.launch import reproducible_plan, single_launch
from harness.launch.errors import DeviceMemoryError, no_room

__all__ = ["DeviceMemoryError", "Plan", "ReductionPlan", "make_plan"]


@dataclass
class Plan:
    """A multi-pass plan: launch k reads pass k's input (the input, then the partials of launch
    k - 1) and writes outs[k]; the last pass writes a single value."""

    variant: Variant
    dtype: str
    x: torch.Tensor
    passes: list[Pass]
    outs: list[torch.Tensor]
    scratch: torch.Tensor | None
    launches: list[Callable[[], None]]

    @property
    def n(self) -> int:
        return self.x.numel()

    @property
    def launch_count(self) -> int:
        return len(self.passes)

    @property
    def first_blocks(self) -> int:
        return self.passes[0].blocks

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
        for o in self.outs:
            dtypes.poison_(o)

    def bytes_moved(self, first_pass_only: bool = False) -> int:
        """Each pass's input read once, its partials written once."""
        size = self.x.element_size()
        ps = self.passes[:1] if first_pass_only else self.passes
        return sum((p.n + p.blocks) * size for p in ps)


ReductionPlan = Plan | single_launch.FastestPlan  # ReproduciblePlan is a FastestPlan


def make_plan(variant: Variant, x: torch.Tensor) -> ReductionPlan:
    """`variant` bound to the flat tensor x: buffers allocated, launches prepared, nothing run."""
    if variant.launch is None:
        raise ValueError(f"{variant.id} has no launch policy (a peer is not run through a plan)")
    dtype = dtypes.name_of(x.dtype)
    if dtype not in variant.dtypes:
        raise ValueError(
            f"{variant.id} supports {', '.join(variant.dtypes)}; got {dtype} "
            f"(variants for {dtype}: reduce-ladder list --dtype {dtype})"
        )
    n = x.numel()
    if n < 1:
        raise ValueError("the ladder kernels need n >= 1 (the harness handles n = 0 itself)")
    if n > variant.max_n:
        raise ValueError(
            f"{variant.id} indexes with 32-bit integers as its seed does and accepts at most "
            f"n = {variant.max_n:,} elements; got {n:,}"
        )
    if variant.launch.mapping is REPRODUCIBLE:  # family "reproducible": a plan of its own
        return reproducible_plan.make_plan(variant, dtype, x)
    if variant.launch.mapping.one_launch:
        return single_launch.make_plan(variant, dtype, x)
    return _multi_pass_plan(variant, dtype, x)


def _multi_pass_plan(variant: Variant, dtype: str, x: torch.Tensor) -> Plan:
    launch = variant.launch
    passes = plan_passes(launch, x.numel())
    with no_room(f"{variant.id} needs {need(variant, passes, x)}; the allocation failed"):
        outs = [torch.empty(p.blocks, dtype=x.dtype, device=x.device) for p in passes]
        scratch = torch.empty_like(x) if launch.in_place else None
    inputs = [scratch if scratch is not None else x, *outs[:-1]]
    cuda = variant.backend == "cuda"
    launches = [
        _cuda_launch(variant, dtype, i, o, p) if cuda else partial(triton_pass(variant, p), i, o)
        for i, o, p in zip(inputs, outs, passes, strict=True)
    ]
    return Plan(variant, dtype, x, passes, outs, scratch, launches)


def need(variant: Variant, passes: list[Pass], x: torch.Tensor) -> str:
    """What a multi-pass plan (or cached launch) allocates, for its DeviceMemoryError."""
    in_place = variant.launch.in_place
    need = (sum(p.blocks for p in passes) + (x.numel() if in_place else 0)) * x.element_size()
    scratch = " and the scratch copy its in-place first pass works on" if in_place else ""
    return f"{need:,} bytes of device memory for its partial sums{scratch}"


def cuda_pass(variant: Variant, dtype: str, p: Pass, itemsize: int) -> tuple:
    """Pass p of a multi-pass CUDA variant, for the plan and rebind_passes alike: (the CuPy kernel,
    blocks, threads, dynamic shared memory bytes, the scalars after the two pointers, numpy's)."""
    import numpy as np

    launch = variant.launch
    # Seed 001's kernels take a 64-bit n (max_n past 2^31); the ladder's seed kernels a 32-bit one.
    size_t = np.uint64 if variant.max_n > MAX_N_32BIT else np.uint32
    scalars: tuple = (size_t(p.n),)
    if launch.mapping.cuda_takes_per_thread:
        scalars += (np.uint32(p.per_thread),)
    smem = launch.threads * itemsize if launch.dynamic_smem else 0
    return cuda_loader.kernel(variant, dtype), p.blocks, launch.threads, smem, scalars


def triton_pass(variant: Variant, p: Pass) -> Callable[[torch.Tensor, torch.Tensor], None]:
    """Pass p of a multi-pass Triton variant as a function of its input and output tensors."""
    from triton_kernels import tiles

    fn = getattr(tiles, variant.kernel)
    launch = variant.launch
    grid, n, meta = (p.blocks,), p.n, launch.mapping.triton_meta(launch)
    if launch.mapping.triton_takes_per_thread:
        return lambda inp, out: fn[grid](inp, out, n, p.per_thread, **meta)
    return lambda inp, out: fn[grid](inp, out, n, **meta)


def _cuda_launch(
    variant: Variant, dtype: str, inp: torch.Tensor, out: torch.Tensor, p: Pass
) -> Callable[[], None]:
    import cupy

    kern, blocks, threads, smem, scalars = cuda_pass(variant, dtype, p, inp.element_size())
    args = (cupy.from_dlpack(inp), cupy.from_dlpack(out), *scalars)
    return single_launch.on_stream(kern, blocks, threads, args, smem)
