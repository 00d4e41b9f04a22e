"""The Python API: reduce_sum and partials over a CuPy array or a torch tensor; bad input refused
before any launch; the hot path and its costs: docs/runtime.md#the-api."""

from __future__ import annotations

import functools
from typing import Any

import torch
from torch.autograd.graph import increment_version

from harness.core import catalogue, device, dtypes
from harness.launch import axis_plan, plan_cache, stream
from harness.launch.errors import no_room
from harness.launch.plan import check_n, make_plan


def _check_dtype(v: catalogue.Variant, dtype: torch.dtype) -> None:
    if _DTYPE_NAMES.get(dtype) not in v.dtypes:
        raise TypeError(f"unsupported dtype {dtype}; {v.id} supports {', '.join(v.dtypes)}")


def _torch_view(x: Any) -> torch.Tensor | None:
    if isinstance(x, torch.Tensor):
        return x
    if hasattr(x, "__cuda_array_interface__") and type(x).__module__.startswith("cupy"):
        if any(step < 0 for step in x.strides):  # DLPack has no negative strides (torch aborts)
            with x.device:  # on that device's current stream: the one call_on makes the call's
                x = x.copy()  # a private copy, C-contiguous: the caller's array is left as it is
        return torch.from_dlpack(x)
    return None


def _as_torch(x: Any, variant: catalogue.Variant) -> tuple[torch.Tensor, str]:
    """A torch view of x, checked (dense, on a device the variant runs on, its dtype), and x's
    library; _dense makes what the kernels read of it, on the call's stream."""
    t = _torch_view(x)
    if t is None:
        raise TypeError(
            f"expected a CuPy array or a torch tensor, got {type(x).__name__}; "
            "move host data to the GPU first (cupy.asarray(a) or torch.as_tensor(a).cuda())"
        )
    lib = "torch" if t is x else "cupy"
    if t.layout != torch.strided:
        raise TypeError(
            f"expected a dense (strided) tensor, got layout {t.layout}; use .to_dense()"
        )
    interpreted = t.device.type == "cpu" and variant.backend == "triton" and device.interpreting()
    if not t.is_cuda and not interpreted:
        raise ValueError(
            f"{variant.id} runs on a CUDA GPU but the input lives on {t.device}; move it with "
            ".cuda() (CPU tensors are accepted only by Triton variants under TRITON_INTERPRET=1)"
        )
    _check_dtype(variant, t.dtype)
    return t, lib


def _dense(t: torch.Tensor) -> torch.Tensor:
    """t as the kernels read it: contiguous memory holding its values. A non-contiguous view, or one
    with the negative bit (x.conj().imag: memory holding -value), becomes a private copy (the
    caller's view is left as it is), made inside stream.call_on, on the stream the kernels run on
    (a CuPy stream that does not wait for torch's would otherwise read it before it is written)."""
    if t.is_contiguous() and not t.is_neg():
        return t
    size = t.numel() * t.element_size()
    with no_room(f"no device memory for a contiguous copy of the input ({size:,} bytes)"):
        return t.resolve_neg().contiguous()


def _back(t: torch.Tensor, lib: str) -> Any:
    if lib == "cupy":
        import cupy

        return cupy.from_dlpack(t)
    return t


@functools.cache
def _variant_by_id(variant_id: str) -> catalogue.Variant:
    return _variant(catalogue.get(variant_id))


def _variant(variant: str | catalogue.Variant) -> catalogue.Variant:
    if isinstance(variant, str):
        return _variant_by_id(variant)
    if not isinstance(variant, catalogue.Variant):
        raise TypeError(
            "variant must be a variant id (a str) or a catalogue.Variant, "
            f"got {type(variant).__name__}"
        )
    if variant.launch is None:
        raise ValueError(f"{variant.id} is a peer (a library call), not a variant of the ladder")
    return variant


def result_dtype(variant: str | catalogue.Variant, dtype: torch.dtype) -> torch.dtype:
    """The dtype reduce_sum returns for `variant` over `dtype` input (TypeError: unsupported)."""
    v = _variant(variant)
    _check_dtype(v, dtype)
    return dtypes.DTYPES[v.launch.mapping.sum_dtype(_DTYPE_NAMES[dtype])].torch


