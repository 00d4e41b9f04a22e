"""harness.check.exact at its edges, on the CPU: the slice width that keeps the bincount sums exact
(a float64 fraction of all ones, thousands of times), the size limit, every format's layout
written out by hand, the smallest normals beside the subnormals, the rounding modes at overflow,
the condition number's special cases, and the double-double chain length and limit pinned to
numbers worked out by hand from the design (harness.core.mappings: 1024 lanes, chunks of
at least 4096, at most 512 chunks)."""

from __future__ import annotations

import math
import sys
from fractions import Fraction

import numpy as np
import pytest
import torch

from harness.check import exact
from harness.core import mappings


def test_float64_all_ones_fraction_summed_3000_times():
    # nextafter(2, 0) = 2 - 2^-52: a 52-bit fraction of all ones. At n = 3000 a slice may be
    # 53 - bit_length(2999) = 41 bits wide: 3000 * (2^41 - 1) < 2^53. One bit wider (42) the
    # slice sums pass 2^53 (3000 * 2^42 = 1.3e16) and float64 bincount rounds them.
    x = np.full(3000, np.nextafter(2.0, 0.0), dtype=np.float64)
    assert exact.exact_sum(x).fraction() == 3000 * (2 - Fraction(1, 2**52))


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 1023, 1024, 1025, 2**17 + 1])
def test_all_ones_fractions_at_sizes_around_powers_of_two(n):
    # the width changes where bit_length(n - 1) does; float32 and float64 of all-ones fractions,
    # both signs, in the largest binade below 2^k the test can hold exactly
    for dtype, value in ((np.float32, np.nextafter(np.float32(2), np.float32(0))),
                         (np.float64, np.nextafter(2.0, 0.0))):  # fmt: skip
        x = np.full(n, value, dtype=dtype)
        x[::3] = -x[::3]
        negatives = len(range(0, n, 3))
        assert exact.exact_sum(x).fraction() == (n - 2 * negatives) * Fraction(float(value))


def test_the_size_limit_is_2_36_and_inclusive(monkeypatch):
    assert exact.MAX_N == 68_719_476_736  # 2^36: 53 - 36 = 17-bit slices stay exact
    big = np.broadcast_to(np.float32(1), (2**36 + 1,))  # no memory: one element, stride 0
    with pytest.raises(ValueError, match="exact up to n = 2"):
        exact.exact_sum(big)
    monkeypatch.setattr(exact, "MAX_N", 8)  # the comparison itself: n == MAX_N is accepted
    assert exact.exact_sum(np.ones(8, np.float32)).fraction() == 8
    with pytest.raises(ValueError):
        exact.exact_sum(np.ones(9, np.float32))


@pytest.mark.parametrize(
    ("fmt", "precision", "bias", "min_exponent", "max_finite"),
    [
        ("float16", 11, 15, -24, Fraction(65504)),
        ("bfloat16", 8, 127, -133, Fraction(2**8 - 1) * 2**120),  # 0x7F7F: 255 * 2^120
        ("float32", 24, 127, -149, Fraction(2**24 - 1) * 2**104),  # 3.4028235e38
        ("float64", 53, 1023, -1074, Fraction(sys.float_info.max)),
    ],
)
def test_formats_written_out(fmt, precision, bias, min_exponent, max_finite):
    f = exact.float_format(fmt)
    assert (f.precision, f.bias, f.min_exponent, f.max_finite) == (
        precision,
        bias,
        min_exponent,
        max_finite,
    )
    assert np.dtype(f.bits_dtype).itemsize * 8 == 1 + f.exponent_bits + f.fraction_bits


def test_float32_max_finite_is_numpys():
    assert float(exact.float_format("float32").max_finite) == float(np.finfo(np.float32).max)
    assert float(exact.float_format("float16").max_finite) == float(np.finfo(np.float16).max)


def test_smallest_normals_beside_subnormals_and_zeros():
    # exponent field 1 (2^-126) has the implicit bit; field 0 (subnormals, zeros) has none
    tiny = np.float32(2.0**-126)
    sub = np.array([1], dtype=np.uint32).view(np.float32)[0]  # 2^-149
    x = np.array([tiny, sub, 0.0, -0.0, np.nextafter(tiny, np.float32(0)), -tiny], np.float32)
    want = Fraction(1, 2**149) + (Fraction(1, 2**126) - Fraction(1, 2**149))
    assert exact.exact_sum(x).fraction() == want
    two = np.array([2.0**-125, 2.0**-125], dtype=np.float32)  # exponent field 2
    assert exact.exact_sum(two).fraction() == Fraction(2, 2**125)


def test_negative_and_positive_groups_cancel():
    x = np.array([-1.5, 3.0, -0.75, 1024.25, -1024.0], dtype=np.float32)
    assert exact.exact_sum(x).fraction() == 1
    assert exact.exact_abs_sum(x).fraction() == Fraction(4107, 2)  # 1.5 + 3 + 0.75 + 1024.25 + 1024


def test_exact_sum_value_and_float():
    s = exact.exact_sum(np.array([0.1], dtype=np.float32))
    assert s.scale == -149 and s.fraction() == Fraction(float(np.float32(0.1)))
    assert float(s) == float(np.float32(0.1))
    inf = exact.exact_sum(np.array([-np.inf], dtype=np.float32))
    assert float(inf) == -math.inf and not inf.is_finite


