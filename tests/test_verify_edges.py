"""harness.check.verify at its edges, on the CPU: compare() one ulp past the tolerance and exactly
at it, a finite wrong value against an exact golden, NaN / Inf results and goldens, the caller's-
data check seeing a change (also one torch.equal cannot see), golden() at n = 0, at the integer
limits and on non-finite data, and the tolerance's thresholds. Every expected number here is
written in the test (by hand, with the arithmetic in a comment), not taken from the code."""

from __future__ import annotations

import math

import pytest
import torch

from harness.check import verify
from harness.core import catalogue

U32 = 2.0**-24  # float32 unit roundoff
# cuda/v3-sequential at n = 1000: 2 passes of (per-thread 1 + depth 8 of a 256-thread tree)...
# the pinned value is tests/test_mappings.py's PINNED_CHAIN_LENGTHS["cuda/v3-sequential"][1].
V3 = catalogue.get("cuda/v3-sequential")
V3_L_1000 = 18


def _float_golden(value: float, abs_sum: float, own_error: float = 0.0) -> verify.Golden:
    return verify.Golden(value, abs_sum, False, own_error)


# -- compare: the tolerance's edge --------------------------------------------------------------


def test_exactly_at_the_tolerance_passes_and_one_ulp_past_fails():
    # gamma_18 * 2^30 with u = 2^-24: 18u / (1 - 18u) * 2^30 = 1152.0012... (the bound written
    # out from the pinned chain length; the product code's tolerance must equal it)
    tol = 18 * U32 / (1 - 18 * U32) * 2.0**30
    assert tol == pytest.approx(1152.00123596, rel=1e-9)
    g = _float_golden(0.0, 2.0**30)
    assert verify.tolerance(V3, "float32", 1000, g) == tol
    at = verify.compare(V3, "float32", 1000, tol, g)
    assert at.ok and at.abs_err == tol and at.tolerance == tol and not at.exact_required
    assert at.message == ""
    for past in (math.nextafter(tol, math.inf), -math.nextafter(tol, math.inf)):
        r = verify.compare(V3, "float32", 1000, past, g)
        assert not r.ok and r.abs_err > r.tolerance
        assert r.message.startswith("|result - golden| = ") and "> tolerance" in r.message


def test_golden_own_error_widens_the_tolerance_by_exactly_itself():
    g = _float_golden(0.0, 2.0**30, own_error=0.5)
    tol = 18 * U32 / (1 - 18 * U32) * 2.0**30 + 0.5
    assert verify.tolerance(V3, "float32", 1000, g) == tol
    assert verify.compare(V3, "float32", 1000, tol, g).ok
    assert not verify.compare(V3, "float32", 1000, math.nextafter(tol, math.inf), g).ok


@pytest.mark.parametrize("wrong_by", [1, -1, 101, 10**6])
def test_a_finite_wrong_value_fails_an_exact_golden(wrong_by):
    # 100 values 0..99 sum to 4950; sum|x| <= 2^24, integer-valued: exact required (tol 0)
    x = torch.arange(100, dtype=torch.float32)
    g = verify.golden(x)
    assert g.value == 4950 and g.integer_valued
    right = verify.compare(V3, "float32", 100, 4950.0, g)
    assert right.ok and right.exact_required and right.tolerance == 0.0 and right.abs_err == 0.0
    r = verify.compare(V3, "float32", 100, 4950.0 + wrong_by, g)
    assert not r.ok and r.abs_err == abs(wrong_by) and r.exact_required


def test_a_wrong_int32_value_fails():
    g = verify.golden(torch.tensor([2**31 - 1, 2], dtype=torch.int32))
    assert g.value == -(2**31) + 1  # 2^31 + 1 wrapped
    assert verify.compare(V3, "int32", 2, -(2**31) + 1, g).ok
    for wrong in (2**31 + 1, -(2**31), -(2**31) + 2):
        assert not verify.compare(V3, "int32", 2, wrong, g).ok


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_result_of_a_finite_sum_fails(bad):
    g = _float_golden(1.5, 2.0**30)
    r = verify.compare(V3, "float32", 1000, bad, g)
    assert not r.ok and r.abs_err == math.inf and "tolerance" in r.message


