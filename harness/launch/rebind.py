"""The single-launch (fastest) family's cached launch: x and out per call, all else fixed when
built, by the plan's functions; its launch modes (LAUNCH_MODES, DEFAULT_MODE the cache's) and
what they cost: docs/runtime.md#cached-launches."""

from __future__ import annotations

import ctypes
import threading
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from harness.core import mappings
from harness.core.catalogue import Variant
from harness.launch import native, single_launch
from harness.launch.stream import INTERPRETER, cupy_importable, in_graph, off_thread

LAUNCH_MODES: dict[str, tuple[str, ...]] = {
    "cuda": ("cupy-driver", "native"),
    "triton": ("bound", "native"),
}
DEFAULT_MODE: dict[str, str] = {  # the first of each backend's, or "native" when requested
    backend: "native" if native.requested() else modes[0] for backend, modes in LAUNCH_MODES.items()
}


Go = Callable[[torch.Tensor, torch.Tensor], None]  # (x, out)
Workspace = tuple[torch.Tensor, torch.Tensor]  # partials, counter
# (x, out, stream pointer, partials pointer, counter pointer): what a capture launches with.
LaunchWith = Callable[[torch.Tensor, torch.Tensor, int, int, int], None]


@dataclass
class BoundLaunch:
    """A cached launch of any 1-D family: one variant, dtype, n, alignment class, device and
    stream; call it (or go) with x (contiguous, that class) and out (one element, any offset)."""

    variant: Variant
    dtype: str
    n: int
    blocks: int  # the (first) launch's grid
    mode: str  # the launch mode: the single-launch family's, "native" or "" for the others
    out_dtype: torch.dtype
    proto: torch.Tensor  # out_dtype on the device: results are its new_empty (api)
    workspace: Sequence[torch.Tensor]  # owned, made once, the partials first
    go: Go
    in_capture: Callable[[torch.Tensor, torch.Tensor, int], None]  # (x, out, capturing stream)
    go_with: LaunchWith | None = None  # single-launch: None where the mode cannot be captured
    call: Callable[[torch.Tensor], torch.Tensor] | None = None  # native: a new result + go

    def __call__(self, x: torch.Tensor, out: torch.Tensor) -> None:
        self.go(x, out)


class CaptureUnsupported(RuntimeError):
    """This launch cannot be captured in a CUDA graph (said before anything is enqueued)."""


def bind(variant: Variant, dtype: str, x: torch.Tensor, stream_ptr: int, mode: str) -> BoundLaunch:
    """The launch of `variant` for tensors like the flat, contiguous x on `stream_ptr` in `mode`
    (one of LAUNCH_MODES[variant.backend]; the plan cache's default: DEFAULT_MODE)."""
    modes = LAUNCH_MODES[variant.backend]
    if mode not in modes:
        raise ValueError(
            f"launch mode {mode!r} is not one of {variant.backend}'s: {', '.join(modes)}"
        )
    ws = single_launch.workspace(variant, dtype, x.device, stream_ptr)
    # "native": the default mode's kernel, grid and parameters (and its capture twin) from C++
    native_mode = mode == "native"
    mode = modes[0] if native_mode else mode
    build = _cuda if variant.backend == "cuda" else _triton
    go, go_with, blocks, steps = build(variant, dtype, x, ws, stream_ptr)
    call = None
    if native_mode and x.is_cuda:  # Triton's interpreter: nothing is launched natively
        go, call = native_or(go, stream_ptr, ws[0], steps)
        mode = "native" if call is not None else mode
    nbytes = ws[0].numel() * ws[0].element_size()

    def in_capture(x: torch.Tensor, out: torch.Tensor, stream_ptr: int) -> None:
        """go_with with a workspace the graph owns, or CaptureUnsupported before any launch."""
        if go_with is None:
            raise CaptureUnsupported(
                f"{variant.id} under Triton's interpreter cannot be captured in a CUDA graph"
            )
        if not cupy_importable():  # in_graph's runtime calls
            raise CaptureUnsupported(
                f"{variant.id} in a CUDA-graph capture: a capture gives each graph a workspace of "
                "its own through cudaMallocAsync, which needs CuPy: pip install -e '.[cuda13]' "
                "(or '.[cuda12]')"
            )
        with in_graph(nbytes, stream_ptr) as (partials, counter):
            go_with(x, out, stream_ptr, partials, counter)

    out_dtype = ws[0].dtype  # the partials are the sum's dtype
    return BoundLaunch(
        variant, dtype, x.numel(), blocks, mode, out_dtype, ws[0], ws, go, in_capture, go_with, call
    )