def test_nan_payloads_and_signs():
    neg_nan = np.array([0xFFC00001, 0x3F800000], dtype=np.uint32).view(np.float32)
    assert math.isnan(exact.exact_sum(neg_nan).nonfinite)
    both = np.array([0x7F800000, 0xFF800000], dtype=np.uint32).view(np.float32)  # +inf, -inf
    assert math.isnan(exact.exact_sum(both).nonfinite)
    pos = np.array([0x7F800000, 0x7F800000, 0x3F800000], dtype=np.uint32).view(np.float32)
    assert exact.exact_sum(pos).nonfinite == math.inf


def test_bit_pattern_refuses_mismatches():
    with pytest.raises(ValueError, match="must be uint16"):
        exact.bit_pattern(np.array([1], dtype=np.uint32), "bfloat16")
    with pytest.raises(ValueError, match="fmt='float64'"):
        exact.bit_pattern(np.ones(2, np.float32), "float64")
    bits, name = exact.bit_pattern(np.ones(2, np.float32), "float32")
    assert name == "float32" and bits.tolist() == [0x3F800000] * 2
    bits, name = exact.bit_pattern(torch.tensor([1.0, -2.0], dtype=torch.bfloat16))
    assert name == "bfloat16" and bits.tolist() == [0x3F80, 0xC000]


def test_directed_rounding_at_overflow():
    big = exact.float_format("float32").max_finite
    past = exact.exact_sum(np.array([float(big), float(big)], dtype=np.float64))
    assert exact.bracket(past) == (float(big), math.inf)
    assert exact.round_nearest(past) == math.inf
    neg = exact.exact_sum(np.array([-float(big), -float(big)], dtype=np.float64))
    assert exact.bracket(neg) == (-math.inf, -float(big))


def test_bracket_of_a_negative_value_between_floats():
    # -(1 + 2^-30): between -(1 + 2^-23) and -1 in float32
    s = exact.exact_sum(np.array([-1.0, -(2.0**-30)], dtype=np.float64))
    assert exact.bracket(s) == (-(1 + 2.0**-23), -1.0)
    assert exact.round_nearest(s) == -1.0
    assert exact.faithful(-1.0, s) and not exact.faithful(-(1 + 2.0**-22), s)


@pytest.mark.parametrize(
    ("values", "kappa"),
    [([0.0, -0.0], 1.0), ([1.0, -1.0], math.inf), ([1.0, -0.5], 3.0), ([2.0, 2.0], 1.0),
     ([math.inf, 1.0], math.nan)],
)  # fmt: skip
def test_condition_number_special_cases(values, kappa):
    got = exact.condition_number(np.array(values, dtype=np.float32))
    assert (math.isnan(kappa) and math.isnan(got)) or got == kappa


def test_ulp_in_the_subnormal_range_and_at_powers_of_two():
    sub = exact.exact_sum(np.array([3], dtype=np.uint32).view(np.float32))
    assert exact.ulp(sub) == Fraction(1, 2**149)
    at = exact.exact_sum(np.array([1.0], dtype=np.float32))
    assert exact.ulp(at) == Fraction(1, 2**23) and exact.ulp(at, "float16") == Fraction(1, 2**10)
    assert exact.ulp_error(1.0 + 2.0**-23, at) == 1.0
    assert exact.ulp_error(math.inf, at) == math.inf


# -- the double-double chain length and limit, by hand ------------------------------------------

# m(n) = C/1024 + 10 + ceil(M/1024) + 10, C = max(4096, next_pow2(ceil(n / 512))), M = ceil(n/C):
#   n = 1, 4096, 4097, 2^20 + 3: C = 4096 (ceil((2^20+3)/512) = 2049 -> 4096), M <= 257: 25
#   n = 2^25: C = 2^16, M = 512: 64 + 10 + 1 + 10 = 85
#   n = 2^25 + 1: ceil(n / 512) = 65537 -> C = 2^17, M = 257: 128 + 21 = 149
#   n = 2^30: C = 2^21, M = 512: 2048 + 21 = 2069
DD_CHAINS = {1: 25, 4096: 25, 4097: 25, 2**20 + 3: 25, 2**25: 85, 2**25 + 1: 149, 2**30: 2069}
DD_CHUNKS = {1: 4096, 4097: 4096, 2**20 + 3: 4096, 2**25: 65536, 2**25 + 1: 131072}


@pytest.mark.parametrize("n", DD_CHAINS)
def test_dd_chain_length_pinned(n):
    assert exact.dd_chain_length(n) == DD_CHAINS[n]


@pytest.mark.parametrize("n", DD_CHUNKS)
def test_dd_chunk_pinned(n):
    assert mappings.chunk_size(n) == DD_CHUNKS[n]


@pytest.mark.parametrize("n", [1, 2**25, 2**25 + 1, 2**30])
def test_limit_pinned_to_its_leading_term(n):
    # K(n) = (2^-26 - u) / ((1 + u) gamma_k^2), k = 2 m(n), u = 2^-53, gamma_k = ku / (1 - ku):
    # to first order 2^-26 (1 - 2^-27) / (k u)^2 = 2^80 (1 - 2^-27) / k^2, relative terms of
    # order 2 k u (< 1e-12 for k <= 4138) left out. k = 50, 170, 298, 4138.
    k = 2 * DD_CHAINS[n]
    assert exact.faithful_condition_limit(n) == pytest.approx(
        2.0**80 * (1 - 2.0**-27) / k**2, rel=2e-12
    )


def test_limit_at_n_1_is_about_4_8e20():
    assert 4.8357032e20 < exact.faithful_condition_limit(1) < 4.8357033e20