def test_a_modified_input_fails_even_with_the_right_value():
    g = verify.golden(torch.arange(10, dtype=torch.float32))
    r = verify.compare(V3, "float32", 10, 45.0, g, input_unchanged=False)
    assert not r.ok and not r.input_unchanged and r.message == "the caller's input was modified"
    assert verify.compare(V3, "float32", 10, 45.0, g, input_unchanged=True).ok


# -- compare: non-finite goldens (IEEE propagation, exact) --------------------------------------


@pytest.mark.parametrize(
    ("golden", "value", "ok"),
    [
        (math.nan, math.nan, True),
        (math.nan, math.inf, False),
        (math.nan, 0.0, False),
        (math.inf, math.inf, True),
        (math.inf, -math.inf, False),
        (math.inf, math.nan, False),
        (math.inf, 3.4e38, False),
        (-math.inf, -math.inf, True),
        (-math.inf, math.inf, False),
    ],
)
def test_non_finite_golden_must_match_exactly(golden, value, ok):
    g = _float_golden(golden, math.inf)
    r = verify.compare(V3, "float32", 4, value, g)
    assert r.ok is ok and r.exact_required and r.tolerance == 0.0
    assert r.abs_err == (0.0 if ok else math.inf)
    assert (r.message == "") is ok
    if not ok:
        assert "IEEE propagation" in r.message
    modified = verify.compare(V3, "float32", 4, value, g, input_unchanged=False)
    assert not modified.ok and modified.message == "the caller's input was modified"


# -- golden ------------------------------------------------------------------------------------


def test_empty_input_has_an_exact_zero_golden():
    for dtype in (torch.float32, torch.int32, torch.float16):
        g = verify.golden(torch.empty(0, dtype=dtype))
        assert g == verify.Golden(0, 0.0, True, 0.0)
        assert verify.tolerance(V3, "float32", 0, g) == 0.0
        assert verify.compare(V3, "float32", 0, 0.0, g).ok
        assert not verify.compare(V3, "float32", 0, 1.0, g).ok


def test_int64_golden_is_not_wrapped():
    x = torch.tensor([2**40, 2**40, -3], dtype=torch.int64)
    g = verify.golden(x)
    assert g.value == 2**41 - 3 and g.abs_sum == 2**41 + 3 and g.integer_valued


@pytest.mark.parametrize(
    ("exact", "wrapped"),
    [(2**31 - 1, 2**31 - 1), (2**31, -(2**31)), (-(2**31), -(2**31)), (-(2**31) - 1, 2**31 - 1),
     (2**32, 0), (-(2**32) + 5, 5)],
)  # fmt: skip
def test_wrap_int32_edges(exact, wrapped):
    assert verify.wrap_int32(exact) == wrapped


def test_integer_valued_floats_up_to_2_62_are_exact_and_past_it_are_not():
    # sum|x| = 2^61 + 2^60 < 2^62: the int64 path, an int golden with no error of its own
    below = verify.golden(torch.tensor([2.0**61, 2.0**60, -1.0], dtype=torch.float64))
    assert below.integer_valued and below.own_error == 0.0
    assert below.value == 2**61 + 2**60 - 1 and isinstance(below.value, int)
    # sum|x| = 2^62 exactly: the float64 path (int64 could overflow on a longer sum)
    at = verify.golden(torch.tensor([2.0**61, 2.0**61], dtype=torch.float64))
    assert not at.integer_valued and isinstance(at.value, float) and at.value == 2.0**62
    assert at.own_error > 0


def test_non_integer_float_golden_states_its_own_error():
    x = torch.tensor([0.5, 0.25, 0.125], dtype=torch.float32)
    g = verify.golden(x)
    assert g.value == 0.875 and g.abs_sum == 0.875 and not g.integer_valued
    # gamma_3 (float64) * 0.875 = 3 * 2^-53 / (1 - 3 * 2^-53) * 0.875, about 2.9e-16
    assert 3 * 2.0**-53 * 0.875 <= g.own_error <= 3.001 * 2.0**-53 * 0.875


