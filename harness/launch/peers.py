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
- peer/torch.compile, peer/torch.compile-dynamic, peer/torch.compile-coop
                        Inductor's Triton for `t.sum()` (static shapes, dynamic shapes, the
                        cooperative reduction); int32 input returns int64 like torch.sum.
- peer/cuda.compute, peer/cuda.compute-nondeterministic
                        cuda.compute.reduce_into with OpKind.PLUS (CUB), run-to-run deterministic
                        and not guaranteed (atomics); int32 accumulates in int32.
                        The compiled peers are prepared in harness.launch.peers_compiled; a peer
                        that cannot run here raises harness.launch.errors.PeerUnavailable.
The ids are the catalogue's (harness.core.catalogue: TORCH_SUM_ID, CUB_ID, NOCUB_ID, COPY_ID,
COMPILE_IDS, CCCL_IDS); how each is checked against the golden sum is
harness.check.verify.check_peer.

Each peer runs on torch's current stream (CuPy through harness.launch.stream), so it can be captured
in a CUDA graph like the ladder kernels. The previous CuPy accelerator setting is restored after
every call.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import torch

from harness.core.catalogue import (
    CCCL_IDS,
    COMPILE_COOP_ID,
    COMPILE_IDS,
    COPY_ID,
    CUB_ID,
    NOCUB_ID,
    PEER_IDS,
    TORCH_SUM_ID,
    Variant,
)
from harness.launch import peers_compiled
from harness.launch.errors import PeerUnavailable
from harness.launch.stream import on_torch_stream

__all__ = [
    "COPY_ID",
    "PEER_IDS",
    "PeerUnavailable",
    "bytes_moved",
    "cupy_accelerators",
    "prepare",
    "run",
    "unavailable_reason",
]


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
    if vid in COMPILE_IDS or vid in CCCL_IDS:
        return peers_compiled.prepare(variant, x)
    raise ValueError(f"{vid} is not a peer; peers: {', '.join(PEER_IDS)}")


def unavailable_reason(variant: Variant) -> str | None:
    """Why a peer cannot run in this environment before anything is prepared (cuda.compute not
    installed, a torch without the cooperative reduction), or None."""
    if variant.id in CCCL_IDS:
        return peers_compiled.cccl_unavailable_reason()
    if variant.id == COMPILE_COOP_ID:
        return peers_compiled.coop_unavailable_reason()
    return None


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
