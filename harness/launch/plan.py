"""Plans: a variant bound to one input, buffers and launch closures made once (timing loops measure
launches, not allocation), launched on torch's current stream. make_plan checks x; the mapping
picks the plan: multi-pass (built here), single_launch's or reproducible_plan's, each a Plan.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import numpy as np
import torch

from harness.compile import cuda_loader
from harness.core import dtypes
from harness.core.catalogue import MAX_N_32BIT, Variant
from harness.core.mappings import REPRODUCIBLE, Pass, plan_passes
from harness.launch import reproducible_plan, single_launch
from harness.launch.errors import no_room
from harness.launch.single_launch import Plan, on_stream
from harness.launch.stream import cupy_view


def make_plan(variant: Variant, x: torch.Tensor) -> Plan:
    """`variant` bound to the flat tensor x: buffers allocated, launches prepared, nothing run."""
    if variant.launch is None:
        raise ValueError(f"{variant.id} has no launch policy (a peer is not run through a plan)")
    dtype = dtypes.name_of(x.dtype)
    if dtype not in variant.dtypes:
        raise ValueError(
            f"{variant.id} supports {', '.join(variant.dtypes)}; got {dtype} "
            f"(variants for {dtype}: reduce-ladder list --dtype {dtype})"
        )
    check_n(variant, x.numel())
    if variant.launch.mapping is REPRODUCIBLE:  # family "reproducible": a plan of its own
        return reproducible_plan.make_plan(variant, dtype, x)
    if variant.launch.mapping.one_launch:
        return single_launch.make_plan(variant, dtype, x)
    return _multi_pass_plan(variant, dtype, x)


def check_n(variant: Variant, n: int) -> None:
    if n < 1:
        raise ValueError("the ladder kernels need n >= 1 (the harness handles n = 0 itself)")
    if n > variant.max_n:
        raise ValueError(
            f"{variant.id} indexes with 32-bit integers as its seed does and accepts at most "
            f"n = {variant.max_n:,} elements; got {n:,}"
        )


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
    return Plan(variant, dtype, x, outs, launches, passes[0].blocks, passes, scratch)


def need(variant: Variant, passes: list[Pass], x: torch.Tensor) -> str:
    """What a multi-pass plan (or cached launch) allocates, for its DeviceMemoryError."""
    in_place = variant.launch.in_place
    need = (sum(p.blocks for p in passes) + (x.numel() if in_place else 0)) * x.element_size()
    scratch = " and the scratch copy its in-place first pass works on" if in_place else ""
    return f"{need:,} bytes of device memory for its partial sums{scratch}"


def cuda_pass(variant: Variant, dtype: str, p: Pass, itemsize: int) -> tuple:
    """Pass p of a multi-pass CUDA variant: (kernel, blocks, threads, shared bytes, scalars)."""
    launch = variant.launch
    # Seed 001's kernels take a 64-bit n (max_n past 2^31); the ladder's seed kernels a 32-bit one.
    size_t = np.uint64 if variant.max_n > MAX_N_32BIT else np.uint32
    scalars: tuple = (size_t(p.n),)
    if launch.mapping.cuda_takes_per_thread:
        scalars += (np.uint32(p.per_thread),)
    smem = launch.threads * itemsize if launch.dynamic_smem else 0
    return cuda_loader.kernel(variant, dtype), p.blocks, launch.threads, smem, scalars


def triton_pass_args(variant: Variant, p: Pass) -> tuple:
    """Pass p of a multi-pass Triton variant: (kernel, grid, scalars after (in, out), meta)."""
    from triton_kernels import tiles

    launch = variant.launch
    scalars = (p.n, p.per_thread) if launch.mapping.triton_takes_per_thread else (p.n,)
    return getattr(tiles, variant.kernel), (p.blocks,), scalars, launch.mapping.triton_meta(launch)


def triton_pass(variant: Variant, p: Pass) -> Callable[[torch.Tensor, torch.Tensor], None]:
    fn, grid, scalars, meta = triton_pass_args(variant, p)
    return lambda inp, out: fn[grid](inp, out, *scalars, **meta)


def _cuda_launch(
    variant: Variant, dtype: str, inp: torch.Tensor, out: torch.Tensor, p: Pass
) -> Callable[[], None]:
    kern, blocks, threads, smem, scalars = cuda_pass(variant, dtype, p, inp.element_size())
    return on_stream(kern, blocks, threads, (cupy_view(inp), cupy_view(out), *scalars), smem)
