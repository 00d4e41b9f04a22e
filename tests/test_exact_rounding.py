"""harness.check.exact's rounding at the points the other tests step around (found by mutation
testing): the largest finite float itself (representable: no overflow), and a value whose
bit-length estimate of its binade is one too high (1/3: a non-dyadic Fraction, which _round's
contract takes even though exact sums are always dyadic). Every expected value is worked out by
hand in the comments, not taken from the code under test."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from harness.check import exact

# float32's largest finite: (2^24 - 1) * 2^104 = 3.4028234663852886e38 (IEEE 754 binary32).
F32_MAX = (2**24 - 1) * 2.0**104


def test_the_largest_finite_float_is_itself_not_an_overflow():
    s = exact.exact_sum(np.array([F32_MAX], dtype=np.float32))
    assert s.fraction() == Fraction((2**24 - 1) * 2**104)
    # representable: nearest is itself, both directed roundings are itself, the bracket collapses
    assert exact.round_nearest(s) == F32_MAX
    assert exact.bracket(s) == (F32_MAX, F32_MAX)
    assert exact.faithful(F32_MAX, s) and not exact.faithful(math.inf, s)
    neg = exact.exact_sum(np.array([-F32_MAX], dtype=np.float32))
    assert exact.round_nearest(neg) == -F32_MAX
    assert exact.bracket(neg) == (-F32_MAX, -F32_MAX)


@pytest.mark.parametrize(
    ("mode", "want"),
    # 1/3 = 2^-2 * 1.0101..._2; float32 keeps 24 significant bits, so the grid is 2^-25 there:
    # 2^25 / 3 = 11184810.67 -> down 11184810 * 2^-25, up (and nearest: .67 > .5) 11184811 * 2^-25
    [("down", Fraction(11184810, 2**25)), ("up", Fraction(11184811, 2**25)),
     ("nearest", Fraction(11184811, 2**25))],
)  # fmt: skip
def test_round_a_non_dyadic_fraction(mode, want):
    # bit_length(1) - bit_length(3) = -1 overestimates the binade of 1/3 (2^-2 <= 1/3 < 2^-1)
    assert exact._round(Fraction(1, 3), "float32", mode) == want
    assert exact._round(Fraction(-1, 3), "float32", "nearest") == -Fraction(11184811, 2**25)
    # numpy's float32(1/3) agrees (float64 1/3 then rounded: no double-rounding tie here)
    assert Fraction(float(np.float32(1 / 3))) == Fraction(11184811, 2**25)
