"""The Python API: reduce_sum and partials over a CuPy array or a torch tensor.

Behaviour on odd input (tested in tests/test_bad_input.py and tests/test_gpu_bad_input.py):
- not a CuPy array / torch tensor (e.g. numpy): TypeError saying how to move it to the GPU.
- on the CPU while the variant runs on the GPU: ValueError (CPU tensors are accepted only by
  Triton variants under TRITON_INTERPRET=1).
- a dtype the variant does not support: TypeError / ValueError naming the supported ones.
- empty: the sum is 0 (partials: an empty array), with no launch.
- 0-d or multi-dimensional: flattened (the sum of all elements).
- non-contiguous view: summed from a private contiguous copy (the caller's view is untouched).
- any alignment: the ladder kernels load one element per thread, so a view starting at any
  element offset is read correctly.
- NaN / +-Inf: IEEE propagation, as torch.sum (NaN if any NaN or both infinities, else the inf).
- n >= 2^31 on a 32-bit-indexed seed kernel: ValueError naming the limit.
- too little device memory for the partials / scratch copy: harness.launch.errors.DeviceMemoryError
  (also importable from harness.launch.plan); the process keeps working.
The caller's data is never modified.
"""

from __future__ import annotations

from typing import Any

import torch

from harness.core import catalogue, device, dtypes
from harness.launch.errors import DeviceMemoryError
from harness.launch.plan import make_plan


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
            "move host data to the GPU first (cupy.asarray(a) or torch.as_tensor(a).cuda())"
        )
    if t.device.type != "cuda" and not (variant.backend == "triton" and device.interpreting()):
        raise ValueError(
            f"{variant.id} runs on a CUDA GPU but the input lives on {t.device}; move it with "
            ".cuda() (CPU tensors are accepted only by Triton variants under TRITON_INTERPRET=1)"
        )
    if t.dtype not in [dtypes.torch_dtype(d) for d in variant.dtypes]:
        raise TypeError(
            f"unsupported dtype {t.dtype}; {variant.id} supports {', '.join(variant.dtypes)}"
        )
    if not t.is_contiguous():
        try:
            t = t.contiguous()  # a private copy: the caller's view is left as it is
        except torch.cuda.OutOfMemoryError as e:
            raise DeviceMemoryError(
                f"no device memory for a contiguous copy of the non-contiguous input "
                f"({t.numel() * t.element_size():,} bytes): {str(e).splitlines()[0]}"
            ) from None
    return t.reshape(-1), lib


def _back(t: torch.Tensor, lib: str) -> Any:
    if lib == "cupy":
        import cupy

        return cupy.from_dlpack(t)
    return t


def _variant(variant: str | catalogue.Variant) -> catalogue.Variant:
    v = catalogue.get(variant) if isinstance(variant, str) else variant
    if v.launch is None:
        raise ValueError(f"{v.id} is a peer (a library call), not a variant of the ladder")
    return v


def reduce_sum(x: Any, variant: str | catalogue.Variant) -> Any:
    """Sum of all elements of x computed by `variant`: a 0-d array/tensor on x's device.

    x: a CuPy array or CUDA torch tensor (any shape; it is flattened). The result has x's library
    and dtype (int32 sums wrap modulo 2^32, as the seed kernels do), except that the fastest
    variants return float16 / bfloat16 sums as float32 (their accumulator). x is never modified:
    in-place kernels work on a scratch copy. An empty x sums to 0 without a launch.
    """
    v = _variant(variant)
    t, lib = _as_torch(x, v)
    if t.numel() == 0:
        # The dtype the variant returns its sum in (its tile mapping says: the input's, or the
        # single-launch family's accumulator).
        dt = dtypes.DTYPES[v.launch.mapping.sum_dtype(dtypes.name_of(t.dtype))].torch
        return _back(torch.zeros((), dtype=dt, device=t.device), lib)
    plan = make_plan(v, t)
    out = plan.run()
    return _back(out[0].clone(), lib)


def partials(x: Any, variant: str | catalogue.Variant) -> Any:
    """The first-pass partial sums of x under `variant`: one per CUDA block / Triton program."""
    v = _variant(variant)
    t, lib = _as_torch(x, v)
    if t.numel() == 0:
        return _back(torch.zeros((0,), dtype=t.dtype, device=t.device), lib)
    plan = make_plan(v, t)
    plan.poison()
    return _back(plan.run(first_pass_only=True).clone(), lib)
