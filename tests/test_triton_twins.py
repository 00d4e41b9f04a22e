"""Each Triton twin against the golden and against the exact per-program partials its tile
mapping defines. Runs interpreted on the CPU (CI) and compiled on the GPU."""

import pytest
import torch

import harness
from harness.check import verify
from harness.core import catalogue
from tests.conftest import CPU_SIZES
from tests.reference import reference_partials

TWINS = [v.id for v in catalogue.select(backend="triton", dtype="float32", family="ladder")]


@pytest.mark.parametrize("n", CPU_SIZES)
@pytest.mark.parametrize("vid", TWINS)
def test_twin_sum_and_partials(vid, n, dev):
    v = catalogue.get(vid)
    # what every run checks on: nonzero integers between poison (a missed, doubled or over-read
    # element moves the sum; the seeds' 0..99 has zeros, and nothing after the input to read)
    x = verify.exact_input(n, "float32", dev)
    result = verify.check_variant(v, x, exact=True)
    assert result.ok, result.message
    assert result.exact_required and result.value == int(x.to(torch.int64).sum())
    got = harness.partials(x, v)
    ref = reference_partials(v, x)
    assert torch.equal(got.to(torch.int64), ref), "per-program partials differ from the mapping"


def test_general_float_data_is_within_the_stated_bound(dev):
    v = catalogue.get("triton/grid-stride-1024")
    x = torch.randn(70_003, device=dev) * 1e3
    r = verify.check_variant(v, x)
    assert r.ok and not r.exact_required and r.tolerance > 0, r
