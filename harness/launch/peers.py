"""How each peer runs (what each is: harness.core.records_beyond), on torch's current stream, so it
can be captured like the ladder kernels; PeerUnavailable says why one cannot run here."""

from __future__ import annotations

import contextlib
import itertools
import types
from collections.abc import Callable, Iterator

import numpy as np
import torch

from harness.core import dtypes
from harness.core.catalogue import (
    CCCL_ID,
    CCCL_IDS,
    COMPILE_COOP_ID,
    COMPILE_DYNAMIC_ID,
    COMPILE_IDS,
    COPY_ID,
    CUB_ID,
    DYNAMIC_FIRST_N,
    NOCUB_ID,
    PEER_IDS,
    TORCH_SUM_ID,
    Variant,
)
from harness.launch.errors import PeerUnavailable
from harness.launch.stream import on_torch_stream

COOP_OPTION = "triton.cooperative_reductions"
CCCL_INSTALL = (
    "pip install -e '.[cccl]' (no registry: pip install --no-deps the cuda-cccl wheel; "
    "cuda-core, cuda-bindings and cuda-pathfinder must be there)"
)
# Inductor compiles in this process, not in its pool of workers: for one small sum the pool only
# costs time (on an H100 machine a process that compiled one sum exited ~7 s sooner, 17.6 s
# against 28 s, the compile itself no slower). It changes how Inductor compiles, not what.
IN_PROCESS = {"compile_threads": 1}
_fresh_ids = itertools.count()


@contextlib.contextmanager
def cupy_accelerators(names: list[str]) -> Iterator[None]:
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
    """A closure running the peer on x (buffers made, compiles warmed) and returning its result."""
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
                # dtype=: by default CuPy sums int32 as int64, never by CUB (its own kernel)
                return cupy.sum(a, dtype=a.dtype)

        return go
    if vid in COMPILE_IDS:
        fn = torch.compile(fresh_sum(), **compile_kwargs(variant))
        if vid == COMPILE_DYNAMIC_ID and x.numel() > DYNAMIC_FIRST_N:
            fn(x[:DYNAMIC_FIRST_N])  # the first call compiles, with this size as its size hint
        fn(x)  # compiles (static) or reuses the dynamic kernel; either way warms it up
        if x.is_cuda:
            torch.cuda.synchronize()
        return lambda: fn(x)
    if vid not in CCCL_IDS:
        raise ValueError(f"{vid} is not a peer; peers: {', '.join(PEER_IDS)}")
    if why := unavailable_reason(variant):
        raise PeerUnavailable(f"{vid}: {why}")
    if not x.is_cuda:
        raise ValueError(f"{vid} needs a CUDA tensor, got one on {x.device}")
    import cuda.compute as cc

    level = cc.Determinism.RUN_TO_RUN if vid == CCCL_ID else cc.Determinism.NOT_GUARANTEED
    x = x.contiguous().reshape(-1)
    out = torch.empty(1, dtype=x.dtype, device=x.device)
    # h_init: the atomic kernel needs one
    args = {"d_in": x, "d_out": out, "op": cc.OpKind.PLUS, "h_init": _zero(x.dtype)}
    reducer = cc.make_reduce_into(**args, determinism=level)
    args.update(num_items=x.numel(), stream=_TorchCurrentStream())
    return _cccl_call(reducer, args, out.view(()))


def segmented_rows(x: torch.Tensor) -> Callable[[], torch.Tensor]:
    """cuda.compute's segmented reduce (cub::DeviceSegmentedReduce) of a contiguous 2-D CUDA x's
    rows, a segment per row: the offsets, the output and the temp storage made once, the call on
    torch's current stream, warmed up. Sums in x's dtype (int32 wraps modulo 2^32); a 16-bit x
    would be added in 16 bits, unlike torch.sum, so it is refused. PeerUnavailable where
    cuda.compute cannot run here."""
    if why := cccl_unavailable_reason():
        raise PeerUnavailable(f"cuda.compute segmented reduce: {why}")
    if x.dim() != 2 or not x.is_contiguous() or not x.is_cuda or x.element_size() < 4:
        got = f"{tuple(x.shape)} {x.dtype} on {x.device}"
        raise ValueError(f"the segmented peer sums the rows of a contiguous 2-D CUDA tensor of "
                         f"4-byte elements, got {got}")  # fmt: skip
    import cuda.compute as cc

    m, n = x.shape
    bounds = torch.arange(0, (m + 1) * n, n, dtype=torch.int64, device=x.device)  # row starts
    out = torch.empty(m, dtype=x.dtype, device=x.device)
    args = {"d_in": x.reshape(-1), "d_out": out, "op": cc.OpKind.PLUS, "h_init": _zero(x.dtype),
            "start_offsets_in": bounds[:-1], "end_offsets_in": bounds[1:]}  # fmt: skip
    reducer = cc.make_segmented_reduce(**args)
    args.update(num_segments=m, max_segment_size=n, stream=_TorchCurrentStream())
    return _cccl_call(reducer, args, out)