def reduce_sum(
    x: Any, variant: str | catalogue.Variant, *, dim: int | None = None, out: Any = None
) -> Any:
    """Sum of all elements of x (a CuPy array or CUDA torch tensor, any shape) by `variant`: 0-d,
    on x's device, in x's library and dtype (int32 wraps modulo 2^32; the fastest variants return
    float16 / bfloat16 sums as float32, their accumulator); with dim=, the sum along that dim by
    an axis variant. Under TRITON_INTERPRET=1 a Triton variant also sums a CPU tensor (slowly).
    out: a one-element dense tensor (or CuPy array) of result_dtype on x's device, outside x's
    span, to write the sum into and return (as torch.sum's out=): it saves the result's
    allocation, a cached call's largest single cost (4-5 us on the H100 host).
    """
    if type(x) is torch.Tensor and type(variant) is str and dim is None:
        launch = _hit(x, variant)  # None on a miss, off x's device, or inside a capture
        if launch is not None:
            if out is None:
                if launch.call is not None:  # the native launch allocates in C++ too
                    return launch.call(x)
                res = launch.proto.new_empty(())  # new: a plan's buffer is the next call's
            elif _out_fits(out, launch.out_dtype, x):
                res = out
            else:
                return _checked_sum(x, variant, out)  # says what is wrong with out
            launch.go(x, res)  # not launch(x, res): one Python frame fewer
            if out is not None:  # written in place, as torch.sum(out=) it tells autograd
                increment_version(out)
            return res
    if dim is not None or axis_plan.is_axis(variant):
        return _axis_sum(x, variant, dim, out)
    return _checked_sum(x, variant, out)


def _axis_sum(x: Any, variant: str | catalogue.Variant, dim: Any, out: Any) -> Any:
    """torch.sum(x, dim=d)'s shape, in x's library, device and stream, the same bits every run.
    Unlike torch.sum: int32 sums in int32 (wrapping); float16 / bfloat16 add in float32 and round
    once. axis_plan.check's errors come first; no out=; empty gives zeros, without a launch."""
    v = axis_plan.resolve(variant, dim)
    if out is not None:
        raise ValueError(f"out= is not supported with dim= ({v.id}); use the returned tensor")
    if not isinstance(x, torch.Tensor) and not hasattr(x, "__cuda_array_interface__"):
        _as_torch(x, v)  # raises the TypeError saying how to move x to the GPU
    p = axis_plan.check(v, tuple(x.shape), dim, x.dtype.itemsize)
    t, lib = _as_torch(x, v)
    with stream.call_on(t, lib) as stream_ptr:
        t = _dense(t)
        if p.outputs == 0 or p.length == 0:
            return _back(torch.zeros(p.out_shape, dtype=t.dtype, device=t.device), lib)
        if t.is_cuda and plan_cache.capturing():
            return _back(axis_plan.make_plan(v, t, p).run(), lib)  # partials the graph owns
        d = axis_plan.normalize_dim(dim, t.dim())
        launch = plan_cache.default_axis().get(v, t, p, d, stream_ptr)
        res = torch.empty(p.out_shape, dtype=t.dtype, device=t.device)
        launch(t, res)
        return _back(res, lib)


def axis_result_shape(x: torch.Tensor, variant: str | catalogue.Variant, dim: Any) -> tuple:
    """reduce_sum(x, variant, dim=dim)'s shape from x's shape and dtype (the fake), or its error."""
    v = axis_plan.resolve(variant, dim)
    p = axis_plan.check(v, tuple(x.shape), dim, x.dtype.itemsize)
    _check_dtype(v, x.dtype)
    return p.out_shape


def _out_fits(out: Any, dtype: torch.dtype, x: torch.Tensor) -> bool:
    """The hot path's check of out= (the checked path's _check_out says why one fails)."""
    if type(out) is not torch.Tensor or out.dtype is not dtype or out.numel() != 1:
        return False
    if out.layout is not torch.strided or out.requires_grad or out.is_meta or out.is_neg():
        return False
    if out.get_device() != x.get_device():
        return False
    # no byte of out's one element in contiguous x (out may be wider: float32 for float16 input)
    o, lo = out.data_ptr(), x.data_ptr()
    return o >= lo + x.numel() * x.element_size() or lo >= o + out.element_size()


def _check_out(out: Any, want: torch.dtype, x: Any, device: torch.device) -> torch.Tensor:
    """out= as a torch tensor the sum may be written into, or a clear error before any launch:
    its library, layout, size, dtype, device (x's), and no overlap with the caller's x (any view:
    a non-contiguous one is summed from a copy, but an out inside it would still change it)."""
    t = _torch_view(out)
    if t is None:
        raise TypeError(f"out must be a torch tensor or a CuPy array, got {type(out).__name__}")
    if t.layout != torch.strided:
        raise TypeError(f"out must be a dense (strided) tensor, got layout {t.layout}")
    if t.requires_grad:
        raise ValueError("out requires grad: out= does not support autograd (as torch.sum's)")
    if t.is_neg():
        raise ValueError(
            "out is a view with the negative bit set (e.g. z.conj().imag): the sum would be "
            "written negated; pass a plain tensor"
        )
    if t.numel() != 1:
        raise ValueError(f"out must hold one element (the sum), it has {t.numel()}")
    if t.dtype != want:
        raise TypeError(f"out has dtype {t.dtype}; this sum is {want} (harness.result_dtype)")
    if t.device != device:
        raise ValueError(f"out is on {t.device}, the input on {device}")
    (o0, o1), (x0, x1) = _span(t), _span(x)
    if o0 < x1 and x0 < o1:
        raise ValueError("out overlaps the input: the sum would overwrite what it reads")
    return t


