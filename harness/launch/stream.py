"""The device, the stream and the memory a launch uses: one stream per call, current in torch
and CuPy; workspaces made off-thread or in a capture (docs/runtime.md#streams-and-workspaces)."""

from __future__ import annotations

import concurrent.futures
import contextlib
import functools
import threading
from collections.abc import Callable, Iterator
from typing import TypeVar

import torch


class _Handle:
    """A raw cudaStream_t speaking the CUDA stream protocol (for Stream.from_external)."""

    def __init__(self, ptr: int) -> None:
        self.ptr = ptr

    def __cuda_stream__(self) -> tuple[int, int]:
        return (0, self.ptr)


@functools.cache
def cupy_importable() -> bool:
    """Whether CuPy imports (the CUDA variants need it; the Triton ones run without it)."""
    try:
        import cupy  # noqa: F401
    except ImportError:
        return False
    return True


@functools.lru_cache(maxsize=64)
def cupy_stream(ptr: int, device: int):
    """CuPy's view of the CUDA stream `ptr` on `device` (0: Stream.null, the legacy stream)."""
    import cupy

    if ptr == 0:
        return cupy.cuda.Stream.null
    with cupy.cuda.Device(device):
        if hasattr(cupy.cuda.Stream, "from_external"):
            return cupy.cuda.Stream.from_external(_Handle(ptr))
        return cupy.cuda.ExternalStream(ptr, device)


def cupy_view(t: torch.Tensor):
    """CuPy's view of t; 16-bit floats as int16 (CuPy has no bfloat16; the kernels read bits)."""
    import cupy

    return cupy.from_dlpack(t.view(torch.int16) if t.element_size() == 2 else t)


@functools.lru_cache(maxsize=64)
def torch_stream(ptr: int, device: int) -> torch.cuda.Stream:
    """torch's view of the CUDA stream `ptr` on `device` (0: its default, the legacy stream)."""
    if ptr == 0:
        return torch.cuda.default_stream(device)
    return torch.cuda.ExternalStream(ptr, device=device)


# Triton's interpreter (TRITON_INTERPRET=1: the CPU path) is not thread-safe, and an interpreted
# launch runs its programs one after another in Python, so an exception or a KeyboardInterrupt can
# stop it between two of them: every interpreted launch of the API holds this lock, and a kernel
# with a ticket counter gets its counter zeroed first (a GPU launch is never cut in half).
INTERPRETER = threading.Lock()


def current_stream_ptr(device: int) -> int:
    """The raw cudaStream_t of torch's current stream on `device` (0: the legacy one), read as
    Inductor's code reads it: torch.cuda.current_stream() costs a microsecond more. CUDA only."""
    return torch._C._cuda_getCurrentRawStream(device)


@contextlib.contextmanager
def on_torch_stream(stream: torch.cuda.Stream | None = None) -> Iterator[None]:
    """CuPy work in the block on `stream` (a torch.cuda.Stream; default: torch's current one)."""
    if stream is None:
        device = torch.cuda.current_device()
        ptr = current_stream_ptr(device)
    else:
        device, ptr = stream.device.index or 0, stream.cuda_stream
    with cupy_stream(ptr, device):
        yield


@contextlib.contextmanager
def call_on(t: torch.Tensor, lib: str) -> Iterator[int]:
    """One API call's device and stream (module docstring); yields the stream (CPU: 0)."""
    if not t.is_cuda:
        yield 0
        return
    dev = t.get_device()
    with torch.cuda.device(dev):
        if lib == "cupy":
            import cupy

            with cupy.cuda.Device(dev):
                ptr = cupy.cuda.get_current_stream().ptr
                with torch.cuda.stream(torch_stream(ptr, dev)):
                    yield ptr
            return
        ptr = current_stream_ptr(dev)
        if not cupy_importable():
            yield ptr
            return
        import cupy

        with cupy.cuda.Device(dev), cupy_stream(ptr, dev):
            yield ptr


COUNTER_DTYPE = torch.int32  # the last-block ticket counter (the CUDA kernels read it as u32)
_ALIGN = 256  # the partials' start and the counter's: as aligned as any cudaMalloc'd pointer

T = TypeVar("T")

_worker = concurrent.futures.ThreadPoolExecutor(
    max_workers=1, thread_name_prefix="reduce-ladder-workspace"
)


def off_thread(make: Callable[[], T], device: torch.device, stream_ptr: int | None = None) -> T:
    """make() on the workspace thread, `device` and `stream_ptr` current (CPU: here)."""
    if device.type != "cuda":
        return make()
    index = device.index if device.index is not None else torch.cuda.current_device()
    on = torch_stream(current_stream_ptr(index) if stream_ptr is None else stream_ptr, index)

    def run() -> T:
        with torch.cuda.device(index), torch.cuda.stream(on):
            return make()

    return _worker.submit(run).result()


@contextlib.contextmanager
def in_graph(partials_bytes: int, stream_ptr: int) -> Iterator[tuple[int, int]]:
    """(partials, counter) pointers in memory the capture on `stream_ptr` owns, counter zeroed."""
    from cupy.cuda import runtime

    counter_at = -(-max(partials_bytes, 1) // _ALIGN) * _ALIGN  # rounded up
    ptr = runtime.mallocAsync(counter_at + _ALIGN, stream_ptr)
    counter = ptr + counter_at
    try:
        runtime.memsetAsync(counter, 0, COUNTER_DTYPE.itemsize, stream_ptr)
        yield ptr, counter
    finally:
        runtime.freeAsync(ptr, stream_ptr)
