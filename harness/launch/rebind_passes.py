"""The cached launches of every family but the single-launch one (harness.launch.rebind's): the
ladder's multi-pass variants (seeds 000/002, 001 and 004) and the reproducible pair, with the
input and the output as per-call arguments. What harness.launch.plan_cache keeps for them, under
the same key, in the same table.

A PassesLaunch is built once per (variant, dtype, n, alignment class, device, stream) and then
launches with nothing made per call but what a kernel argument needs:
- its workspace made once, out of every caller-thread memory pool (harness.launch.workspace's
  off_thread, as the single-launch family's): the multi-pass chain's partials (one buffer per pass
  but the last, which writes the caller's result itself) and, for an in-place first pass
  (cuda/v0-gmem-interleaved, cuda/004-gmem...), the scratch copy of the input it works on; the
  reproducible pair's chunk partials (hi, lo) and the CUDA kernel's ticket counter, zeroed once
  (the kernel leaves it at 0). An in-place variant's entry thus keeps n elements of scratch for
  as long as it stays in the cache (plan_cache.clear() frees every entry);
- CUDA kernels launched through CuPy's binding of cuLaunchKernel on the entry's stream pointer,
  their parameters packed once per pass (ctypes values whose pointer slots are rewritten per
  call): no CuPy array, no DLPack export, no CuPy stream object, no host synchronization;
- Triton kernels through Triton's own per-call path, which launches on torch's current stream:
  the entry's stream on every path that reaches it (the hot path keys on torch's current stream;
  the checked path makes the call's stream current, harness.launch.stream.call_on).
The kernels, grids and scalar arguments come from the functions the uncached plans use
(harness.launch.plan.cuda_pass / triton_pass, reproducible_plan.cuda_kernel / default_grid,
triton_kernels.reproducible.launch), so a cached sum is bit-identical to a fresh plan's.

One lock per entry covers a whole call (every pass, the scratch copy, the packed parameters):
two threads sharing an entry (one stream) enqueue their chains one after the other, never
interleaved (pass 2 of one call reading pass 1 of another's partials).

Capture (in_capture): a graph must not bake the entry's workspace in (graphs replayed at once
would share it, as harness.launch.workspace says of the single-launch family), so a captured
call allocates a workspace of its own inside the capture: torch's allocator serves it from the
capture's private pool, the graph owns it, and the counter's zero fill is captured, so every
replay starts from 0. It is freed when the call returns, as the uncached plan's buffers were.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from harness.core import dtypes, repro_geometry
from harness.core.catalogue import Variant
from harness.core.mappings import REPRODUCIBLE
from harness.core.passes import plan_passes
from harness.launch import reproducible_plan, workspace
from harness.launch.errors import DeviceMemoryError
from harness.launch.plan import cuda_pass, triton_pass

# One call's launches: (x, out, workspace, stream pointer); the caller holds the entry's lock.
Run = Callable[[torch.Tensor, torch.Tensor, list[torch.Tensor], int], None]


class DriverKernel:
    """One CUDA kernel on a fixed grid, launched through CuPy's cuLaunchKernel binding with its
    parameters packed once: `pointers` pointer slots (rewritten per call), then the scalars
    (numpy uint32 / uint64, as the uncached plan passes them)."""

    def __init__(self, kern, device: int, grid: tuple[int, int, int], pointers: int, scalars):
        import ctypes

        import cupy
        import numpy as np
        from cupy_backends.cuda.api.driver import launchKernel

        with cupy.cuda.Device(device):
            self.fn_ptr = kern.kernel.ptr  # the loaded cupy.cuda.Function for this device
        self.launch_kernel = launchKernel
        self.grid = grid  # blocks, threads, dynamic shared memory bytes
        width = {np.dtype(np.uint32): ctypes.c_uint32, np.dtype(np.uint64): ctypes.c_uint64}
        self.slots = [ctypes.c_void_p(0) for _ in range(pointers)]
        values = [*self.slots, *(width[np.asarray(s).dtype](int(s)) for s in scalars)]
        self.params = (ctypes.c_void_p * len(values))(*(ctypes.addressof(v) for v in values))
        self.values = values  # alive as long as the packed array that points at them
        self.params_addr = ctypes.addressof(self.params)

    def __call__(self, tensors: tuple[torch.Tensor, ...], stream: int) -> None:
        for slot, t in zip(self.slots, tensors, strict=True):
            slot.value = t.data_ptr()
        blocks, threads, smem = self.grid
        self.launch_kernel(
            self.fn_ptr, blocks, 1, 1, threads, 1, 1, smem, stream, self.params_addr, 0
        )


@dataclass
class PassesLaunch:
    """One variant, dtype, n, alignment class, device and stream: call it with (x, out).

    x: a contiguous tensor of n elements at the alignment class it was built for (any shape);
    out: a tensor of at least one element of out_dtype (the last launch writes its first).
    The same interface as rebind.BoundLaunch (what plan_cache and harness.launch.api use)."""

    variant: Variant
    dtype: str
    n: int
    blocks: int  # the first launch's grid
    out_dtype: torch.dtype
    proto: torch.Tensor  # an empty tensor of out_dtype on the device: results are its new_empty
    workspace: list[torch.Tensor]  # made once (off_thread)
    make_workspace: Callable[[], list[torch.Tensor]]  # on the current stream (a capture's)
    run: Run
    stream: int
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __call__(self, x: torch.Tensor, out: torch.Tensor) -> None:
        with self.lock:
            self.run(x, out, self.workspace, self.stream)

    def in_capture(self, x: torch.Tensor, out: torch.Tensor, stream_ptr: int) -> None:
        """The launches captured on stream_ptr (capturing now, current in torch, its device
        current) with a workspace allocated inside the capture (module docstring)."""
        own = self.make_workspace()
        with self.lock:
            self.run(x, out, own, stream_ptr)


def _allocating(variant: Variant, make: Callable[[], list[torch.Tensor]], what: str):
    """make, with an allocation failure said as DeviceMemoryError naming the variant and `what`
    it needs (the uncached plan's wording)."""

    def guarded() -> list[torch.Tensor]:
        try:
            return make()
        except torch.cuda.OutOfMemoryError as e:
            raise DeviceMemoryError(
                f"{variant.id} needs {what}; the allocation failed ({str(e).splitlines()[0]})"
            ) from None

    return guarded


def bind(variant: Variant, dtype: str, x: torch.Tensor, stream_ptr: int) -> PassesLaunch:
    """The launch of `variant` for tensors like the flat, contiguous x (its n, dtype, alignment
    class and device) on the stream `stream_ptr`: its workspace allocated, its kernels loaded,
    nothing launched."""
    if variant.launch.mapping is REPRODUCIBLE:
        blocks, make, run, what = _reproducible(variant, dtype, x)
    else:
        blocks, make, run, what = _multi_pass(variant, dtype, x)
    make = _allocating(variant, make, what)
    out_dtype = dtypes.torch_dtype(variant.launch.mapping.sum_dtype(dtype))
    own, proto = workspace.off_thread(
        lambda: (make(), torch.empty(0, dtype=out_dtype, device=x.device)),
        x.device,
        stream_ptr if x.is_cuda else None,
    )
    return PassesLaunch(
        variant, dtype, x.numel(), blocks, out_dtype, proto, own, make, run, stream_ptr
    )


def _multi_pass(variant: Variant, dtype: str, x: torch.Tensor):
    """The ladder's chain (harness.launch.plan.Plan's): pass k reads the input (or its scratch
    copy) then pass k - 1's partials; the last pass writes the caller's out."""
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
            steps.append(DriverKernel(kern, dev, (blocks, threads, smem), 2, scalars))
    else:
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

    need = (sum(p.blocks for p in passes[:-1]) + (n if in_place else 0)) * x.element_size()
    what = f"{need:,} bytes of device memory for its partial sums" + (
        " and the scratch copy its in-place first pass works on" if in_place else ""
    )
    return passes[0].blocks, make, run, what


def _reproducible(variant: Variant, dtype: str, x: torch.Tensor):
    """The reproducible pair (reproducible_plan's launch): the chunk partials and, for CUDA, the
    ticket counter; the default grid."""
    n, device = x.numel(), x.device
    m = repro_geometry.chunk_count(n)
    blocks = reproducible_plan.default_grid(variant, n)
    cuda = variant.backend == "cuda"

    def make() -> list[torch.Tensor]:
        ws = [torch.empty(m, dtype=torch.float64, device=device) for _ in range(2)]
        if cuda:
            ws.append(torch.zeros(1, dtype=workspace.COUNTER_DTYPE, device=device))
        return ws

    if cuda:
        import numpy as np

        kern = reproducible_plan.cuda_kernel(variant, dtype, x.data_ptr())
        grid = (max(1, blocks), variant.launch.threads, 0)
        k = DriverKernel(kern, x.get_device(), grid, 5, (np.uint64(n),))

        def run(x: torch.Tensor, out: torch.Tensor, ws: list[torch.Tensor], stream: int) -> None:
            k((x, out, *ws), stream)

        return blocks, make, run, f"its {m}-chunk workspace"

    from triton_kernels import reproducible

    def run_triton(x: torch.Tensor, out: torch.Tensor, ws: list[torch.Tensor], _s: int) -> None:
        phi, plo = ws
        reproducible.launch(x, out, phi, plo, blocks)()

    return blocks, make, run_triton, f"its {m}-chunk workspace"
