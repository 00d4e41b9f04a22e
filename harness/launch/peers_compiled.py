"""The compiled peers: torch.compile's Inductor (static, dynamic, cooperative) and cuda.compute
(NVIDIA's CUB from Python, package cuda-cccl). harness.launch.peers dispatches to prepare() here.

torch.compile: every prepare() compiles a FRESH function (its own code object) of `t.sum()`.
Dynamo keeps its compiled entries on the code object and, past the recompile limit (8 entries),
silently runs the function eagerly; one shared lambda timed at 11 sizes x 2 dtypes would measure
torch.sum under the torch.compile label from the ninth size on. The compile and a warm-up call
happen inside prepare(), so no timing sees a compile. The cooperative peer passes its Inductor
option through torch.compile(options=...), which patches the config for that compile only (any
recompile of it included) and leaves the global config as it was.

cuda.compute: make_reduce_into builds the CUB reduction once per (dtype, determinism); prepare()
queries its temp-storage size (a call with temp_storage=None), allocates it once, and returns a
closure that runs the reduction on torch's current stream (through the __cuda_stream__ protocol,
so it can be captured in a CUDA graph). h_init is 0 of the input's dtype: the NOT_GUARANTEED
(atomic) kernel requires an initial value, and 0 leaves the sum unchanged.
"""

from __future__ import annotations

import itertools
import types
from collections.abc import Callable

import torch

from harness.core import dtypes
from harness.core.catalogue import (
    CCCL_ID,
    CCCL_IDS,
    COMPILE_COOP_ID,
    COMPILE_DYNAMIC_ID,
    COMPILE_ID,
    COMPILE_IDS,
    DYNAMIC_FIRST_N,
    Variant,
)
from harness.launch.errors import PeerUnavailable

__all__ = [
    "CCCL_INSTALL",
    "COOP_OPTION",
    "cccl_unavailable_reason",
    "compile_kwargs",
    "coop_unavailable_reason",
    "fresh_sum",
    "prepare",
]

COOP_OPTION = "triton.cooperative_reductions"
CCCL_INSTALL = (
    "pip install -e '.[cccl]' (no registry: pip install --no-deps the cuda-cccl wheel; "
    "cuda-core, cuda-bindings and cuda-pathfinder must be there)"
)
_fresh_ids = itertools.count()


def _sum(t: torch.Tensor) -> torch.Tensor:
    return t.sum()


def fresh_sum() -> Callable[[torch.Tensor], torch.Tensor]:
    """`lambda t: t.sum()` with a code object of its own (so its own Dynamo cache: see the module
    docstring); the name says which compile it was."""
    code = _sum.__code__.replace(co_name=f"peer_sum_{next(_fresh_ids)}")
    return types.FunctionType(code, _sum.__globals__, code.co_name)


def coop_unavailable_reason() -> str | None:
    """Why the cooperative peer cannot run with this torch, or None where it can."""
    from torch._inductor import config

    if not hasattr(config.triton, "cooperative_reductions"):
        return (
            f"torch {torch.__version__} has no torch._inductor.config.triton."
            "cooperative_reductions (not available in this torch)"
        )
    return None


# Inductor compiles in this process, not in its pool of worker processes: for one small sum the
# pool only costs time (measured on an H100 machine: a process that compiled one sum exited ~7 s
# sooner, 17.6 s against 28 s, the compile itself no slower). It changes how Inductor compiles,
# not what it generates.
IN_PROCESS = {"compile_threads": 1}


def compile_kwargs(variant: Variant) -> dict:
    """torch.compile's keyword arguments for one compiled peer."""
    vid = variant.id
    if vid == COMPILE_ID:
        return {"dynamic": False, "fullgraph": True, "options": IN_PROCESS}
    if vid == COMPILE_DYNAMIC_ID:
        return {"dynamic": True, "fullgraph": True, "options": IN_PROCESS}
    if vid == COMPILE_COOP_ID:
        why = coop_unavailable_reason()
        if why:
            raise PeerUnavailable(f"{vid}: {why}")
        return {"dynamic": False, "fullgraph": True, "options": {**IN_PROCESS, COOP_OPTION: True}}
    raise ValueError(f"{vid} is not a torch.compile peer; those are {', '.join(COMPILE_IDS)}")


def _prepare_compiled(variant: Variant, x: torch.Tensor) -> Callable[[], torch.Tensor]:
    fn = torch.compile(fresh_sum(), **compile_kwargs(variant))
    if variant.id == COMPILE_DYNAMIC_ID and x.numel() > DYNAMIC_FIRST_N:
        fn(x[:DYNAMIC_FIRST_N])  # the first call compiles, with this size as its size hint
    fn(x)  # compiles (static) or reuses the dynamic kernel; either way warms it up
    if x.is_cuda:
        torch.cuda.synchronize()
    return lambda: fn(x)


def cccl_unavailable_reason() -> str | None:
    """Why cuda.compute cannot run here (not installed, or no CUDA bindings), or None."""
    try:
        import cuda.compute as cc
    except ImportError as e:
        return f"cuda.compute is not installed ({type(e).__name__}: {e}); {CCCL_INSTALL}"
    if not getattr(cc, "_BINDINGS_AVAILABLE", True):
        return "cuda.compute is installed but its CUDA bindings are not available (no driver?)"
    return None


class _TorchCurrentStream:
    """torch's current stream through the __cuda_stream__ protocol, looked up at each call (so a
    CUDA-graph capture stream is the one used while capturing)."""

    def __cuda_stream__(self) -> tuple[int, int]:
        return (0, torch.cuda.current_stream().cuda_stream)


def _prepare_cccl(variant: Variant, x: torch.Tensor) -> Callable[[], torch.Tensor]:
    why = cccl_unavailable_reason()
    if why:
        raise PeerUnavailable(f"{variant.id}: {why}")
    if not x.is_cuda:
        raise ValueError(f"{variant.id} needs a CUDA tensor, got one on {x.device}")
    import cuda.compute as cc
    import numpy as np

    level = cc.Determinism.RUN_TO_RUN if variant.id == CCCL_ID else cc.Determinism.NOT_GUARANTEED
    x = x.contiguous().reshape(-1)
    out = torch.empty(1, dtype=x.dtype, device=x.device)
    h_init = np.zeros(1, dtype=np.dtype(dtypes.name_of(x.dtype)))
    op, stream, n = cc.OpKind.PLUS, _TorchCurrentStream(), x.numel()
    reducer = cc.make_reduce_into(d_in=x, d_out=out, op=op, h_init=h_init, determinism=level)
    temp_bytes = reducer(
        temp_storage=None, d_in=x, d_out=out, num_items=n, op=op, h_init=h_init, stream=stream
    )
    temp = torch.empty(max(int(temp_bytes), 1), dtype=torch.uint8, device=x.device)
    result = out.view(())

    def go() -> torch.Tensor:
        reducer(
            temp_storage=temp, d_in=x, d_out=out, num_items=n, op=op, h_init=h_init, stream=stream
        )
        return result

    go()
    torch.cuda.synchronize()
    return go


def prepare(variant: Variant, x: torch.Tensor) -> Callable[[], torch.Tensor]:
    """A closure running a compiled peer on x (compiled and warmed here), returning a 0-d tensor.
    Raises PeerUnavailable, with the reason, where the peer cannot run in this environment."""
    if variant.id in COMPILE_IDS:
        return _prepare_compiled(variant, x)
    if variant.id in CCCL_IDS:
        return _prepare_cccl(variant, x)
    raise ValueError(f"{variant.id} is not a compiled peer")
