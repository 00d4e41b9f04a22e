"""How each peer runs: what a user would call instead of a ladder kernel, timed in the same run.

Peers are catalogue records of their own (backend "peer", ids peer/...):
- peer/torch.sum        torch.sum(x). For int32 input PyTorch accumulates in and returns int64:
                        it is compared against the EXACT (unwrapped) sum, not the int32-wrapped one.
- peer/cupy.sum-cub     cupy.sum(x, dtype=x.dtype) with CuPy's CUB accelerators on: one
                        cub::DeviceReduce. dtype=x.dtype is deliberate: with the default dtype CuPy
                        promotes int32 to int64 and then never uses CUB (CUB's sum does not
                        promote), so the peer would silently be CuPy's own kernel. With it, int32
                        accumulates in int32 and wraps modulo 2^32 exactly as the ladder kernels
                        do, and is compared against the same wrapped golden.
- peer/cupy.sum-nocub   the same call with the accelerators off: CuPy's own reduction kernel.
- peer/copy             not a sum: a device-to-device copy of the input into a preallocated
                        buffer, timed for the device's copy bandwidth (bytes = read + written =
                        2 n itemsize). Its only check is that the copy equals the input.
The ids are the catalogue's (harness.core.catalogue: TORCH_SUM_ID, CUB_ID, NOCUB_ID, COPY_ID); how
each is checked against the golden sum is harness.check.verify.check_peer.

Each peer runs on torch's current stream (CuPy through harness.launch.stream), so it can be captured
in a CUDA graph like the ladder kernels. The previous CuPy accelerator setting is restored after
every call.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import torch

from harness.core.catalogue import COPY_ID, CUB_ID, NOCUB_ID, PEER_IDS, TORCH_SUM_ID, Variant
from harness.launch.stream import on_torch_stream

__all__ = ["COPY_ID", "PEER_IDS", "bytes_moved", "cupy_accelerators", "prepare", "run"]


@contextlib.contextmanager
def cupy_accelerators(names: list[str]) -> Iterator[None]:
    """Set CuPy's routine and reduction accelerators (e.g. ['cub'] or []) and restore them."""
    from cupy import _core

    routine, reduction = _core.get_routine_accelerators(), _core.get_reduction_accelerators()
    _core.set_routine_accelerators(names)
    _core.set_reduction_accelerators(names)
    try:
        yield
    finally:
        _core.set_routine_accelerators(routine)
        _core.set_reduction_accelerators(reduction)


def prepare(variant: Variant, x: torch.Tensor) -> Callable[[], torch.Tensor | object]:
    """A closure that runs the peer on x (buffers and views made once) and returns its result:
    a 0-d tensor / array for the sums, the destination buffer for the copy."""
    vid = variant.id
    if vid == TORCH_SUM_ID:
        return lambda: torch.sum(x)
    if vid == COPY_ID:
        dst = torch.empty_like(x)
        return lambda: dst.copy_(x)
    if vid in (CUB_ID, NOCUB_ID):
        import cupy

        a = cupy.from_dlpack(x)
        accel = ["cub"] if vid == CUB_ID else []

        def go():
            with on_torch_stream(), cupy_accelerators(accel):
                return cupy.sum(a, dtype=a.dtype)

        return go
    raise ValueError(f"{vid} is not a peer; peers: {', '.join(PEER_IDS)}")


def run(variant: Variant, x: torch.Tensor) -> torch.Tensor:
    """The peer's result on x as a torch tensor (0-d for the sums; the copy for peer/copy)."""
    out = prepare(variant, x)()
    return out if isinstance(out, torch.Tensor) else torch.from_dlpack(out)


def bytes_moved(variant: Variant, n: int, itemsize: int) -> int:
    """Fewest bytes the peer must move: the copy reads and writes n elements; a sum reads n and
    writes one result (torch.sum of int32 writes an int64). What a library moves internally
    (partials, workspace) is not counted: its effective bandwidth is this over its time."""
    if variant.id == COPY_ID:
        return 2 * n * itemsize
    return n * itemsize + 8  # one result (at most 8 bytes)
