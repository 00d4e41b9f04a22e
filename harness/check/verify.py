"""Golden sums, error bounds derived from the tile mapping's longest addition chain (gamma_L *
sum|x|, exact where every partial is), and the correctness check every run goes through; the
rules and their reasons: docs/correctness.md#how-results-are-checked."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from harness.core import dtypes
from harness.core.catalogue import COPY_ID, Variant
from harness.launch import peers, plan

# float16 / bfloat16 inputs are summed in float32, so their additions round to float32: u = 2^-24.
UNIT_ROUNDOFF = {name: d.unit_roundoff for name, d in dtypes.DTYPES.items() if d.fraction_bits}
FLOAT32_EXACT_INTEGERS = 2**24


def gamma(k: int, u: float) -> float:
    if k * u >= 1:
        return float("inf")
    return k * u / (1 - k * u)


def wrap_int32(s: int | torch.Tensor) -> int | torch.Tensor:
    """An int (or int64 tensor) wrapped modulo 2^32 into [-2^31, 2^31): an int32 accumulator's."""
    return ((s + 2**31) % 2**32) - 2**31


@dataclass(frozen=True)
class Golden:
    value: float | int  # exact sum (wrapped for int32), or the float64 sum (golden_along: tensors)
    abs_sum: float  # sum |x_i|, for the error bound
    integer_valued: bool
    own_error: float  # bound on |value - exact sum| (0 when exact)


def golden_along(x: torch.Tensor, dim: int) -> Golden:
    """The golden sums of x along dim as tensors (int64 exact, wrapped for int32; or float64)."""
    if not x.dtype.is_floating_point:
        wide = x.to(torch.int64)
        exact = wide.sum(dim=dim)
        value = wrap_int32(exact) if x.dtype == torch.int32 else exact
        abs_sum = wide.abs().sum(dim=dim).to(torch.float64)
        return Golden(value, abs_sum, True, torch.zeros_like(abs_sum))
    abs_sum = x.abs().to(torch.float64).sum(dim=dim)  # |x| is exact: no float64 copy kept
    integer = bool(torch.isfinite(x).all()) and bool((x == torch.round(x)).all())
    if integer and (abs_sum.numel() == 0 or float(abs_sum.max()) < 2**62):
        return Golden(x.to(torch.int64).sum(dim=dim), abs_sum, True, abs_sum * 0)
    own = gamma(x.shape[dim], UNIT_ROUNDOFF["float64"]) * abs_sum
    return Golden(x.to(torch.float64).sum(dim=dim), abs_sum, False, own)


def golden(x: torch.Tensor) -> Golden:
    g = golden_along(x.reshape(-1), 0)
    return Golden(g.value.item(), g.abs_sum.item(), g.integer_valued, g.own_error.item())


def exact_required(dtype: str, g: Golden) -> bool:
    """int data, or integer-valued floats whose every partial sum is an integer within 2^24 (on
    every output of a sum along a dim): the result must be exact."""
    most = float(g.abs_sum.max()) if isinstance(g.abs_sum, torch.Tensor) else g.abs_sum
    return dtype.startswith("int") or (g.integer_valued and most <= FLOAT32_EXACT_INTEGERS)


def bound(length: int, dtype: str, g: Golden) -> float | torch.Tensor:
    """gamma_L * sum|x| plus the golden's own error: a float sum whose longest chain is L."""
    return gamma(length, UNIT_ROUNDOFF[dtype]) * g.abs_sum + g.own_error


def tolerance(variant: Variant, dtype: str, n: int, g: Golden, exact: bool = False) -> float:
    """Largest |result - golden| the variant may show on this input; 0 means exact (exact=True:
    data whose every partial sum is exact, exact_input's)."""
    if exact or exact_required(dtype, g):
        return 0.0
    return bound(variant.launch.chain_length(n) if variant.launch else n, dtype, g)


@dataclass
class CheckResult:
    variant: str
    dtype: str
    n: int
    ok: bool
    value: float | int | None
    golden: float | int
    abs_err: float | None
    tolerance: float
    exact_required: bool
    input_unchanged: bool
    message: str = ""


