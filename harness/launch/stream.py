"""The one way a CuPy kernel or call runs on torch's current stream.

Everything the harness launches goes to torch's current stream, so a CUDA kernel (through CuPy), a
Triton kernel and a torch op queue in one order, and a CUDA-graph capture started by torch sees
them all. CuPy needs a Stream object for that pointer: it is made once per (device, stream) and
cached, not once per launch. On CuPy 14 it is made with Stream.from_external (ExternalStream is
deprecated there and warns on every construction); CuPy 13 lacks from_external and gets an
ExternalStream.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator


class _Handle:
    """A raw cudaStream_t speaking the CUDA stream protocol (what Stream.from_external reads)."""

    def __init__(self, ptr: int) -> None:
        self.ptr = ptr

    def __cuda_stream__(self) -> tuple[int, int]:
        return (0, self.ptr)


@functools.lru_cache(maxsize=64)
def cupy_stream(ptr: int, device: int):
    """CuPy's view of the CUDA stream `ptr` on `device` (made once per stream)."""
    import cupy

    with cupy.cuda.Device(device):
        if hasattr(cupy.cuda.Stream, "from_external"):
            return cupy.cuda.Stream.from_external(_Handle(ptr))
        return cupy.cuda.ExternalStream(ptr, device)


@contextlib.contextmanager
def on_torch_stream(stream=None) -> Iterator[None]:
    """Run CuPy work in the block on `stream` (a torch.cuda.Stream; default: torch's current
    stream). The legacy default stream needs no switch: it is CuPy's default too."""
    import torch

    stream = stream if stream is not None else torch.cuda.current_stream()
    ptr = stream.cuda_stream
    if ptr == 0:
        yield
        return
    with cupy_stream(ptr, stream.device.index if stream.device.index is not None else 0):
        yield


def current_stream_ptr(device: int) -> int:
    """The raw cudaStream_t of torch's current stream on `device` (0: the legacy default stream).

    torch._C._cuda_getCurrentRawStream is what Inductor's generated code reads the stream with: an
    int, with no torch.cuda.Stream object made per call (torch.cuda.current_stream() builds one, a
    microsecond or more). Falls back to the public call where the private one is missing."""
    import torch

    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return raw(device)
    return torch.cuda.current_stream(device).cuda_stream


def cupy_stream_or_null(ptr: int, device: int):
    """cupy_stream(ptr, device), or CuPy's null stream for ptr 0 (the legacy default stream), for
    calls that take a stream object (cupy.cuda.Function reads only its .ptr)."""
    if ptr == 0:
        import cupy

        return cupy.cuda.Stream.null
    return cupy_stream(ptr, device)
