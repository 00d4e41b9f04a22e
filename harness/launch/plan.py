"""Run a variant: build its plan (passes, buffers, launch closures) and execute it.

A Plan binds one variant to one input tensor. Its buffers and launch closures are made once, so
timing loops measure launches, not allocation or Python setup. Everything here works on torch
tensors; CUDA kernels see the same memory through zero-copy CuPy views (DLPack).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from harness.core import dtypes
from harness.core.catalogue import MAX_N_32BIT, Variant
from harness.core.passes import Pass, plan_passes
from harness.launch.stream import on_torch_stream


class DeviceMemoryError(MemoryError):
    """The GPU has too little free memory for a variant's buffers; nothing was launched."""


@dataclass
class Plan:
    variant: Variant
    dtype: str
    x: torch.Tensor
    passes: list[Pass]
    outs: list[torch.Tensor]
    scratch: torch.Tensor | None
    launches: list[Callable[[], None]] = field(default_factory=list)
    # "single-launch" variants: partials + counter, zeroed once here (harness.launch.single_launch)
    workspace: list[torch.Tensor] = field(default_factory=list)

    @property
    def n(self) -> int:
        return self.x.numel()

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


def make_plan(variant: Variant, x: torch.Tensor) -> Plan:
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
    passes = plan_passes(variant.launch, n)
    if variant.launch.mapping == "single-launch":
        from harness.launch import single_launch

        return single_launch.make_plan(Plan, variant, dtype, x, passes)
    try:
        outs = [torch.empty(p.blocks, dtype=x.dtype, device=x.device) for p in passes]
        scratch = torch.empty_like(x) if variant.launch.in_place else None
    except torch.cuda.OutOfMemoryError as e:
        need = sum(p.blocks for p in passes) * x.element_size()
        if variant.launch.in_place:
            need += x.numel() * x.element_size()
        raise DeviceMemoryError(
            f"{variant.id} needs {need:,} bytes of device memory for its partial sums"
            + (
                " and the scratch copy its in-place first pass works on"
                if variant.launch.in_place
                else ""
            )
            + f"; the allocation failed ({str(e).splitlines()[0]})"
        ) from None
    plan = Plan(variant, dtype, x, passes, outs, scratch)
    inputs = [scratch if scratch is not None else x, *outs[:-1]]
    make = _cuda_launch if variant.backend == "cuda" else _triton_launch
    plan.launches = [
        make(variant, dtype, i, o, p) for i, o, p in zip(inputs, outs, passes, strict=True)
    ]
    return plan


def _cuda_launch(
    variant: Variant, dtype: str, inp: torch.Tensor, out: torch.Tensor, p: Pass
) -> Callable[[], None]:
    import cupy
    import numpy as np

    from harness.compile import cuda_loader

    kern = cuda_loader.kernel(variant, dtype)
    launch = variant.launch
    # Seed 001's kernels take a 64-bit n (max_n past 2^31); the ladder's seed kernels a 32-bit one.
    size_t = np.uint64 if variant.max_n > MAX_N_32BIT else np.uint32
    args: tuple = (cupy.from_dlpack(inp), cupy.from_dlpack(out), size_t(p.n))
    if launch.takes_per_thread:
        args += (np.uint32(p.per_thread),)
    smem = launch.threads * inp.element_size() if launch.dynamic_smem else 0
    grid, block = (p.blocks,), (launch.threads,)

    def go() -> None:
        with on_torch_stream():
            kern(grid, block, args, shared_mem=smem)

    return go


def _triton_launch(
    variant: Variant, dtype: str, inp: torch.Tensor, out: torch.Tensor, p: Pass
) -> Callable[[], None]:
    from triton_kernels import tiles

    fn = getattr(tiles, variant.kernel)
    launch = variant.launch
    grid = (p.blocks,)
    meta = {"BLOCK": launch.threads, "num_warps": launch.num_warps}
    if launch.mapping == "tiles":
        meta["TILES"] = launch.tiles
    n = p.n
    if launch.mapping == "chunked":
        return lambda: fn[grid](inp, out, n, p.per_thread, **meta)
    return lambda: fn[grid](inp, out, n, **meta)