Steps = Callable[[], list[tuple]]  # a native launch's steps: native_launch.cpp's Launch.add's


def native_or(go: Go, stream_ptr: int, proto: torch.Tensor, steps: Steps) -> tuple[Go, Any]:
    """(into, call) of the native launch of steps() on `stream_ptr` (results like proto), or
    (go, None) where it cannot be made: the Python launch kept, the reason said once (a warning)."""
    try:
        launch = native.load().Launch(stream_ptr, proto)
        for step in steps():
            launch.add(*step)
    except native.NativeUnavailable as why:
        warnings.warn(str(why), RuntimeWarning, stacklevel=3)
        return go, None
    return launch.into, launch.call


def native_launch(variant: Variant, mode: str) -> bool:
    """Whether `mode` launches `variant` natively (on a GPU, where the launcher builds): every
    family but the in-place chains (stage 0, seeds 004 and 001), which start with a copy of x."""
    return mode == "native" and not variant.launch.in_place


X, X_PAST_HEAD, OUT = -1, -2, -3  # native_step's placeholders, written per call (real values >= 0)
SLOT = -(2**40)  # BoundTriton's: SLOT - i for its i-th tensor (no real argument is negative)


def driver_params(compiled, values: Sequence) -> list[int]:
    """A compiled Triton kernel's parameters as the driver takes them, from all its arguments in
    order (ints; placeholders < 0 allowed): those that are not constexpr, then the scratch
    pointers Triton's launcher appends (0 to 2 by version, null when the kernel needs no scratch;
    counted from the PTX entry); NativeUnavailable where Triton's own launcher would do more
    (docs/runtime.md#cached-launches says what)."""
    md, sig = compiled.metadata, getattr(getattr(compiled, "src", None), "signature", None)
    needs_more = (
        getattr(md, "global_scratch_size", 0) or getattr(md, "profile_scratch_size", 0)
        or getattr(md, "num_ctas", 1) != 1 or getattr(md, "launch_cooperative_grid", False)
        or getattr(md, "launch_pdl", False)
    )  # fmt: skip
    kept = [] if not isinstance(sig, dict) or len(sig) != len(values) else [
        v for v, ty in zip(values, sig.values(), strict=True) if ty != "constexpr"
    ]  # fmt: skip
    entry = compiled.asm.get("ptx", "").partition(".entry")[2].partition(")")[0]
    extra = entry.count(".param") - len(kept)
    if needs_more or not kept or not all(type(v) is int for v in kept) or not 0 <= extra <= 2:
        raise native.NativeUnavailable(
            "this Triton kernel's launch is not one the native launcher makes; the default is used"
        )
    return kept + [0] * extra


def native_step(function: int, grid: tuple, params: list[int], head: int = 0) -> tuple:
    """One step of a native launch (native_launch.cpp's Launch.add): the kernel on its grid
    (blocks, threads, shared bytes) with the driver's parameters, where the placeholders X (and
    X_PAST_HEAD, x `head` bytes on) and OUT are written per call."""
    xs = {params.index(ph): off for ph, off in ((X, 0), (X_PAST_HEAD, head)) if ph in params}
    out = params.index(OUT) if OUT in params else -1
    return (function, *grid, [max(p, 0) for p in params], [*xs], [*xs.values()], out)


