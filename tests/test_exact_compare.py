"""harness.check.exact's comparisons and records at the points the other tests step around (found
by mutation testing), on the CPU: results handed over as numpy / torch scalars of a narrower
type, a NaN result of a finite sum, the non-finite sums' one value per outcome, the shared format
table and the sums being immutable, and the double-double limit still rounded down where it is
below 1. Every expected value is worked out by hand in the comments."""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

import numpy as np
import pytest
import torch

from harness.check import exact

# 1 + 2^-20 is a float32 (23 fraction bits), not a float16 (10) nor a bfloat16 (7): its float32
# bracket is itself, and the result 1.0 lies 2^-20 = 8 float32 ulps (2^-23 at 1) away.
ONE_PLUS = exact.exact_sum(np.array([1.0, 2.0**-20], dtype=np.float32))


def test_the_sum_used_below_is_one_plus_2_to_the_minus_20():
    assert ONE_PLUS.fraction() == 1 + Fraction(1, 2**20)
    assert exact.bracket(ONE_PLUS) == (1 + 2.0**-20, 1 + 2.0**-20)


@pytest.mark.parametrize(
    "result",
    [np.float16(1.0), torch.tensor(1.0, dtype=torch.bfloat16), np.float32(1.0), 1.0],
    ids=["numpy-float16", "torch-bfloat16", "numpy-float32", "float"],
)
def test_a_result_is_judged_by_its_value_whatever_its_type(result):
    """1.0 is not faithful to 1 + 2^-20 in float32, also when it arrives as a float16 / bfloat16
    scalar (compared in its own type, the bracket 1 + 2^-20 would round to 1.0 and match)."""
    assert not exact.faithful(result, ONE_PLUS, "float32")
    assert exact.ulp_error(result, ONE_PLUS, "float32") == 8.0


@pytest.mark.parametrize(
    "result", [np.float32(1 + 2.0**-20), torch.tensor(1 + 2.0**-20, dtype=torch.float32)]
)
def test_the_exact_result_as_a_numpy_or_torch_scalar_is_faithful_with_no_error(result):
    assert exact.faithful(result, ONE_PLUS, "float32")
    assert exact.ulp_error(result, ONE_PLUS, "float32") == 0.0


@pytest.mark.parametrize("fmt", ["float16", "bfloat16", "float32", "float64"])
def test_a_nan_result_of_a_finite_sum_is_never_faithful(fmt):
    for data in ([1.0, 2.0], [0.0], [-3.5, 3.5]):  # sums 3, 0, 0
        s = exact.exact_sum(np.array(data, dtype=np.float32))
        for result in (math.nan, np.float32("nan"), -math.nan):
            assert not exact.faithful(result, s, fmt)
            assert exact.ulp_error(result, s, fmt) == math.inf


@pytest.mark.parametrize(
    "data, outcome",
    [
        ([1.0, math.inf, 2.0], math.inf),
        ([-math.inf, 5.0], -math.inf),
        ([math.nan, 1.0], math.nan),
        ([math.inf, -math.inf, 3.0], math.nan),
    ],
)
def test_a_non_finite_sum_is_one_value_per_outcome(data, outcome):
    """numerator = scale = 0 whatever the finite part: the same outcome is the same record."""
    s = exact.exact_sum(np.array(data, dtype=np.float32))
    assert (s.numerator, s.scale) == (0, 0) and not s.is_finite
    if math.isnan(outcome):
        assert math.isnan(s.nonfinite)
    else:
        assert s.nonfinite == outcome
        other = exact.exact_sum(np.array([outcome, 1e30, -7.0], dtype=np.float32))
        assert other == s and hash(other) == hash(s)


