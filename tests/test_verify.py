"""Golden sums and error bounds: exact where the arithmetic is exact, a derived bound otherwise."""

import math

import pytest
import torch

from harness.check import verify
from harness.core import catalogue
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