def triton_step(compiled, grid: int, values: Sequence, head: int = 0) -> tuple:
    """A compiled Triton kernel as a native step, `values` its arguments in order with
    placeholders; driver_params' error."""
    md, params = compiled.metadata, driver_params(compiled, values)
    return native_step(compiled.function, (grid, md.num_warps * 32, md.shared), params, head)


def _cuda(
    variant: Variant, dtype: str, x: torch.Tensor, ws: Workspace, stream_ptr: int
) -> tuple[Go, LaunchWith, int, Steps]:
    partials, counter = ws
    dev, n = x.get_device(), x.numel()
    kern, blocks, threads = single_launch.cuda_kernel(variant, dtype, n)
    k = DriverKernel(kern, dev, (blocks, threads, 0), 4, (np.uint64(n),))
    k.slots[2].value, k.slots[3].value = partials.data_ptr(), counter.data_ptr()

    def with_driver(x: torch.Tensor, out: torch.Tensor, s: int, p: int, c: int) -> None:
        # a capture packs its own (not a hot path); alive until the launch returns
        _, own_addr, _keep = pack((x.data_ptr(), out.data_ptr(), p, c, *k.scalars))
        k.launch_kernel(k.function, blocks, 1, 1, threads, 1, 1, 0, s, own_addr, 0)

    steps = lambda: [k.step(X, OUT, partials, counter)]  # noqa: E731
    return _go_driver(k, stream_ptr), with_driver, blocks, steps


def _go_driver(k: DriverKernel, stream_ptr: int, head_bytes: int | None = None) -> Go:
    """The single-launch family's hot path: k's slots x, out (and, for Triton, x past its head of
    head_bytes) written under a lock (the packed parameters are shared), then the launch."""
    x_arg, out_arg, head_arg, *_ = *k.slots, None
    go, fn, params, (blocks, threads, smem) = k.launch_kernel, k.function, k.params_addr, k.grid
    lock = threading.Lock()

    def go_driver(x: torch.Tensor, out: torch.Tensor) -> None:
        p = x.data_ptr()
        with lock:
            x_arg.value, out_arg.value = p, out.data_ptr()
            if head_bytes is not None:
                head_arg.value = p + head_bytes
            go(fn, blocks, 1, 1, threads, 1, 1, smem, stream_ptr, params, 0)

    go_driver.keep = k  # the packed parameters live as long as the launch
    return go_driver


def pack(values: Sequence[int]) -> tuple[list, int, tuple]:
    """cuLaunchKernel's parameters, each value (a pointer or a scalar) in an 8-byte cell (the
    driver reads a 4-byte parameter's low half): (the cells, to rewrite; the address of the array
    pointing at them; what must stay alive)."""
    cells = [ctypes.c_void_p(int(v)) for v in values]
    params = (ctypes.c_void_p * len(cells))(*map(ctypes.addressof, cells))
    return cells, ctypes.addressof(params), (cells, params)


