"""The Python API: reduce_sum and partials over a CuPy array or a torch tensor."""

from __future__ import annotations

from typing import Any

import torch

from harness import catalogue, device
from harness import run as runner


def _as_torch(x: Any, variant: catalogue.Variant) -> tuple[torch.Tensor, str]:
    """A flat torch view of x (zero-copy where possible) and the library x came from."""
    if isinstance(x, torch.Tensor):
        lib = "torch"
        t = x
    elif hasattr(x, "__cuda_array_interface__") and type(x).__module__.startswith("cupy"):
        lib = "cupy"
        t = torch.from_dlpack(x)
    else:
        raise TypeError(
            f"expected a CuPy array or a torch tensor, got {type(x).__name__}; "
            "numpy arrays must be moved to the GPU first (cupy.asarray or torch.as_tensor)"
        )
    if t.device.type != "cuda" and not (variant.backend == "triton" and device.interpreting()):
        raise ValueError(
            f"{variant.id} runs on a CUDA GPU but the input lives on {t.device}; move it "
            "with .cuda() (CPU tensors are accepted only by Triton variants under "
            "TRITON_INTERPRET=1)"
        )
    if t.dtype not in runner.TORCH_DTYPES.values():
        raise TypeError(
            f"unsupported dtype {t.dtype}; {variant.id} supports {', '.join(variant.dtypes)}"
        )
    if not t.is_contiguous():
        t = t.contiguous()  # a private copy: the caller's view is left as it is
    return t.reshape(-1), lib


def _back(t: torch.Tensor, lib: str) -> Any:
    if lib == "cupy":
        import cupy

        return cupy.from_dlpack(t)
    return t


def reduce_sum(x: Any, variant: str | catalogue.Variant) -> Any:
    """Sum of all elements of x computed by `variant`: a 0-d array/tensor on x's device.

    x: a CuPy array or CUDA torch tensor (any shape; it is flattened). The result has x's library
    and dtype (int32 sums wrap modulo 2^32, as the seed kernels do). x is never modified: in-place
    kernels work on a scratch copy. An empty x sums to 0 without a launch.
    """
    v = catalogue.get(variant) if isinstance(variant, str) else variant
    t, lib = _as_torch(x, v)
    if t.numel() == 0:
        return _back(torch.zeros((), dtype=t.dtype, device=t.device), lib)
    plan = runner.make_plan(v, t)
    out = plan.run()
    return _back(out[0].clone(), lib)


def partials(x: Any, variant: str | catalogue.Variant) -> Any:
    """The first-pass partial sums of x under `variant`: one per CUDA block / Triton program."""
    v = catalogue.get(variant) if isinstance(variant, str) else variant
    t, lib = _as_torch(x, v)
    if t.numel() == 0:
        return _back(torch.zeros((0,), dtype=t.dtype, device=t.device), lib)
    plan = runner.make_plan(v, t)
    plan.poison()
    return _back(plan.run(first_pass_only=True).clone(), lib)