def test_the_format_table_and_the_sums_cannot_be_changed():
    """FORMATS is shared by every exact sum in the process, and sums are values (used as keys)."""
    f32 = exact.FORMATS["float32"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        f32.fraction_bits = 22
    assert exact.float_format("float32").fraction_bits == 23
    s = exact.exact_sum(np.array([1.5, 2.25], dtype=np.float32))  # 3.75
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.numerator = 0
    assert s.fraction() == Fraction(15, 4)
    assert {s: "a", exact.exact_sum(np.array([3.75], dtype=np.float32)): "b"} == {s: "b"}
    assert len({f32, exact.float_format("float32"), exact.FORMATS["float16"]}) == 2


def test_the_limit_is_rounded_down_also_below_one():
    """At n = 2^60 (a size only the formula reaches) K(n) is about 0.06: the rounding must still
    go toward 0 (down), so the promise never widens. k = 2 m(n), u = 2^-53, and the docstring's
    inequality gamma_k^2 kappa (1 + u) + u <= 2^-26 must hold at K(n) and fail just above."""
    n = 2**60
    # C(2^60) = 2^60 / 512 chunks = 2^51; m = 2^51 / 1024 lane updates + 10 tree levels + 1 update
    # of the 512 chunk sums per lane + 10 levels = 2^41 + 21
    assert exact.dd_chain_length(n) == 2**41 + 21
    k = 2 * (2**41 + 21)
    limit = exact.faithful_condition_limit(n)
    assert 0.0624 < limit < 0.0625  # the leading term 2^80 / k^2 is just below 2^80 / 2^84
    u = Fraction(1, 2**53)
    gamma = k * u / (1 - k * u)

    def fits(kappa: Fraction) -> bool:
        return gamma**2 * kappa * (1 + u) + u <= Fraction(1, 2**26)

    assert fits(Fraction(limit))
    assert not fits(Fraction(math.nextafter(limit, math.inf)) * Fraction(1 + 10**-9))


@pytest.mark.parametrize(
    "dtype, data, total",
    [
        # 2-byte formats: 1.5 - 0.25 + 2^-10 (float16 keeps 10 fraction bits at 1)
        (torch.float16, [1.5, -0.25, 2.0**-10], Fraction(5, 4) + Fraction(1, 2**10)),
        (torch.bfloat16, [1.5, -0.25, 2.0**-7], Fraction(5, 4) + Fraction(1, 2**7)),
        # 4 bytes: 1 + 2^-23 (float32's last fraction bit) - 3
        (torch.float32, [1 + 2.0**-23, -3.0], Fraction(-2) + Fraction(1, 2**23)),
        # 8 bytes: 1 + 2^-52 (float64's last fraction bit) + 2^60
        (torch.float64, [1 + 2.0**-52, 2.0**60], 2**60 + 1 + Fraction(1, 2**52)),
    ],
)
def test_torch_tensors_of_every_width_are_read_through_their_bits(dtype, data, total):
    x = torch.tensor(data, dtype=dtype)
    assert exact.exact_sum(x).fraction() == total
    assert exact.exact_sum(x.reshape(len(data), 1)[:, 0]).fraction() == total  # a view


def test_abs_sum_clears_only_the_sign_bit():
    # |-(1 + 2^-23)| + |1 + 2^-23| + |-3| = 5 + 2^-22: the last fraction bit of each element counts
    x = np.array([-(1 + 2.0**-23), 1 + 2.0**-23, -3.0], dtype=np.float32)
    assert exact.exact_abs_sum(x).fraction() == 5 + Fraction(1, 2**22)
    # float64: |-2^1000| + |-(1 + 2^-52)| = 2^1000 + 1 + 2^-52
    y = np.array([-(2.0**1000), -(1 + 2.0**-52)])
    assert exact.exact_abs_sum(y).fraction() == 2**1000 + 1 + Fraction(1, 2**52)


@pytest.mark.parametrize(
    "data, kappa",
    [
        ([-3.0, 1.0], 2.0),  # sum -2, sum|x| 4
        ([3.0, -1.0], 2.0),  # sum 2, sum|x| 4
        ([-1.0, -1.0, -2.0], 1.0),  # all one sign: kappa 1, also for a negative sum
        ([-0.75, 0.25], 2.0),  # sum -0.5, sum|x| 1
    ],
)
def test_condition_number_is_positive_for_negative_sums(data, kappa):
    assert exact.condition_number(np.array(data, dtype=np.float32)) == kappa


@pytest.mark.parametrize("fmt", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("value", [-1.0, 1.0, -2.0, 0.5, -0.0])
def test_small_integers_and_powers_of_two_round_to_themselves(fmt, value):
    """-1, 1, -2, 0.5 and 0 are floats of every format: rounded, bracketed and judged as
    themselves."""
    s = exact.exact_sum(np.array([value], dtype=np.float32))
    assert exact.round_nearest(s, fmt) == value
    assert exact.bracket(s, fmt) == (value, value)
    assert exact.faithful(value, s, fmt) and exact.ulp_error(value, s, fmt) == 0.0
    assert not exact.faithful(-value - 1, s, fmt)


@pytest.mark.parametrize("n", [3, 5, 9, 1025, 2**17 + 1])
def test_float64_all_ones_fractions_of_one_sign_just_past_a_power_of_two(n):
    """n = 2^k + 1 elements of 2 - 2^-52 (a 52-bit fraction of all ones), all in one group: a
    slice of w bits sums to n (2^w - 1), which stays below 2^53 (exact in float64) only for
    w <= 53 - bit_length(n - 1) = 52 - k; one bit wider, n (2^(53-k) - 1) > 2^53 is rounded."""
    x = np.full(n, np.nextafter(2.0, 0.0))
    assert exact.exact_sum(x).fraction() == n * (2 - Fraction(1, 2**52))
    assert exact.exact_sum(-x).fraction() == -n * (2 - Fraction(1, 2**52))


@pytest.mark.parametrize(
    "bits, fmt",
    [
        (np.array([0x7F800001], dtype=np.uint32), "float32"),  # payload 1: the last fraction bit
        (np.array([0xFF800001, 0x3F800000], dtype=np.uint32), "float32"),
        (np.array([0x7C01], dtype=np.uint16), "float16"),
        (np.array([0x7F81], dtype=np.uint16), "bfloat16"),
        (np.array([0x7FF0000000000001], dtype=np.uint64), "float64"),
    ],
)
def test_a_nan_with_only_the_last_fraction_bit_set_is_nan_not_inf(bits, fmt):
    s = exact.exact_sum(bits, fmt)
    assert not s.is_finite and math.isnan(s.nonfinite)
