"""The cached launches (rebind.BoundLaunch) of the multi-pass ladder and the reproducible pair,
by the uncached plans' functions; their locks and captures: docs/runtime.md#cached-launches."""

from __future__ import annotations

import threading
from functools import partial

import numpy as np
import torch

from harness.core import dtypes
from harness.core.catalogue import Variant
from harness.core.mappings import REPRODUCIBLE, chunk_count, plan_passes
from harness.launch import rebind, reproducible_plan
from harness.launch.errors import no_room
from harness.launch.plan import cuda_pass, need, triton_pass_args
from harness.launch.stream import off_thread


def bind(
    variant: Variant, dtype: str, x: torch.Tensor, stream_ptr: int, mode: str
) -> rebind.BoundLaunch:
    """The launch of `variant` for tensors like the flat, contiguous x on `stream_ptr`; mode
    "native" launches it natively where rebind.native_launch (any other: the Python launch)."""
    family = _reproducible if variant.launch.mapping is REPRODUCIBLE else _multi_pass
    # make: the workspace (DeviceMemoryError where it cannot be allocated); steps: the native
    # launch's, given the workspace
    blocks, make, run, steps = family(variant, dtype, x)
    out_dtype = dtypes.torch_dtype(variant.launch.mapping.sum_dtype(dtype))
    own, proto = off_thread(
        lambda: (make(), torch.empty(0, dtype=out_dtype, device=x.device)), x.device, stream_ptr
    )
    lock = threading.Lock()

    def go(x: torch.Tensor, out: torch.Tensor) -> None:
        with lock:
            run(x, out, own, stream_ptr)

    def in_capture(x: torch.Tensor, out: torch.Tensor, stream: int) -> None:
        graphs = make()  # inside the capture: from its private pool (module docstring)
        with lock:
            run(x, out, graphs, stream)

    call = None
    if x.is_cuda and rebind.native_launch(variant, mode):  # not in place, nor interpreted
        go, call = rebind.native_or(go, stream_ptr, proto, lambda: steps(own))
    mode = "native" if call is not None else ""
    return rebind.BoundLaunch(
        variant, dtype, x.numel(), blocks, mode, out_dtype, proto, own, go, in_capture, call=call
    )


def _multi_pass(variant: Variant, dtype: str, x: torch.Tensor):
    """plan.Plan's chain: the input (or its scratch copy), then each pass's partials, then out;
    natively (rebind's "native" mode) where the chain starts from x itself."""
    launch = variant.launch
    passes = plan_passes(launch, x.numel())
    device, n, dt = x.device, x.numel(), x.dtype  # never x itself: the entry outlives it
    what = f"{variant.id} needs {need(variant, passes[:-1], x)}; the allocation failed"

    def make() -> list[torch.Tensor]:
        with no_room(what):
            scratch = [torch.empty(n, dtype=dt, device=device)] if launch.in_place else []
            return scratch + [torch.empty(p.blocks, dtype=dt, device=device) for p in passes[:-1]]

    if variant.backend == "cuda":
        dev, steps = x.get_device(), []
        for p in passes:
            kern, blocks, threads, smem, scalars = cuda_pass(variant, dtype, p, x.element_size())
            steps.append(rebind.DriverKernel(kern, dev, (blocks, threads, smem), 2, scalars))
    else:
        # "bound", as the fastest pair's (rebind.triton_launcher): each pass compiled once against
        # tensors like a call's (x itself, partials and a result from torch's allocator), then
        # launched with its pointers, skipping the JIT's per-call binding (about 28 us a launch);
        # under Triton's interpreter the JIT, with the same arguments (rebind.BoundTriton)
        with no_room(what):
            res = torch.empty(1, dtype=dt, device=device)
        chain = [x, *make(), res][launch.in_place :]  # in place: from the scratch copy, not x
        steps = []
        for p, i, o in zip(passes, chain, chain[1:], strict=False):
            kernel, grid, scalars, meta = triton_pass_args(variant, p)
            steps.append(rebind.BoundTriton(kernel, grid[0], (i, o, *scalars), meta))
    in_place = launch.in_place

    def run(x: torch.Tensor, out: torch.Tensor, ws: list[torch.Tensor], stream: int) -> None:
        if in_place:
            scratch, *partials = ws
            scratch.copy_(x.reshape(-1))  # on torch's current stream: the call's
            src = scratch
        else:
            src, partials = x, ws
        ins, outs = [src, *partials], [*partials, out]
        for step, i, o in zip(steps, ins, outs, strict=True):
            step((i, o), stream)

    def native_steps(ws: list[torch.Tensor]) -> list[tuple]:  # x into the first, out from the last
        chain = [rebind.X, *(t.data_ptr() for t in ws), rebind.OUT]
        return [step.step(i, o) for step, i, o in zip(steps, chain, chain[1:], strict=False)]

    return passes[0].blocks, make, run, native_steps


def _reproducible(variant: Variant, dtype: str, x: torch.Tensor):
    """reproducible_plan's launch: chunk partials (and CUDA's counter), the default grid."""
    n, device = x.numel(), x.device
    m = chunk_count(n)
    blocks = reproducible_plan.default_grid(variant, n)
    cuda = variant.backend == "cuda"
    make = partial(reproducible_plan.workspace, variant, m, device, cuda)

    if cuda:
        kern = reproducible_plan.cuda_kernel(variant, dtype, x.data_ptr())
        grid = (max(1, blocks), variant.launch.threads, 0)
        k = rebind.DriverKernel(kern, x.get_device(), grid, 5, (np.uint64(n),))

        def run(x: torch.Tensor, out: torch.Tensor, ws: list[torch.Tensor], stream: int) -> None:
            k((x, out, *ws), stream)

        return blocks, make, run, lambda ws: [k.step(rebind.X, rebind.OUT, *ws)]

    # Both kernels "bound" (rebind.BoundTriton; tr.launch's arguments): compiled once for this key
    # (n fixes the scalars, x_ptr % 16 x's alignment; the partials and the result are torch
    # allocations, and a caller's out= is a whole element, which is all the final kernel's one
    # store assumes).
    import triton.language as tl

    from triton_kernels import reproducible as tr

    scalars, out_tl = tr.chunk_scalars(n), tl.float64 if dtype == "float64" else tl.float32
    phi, plo = make()  # what the kernels are compiled against: allocations like a call's
    with no_room(f"{variant.id}: no room for its result"):
        res = torch.empty(1, dtype=dtypes.get(dtype).sum_torch, device=device)
    grid = max(1, min(blocks, m))
    kernels = (tr.reproducible_chunks_kernel, tr.reproducible_final_kernel)
    chunks = rebind.BoundTriton(kernels[0], grid, (x, phi, plo, *scalars), tr.chunk_meta())
    final = rebind.BoundTriton(kernels[1], 1, (phi, plo, res, m), tr.final_meta(out_tl))

    def run_bound(x: torch.Tensor, out: torch.Tensor, ws: list[torch.Tensor], s: int) -> None:
        chunks((x, *ws), s)
        final((*ws, out), s)

    def steps(ws: list[torch.Tensor]) -> list[tuple]:
        return [chunks.step(rebind.X, *ws), final.step(*ws, rebind.OUT)]

    return blocks, make, run_bound, steps
