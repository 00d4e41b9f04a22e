"""Golden sums and error bounds: exact where the arithmetic is exact, a derived bound otherwise."""

import math

import pytest
import torch

from harness.check import verify
from harness.core import catalogue, dtypes
from tests.reference import reference_partials
from tests.test_mappings import block_elements


def test_int32_golden_wraps_like_the_kernels():
    x = torch.tensor([2**31 - 1, 1, 2**31 - 1, 5], dtype=torch.int32)
    g = verify.golden(x)
    exact = 2 * (2**31 - 1) + 6
    assert g.value == verify.wrap_int32(exact) == exact - 2**32
    assert g.value == int(x.sum(dtype=torch.int32).item())


def test_integer_valued_floats_have_an_exact_golden():
    x = torch.randint(0, 100, (10_001,), dtype=torch.int32).float()
    g = verify.golden(x)
    assert g.integer_valued and g.own_error == 0
    assert g.value == int(x.to(torch.int64).sum())


def test_general_floats_golden_agrees_with_fsum():
    x = torch.randn(100_000, dtype=torch.float32)
    g = verify.golden(x)
    exact = math.fsum(x.double().tolist())
    assert abs(g.value - exact) <= g.own_error
    assert not g.integer_valued


def test_small_integer_sums_must_be_exact():
    v = catalogue.get("cuda/v3-sequential")
    x = torch.randint(0, 100, (1000,)).float()
    assert verify.tolerance(v, "float32", 1000, verify.golden(x)) == 0.0


def test_large_sums_get_the_gamma_bound():
    v = catalogue.get("cuda/v8-shuffle-strided")
    n = 2**25
    g = verify.Golden(value=0, abs_sum=1.0e9, integer_valued=True, own_error=0.0)
    tol = verify.tolerance(v, "float32", n, g)
    length = 136 + 9 + 9
    assert tol == pytest.approx(length * 2**-24 / (1 - length * 2**-24) * 1.0e9)


def test_a_poisoned_unwritten_result_fails():
    v = catalogue.get("cuda/v3-sequential")
    g = verify.golden(torch.ones(10))
    r = verify.compare(v, "float32", 10, float("nan"), g)
    assert not r.ok and "tolerance" in r.message


def test_a_modified_input_fails():
    v = catalogue.get("cuda/v3-sequential")
    g = verify.golden(torch.ones(10))
    r = verify.compare(v, "float32", 10, 10.0, g, input_unchanged=False)
    assert not r.ok and "modified" in r.message


@pytest.mark.parametrize(
    "vid",
    ["triton/tile-256", "triton/pair-split-256", "triton/grid-stride-1024", "triton/chunked-1024"],
)
def test_reference_partials_sum_to_the_total(vid):
    x = torch.randint(0, 100, (70_003,), dtype=torch.int32)
    ref = reference_partials(catalogue.get(vid), x)
    assert int(ref.sum()) == int(x.to(torch.int64).sum())


@pytest.mark.parametrize("vid", ["cuda/v4-split-128", "cuda/v7-fixed-chunked", "cuda/004-smem"])
def test_reference_partials_follow_the_mappings_blocks(vid):
    # each partial is the sum of exactly the elements block_elements gives that block
    v = catalogue.get(vid)
    x = torch.randint(-50, 100, (300_007,), dtype=torch.int32)
    ref = reference_partials(v, x)
    p = v.launch.mapping.grid(v.launch, x.numel())
    assert ref.numel() == p.blocks
    for b in (0, 1, p.blocks // 2, p.blocks - 1):
        rs = block_elements(v.launch, p, b)
        assert int(ref[b]) == sum(int(x[r.start : r.stop].to(torch.int64).sum()) for r in rs)


def test_single_launch_has_no_reference_partials():
    with pytest.raises(ValueError, match="cuda/fastest: no per-block reference"):
        reference_partials(catalogue.get("cuda/fastest"), torch.ones(1000))


def test_check_variant_checks_a_peer():
    x = torch.arange(1000, dtype=torch.float32)
    for vid in ("peer/torch.sum", "peer/copy"):
        assert verify.check_variant(catalogue.get(vid), x).ok


def test_l2_flush_reads_without_allocating(monkeypatch):
    """timing.flush_l2's read-based flush runs (on the CPU here: same torch call, other device)."""
    from harness.core import timing

    buf = torch.arange(1 << 16, dtype=torch.float32)
    out = torch.empty((1,), dtype=torch.float32)
    monkeypatch.setattr(timing, "_flush_buffer", lambda: (buf, out))
    before = buf.clone()
    timing.flush_l2()
    assert float(out[0]) == float(before.double().sum())
    assert torch.equal(buf, before)  # read only: the buffer is not written


def test_a_bound_that_proves_nothing_is_no_pass():
    """A peer's chain is taken as n long: from n = 2^24, gamma_n * sum|x| is infinite, and a NaN,
    a zero or twice the sum would be inside it. Such a check fails, saying there is no bound."""
    peer = catalogue.get("peer/torch.sum")
    g = verify.Golden(value=1234.5, abs_sum=1.0e9, integer_valued=False, own_error=1e-3)
    for wrong in (float("nan"), 0.0, 2 * 1234.5):
        r = verify.compare(peer, "float32", 2**24, wrong, g)
        assert not r.ok and "no error bound" in r.message
    assert verify.compare(peer, "float32", 2**24 - 1, 1234.5, g).ok  # a finite bound, inside it


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64", "int32"])
def test_exact_input_is_nonzero_small_signed_integers_between_poison(dtype):
    x = verify.exact_input(50_000, dtype, "cpu")
    values = x.to(torch.int64)
    assert x.is_contiguous() and values.abs().min() >= 1 and values.abs().max() <= 8
    assert (values < 0).any() and (values > 0).any()
    buf = x._base  # the poisoned buffer the view sits in
    head, tail = buf[: verify.HEAD], buf[verify.HEAD + x.numel() :]
    assert tail.numel() == verify.TAIL
    for side in (head, tail):
        if x.dtype.is_floating_point:
            assert side.isnan().all()
        else:
            assert (side == dtypes.INT_POISON).all()
    assert not torch.equal(x, verify.exact_input(50_000, dtype, "cpu"))  # fresh per call


@pytest.mark.parametrize("vid", ["cuda/v8-shuffle-strided", "peer/torch.sum"])
def test_on_exact_input_one_element_off_fails_at_any_n(vid):
    """What every run's check does (exact=True): a result one away from the exact sum fails, at
    n where the derived bound alone would allow thousands (a dropped lane, a skipped tile)."""
    v = catalogue.get(vid)
    g = verify.Golden(value=-3, abs_sum=4.5 * 2**25, integer_valued=True, own_error=0.0)
    assert verify.tolerance(v, "float32", 2**25, g) > 1000  # seed-like data: a loose bound
    assert not verify.compare(v, "float32", 2**25, -2.0, g, exact=True).ok
    assert verify.compare(v, "float32", 2**25, -3.0, g, exact=True).ok


def test_a_one_launch_plans_partials_are_poisoned_its_counter_kept():
    """A missing partial's write must show: poison() fills the one-launch plans' partials too
    (not only the result), and leaves the ticket counter at 0 (the kernels rely on it)."""
    from harness.launch.plan import make_plan

    for vid in ("triton/fastest", "triton/reproducible"):
        plan = make_plan(catalogue.get(vid), torch.ones(5000))
        for t in plan.workspace[:-1]:
            t.fill_(7)
        plan.poison()
        assert all(t.isnan().all() for t in (*plan.outs, *plan.workspace[:-1])), vid
        assert plan.workspace[-1].eq(0).all(), vid
