"""The compiled peers on the GPU (issue 15): torch.compile (static, dynamic, cooperative) and
cuda.compute (each determinism level it builds), each sum against the golden at a few sizes (a
non-power-of-two among them) on exact data, equal to the exact sum (torch.compile
returns int64 like torch.sum, compared unwrapped; cuda.compute accumulates in int32, compared
wrapped). cuda.compute skipped with its reason where it is not importable. Skipped (with the
reason) without a GPU."""

from __future__ import annotations

import pytest
import torch

from harness.check import verify
from harness.core import catalogue
from harness.launch import peers
from tests import exact_data
from tests.conftest import skip_if_peer_unavailable
from tests.overflow_data import overflow_input

pytestmark = pytest.mark.gpu

COMPILED = [*catalogue.COMPILE_IDS, *catalogue.CCCL_IDS]
SIZES = (1, 1000, 2**20 + 7, 2**24)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", ["float32", "int32"])
@pytest.mark.parametrize("vid", COMPILED)
def test_compiled_peer_matches_golden(vid, dtype, n):
    skip_if_peer_unavailable(vid)
    # exact data (tests/exact_data.py): the sum must equal the exact one (a peer's derived bound,
    # its L taken as n, proves nothing from n = 2^24)
    x = exact_data.signed_integers(n, dtype, seed=n)
    r = verify.check_variant(catalogue.get(vid), x, exact=True)
    assert r.ok and r.input_unchanged and r.exact_required, r.message
    assert r.value == exact_data.exact_total(x)


@pytest.mark.parametrize("vid", COMPILED)
def test_int32_overflow_exact(vid):
    """Sums far past 2^31: torch.compile's int64 result equals the unwrapped sum, cuda.compute's
    int32 the wrapped one (check_variant picks a peer's golden by the result's dtype)."""
    skip_if_peer_unavailable(vid)
    x = overflow_input(2**20 + 3, "full-range", "cuda")
    r = verify.check_variant(catalogue.get(vid), x)
    assert r.ok and r.tolerance == 0.0, r.message


@pytest.mark.parametrize("vid", COMPILED)
def test_general_floats_within_bound(vid):
    skip_if_peer_unavailable(vid)
    x = torch.randn(2**22 + 5, device="cuda") * 100
    r = verify.check_variant(catalogue.get(vid), x)
    assert r.ok and r.tolerance > 0, r.message


@pytest.mark.parametrize("vid", COMPILED)
def test_prepared_closure_repeats_and_times(vid):
    """The closure prepare() returns is what the session times: called again it gives the same
    sum (run-to-run deterministic peers: the same bits), and timing it compiles nothing."""
    from harness.core import timing

    skip_if_peer_unavailable(vid)
    x = verify.seed_like_input(2**24 + 3, "float32", "cuda")
    fn = peers.prepare(catalogue.get(vid), x)
    first = fn().clone()
    t = timing.time_ms(fn, reps=10)
    again = fn()
    assert t.median_ms > 0
    if vid != catalogue.CCCL_NONDET_ID:  # atomics: order (and float bits) may differ
        assert torch.equal(first, again)


def test_cuda_compute_unavailable_is_a_skip_with_reason():
    """Where cuda.compute cannot be imported, its peers raise PeerUnavailable with the reason and
    the session records it as unavailable, not as a failure; where it can, there is no reason."""
    from harness.studies import session, suites

    why = peers.unavailable_reason(catalogue.get(catalogue.CCCL_ID))
    if why is None:
        x = verify.seed_like_input(1000, "int32", "cuda")
        assert peers.run(catalogue.get(catalogue.CCCL_ID), x).item() == verify.golden(x).value
        return
    assert "cuda.compute" in why
    (row,) = suites.run([suites.Case("ladder", catalogue.CCCL_ID, "float32", 1000)])
    assert row.check == "skipped" and row.info["message"].startswith("unavailable:")
    assert not session.failed([row])


@pytest.mark.parametrize("shape", [(1, 1), (3, 1000), (2**16, 64), (8, 100_003)])
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_segmented_rows_equal_torch_sum(shape, dtype):
    """cuda.compute's segmented reduce (the axis suite's row peer) gives torch.sum(x, 1) exactly
    on integers 0..99 (float32: every partial sum below 2^24 is exact), int32 wrapped to int32;
    called again on a side stream (torch's current stream) it gives the same row sums, and x is
    untouched."""
    skip_if_peer_unavailable(catalogue.CCCL_ID)
    x = torch.randint(0, 100, shape, device="cuda", dtype=torch.int32).to(getattr(torch, dtype))
    before = x.clone()
    fn = peers.segmented_rows(x)
    want = torch.sum(x, dim=1).to(x.dtype)
    assert torch.equal(fn(), want)
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        got = fn().clone()
    side.synchronize()
    assert torch.equal(got, want) and torch.equal(x, before)


def test_segmented_rows_refuses_what_it_does_not_sum():
    skip_if_peer_unavailable(catalogue.CCCL_ID)
    for x in (torch.ones(4, 4, 4, device="cuda"), torch.ones(8, 8, device="cuda").t(),
              torch.ones(8, 8, device="cuda", dtype=torch.bfloat16)):  # fmt: skip
        with pytest.raises(ValueError, match="rows of a contiguous 2-D"):
            peers.segmented_rows(x)
