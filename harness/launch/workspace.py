"""Where a cached launch's workspace (partials + the last-block ticket counter) lives.

`off_thread`: a cached launch's workspace outlives the call that made it, so a worker thread
allocates it, with the launch's stream current (the counter's zero fill ordered before its first
kernel). Why: torch routes allocations to a memory pool per THREAD (torch.cuda.use_mem_pool;
torch.compile's CUDA-graph trees during a warm-up), and memory left in a graph's pool without
being one of its outputs makes Inductor stop ("Detected N tensor(s) in the cudagraph pool not
tracked as outputs").

`in_graph`: a graph bakes addresses in, so graphs captured from one entry would share its counter
and, replayed at once, take each other's tickets (wrong sums; per-stream entries do not help:
torch.cuda.graph() without stream= captures every graph on one stream). So a captured call gets
memory its own graph owns: cudaMallocAsync / cudaFreeAsync captured as memory nodes around the
launch, the counter's zeroing as a memset node; none of it is torch's (the calls are CuPy's).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
from collections.abc import Callable, Iterator
from typing import TypeVar

import torch

COUNTER_DTYPE = torch.int32  # the last-block ticket counter (the CUDA kernels read it as u32)
_COUNTER_BYTES = 4
_ALIGN = 256  # the partials' start and the counter's: as aligned as any cudaMalloc'd pointer

T = TypeVar("T")

_worker = concurrent.futures.ThreadPoolExecutor(
    max_workers=1, thread_name_prefix="reduce-ladder-workspace"
)


def off_thread(make: Callable[[], T], device: torch.device, stream_ptr: int | None = None) -> T:
    """make() on the workspace thread, `device` and `stream_ptr` current (CPU: here)."""
    if device.type != "cuda":
        return make()
    from harness.launch.stream import current_stream_ptr, torch_stream

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
        runtime.memsetAsync(counter, 0, _COUNTER_BYTES, stream_ptr)
        yield ptr, counter
    finally:
        runtime.freeAsync(ptr, stream_ptr)