def _span(a: Any) -> tuple[int, int]:
    """The first byte of a torch tensor's or CuPy array's elements and one past its last (a CuPy
    array's strides may be negative); (0, 0) when it has none."""
    if isinstance(a, torch.Tensor):
        count, item, ptr = a.numel(), a.element_size(), a.data_ptr()
        steps = [step * item for step in a.stride()]
    else:  # a CuPy array: its strides in bytes
        count, item, ptr, steps = a.size, a.itemsize, a.data.ptr, list(a.strides)
    if count == 0:
        return 0, 0
    ends = [(size - 1) * step for size, step in zip(a.shape, steps, strict=True)]
    return ptr + sum(min(e, 0) for e in ends), ptr + sum(max(e, 0) for e in ends) + item


# Variant ids (as callers spell them) -> the catalogue id, filled by the checked path on first
# use; the hot path tries only these.
_HOT_IDS: dict[str, str] = {}
_DTYPE_NAMES: dict[torch.dtype, str] = {d.torch: name for name, d in dtypes.DTYPES.items()}
_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)
_current_device = getattr(torch._C, "_cuda_getDevice", None)


def _hit(x: torch.Tensor, variant: str):
    """The cached launch for x and a variant id, or None (then the checked path): attribute reads,
    a device and a stream query and one lookup of plan_cache.key_of's key."""
    vid = _HOT_IDS.get(variant)
    if vid is None or not x.is_contiguous() or x.is_neg():
        return None
    dev = x.get_device()  # -1: the CPU (Triton's interpreter)
    if dev >= 0:
        if _raw_stream is None or _current_device is None or _current_device() != dev:
            return None  # another device is current: the checked path switches to x's
        if plan_cache.capturing():
            return None  # a capture: the checked path gives the graph its own workspace
        stream = _raw_stream(dev)
    elif x.is_cpu:
        stream = 0
    else:
        return None  # meta (or another device): the checked path refuses it
    name = _DTYPE_NAMES.get(x.dtype)
    key = (vid, name, x.numel(), x.data_ptr() & 15, dev, stream)
    return plan_cache.default().lookup(key)


def _checked_sum(x: Any, variant: str | catalogue.Variant, out: Any = None) -> Any:
    """reduce_sum with every check, on x's device and stream, into a new 0-d result or out=."""
    v = _variant(variant)
    t, lib = _as_torch(x, v)
    want = result_dtype(v, t.dtype)
    dest = None if out is None else _check_out(out, want, x, t.device)
    with stream.call_on(t, lib) as stream_ptr:
        t = _dense(t)
        if t.numel() == 0:
            res = torch.zeros((), dtype=want, device=t.device)
        else:
            check_n(v, t.numel())  # make_plan's limit (the cached path builds no plan)
            cache, name = plan_cache.default(), _DTYPE_NAMES[t.dtype]
            captured = t.is_cuda and plan_cache.capturing()
            launch = cache.for_capture(v, name, t) if captured else cache.get(v, name, t)
            res = launch.proto.new_empty(()) if dest is None else dest
            if captured:
                launch.in_capture(t, res, stream_ptr)
            else:
                launch.go(t, res)
            if isinstance(variant, str):
                _HOT_IDS[variant] = v.id  # checked once: later calls with this id try the hot path
        if dest is None:
            return _back(res, lib)
        if res.data_ptr() != dest.data_ptr():
            dest.view(-1).copy_(res.view(-1))  # a copy_ counts as the write
        else:
            increment_version(dest)  # written in place, as torch.sum(out=) tells autograd
        return out


def partials(x: Any, variant: str | catalogue.Variant) -> Any:
    """The first-pass partial sums of x under `variant`: one per CUDA block / Triton program."""
    v = _variant(variant)
    t, lib = _as_torch(x, v)
    if t.numel() == 0:
        return _back(torch.zeros((0,), dtype=t.dtype, device=t.device), lib)
    with stream.call_on(t, lib):
        plan = make_plan(v, _dense(t).reshape(-1))  # a one-launch plan's one "partial" is its sum
        plan.poison()
        return _back(plan.run(first_pass_only=True).clone(), lib)
