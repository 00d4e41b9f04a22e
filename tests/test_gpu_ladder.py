"""The ladder on the GPU: every variant against the golden at the issue's sizes, every CUDA
stage's per-block partials EQUAL to its Triton twin's, poisoned outputs, untouched inputs, and
the wrong demonstrations run and reported. Skipped (with the reason) without a GPU."""

import pytest
import torch

import harness
from harness.check import verify
from harness.core import catalogue
from tests.conftest import GPU_SIZES, skip_if_peer_unavailable

pytestmark = pytest.mark.gpu

CUDA = [v.id for v in catalogue.select(backend="cuda", dtype="float32", family="ladder")]
ALL = [v.id for v in catalogue.select(dtype="float32")]


@pytest.mark.parametrize("n", GPU_SIZES)
@pytest.mark.parametrize("vid", ALL)
def test_sum_matches_golden(vid, n, needs_cupy):
    skip_if_peer_unavailable(vid)
    x = verify.seed_like_input(n, "float32", "cuda")
    r = verify.check_variant(catalogue.get(vid), x)
    assert r.ok, r.message


# Per-block partials are sums of at most 256*128 values below 100 at these sizes (< 2^24), so
# exact in float32 whatever the order: CUDA block and Triton program must agree to the bit.
@pytest.mark.parametrize("n", GPU_SIZES)
@pytest.mark.parametrize("vid", CUDA)
def test_cuda_partials_equal_twin_partials(vid, n, needs_cupy):
    v = catalogue.get(vid)
    if v.wrong:
        pytest.skip("wrong demonstrations are checked in test_wrong_demonstrations_are_reported")
    x = verify.seed_like_input(n, "float32", "cuda")
    cuda = verify.first_pass_partials(v, x)
    twin = verify.first_pass_partials(catalogue.get(v.twin), x)
    assert torch.equal(cuda, twin)
    assert torch.equal(cuda.to(torch.int64), verify.reference_partials(v, x))


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


def test_wrong_demonstrations_are_reported(needs_cupy):
    from harness.studies import session

    rows = session.run_selection(
        catalogue.select(["cuda/v5-wrong-nosync", "cuda/v5-wrong-novolatile"]),
        "float32",
        [2**20],
        timed=False,
    )
    assert len(rows) == 2
    for r in rows:
        assert r["wrong_demo"] and r["status"] in ("ok", "wrong")
    assert not session.failed(rows)  # a demonstration's wrong sum does not fail the run


def test_timed_run_reports_first_pass_and_total(needs_cupy):
    from harness.studies import session

    rows = session.run_selection(
        catalogue.select(["cuda/v3-sequential", "triton/tile-256"]), "float32", [2**22], reps=10
    )
    for r in rows:
        assert r["status"] == "ok"
        assert 0 < r["first_pass"]["median_ms"] <= r["total"]["median_ms"] * 1.5
        assert r["passes"] == 3 and r["gbps_total"] > 0