class DriverKernel:
    """One CUDA kernel on a fixed grid through CuPy's cuLaunchKernel ("cupy-driver" mode), its
    parameters packed once: `pointers` slots rewritten per call, then the scalars."""

    def __init__(self, kern, device: int, grid, pointers: int, scalars):
        import cupy
        from cupy_backends.cuda.api.driver import launchKernel

        with cupy.cuda.Device(device):
            self.function = kern.kernel.ptr  # the CUfunction loaded on this device
        self.launch_kernel, self.scalars = launchKernel, scalars
        self.grid = grid  # blocks, threads, dynamic shared memory bytes
        cells, self.params_addr, self.keep = pack([0] * pointers + [*scalars])
        self.slots = cells[:pointers]

    def __call__(self, tensors: tuple[torch.Tensor, ...], stream: int) -> None:
        for slot, t in zip(self.slots, tensors, strict=True):
            slot.value = t.data_ptr()
        blocks, threads, smem = self.grid
        fn = self.function
        self.launch_kernel(fn, blocks, 1, 1, threads, 1, 1, smem, stream, self.params_addr, 0)

    @classmethod
    def of_triton(cls, compiled, grid: int, values: Sequence, slots: Sequence[int]):
        """A compiled Triton kernel launched the same way, its parameters (driver_params) packed
        once, each held in 8 bytes (the driver reads a 4-byte one's low half), `slots` the
        placeholders in values written per call, in order; None where CuPy does not import or
        Triton's own launcher would do more (then that is used)."""
        if not cupy_importable():
            return None
        try:
            params = driver_params(compiled, values)
        except native.NativeUnavailable:
            return None
        from cupy_backends.cuda.api.driver import launchKernel

        k, md = cls.__new__(cls), compiled.metadata
        cells, k.params_addr, k.keep = pack([max(p, 0) for p in params])
        k.function, k.launch_kernel, k.scalars = compiled.function, launchKernel, ()
        k.grid = (grid, md.num_warps * 32, md.shared)
        k.slots = [cells[params.index(s)] for s in slots]
        return k

    def step(self, *pointers: int | torch.Tensor) -> tuple:
        """This launch as a native step: its pointer parameters (tensors, addresses, or the
        placeholders X and OUT), then its scalars."""
        ptrs = [p.data_ptr() if isinstance(p, torch.Tensor) else p for p in pointers]
        return native_step(self.function, self.grid, [*ptrs, *map(int, self.scalars)])


class BoundTriton:
    """One Triton kernel launched "bound" (triton_launcher), as DriverKernel is a CUDA one: compiled
    once against `args` (tensors like a call's where its pointers go: n and `x_ptr % 16` must be
    in the caller's cache key), then per call the pointers of the tensors given, in order. Under
    Triton's interpreter (CPU tensors) the JIT with the same arguments, the tensors given."""

    def __init__(self, kernel, grid: int, args: tuple, meta: dict):
        self.grid = grid
        self.slots = [i for i, a in enumerate(args) if isinstance(a, torch.Tensor)]
        self.values = [a.data_ptr() if i in self.slots else a for i, a in enumerate(args)]
        if not args[self.slots[0]].is_cuda:  # Triton's interpreter: no compiled kernel; per call
            self.launch = None  # the JIT's own path, the tensors given in the pointers' places

            def interpreted(tensors: tuple[torch.Tensor, ...], _stream: int) -> None:
                with INTERPRETER:
                    kernel[(grid,)](*self._with(tensors), **meta)

            self.driver = interpreted
            return
        self.launch = triton_launcher(kernel, (grid,), args, meta)
        self.values += [meta[name] for name in kernel.arg_names[len(args) :]]  # no tensor kept
        held = [SLOT - i for i in range(len(self.slots))]  # the tensors' placeholders
        self.driver = DriverKernel.of_triton(self.launch.compiled, grid, self._with(held), held)

    def _with(self, pointers: Sequence) -> list:
        values = self.values[:]
        for slot, p in zip(self.slots, pointers, strict=True):
            values[slot] = p
        return values

    def __call__(self, tensors: tuple[torch.Tensor, ...], stream: int) -> None:
        if self.driver is not None:  # the caller holds the entry's lock (shared parameters)
            self.driver(tensors, stream)
        else:
            self.launch(stream, self._with([t.data_ptr() for t in tensors]))

    def step(self, *pointers: int | torch.Tensor) -> tuple:
        """As DriverKernel.step: the placeholders X and OUT written per call."""
        ptrs = [p.data_ptr() if isinstance(p, torch.Tensor) else p for p in pointers]
        return triton_step(self.launch.compiled, self.grid, self._with(ptrs))