def _cccl_call(reducer, args: dict, result: torch.Tensor) -> Callable[[], torch.Tensor]:
    """cuda.compute's two calls: the temp storage's size (made once), then the reduction as
    go(), warmed up here."""
    temp_bytes = int(reducer(temp_storage=None, **args))
    temp = torch.empty(max(temp_bytes, 1), dtype=torch.uint8, device=result.device)

    def go() -> torch.Tensor:
        reducer(temp_storage=temp, **args)
        return result

    go()
    torch.cuda.synchronize()
    return go


def _zero(dtype: torch.dtype):
    return np.zeros(1, dtype=np.dtype(dtypes.name_of(dtype)))


def unavailable_reason(variant: Variant) -> str | None:
    """Why a peer cannot run here (known before anything is prepared), or None."""
    if variant.id == COMPILE_COOP_ID:
        return coop_unavailable_reason()
    return cccl_unavailable_reason() if variant.id in CCCL_IDS else None


def cccl_unavailable_reason() -> str | None:
    """Why cuda.compute cannot run here (not installed, or no CUDA bindings), or None."""
    try:
        import cuda.compute as cc
    except ImportError as e:
        return f"cuda.compute is not installed ({type(e).__name__}: {e}); {CCCL_INSTALL}"
    if not getattr(cc, "_BINDINGS_AVAILABLE", True):
        return "cuda.compute is installed but its CUDA bindings are not available (no driver?)"
    return None


def run(variant: Variant, x: torch.Tensor) -> torch.Tensor:
    """The peer's result on x as a torch tensor (0-d for the sums; the copy for peer/copy)."""
    out = prepare(variant, x)()
    return out if isinstance(out, torch.Tensor) else torch.from_dlpack(out)


def bytes_moved(variant: Variant, n: int, itemsize: int) -> int:
    """Fewest bytes the peer must move: the copy 2 n elements, a sum n read and one written."""
    if variant.id == COPY_ID:
        return 2 * n * itemsize
    return n * itemsize + 8


def _sum(t: torch.Tensor) -> torch.Tensor:
    return t.sum()


def fresh_sum() -> Callable[[torch.Tensor], torch.Tensor]:
    """`lambda t: t.sum()` with a code object (so a Dynamo cache) and a name of its own: past its
    recompile limit (8) Dynamo silently runs a shared function eagerly, and the timing of 11 sizes
    x 2 dtypes would time torch.sum as the compile."""
    code = _sum.__code__.replace(co_name=f"peer_sum_{next(_fresh_ids)}")
    return types.FunctionType(code, _sum.__globals__, code.co_name)


def coop_unavailable_reason() -> str | None:
    from torch._inductor import config

    if not hasattr(config.triton, "cooperative_reductions"):
        return (
            f"torch {torch.__version__} has no torch._inductor.config.triton."
            "cooperative_reductions (not available in this torch)"
        )
    return None


def compile_kwargs(variant: Variant) -> dict:
    vid = variant.id
    if vid not in COMPILE_IDS:
        raise ValueError(f"{vid} is not a torch.compile peer; those are {', '.join(COMPILE_IDS)}")
    if why := unavailable_reason(variant):
        raise PeerUnavailable(f"{vid}: {why}")
    options = {**IN_PROCESS, COOP_OPTION: True} if vid == COMPILE_COOP_ID else IN_PROCESS
    return {"dynamic": vid == COMPILE_DYNAMIC_ID, "fullgraph": True, "options": options}


class _TorchCurrentStream:
    """torch's current stream (a capture's while capturing) by the __cuda_stream__ protocol."""

    def __cuda_stream__(self) -> tuple[int, int]:
        return (0, torch.cuda.current_stream().cuda_stream)
