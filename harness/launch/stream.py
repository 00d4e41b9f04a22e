"""The device and the stream a call runs on, made current in both libraries.

An API call runs on ONE stream, the caller's current stream in x's library: every kernel,
allocation and copy of the result. `call_on` makes it current in torch AND CuPy: each keeps its
own current stream, a kernel launched on one while the result is copied (or a workspace freed) on
the other races, and a non-blocking CuPy stream does not even order against torch's legacy
default stream. CuPy 14 wraps a raw pointer with Stream.from_external (ExternalStream warns there),
CuPy 13 with ExternalStream; pointer 0 is Stream.null, entered like any other.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator

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


cupy_stream_or_null = cupy_stream  # the name the launch modules call it by


@functools.lru_cache(maxsize=64)
def torch_stream(ptr: int, device: int) -> torch.cuda.Stream:
    """torch's view of the CUDA stream `ptr` on `device` (0: its default, the legacy stream)."""
    if ptr == 0:
        return torch.cuda.default_stream(device)
    return torch.cuda.ExternalStream(ptr, device=device)


def current_stream_ptr(device: int) -> int:
    """The raw cudaStream_t of torch's current stream on `device` (0: the legacy default stream),
    from torch._C._cuda_getCurrentRawStream as Inductor's generated code reads it: an int, where
    torch.cuda.current_stream() builds a torch.cuda.Stream (a microsecond or more)."""
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return raw(device)
    return torch.cuda.current_stream(device).cuda_stream


@contextlib.contextmanager
def on_torch_stream(stream: torch.cuda.Stream | None = None) -> Iterator[None]:
    """CuPy work in the block on `stream` (a torch.cuda.Stream; default: torch's current one)."""
    if stream is None:
        device = torch.cuda.current_device()
        ptr = current_stream_ptr(device)
    else:
        device = stream.device.index if stream.device.index is not None else 0
        ptr = stream.cuda_stream
    with cupy_stream_or_null(ptr, device):
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

        with cupy.cuda.Device(dev), cupy_stream_or_null(ptr, dev):
            yield ptr