def _triton(
    variant: Variant, dtype: str, x: torch.Tensor, ws: Workspace, stream_ptr: int
) -> tuple[Go, LaunchWith | None, int, Steps | None]:
    import triton.language as tl

    from triton_kernels import fastest

    partials, counter = ws
    probe_out = torch.empty(1, dtype=partials.dtype, device=x.device)  # the tuner's output
    sms = mappings.sm_count()
    for_config = fastest.launcher(dtype, fastest.kernel_args(x, probe_out, partials, counter), sms)
    # the tuner's first run keeps what it allocates (timing's L2 flush buffer): off the caller's
    # thread, as the workspace, or it lands in a torch.compile CUDA-graph pool (stream.off_thread)
    cfg = off_thread(lambda: fastest.tuned_config(dtype, x, for_config), x.device, stream_ptr)
    head = fastest.head_elements(x)
    n_bulk = x.numel() - head
    programs = fastest.program_count(cfg, n_bulk, sms)
    meta = fastest.triton_meta(cfg, dtype, programs)
    meta = {**meta, "ACC": getattr(tl, meta["ACC"])}
    grid = (programs,)
    kernel = fastest.fastest_kernel
    if x.device.type != "cuda":  # Triton's interpreter: no compiled kernel, the JIT's own path

        def go_jit(x: torch.Tensor, out: torch.Tensor) -> None:
            flat = x.reshape(-1)
            with INTERPRETER:  # and a counter an interrupted launch left behind zeroed
                counter.zero_()
                kernel[grid](flat, flat[head:], out, partials, counter, head, n_bulk, **meta)

        return go_jit, None, programs, None
    args = (x, x[head:], probe_out, partials, counter, head, n_bulk)
    launch = triton_launcher(kernel, grid, args, meta)
    constexprs = tuple(meta[name] for name in kernel.arg_names[len(args) :])
    head_bytes = head * x.element_size()
    scalars = (head, n_bulk, *constexprs)
    fixed = (partials.data_ptr(), counter.data_ptr(), *scalars)
    values = (X, X_PAST_HEAD, OUT, *fixed)  # x (and x past its head) and out written per call

    held = (X, OUT, X_PAST_HEAD)  # in the order _go_driver writes them
    driver = DriverKernel.of_triton(launch.compiled, programs, values, held)
    if driver is None:  # Triton's own launcher

        def go_bound(x: torch.Tensor, out: torch.Tensor) -> None:
            p = x.data_ptr()
            launch(stream_ptr, (p, p + head_bytes, out.data_ptr(), *fixed))

    else:  # the same kernel and parameters through CuPy's binding: 2-3 us less a call
        go_bound = _go_driver(driver, stream_ptr, head_bytes)

    def with_bound(x: torch.Tensor, out: torch.Tensor, s: int, part: int, count: int) -> None:
        p = x.data_ptr()
        launch(s, (p, p + head_bytes, out.data_ptr(), part, count, *scalars))

    steps = lambda: [triton_step(launch.compiled, programs, values, head_bytes)]  # noqa: E731
    return go_bound, with_bound, programs, steps


def triton_launcher(kernel, grid: tuple[int, ...], args: tuple, meta: dict):
    """The "bound" launch of any Triton kernel: kernel.warmup(*args, grid=grid, **meta)'s
    CompiledKernel (specialized on args' integer values and pointer alignments, which the
    caller's cache key must fix) as launch(stream, values): every parameter, pointers as ints."""
    from triton import knobs

    compiled = kernel.warmup(*args, grid=grid, **meta)
    if hasattr(compiled, "result"):  # an asynchronous compile hands back a future
        compiled = compiled.result()
    run, function, packed = compiled.run, compiled.function, compiled.packed_metadata
    gx, gy, gz = (*grid, 1, 1)[:3]
    runtime = knobs.runtime

    def launch(stream: int, values: tuple) -> None:
        enter = runtime.launch_enter_hook
        # A profiler's hook (e.g. proton) gets the metadata the JIT would give it.
        md = compiled.launch_metadata(grid, stream, *values) if enter is not None else None
        run(gx, gy, gz, stream, function, packed, md, enter, runtime.launch_exit_hook, *values)

    launch.compiled = compiled  # for the native launch
    return launch
