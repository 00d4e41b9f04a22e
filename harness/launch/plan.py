"""Plans: a variant bound to one input tensor, with its buffers and launch closures made once, so
timing loops measure launches, not allocation or Python setup. Everything here works on torch
tensors; CUDA kernels see the same memory through zero-copy CuPy views (DLPack).

make_plan(variant, x) is the one entry point. It checks the input against the record, then asks
the variant's tile mapping: a multi-pass mapping gets this module's Plan (the same kernel again
over the partials until one is left); a one-launch mapping gets harness.launch.single_launch's
plan. Both answer the ReductionPlan protocol below, which is all callers use.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import torch

from harness.compile import cuda_loader
from harness.core import dtypes
from harness.core.catalogue import MAX_N_32BIT, Variant
from harness.core.mappings import REPRODUCIBLE
from harness.core.passes import Pass, plan_passes
from harness.launch import reproducible_plan, single_launch
from harness.launch.errors import DeviceMemoryError
from harness.launch.stream import on_torch_stream

__all__ = ["DeviceMemoryError", "Plan", "ReductionPlan", "make_plan"]


class ReductionPlan(Protocol):
    """What every plan offers (the multi-pass Plan here, single_launch's one-launch plan)."""

    variant: Variant
    dtype: str
    x: torch.Tensor
    outs: list[torch.Tensor]  # the output buffers; run() returns one of them

    @property
    def n(self) -> int: ...
    @property
    def launch_count(self) -> int: ...  # kernel launches per run()
    @property
    def first_blocks(self) -> int: ...  # blocks (programs) of the first launch

    def run(self, first_pass_only: bool = False, restore: bool = True) -> torch.Tensor: ...
    def poison(self) -> None: ...
    def restore(self) -> None: ...
    def bytes_moved(self, first_pass_only: bool = False) -> int: ...


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
    launches: list[Callable[[], None]] = field(default_factory=list)

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
        """Launch the passes (asynchronously); returns the buffer that will hold the result.

        restore=False leaves the scratch copy as it is: timing loops restore it in their untimed
        setup instead, so the copy is not counted as the kernel's time.
        """
        if restore:
            self.restore()
        for launch in self.launches[:1] if first_pass_only else self.launches:
            launch()
        return self.outs[0] if first_pass_only else self.outs[-1]

    def poison(self) -> None:
        for o in self.outs:
            dtypes.poison_(o)

    def bytes_moved(self, first_pass_only: bool = False) -> int:
        """Bytes read plus bytes written (each input read once, each partial written once)."""
        size = self.x.element_size()
        ps = self.passes[:1] if first_pass_only else self.passes
        return sum((p.n + p.blocks) * size for p in ps)


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
    try:
        outs = [torch.empty(p.blocks, dtype=x.dtype, device=x.device) for p in passes]
        scratch = torch.empty_like(x) if launch.in_place else None
    except torch.cuda.OutOfMemoryError as e:
        need = sum(p.blocks for p in passes) * x.element_size()
        if launch.in_place:
            need += x.numel() * x.element_size()
        raise DeviceMemoryError(
            f"{variant.id} needs {need:,} bytes of device memory for its partial sums"
            + (" and the scratch copy its in-place first pass works on" if launch.in_place else "")
            + f"; the allocation failed ({str(e).splitlines()[0]})"
        ) from None
    plan = Plan(variant, dtype, x, passes, outs, scratch)
    inputs = [scratch if scratch is not None else x, *outs[:-1]]
    make = _cuda_launch if variant.backend == "cuda" else _triton_launch
    plan.launches = [
        make(variant, dtype, i, o, p) for i, o, p in zip(inputs, outs, passes, strict=True)
    ]
    return plan


def cuda_pass(variant: Variant, dtype: str, p: Pass, itemsize: int) -> tuple:
    """Pass p of a multi-pass CUDA variant: (the CuPy kernel, blocks, threads, dynamic shared
    memory bytes, its scalar arguments after the two pointers as numpy values). The uncached
    plan and the plan cache (harness.launch.rebind_passes) both launch from here."""
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
    """Pass p of a multi-pass Triton variant as a function of its input and output tensors,
    launched on torch's current stream (Triton's own per-call path)."""
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
    args: tuple = (cupy.from_dlpack(inp), cupy.from_dlpack(out), *scalars)

    def go() -> None:
        with on_torch_stream():
            kern((blocks,), (threads,), args, shared_mem=smem)

    return go


def _triton_launch(
    variant: Variant, dtype: str, inp: torch.Tensor, out: torch.Tensor, p: Pass
) -> Callable[[], None]:
    go = triton_pass(variant, p)
    return lambda: go(inp, out)