@pytest.mark.parametrize(
    ("values", "want"),
    [([1.0, math.inf], math.inf), ([-math.inf, 2.0], -math.inf), ([1.0, math.nan], math.nan),
     ([math.inf, -math.inf], math.nan)],
)  # fmt: skip
def test_non_finite_input_golden(values, want):
    g = verify.golden(torch.tensor(values, dtype=torch.float32))
    assert not g.integer_valued and isinstance(g.value, float)
    assert (math.isnan(want) and math.isnan(g.value)) or g.value == want


# -- the tolerance's thresholds ----------------------------------------------------------------


def test_integer_data_are_exact_up_to_sum_abs_2_24_and_bounded_past_it():
    at = verify.Golden(0, float(2**24), True, 0.0)
    past = verify.Golden(0, float(2**24 + 1), True, 0.0)
    assert verify.tolerance(V3, "float32", 1000, at) == 0.0
    # past 2^24: gamma_18 * (2^24 + 1), about 18.0
    assert verify.tolerance(V3, "float32", 1000, past) == pytest.approx(18.0, rel=1e-5)
    assert verify.tolerance(V3, "int32", 1000, past) == 0.0  # int32: always exact
    assert verify.tolerance(V3, "int32", 1000, _float_golden(0.5, 1e30)) == 0.0


def test_unit_roundoffs_are_the_formats():
    assert verify.UNIT_ROUNDOFF == {
        "float32": 2.0**-24,
        "float64": 2.0**-53,
        "float16": 2.0**-24,  # summed in float32
        "bfloat16": 2.0**-24,
    }
    assert verify.FLOAT32_EXACT_INTEGERS == 16_777_216


def test_gamma_edges():
    assert verify.gamma(0, U32) == 0.0
    assert verify.gamma(1, 0.5) == 1.0  # 0.5 / (1 - 0.5)
    assert verify.gamma(2, 0.25) == 1.0  # 0.5 / 0.5
    assert verify.gamma(2**24 - 1, U32) == (1 - U32) / U32  # k u = 1 - 2^-24
    assert verify.gamma(2**24, U32) == math.inf  # k u = 1: no bound
    assert verify.gamma(2**25, U32) == math.inf


# -- the caller's-data check ------------------------------------------------------------------


class _FakeBound:
    """A plan whose kernel writes `value` into a poisoned output and may change x in place."""

    def __init__(self, x: torch.Tensor, value: float, change=None):
        self.x, self.value, self.change = x, value, change
        self.out = torch.zeros(1, dtype=x.dtype)
        self.poisoned = False

    def poison(self) -> None:
        self.out.fill_(math.nan)
        self.poisoned = True

    def run(self, first_pass_only: bool = False) -> torch.Tensor:
        assert self.poisoned, "check_variant must poison the output before the launch"
        if self.change is not None:
            self.change(self.x)
        if self.value is not None:
            self.out[0] = self.value
        return self.out


def _fake_plan(monkeypatch, value, change=None) -> None:
    monkeypatch.setattr(verify.plan, "make_plan", lambda v, x: _FakeBound(x, value, change))


def test_check_variant_passes_an_honest_kernel(monkeypatch):
    x = torch.arange(1, 11, dtype=torch.float32)  # 55
    _fake_plan(monkeypatch, 55.0)
    r = verify.check_variant(V3, x)
    assert r.ok and r.input_unchanged and r.value == 55.0 and r.exact_required


@pytest.mark.parametrize(
    "change",
    [
        lambda x: x.add_(1),
        lambda x: x[7:8].fill_(0),
        lambda x: x[0:1].neg_(),  # 0.0 becomes -0.0: torch.equal sees no change, the bits do
    ],
    ids=["all", "one", "sign-of-zero"],
)
def test_check_variant_sees_the_input_changed(monkeypatch, change):
    x = torch.arange(0, 10, dtype=torch.float32)
    before = x.clone()
    _fake_plan(monkeypatch, 45.0, change)
    r = verify.check_variant(V3, x)
    assert not r.ok and not r.input_unchanged and "modified" in r.message
    assert not verify.same_bits(before, x)


