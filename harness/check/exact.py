"""The exact golden of a float sum (integer mantissas summed per exponent, no rounding anywhere),
and what "faithful" and "ulps" mean against it: docs/reproducible.md#the-exact-sum."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from harness.core.dtypes import DTYPES, DType
from harness.core.mappings import dd_chain_length

# The float formats' bit fields: the one dtype table's (harness.core.dtypes).
FORMATS: dict[str, DType] = {d.name: d for d in DTYPES.values() if d.fraction_bits}
# The largest n whose slice sums stay exact (a slice of at least 16 bits: 16 + 36 < 53).
MAX_N = 2**36


def float_format(fmt: str) -> DType:
    try:
        return FORMATS[fmt]
    except KeyError:
        raise ValueError(f"unknown float format {fmt!r}; known: {', '.join(FORMATS)}") from None


@dataclass(frozen=True)
class ExactSum:
    """numerator * 2^scale, exactly; or, for non-finite input, nonfinite = inf, -inf or nan (and
    numerator = scale = 0: one value per IEEE outcome, whatever the finite part)."""

    numerator: int
    scale: int
    nonfinite: float | None = None

    @property
    def is_finite(self) -> bool:
        return self.nonfinite is None

    def fraction(self) -> Fraction:
        if not self.is_finite:
            raise ValueError(f"the sum is {self.nonfinite}, not a finite number")
        return Fraction(self.numerator) * Fraction(2) ** self.scale

    def __float__(self) -> float:
        """The nearest float64 (for printing; comparisons use fraction())."""
        return self.nonfinite if not self.is_finite else round_nearest(self, "float64")


def bit_pattern(x: Any, fmt: str | None = None) -> tuple[np.ndarray, str]:
    """The raw bits of x as unsigned ints and the format's name. x: a numpy float array
    (float16/32/64), a numpy unsigned array with fmt given (e.g. bfloat16 bits), or a torch
    tensor of any float dtype (bfloat16 included; moved to the CPU)."""
    if hasattr(x, "detach"):  # a torch tensor: read its bits through an integer view
        import torch

        name = str(x.dtype).removeprefix("torch.")
        f = float_format(name)
        view = {2: torch.int16, 4: torch.int32, 8: torch.int64}[x.element_size()]
        raw = x.detach().reshape(-1).contiguous().view(view).cpu().numpy()
        return raw.view(f.bits_dtype), name
    a = np.asarray(x).reshape(-1)
    if a.dtype.kind == "u":
        if fmt is None:
            raise ValueError("unsigned input is read as raw bits: give fmt (e.g. 'bfloat16')")
        f = float_format(fmt)
        if a.dtype != f.bits_dtype:
            raise ValueError(f"{fmt} bits must be {np.dtype(f.bits_dtype)}, got {a.dtype}")
        return a, fmt
    name = a.dtype.name
    if fmt is not None and fmt != name:
        raise ValueError(f"array of {name} given with fmt={fmt!r}")
    f = float_format(name)
    return a.view(f.bits_dtype), name


def exact_sum(x: Any, fmt: str | None = None) -> ExactSum:
    """The exact sum of x (docs/reproducible.md#the-exact-sum); n = 0 sums to exactly 0."""
    bits, name = bit_pattern(x, fmt)
    f = FORMATS[name]
    n = bits.size
    if n > MAX_N:
        raise ValueError(f"exact_sum is exact up to n = 2^36, got {n}")
    top = 2**f.exponent_bits - 1
    groups = 2 * (top + 1)
    group = (bits >> f.bits_dtype(f.fraction_bits)).astype(np.intp)
    counts = np.bincount(group, minlength=groups)
    if counts[top] or counts[groups - 1]:  # an exponent field of all ones: inf or NaN
        special = (group & top) == top
        fraction = bits[special] & f.bits_dtype(2**f.fraction_bits - 1)
        return _nonfinite(group[special] > top, fraction)
    # A slice of `width` bits sums to below 2^(width + log2 n) <= 2^53: exact in float64.
    width = min(f.fraction_bits, 53 - max(n - 1, 1).bit_length())
    sums_by_shift = {f.fraction_bits: counts}  # the implicit bit, for exponent fields >= 1
    for k in range(0, f.fraction_bits, width):
        piece = (bits >> f.bits_dtype(k)) & f.bits_dtype(2 ** min(width, f.fraction_bits - k) - 1)
        sums_by_shift[k] = np.bincount(group, weights=piece.astype(np.float64), minlength=groups)
    total = 0
    for k, sums in sums_by_shift.items():
        for g in np.flatnonzero(sums):
            neg, e = divmod(int(g), top + 1)
            if k == f.fraction_bits and e == 0:
                continue  # subnormals and zeros have no implicit bit
            term = int(sums[g]) << (k + max(e - 1, 0))
            total += -term if neg else term
    return ExactSum(total, f.min_exponent)


def _nonfinite(negative: np.ndarray, fraction: np.ndarray) -> ExactSum:
    """The IEEE outcome of a sum with these inf / NaN elements."""
    signs = set(negative.tolist())
    if (fraction != 0).any() or len(signs) == 2:  # a NaN, or inf + (-inf)
        return ExactSum(0, 0, math.nan)
    return ExactSum(0, 0, -math.inf if signs == {1} else math.inf)


def exact_abs_sum(x: Any, fmt: str | None = None) -> ExactSum:
    """sum |x_i| exactly (the sign bits cleared)."""
    bits, name = bit_pattern(x, fmt)
    f = FORMATS[name]
    cleared = bits & f.bits_dtype(2 ** (8 * f.itemsize - 1) - 1)
    return exact_sum(cleared, name)


def condition_number(x: Any, fmt: str | None = None) -> float:
    """kappa = sum|x_i| / |sum x_i| (inf when the sum is 0 and x is not all zeros; 1 for an
    all-zero x, nan for non-finite data), computed exactly and rounded once."""
    s, a = exact_sum(x, fmt), exact_abs_sum(x, fmt)
    if not s.is_finite:
        return math.nan
    if a.numerator == 0:
        return 1.0
    if s.numerator == 0:
        return math.inf
    return float(a.fraction() / abs(s.fraction()))


# -- rounding and the comparisons ---------------------------------------------------------------


def _round(value: Fraction, fmt: str, mode: str) -> Fraction | float:
    """value rounded to fmt: mode "nearest" (ties to even), "down" (toward -inf) or "up"; a
    Fraction, or +-inf past the largest finite (as IEEE rounding gives it)."""
    f = float_format(fmt)
    if value == 0:
        return Fraction(0)
    sign = -1 if value < 0 else 1
    mag = abs(value)
    quantum = _quantum(mag, f)
    scaled = mag / Fraction(2) ** quantum  # the mantissa in units of the quantum
    low = scaled.numerator // scaled.denominator
    rest = scaled - low
    if mode == "nearest":
        up = rest > Fraction(1, 2) or (rest == Fraction(1, 2) and low % 2 == 1)
    else:  # a directed mode: toward +inf rounds magnitudes up for positive values
        up = rest > 0 and ((mode == "up") == (sign > 0))
    m = low + 1 if up else low
    rounded = Fraction(m) * Fraction(2) ** quantum
    if rounded > f.max_finite:
        overflow = mode == "nearest" or (mode == "up") == (sign > 0)
        return sign * math.inf if overflow else sign * f.max_finite
    return sign * rounded


def _as_float(q: Fraction | float) -> float:
    """A rounded value as a float: exact, since it is a float of fmt (CPython's int / int
    division is correctly rounded, so a representable quotient comes out exact)."""
    return q if isinstance(q, float) else q.numerator / q.denominator


def round_nearest(exact: ExactSum, fmt: str = "float32") -> float:
    """The correctly rounded sum in fmt (round to nearest, ties to even) as a Python float (exact:
    every float16/bfloat16/float32/float64 value is a float64); non-finite sums as they are."""
    if not exact.is_finite:
        return exact.nonfinite
    return _as_float(_round(exact.fraction(), fmt, "nearest"))


def bracket(exact: ExactSum, fmt: str = "float32") -> tuple[float, float]:
    """The two floats of fmt around the exact sum (equal when it is representable)."""
    q = exact.fraction()
    return _as_float(_round(q, fmt, "down")), _as_float(_round(q, fmt, "up"))


def faithful(result: float, exact: ExactSum, fmt: str = "float32") -> bool:
    """result is one of the two floats of fmt bracketing the exact sum (the exact sum itself when
    it is representable). Non-finite sums: the same IEEE outcome (NaN for NaN)."""
    result = float(result)
    if not exact.is_finite:
        return math.isnan(result) if math.isnan(exact.nonfinite) else result == exact.nonfinite
    return result in bracket(exact, fmt)  # a NaN result equals neither


def ulp(exact: ExactSum, fmt: str = "float32") -> Fraction:
    """The unit in the last place AT the exact sum s (Goldberg's / Higham's ulp(s)): fmt's
    spacing in the binade holding |s| (_quantum), the same on both sides of s."""
    return Fraction(2) ** _quantum(abs(exact.fraction()), float_format(fmt))


def _quantum(q: Fraction, f: DType) -> int:
    """The exponent of f's spacing at q >= 0 (ulp's, _round's): e - p + 1 for the binade
    2^e <= q < 2^(e+1), found exactly, at least min_exponent (the subnormals', and q = 0's)."""
    if q == 0:
        return f.min_exponent
    e = q.numerator.bit_length() - q.denominator.bit_length()
    return max((e - 1 if Fraction(2) ** e > q else e) - f.precision + 1, f.min_exponent)


def ulp_error(result: float, exact: ExactSum, fmt: str = "float32") -> float:
    """|result - s| / ulp(s) in fmt (ulp's convention above), computed exactly, rounded once.
    Non-finite: 0.0 when result is the IEEE outcome of the sum, inf otherwise (also for a
    non-finite result of a finite sum)."""
    result = float(result)
    if not exact.is_finite or not math.isfinite(result):
        return 0.0 if faithful(result, exact, fmt) else math.inf
    return float(abs(Fraction(result) - exact.fraction()) / ulp(exact, fmt))


# -- the limit of the double-double design (family "reproducible") ------------------------------

UNIT_ROUNDOFF_64 = Fraction(1, 2**53)


def faithful_condition_limit(n: int) -> float:
    """K(n), the largest condition number on which the double-double sums are promised faithful
    (float32), rounded down; the derivation: docs/reproducible.md#where-kn-comes-from."""
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    k = 2 * dd_chain_length(n)
    u = UNIT_ROUNDOFF_64
    gamma = k * u / (1 - k * u)
    limit = (Fraction(1, 2**26) - u) / ((1 + u) * gamma**2)
    return math.nextafter(float(limit), 0.0)  # rounded down: the promise never widens
