"""The ladder on the GPU: every variant against the golden at the issue's sizes, every CUDA
stage's per-block partials EQUAL to its Triton twin's, poisoned outputs, untouched inputs, and
the wrong demonstrations run and reported. Skipped (with the reason) without a GPU."""

import pytest
import torch

import harness
from harness.check import verify
from harness.core import catalogue
from tests import exact_data
from tests.conftest import GPU_SIZES, skip_if_peer_unavailable
from tests.reference import reference_partials

pytestmark = pytest.mark.gpu

CUDA = [v.id for v in catalogue.select(backend="cuda", dtype="float32", family="ladder")]
ALL = [v.id for v in catalogue.select(dtype="float32")]


@pytest.mark.parametrize("n", GPU_SIZES)
@pytest.mark.parametrize("vid", ALL)
def test_sum_matches_golden(vid, n, needs_cupy):
    # nonzero signed integers (tests/exact_data.py: every partial sum stays an exact integer, so
    # the result must EQUAL the exact sum, and a dropped or doubled element moves it), in a view
    # with poison before and after it (an over-read gives NaN)
    skip_if_peer_unavailable(vid)
    x = exact_data.signed_integers(n, "float32", seed=n)
    want = exact_data.exact_total(x)
    r = verify.check_variant(catalogue.get(vid), x, exact=True)  # a peer's bound is vacuous here
    assert r.ok, r.message
    assert r.value == want, f"{r.value} != exact {want}"


# Per-block partials are sums of integers in [-8, 8] staying far below 2^24 (tests/exact_data.py),
# so exact in float32 whatever the order: CUDA block and Triton program must agree to the bit.
@pytest.mark.parametrize("n", GPU_SIZES)
@pytest.mark.parametrize("vid", CUDA)
def test_cuda_partials_equal_twin_partials(vid, n, needs_cupy):
    v = catalogue.get(vid)
    if v.wrong:
        pytest.skip("wrong demonstrations are checked in test_wrong_demonstrations_are_reported")
    x = exact_data.signed_integers(n, "float32", seed=n + 1)
    cuda = harness.partials(x, v)
    twin = harness.partials(x, catalogue.get(v.twin))
    assert torch.equal(cuda, twin)
    assert torch.equal(cuda.to(torch.int64), reference_partials(v, x))


@pytest.mark.parametrize("vid", ALL)
def test_general_floats_within_bound(vid, needs_cupy):
    skip_if_peer_unavailable(vid)
    x = torch.randn(2**20 + 3, device="cuda") * 100
    r = verify.check_variant(catalogue.get(vid), x)
    assert r.ok and r.tolerance > 0, r.message


@pytest.mark.parametrize(
    "vid", ["cuda/v0-gmem-interleaved", "cuda/v3-sequential", "triton/tile-256"]
)
def test_api_accepts_cupy_and_torch_and_keeps_input(vid, needs_cupy):
    import cupy

    t = verify.seed_like_input(100_000, "float32", "cuda")
    before = t.clone()
    s_torch = harness.reduce_sum(t, vid)
    assert isinstance(s_torch, torch.Tensor) and s_torch.dim() == 0 and s_torch.is_cuda
    assert float(s_torch) == float(t.double().sum())
    a = cupy.asarray(t)
    s_cupy = harness.reduce_sum(a, vid)
    assert isinstance(s_cupy, cupy.ndarray) and s_cupy.ndim == 0
    assert float(s_cupy) == float(s_torch)
    p = harness.partials(a, vid)
    assert isinstance(p, cupy.ndarray) and float(p.sum()) == float(s_torch)
    assert torch.equal(t, before)


WRONG_DEMOS = ["cuda/v5-wrong-nosync", "cuda/v5-wrong-novolatile"]
FIXED_V5 = ["cuda/v5-volatile", "cuda/v5-volatile-split", "cuda/v5-syncwarp"]
REPS = 40


def test_wrong_demonstrations_are_reported(needs_cupy, record_property):
    """Each racy demonstration and each fixed v5 form runs REPS times on fresh data (exact, see
    tests/exact_data.py): how often each demo was wrong is reported (a line on stdout and a
    junit property: a race need not show on every GPU or every run, so the count is the finding,
    not a pass / fail); the fixed forms must never be wrong. The session run marks the demos and
    does not fail on them."""
    from harness.report import records
    from harness.studies import session, suites

    n = 2**20
    wrong = {}
    for vid in WRONG_DEMOS + FIXED_V5:
        v = catalogue.get(vid)
        count = 0
        for rep in range(REPS):
            x = exact_data.signed_integers(n, "float32", seed=1000 + rep)
            r = verify.check_variant(v, x)
            assert r.input_unchanged, vid
            count += not r.ok
        wrong[vid] = count
        record_property(f"wrong of {REPS}: {vid}", count)
    print("wrong sums over", REPS, "runs at n = 2^20:", wrong)
    assert all(wrong[vid] == 0 for vid in FIXED_V5), wrong
    assert all(0 <= wrong[vid] <= REPS for vid in WRONG_DEMOS)

    demos = catalogue.select(WRONG_DEMOS)
    rows = suites.run([suites.Case("ladder", v.id, "float32", n) for v in demos], timed=False)
    assert [r.variant for r in rows] == WRONG_DEMOS
    assert all(r.check in ("ok", "wrong") for r in rows)
    assert (found := records.results(rows)) and all(r.v.wrong for r in found)
    assert not session.failed(rows)  # a demonstration's wrong sum does not fail the run


def test_timed_run_reports_first_pass_and_total(needs_cupy):
    from harness.report import records
    from harness.studies import session, suites

    vs = catalogue.select(["cuda/v3-sequential", "triton/tile-256"])
    common = suites.common("ladder")
    found = records.results(
        r for v in vs for r in session.check_and_time(v, "float32", 2**22, common, reps=10)
    )
    assert [r.variant for r in found] == [v.id for v in vs]
    for r in found:
        assert r.status == "ok"
        assert 0 < r.median("first_pass") <= r.ms * 1.5
        assert r.info["passes"] == 3 and r.gbps > 0


@pytest.mark.parametrize("vid", ["cuda/fastest", "triton/tile-256", "cuda/v8-shuffle-chunked"])
def test_a_plan_that_goes_wrong_while_timed_is_wrong(vid, needs_cupy, monkeypatch):
    """check_and_time checks the sum on exact data, then times a plan: that plan's sum after its
    timed launches must still be the checked one (a counter left off 0, a stale pointer), or the
    case is "wrong". Here every launch of the timed plan is made one off."""
    from harness.studies import session, suites

    real = session.timed_call

    def drifting(v, x):
        fn, setup, plan = real(v, x)
        run = plan.run

        def one_off(*args, **kwargs):
            return run(*args, **kwargs).add_(1)

        plan.run = one_off
        return fn, setup, plan

    common = suites.common("ladder")
    ok = session.check_and_time(catalogue.get(vid), "float32", 2**20 + 3, common, reps=3)
    assert ok[0].check == "ok" and ok[0].info["check"]["exact_required"], ok[0].info
    monkeypatch.setattr(session, "timed_call", drifting)
    rows = session.check_and_time(catalogue.get(vid), "float32", 2**20 + 3, common, reps=3)
    assert rows[0].check == "wrong" and "after the timed runs" in rows[0].info["message"]