def test_check_variant_sees_an_unwritten_output(monkeypatch):
    _fake_plan(monkeypatch, None)  # the kernel never writes: the poison (NaN) is read back
    r = verify.check_variant(V3, torch.ones(10))
    assert not r.ok and math.isnan(r.value) and r.abs_err == math.inf


def test_check_variant_sees_a_wrong_value(monkeypatch):
    _fake_plan(monkeypatch, 56.0)
    r = verify.check_variant(V3, torch.arange(1, 11, dtype=torch.float32))
    assert not r.ok and r.abs_err == 1.0 and r.input_unchanged


def test_a_peer_check_sees_the_input_changed(monkeypatch):
    x = torch.arange(10, dtype=torch.float32)

    def bad_peer(v, t):
        s = t.sum()
        t[3] = 99.0
        return s

    monkeypatch.setattr(verify.peers, "run", bad_peer)
    r = verify.check_variant(catalogue.get("peer/torch.sum"), x)
    assert not r.ok and not r.input_unchanged and "modified" in r.message
    monkeypatch.setattr(verify.peers, "run", lambda v, t: t.sum())
    assert verify.check_variant(catalogue.get("peer/torch.sum"), torch.arange(10.0)).ok


def test_a_copy_that_differs_fails_even_with_the_same_sum(monkeypatch):
    x = torch.arange(10, dtype=torch.float32)
    # a permuted copy has the same sum (45) but is not the input
    monkeypatch.setattr(verify.peers, "run", lambda v, t: t.flip(0).clone())
    r = verify.check_variant(catalogue.get(catalogue.COPY_ID), x)
    assert not r.ok and r.message == "the copy differs from the input"
    monkeypatch.setattr(verify.peers, "run", lambda v, t: t.clone())
    assert verify.check_variant(catalogue.get(catalogue.COPY_ID), x).ok


def test_int64_peer_result_of_int32_is_compared_unwrapped(monkeypatch):
    x = torch.tensor([2**31 - 1, 2**31 - 1], dtype=torch.int32)  # exact 2^32 - 2, wrapped -2
    v = catalogue.get("peer/torch.sum")
    monkeypatch.setattr(verify.peers, "run", lambda v, t: t.to(torch.int64).sum())
    r = verify.check_variant(v, x)
    assert r.ok and r.value == 2**32 - 2 and r.golden == 2**32 - 2
    monkeypatch.setattr(verify.peers, "run", lambda v, t: torch.tensor(-2, dtype=torch.int64))
    assert not verify.check_variant(v, x).ok  # the wrapped value is wrong for an int64 sum


def test_same_bits_edges():
    a = torch.tensor([0.0, math.nan, 1.0])
    assert verify.same_bits(a, a.clone())  # NaN == NaN bit for bit
    assert not verify.same_bits(a, torch.tensor([-0.0, math.nan, 1.0]))
    assert not verify.same_bits(a, a[:2])
    assert not verify.same_bits(a.reshape(3, 1), a)
    assert verify.same_bits(a.reshape(1, 3)[:, :], a.reshape(1, 3))


def test_as_number_keeps_the_kind():
    assert verify.as_number(torch.tensor(7, dtype=torch.int32)) == 7
    assert isinstance(verify.as_number(torch.tensor(7, dtype=torch.int32)), int)
    assert isinstance(verify.as_number(torch.tensor(7.0)), float)


def test_int32_peer_result_of_int32_is_compared_wrapped(monkeypatch):
    # a peer that accumulates in int32 (the CuPy sums) returns the wrapped sum: 2^32 - 2 -> -2
    x = torch.tensor([2**31 - 1, 2**31 - 1], dtype=torch.int32)
    v = catalogue.get("peer/torch.sum")
    monkeypatch.setattr(verify.peers, "run", lambda v, t: torch.tensor(-2, dtype=torch.int32))
    r = verify.check_variant(v, x)
    assert r.ok and r.value == -2 and r.golden == -2


def test_the_golden_of_one_element_is_that_element():
    """n = 1: no addition at all, so the golden is the element itself (and so is its bound)."""
    g = verify.golden(torch.tensor([5.0]))
    assert float(g.value) == 5.0