def same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Bit-for-bit equality (torch.equal says NaN != NaN)."""
    return a.shape == b.shape and torch.equal(
        a.contiguous().reshape(-1).view(torch.uint8), b.contiguous().reshape(-1).view(torch.uint8)
    )


def as_number(t: torch.Tensor) -> float | int:
    v = t.item()
    return int(v) if not t.dtype.is_floating_point else float(v)


def compare(
    variant: Variant,
    dtype: str,
    n: int,
    value: float | int,
    g: Golden,
    input_unchanged: bool = True,
    exact: bool = False,
) -> CheckResult:
    if isinstance(g.value, float) and not math.isfinite(g.value):
        # NaN / +-Inf in the input: the sum is NaN if any NaN or both infinities occur, else the
        # infinity's sign; every order of addition gives that, so the result must match exactly.
        # (Poisoning cannot prove every partial was written here; the finite checks do that.)
        nan_both = math.isnan(g.value) and isinstance(value, float) and math.isnan(value)
        tol, err = 0.0, 0.0 if nan_both or value == g.value else math.inf
        why = f"expected {g.value} (IEEE propagation), got {value}"
    else:
        tol = tolerance(variant, dtype, n, g, exact)
        nan = isinstance(value, float) and value != value  # an unwritten (poisoned) partial
        err = math.inf if nan else float(abs(value - g.value))
        why = f"|result - golden| = {err:.6g} > tolerance {tol:.6g}"
        if math.isinf(tol):  # gamma_L >= 1 (a peer's L is n): a bound that proves nothing
            why = f"no error bound at n = {n} for this data (check it on exact_input's)"
    ok = err <= tol < math.inf
    msg = "" if ok else why
    if not input_unchanged:
        msg = "the caller's input was modified"
    return CheckResult(
        variant.id, dtype, n, ok and input_unchanged, value, g.value, err, tol, tol == 0.0,
        input_unchanged, msg
    )  # fmt: skip


def check_variant(
    variant: Variant, x: torch.Tensor, g: Golden | None = None, exact: bool = False
) -> CheckResult:
    """Run `variant` on x with poisoned outputs; compare with the golden (exact=True: x is
    exact_input's, the sum must be exact); check x is unchanged. A peer (a library call, or the
    copy: harness.launch.peers): torch.sum of int32 returns an int64, compared with the EXACT
    (unwrapped) sum; the copy must equal the input (its value: the golden of the copy)."""
    dtype = dtypes.name_of(x.dtype)
    g = g if g is not None else golden(x)
    before = x.clone()
    if variant.backend != "peer":
        bound_plan = plan.make_plan(variant, x)
        bound_plan.poison()
        out = bound_plan.run()
        value = as_number(out[0])
        unchanged = same_bits(before, x)
        return compare(variant, dtype, x.numel(), value, g, unchanged, exact)
    out = peers.run(variant, x)
    unchanged = bool(torch.equal(before, x))
    n = x.numel()
    if variant.id == COPY_ID:
        equal = bool(torch.equal(out, x))
        r = compare(variant, dtype, n, golden(out).value, g, unchanged)
        r.ok = equal and unchanged
        r.message = "" if r.ok else (r.message or "the copy differs from the input")
        return r
    value = as_number(out)
    if out.dtype == torch.int64 and x.dtype == torch.int32:
        total = int(x.to(torch.int64).sum().item())  # unwrapped: torch.sum returns int64
        g = Golden(total, g.abs_sum, True, 0.0)
    return compare(variant, dtype, n, value, g, unchanged, exact)


# exact_input's view sits between poisoned elements: HEAD before it (256 bytes of float32: the
# alignment of the buffer kept), TAIL after it (past any tile or unrolled block of the catalogue)
HEAD, TAIL = 64, 2**16


def exact_input(n: int, dtype: str, device: str | torch.device) -> torch.Tensor:
    """Fresh nonzero integers in [-8, 8] with random signs, a view with poison (NaN, INT_POISON)
    on both sides: what every run's check sums. Every partial sum of any mapping is then an exact
    integer: it is a sum over a subset S fixed by the mapping, not by the data, and Hoeffding's
    inequality gives P(|sum_S x| >= 2^24) <= 2 exp(-2^48 / (128 |S|)) < 2 exp(-2^10) for
    |S| <= 2^31, so the result must EQUAL the exact sum (float16 / bfloat16 are summed in
    float32); one element missed, read twice or read from past either end moves it."""
    dt = dtypes.torch_dtype(dtype)
    buf = dtypes.poison_(torch.empty(HEAD + n + TAIL, dtype=dt, device=device))
    signs = torch.randint(0, 2, (n,), device=device) * 2 - 1
    buf[HEAD : HEAD + n] = torch.randint(1, 9, (n,), device=device) * signs
    return buf[HEAD : HEAD + n]


def seed_like_input(n: int, dtype: str, device: str | torch.device, generator=None) -> torch.Tensor:
    """Fresh random input as the seeds draw it: integers 0..99 (`rand() % 100`)."""
    return torch.randint(0, 100, (n,), dtype=torch.int32, device=device, generator=generator).to(
        dtypes.torch_dtype(dtype)
    )
