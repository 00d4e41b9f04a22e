"""Verification of the axis family (harness.core.records_axis): every output of a sum along one
dim against its golden (verify.golden_along), with the 1-D ladder's rules applied per output, the
one rounding of a 16-bit output on top (docs/axis.md#how-it-is-checked)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from harness.check.verify import bound, exact_required, same_bits
from harness.check.verify import golden_along as golden
from harness.core import device, dtypes
from harness.core.catalogue import Variant
from harness.launch import axis_plan, stream

# The unit roundoff of the one rounding of a float32 sum to a 16-bit output.
OUTPUT_ROUNDING = {d: 2.0 ** -dtypes.get(d).precision for d in ("float16", "bfloat16")}


def interpreter_truncates(v: Variant, dtype: str) -> bool:
    """Triton's interpreter (3.x: runtime/interpreter.py, cast_impl) converts float32 to
    bfloat16 by truncation, where the compiled kernel rounds to nearest even (as the CUDA stages'
    cvt.rn): a bfloat16 output of an interpreted Triton kernel may be one ulp toward zero, so its
    one rounding counts 2^-7, and an exact case may equal the truncated exact sum."""
    return v.backend == "triton" and dtype == "bfloat16" and device.interpreting()


@dataclass
class AxisCheck:
    variant: str
    shape: tuple[int, ...]
    dim: int
    ok: bool
    exact_required: bool
    chain_length: int
    max_abs_err: float
    worst_ratio: float  # max |err| / tolerance over the outputs (0 when exact and equal)
    input_unchanged: bool
    message: str = ""


def check_axis(v: Variant, x: torch.Tensor, dim: int, golden_on_cpu: bool = False) -> AxisCheck:
    """Run v along dim on x (contiguous or not: the plan reads a copy) with poisoned outputs,
    on torch's current stream; compare every output with the golden; x must be unchanged.
    golden_on_cpu: the golden and the comparison on the CPU (the sanitize study: under
    compute-sanitizer's initcheck, ATen's own reduce_kernel in float64 / int64, which the golden
    runs on the GPU, is reported; measured on an H100, not a kernel of ours)."""
    p = axis_plan.check(v, tuple(x.shape), dim, x.dtype.itemsize)
    dim = axis_plan.normalize_dim(dim, x.dim())
    before = x.clone()
    t = x.contiguous()
    with stream.call_on(t, "torch"):
        plan = axis_plan.make_plan(v, t, p)
        plan.poison()
        out = plan.run().clone()
    unchanged = same_bits(before, x)
    if golden_on_cpu:
        x, out = x.cpu(), out.cpu()
    g = golden(x, dim)
    length = v.launch.mapping.chain_length(p)
    dtype = dtypes.name_of(x.dtype)
    shape = tuple(x.shape)
    if out.shape != g.value.shape or out.dtype != x.dtype:
        return AxisCheck(v.id, shape, dim, False, True, length, float("inf"), float("inf"),
                         unchanged, f"got {out.dtype} {tuple(out.shape)}, "
                         f"expected {x.dtype} {tuple(g.value.shape)}")  # fmt: skip
    exact = exact_required(dtype, g)
    if exact:
        got = out.to(torch.int64) if not x.dtype.is_floating_point else out.to(torch.float64)
        # floats: the exact sum rounded once to the output's dtype (a no-op for float32 here)
        want = g.value if not x.dtype.is_floating_point else g.value.to(x.dtype).double()
        wrong = (got != want) | (got != got)  # NaN: an output never written (poison)
        if interpreter_truncates(v, dtype):  # the exact sum to bfloat16 toward zero, as float64
            bits = g.value.double().to(torch.float32).view(torch.int32) & -65536
            wrong &= got != bits.view(torch.float32).double()
        bad = int(wrong.sum())
        ok = bad == 0
        max_err = float((got - want).abs().max()) if bad else 0.0
        worst = 0.0 if ok else float("inf")
        msg = "" if ok else f"{bad} of {out.numel()} outputs differ from the exact sums"
    else:
        tol = bound(length, dtype, g)
        if dtype in OUTPUT_ROUNDING:
            u = OUTPUT_ROUNDING[dtype] * (2 if interpreter_truncates(v, dtype) else 1)
            tol = tol * (1 + u) + u * g.value.to(torch.float64).abs()
        got, want = out.to(torch.float64), g.value.to(torch.float64)
        err = (got - want).abs()
        err = torch.where(torch.isnan(err), torch.full_like(err, float("inf")), err)
        # An infinity of the golden's sign is the rounded sum wherever the bound reaches the
        # dtype's overflow threshold (max + half its ulp; round to nearest): no error there.
        fi = torch.finfo(out.dtype)
        limit = fi.max + fi.eps * 2.0 ** math.floor(math.log2(fi.max)) / 2
        overflow = (got == torch.sign(want) * math.inf) & (want.abs() + tol >= limit)
        err = torch.where(overflow, torch.zeros_like(err), err)
        # A row with an infinity or NaN: every order of additions gives the IEEE outcome (NaN if
        # any NaN or both infinities, else the infinity), so it must match exactly; an infinite
        # bound (gamma_L >= 1) proves nothing, so it fails.
        special = ~torch.isfinite(want)
        same = (got == want) | (torch.isnan(got) & torch.isnan(want))
        err = torch.where(special, torch.where(same, 0.0, math.inf), err)
        tol = torch.where(special, 0.0, tol)
        err = torch.where(torch.isinf(tol), math.inf, err)
        worst = float((err / tol.clamp_min(1e-300)).max())
        ok = bool((err <= tol).all())
        max_err = float(err.max())
        msg = "" if worst <= 1 else f"|result - golden| up to {worst:.3g} x the tolerance"
    if not unchanged:
        msg = "the caller's input was modified"
    return AxisCheck(
        v.id, shape, dim, ok and unchanged, exact, length, max_err, worst, unchanged, msg
    )
