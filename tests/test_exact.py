"""The exact golden (harness.check.exact): hand-made sums whose exact value is known, against
Python's Fractions on random data of every format, the IEEE outcome of non-finite input, n = 0,
the rounding helpers on a float's neighbours, and the double-double limit's derivation."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
import torch

from harness.check import exact
from harness.core import mappings


def fsum_exact(a: np.ndarray) -> Fraction:
    return sum((Fraction(float(v)) for v in a.reshape(-1)), Fraction(0))


def test_seed001_case_keeps_every_one():
    x = np.array([2**24] + [1] * 99, dtype=np.float32)
    s = exact.exact_sum(x)
    assert s.fraction() == 2**24 + 99
    running = np.float32(0)
    for v in x:  # the float32 running sum seed 001 warns about: every 1 is lost
        running = np.float32(running + v)
    assert running == 2**24 and not exact.faithful(float(running), s)
    assert exact.bracket(s) == (2**24 + 98, 2**24 + 100)
    assert exact.round_nearest(s) == 2**24 + 100  # the tie 2^24 + 99 +- 1 goes to even


def test_mixed_magnitudes_cancel_exactly():
    s = exact.exact_sum(np.array([1e30, 1, -1e30], dtype=np.float32))
    assert s.fraction() == 1
    assert exact.faithful(1.0, s) and not exact.faithful(0.0, s)
    assert exact.ulp_error(0.0, s) == 2**23  # one float32 ulp at 1 is 2^-23


def test_subnormals_are_integers_times_2_to_minus_149():
    x = np.array([1, 2, 3, 2**23 - 1], dtype=np.uint32).view(np.float32)
    assert exact.exact_sum(x).fraction() == Fraction(6 + 2**23 - 1, 2**149)
    neg = np.array([0x80000001, 1], dtype=np.uint32).view(np.float32)  # -2^-149 + 2^-149
    assert exact.exact_sum(neg).numerator == 0


@pytest.mark.parametrize(
    ("total", "nearest"),
    [(2**24 + 1, 2**24), (2**24 + 3, 2**24 + 4), (2**25 + 2, 2**25), (2**25 + 6, 2**25 + 8)],
)
def test_ties_round_to_even(total, nearest):
    x = np.array([total - 2**23, 2**23], dtype=np.float64)
    s = exact.exact_sum(x)
    assert s.fraction() == total and exact.round_nearest(s, "float32") == nearest


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_matches_fractions_on_random_data(dtype):
    rng = np.random.default_rng(7)
    scale = 2.0 ** rng.integers(-14 if dtype == np.float16 else -60, 15, 3000)
    a = (rng.standard_normal(3000) * scale).astype(dtype)
    assert exact.exact_sum(a).fraction() == fsum_exact(a)


def test_float16_overflows_to_inf_when_rounded_to_float16():
    s = exact.exact_sum(np.array([65504, 65504], dtype=np.float16))
    assert s.fraction() == 131008
    assert exact.round_nearest(s, "float16") == math.inf
    assert exact.round_nearest(s, "float32") == 131008


def test_bfloat16_from_torch_and_from_raw_bits():
    t = torch.tensor([1.5, 2.0**-133, 3.0, -(2.0**100)], dtype=torch.bfloat16)
    want = Fraction(9, 2) + Fraction(1, 2**133) - 2**100
    assert exact.exact_sum(t).fraction() == want
    raw = t.view(torch.int16).numpy().view(np.uint16)
    assert exact.exact_sum(raw, "bfloat16").fraction() == want


@pytest.mark.parametrize(
    ("values", "outcome"),
    [
        ([math.inf, 1.0], math.inf),
        ([-math.inf, 3.0, -math.inf], -math.inf),
        ([math.inf, -math.inf], math.nan),
        ([1.0, math.nan], math.nan),
        ([-math.inf, math.nan], math.nan),
    ],
)
def test_nonfinite_gives_the_ieee_outcome(values, outcome):
    s = exact.exact_sum(np.array(values, dtype=np.float32))
    assert not s.is_finite
    got = exact.round_nearest(s)
    assert (math.isnan(got) and math.isnan(outcome)) or got == outcome
    assert exact.faithful(outcome, s) and exact.ulp_error(outcome, s) == 0.0
    assert not exact.faithful(0.0, s) and exact.ulp_error(0.0, s) == math.inf
    with pytest.raises(ValueError):
        s.fraction()


def test_empty_sums_to_zero():
    s = exact.exact_sum(np.array([], dtype=np.float32))
    assert s.is_finite and s.fraction() == 0
    assert exact.faithful(0.0, s) and exact.ulp_error(0.0, s) == 0.0
    tiny = 2.0**-149
    assert not exact.faithful(tiny, s) and exact.ulp_error(tiny, s) == 1.0


def test_faithful_and_ulps_on_the_neighbours():
    rng = np.random.default_rng(3)
    for v in rng.standard_normal(200).astype(np.float32):
        lo, hi = v, np.nextafter(v, np.float32(np.inf))
        # an exact sum strictly between two float32 neighbours: their midpoint plus a nudge
        mid = (np.float64(lo) + np.float64(hi)) / 2
        s = exact.exact_sum(np.array([mid, (np.float64(hi) - np.float64(lo)) / 8]))
        assert exact.bracket(s) == (float(lo), float(hi))
        assert exact.faithful(float(lo), s) and exact.faithful(float(hi), s)
        for outside in (
            np.nextafter(lo, np.float32(-np.inf)),
            np.nextafter(hi, np.float32(np.inf)),
        ):
            assert not exact.faithful(float(outside), s)
        err_lo, err_hi = exact.ulp_error(float(lo), s), exact.ulp_error(float(hi), s)
        assert 0 < err_lo < 1 and 0 < err_hi < 1 and err_lo + err_hi == pytest.approx(1.0)
        on = exact.exact_sum(np.array([v], dtype=np.float32))  # representable: only itself
        assert exact.faithful(float(v), on) and not exact.faithful(float(hi), on)


def test_ulp_is_the_spacing_of_the_exact_sums_binade():
    s = exact.exact_sum(np.array([1.0, 2.0**-30], dtype=np.float64))  # just above 1
    assert exact.ulp(s) == Fraction(1, 2**23)
    below = float(np.nextafter(np.float32(1), np.float32(0)))  # 1 - 2^-24
    assert exact.faithful(below, s) is False
    assert exact.ulp_error(below, s) == pytest.approx((2.0**-24 + 2.0**-30) / 2.0**-23)


def test_bad_input_is_a_clear_error():
    with pytest.raises(ValueError, match="give fmt"):
        exact.exact_sum(np.array([1], dtype=np.uint16))
    with pytest.raises(ValueError, match="unknown float format"):
        exact.round_nearest(exact.exact_sum(np.ones(2, np.float32)), "float8")


# -- the double-double limit ------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 1000, 4097, 2**20 + 3, 2**25, 2**30])
def test_chunks_follow_the_design(n):
    # the chain lengths themselves are pinned by hand in tests/test_exact_edges.py
    c = mappings.chunk_size(n)
    assert c >= 4096 and c & (c - 1) == 0 and -(-n // c) <= 512


@pytest.mark.parametrize("n", [1, 2**20, 2**25, 2**30])
def test_limit_is_the_largest_kappa_the_derivation_allows(n):
    k = 2 * exact.dd_chain_length(n)
    u = Fraction(1, 2**53)
    gamma = k * u / (1 - k * u)

    def error_bound_fits(kappa: Fraction) -> bool:  # the docstring's inequality, per unit |s|
        return gamma**2 * kappa * (1 + u) + u <= Fraction(1, 2**26)

    limit = exact.faithful_condition_limit(n)
    assert error_bound_fits(Fraction(limit))
    assert not error_bound_fits(Fraction(limit) * Fraction(1001, 1000))


def test_limit_shrinks_as_chains_grow():
    limits = [exact.faithful_condition_limit(2**k) for k in range(0, 34, 3)]
    assert all(a >= b for a, b in itertools.pairwise(limits))
    with pytest.raises(ValueError):
        exact.faithful_condition_limit(0)
