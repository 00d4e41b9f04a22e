"""The cached launches (rebind.BoundLaunch) of the multi-pass ladder and the reproducible pair,
by the uncached plans' functions; their locks and captures: docs/runtime.md#cached-launches."""

from __future__ import annotations

import threading

import numpy as np
import torch

from harness.core import dtypes, repro_geometry
from harness.core.catalogue import Variant
from harness.core.mappings import REPRODUCIBLE
from harness.core.passes import plan_passes
from harness.launch import rebind, reproducible_plan
from harness.launch.errors import no_room
from harness.launch.plan import cuda_pass, need, triton_pass
from harness.launch.stream import COUNTER_DTYPE, off_thread


def bind(
    variant: Variant, dtype: str, x: torch.Tensor, stream_ptr: int, mode: str | None = None
) -> rebind.BoundLaunch:
    """The launch of `variant` for tensors like the flat, contiguous x on `stream_ptr`; mode
    "native" (default: rebind.DEFAULT_MODE's) launches the reproducible pair natively."""
    family = _reproducible if variant.launch.mapping is REPRODUCIBLE else _multi_pass
    # steps: the native launch's, given the workspace (the reproducible pair's; else None)
    blocks, alloc, run, what, steps = family(variant, dtype, x)

    def make() -> list[torch.Tensor]:
        with no_room(f"{variant.id} needs {what}; the allocation failed"):
            return alloc()

    out_dtype = dtypes.torch_dtype(variant.launch.mapping.sum_dtype(dtype))
    own, proto = off_thread(
        lambda: (make(), torch.empty(0, dtype=out_dtype, device=x.device)),
        x.device,
        stream_ptr if x.is_cuda else None,
    )
    lock = threading.Lock()

    def go(x: torch.Tensor, out: torch.Tensor) -> None:
        with lock:
            run(x, out, own, stream_ptr)

    def in_capture(x: torch.Tensor, out: torch.Tensor, stream: int) -> None:
        graphs = make()  # inside the capture: from its private pool (module docstring)
        with lock:
            run(x, out, graphs, stream)

    call, mode = None, mode or rebind.DEFAULT_MODE[variant.backend]
    if steps is not None and x.is_cuda and rebind.native_launch(variant, mode):
        go, call = rebind.native_or(go, stream_ptr, proto, lambda: steps(own))
    mode = "native" if call is not None else ""
    return rebind.BoundLaunch(
        variant, dtype, x.numel(), blocks, mode, out_dtype, proto, own, go, in_capture, call=call
    )


def _multi_pass(variant: Variant, dtype: str, x: torch.Tensor):
    """plan.Plan's chain: the input (or its scratch copy), then each pass's partials, then out."""
    launch = variant.launch
    passes = plan_passes(launch, x.numel())
    device, n, dt = x.device, x.numel(), x.dtype  # never x itself: the entry outlives it

    def make() -> list[torch.Tensor]:
        scratch = [torch.empty(n, dtype=dt, device=device)] if launch.in_place else []
        return scratch + [torch.empty(p.blocks, dtype=dt, device=device) for p in passes[:-1]]

    if variant.backend == "cuda":
        dev = x.get_device()
        steps = []
        for p in passes:
            kern, blocks, threads, smem, scalars = cuda_pass(variant, dtype, p, x.element_size())
            steps.append(rebind.DriverKernel(kern, dev, (blocks, threads, smem), 2, scalars))
    else:
        # on torch's current stream: the entry's on every path that reaches it
        triton = [triton_pass(variant, p) for p in passes]
        steps = [lambda ts, stream, go=go: go(*ts) for go in triton]
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

    return passes[0].blocks, make, run, need(variant, passes[:-1], x), None


def _reproducible(variant: Variant, dtype: str, x: torch.Tensor):
    """reproducible_plan's launch: chunk partials (and CUDA's counter), the default grid."""
    n, device = x.numel(), x.device
    m = repro_geometry.chunk_count(n)
    blocks = reproducible_plan.default_grid(variant, n)
    cuda, what = variant.backend == "cuda", f"its {m}-chunk workspace"

    def make() -> list[torch.Tensor]:
        ws = [torch.empty(m, dtype=torch.float64, device=device) for _ in range(2)]
        if cuda:
            ws.append(torch.zeros(1, dtype=COUNTER_DTYPE, device=device))
        return ws

    if cuda:
        kern = reproducible_plan.cuda_kernel(variant, dtype, x.data_ptr())
        grid = (max(1, blocks), variant.launch.threads, 0)
        k = rebind.DriverKernel(kern, x.get_device(), grid, 5, (np.uint64(n),))

        def run(x: torch.Tensor, out: torch.Tensor, ws: list[torch.Tensor], stream: int) -> None:
            k((x, out, *ws), stream)

        return blocks, make, run, what, lambda ws: [k.step(*ws)]  # (x, out, phi, plo, counter, n)

    from triton_kernels import reproducible as tr

    if x.device.type != "cuda":  # Triton's interpreter: no compiled kernel, the JIT's own path

        def run_jit(x: torch.Tensor, out: torch.Tensor, ws: list[torch.Tensor], _s: int) -> None:
            tr.launch(x, out, *ws, blocks)()

        return blocks, make, run_jit, what, None
    # Both kernels "bound" (rebind's module docstring): compiled once for this key (n fixes the
    # scalars, x_ptr % 16 x's alignment; the partials and the result are torch allocations, and
    # a caller's out= is a whole element, which is all the final kernel's one store assumes).
    import triton.language as tl

    scalars = tr.chunk_scalars(n)
    out_tl = tl.float64 if dtype == "float64" else tl.float32
    with no_room(f"{variant.id} needs {what}; the allocation failed"):
        probe = make()  # what the kernels are compiled against: allocations like a call's
        res = torch.empty(1, dtype=dtypes.get(dtype).sum_torch, device=device)
    chunk_meta, final_meta = tr.chunk_meta(), tr.final_meta(out_tl)
    grid = (max(1, min(blocks, m)),)
    launcher, step, X, OUT = rebind.triton_launcher, rebind.triton_step, rebind.X, rebind.OUT
    chunks = launcher(tr.reproducible_chunks_kernel, grid, (x, *probe, *scalars), chunk_meta)
    final = launcher(tr.reproducible_final_kernel, (1,), (*probe, res, m), final_meta)
    constants = (chunk_meta["LANES"], chunk_meta["UNROLL"])

    def run_bound(x: torch.Tensor, out: torch.Tensor, ws: list[torch.Tensor], s: int) -> None:
        phi, plo = ws[0].data_ptr(), ws[1].data_ptr()
        chunks(s, (x.data_ptr(), phi, plo, *scalars, *constants))
        final(s, (phi, plo, out.data_ptr(), m, final_meta["LANES"], out_tl))

    def steps(ws: list[torch.Tensor]) -> list[tuple]:
        phi, plo, lanes = ws[0].data_ptr(), ws[1].data_ptr(), final_meta["LANES"]
        return [
            step(chunks.compiled, grid[0], (X, phi, plo, *scalars, *constants), {X: 0}),
            step(final.compiled, 1, (phi, plo, OUT, m, lanes, out_tl), {}, OUT),
        ]

    return blocks, make, run_bound, what, steps
