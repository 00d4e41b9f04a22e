"""Seed 001 on the GPU, end to end from host memory: every version and twin equals the exact golden
(int32: exactly, wrapped as the kernels wrap; float32: bit for bit the numpy emulation of its tree,
and within its bound) at n = 1, 2047, 2048, 2049, 2^25 and one size above 2^31; the caller's host
array is never changed; the pipeline is right for any streams x chunk; the adversarial input stays
within every variant's bound. Skipped (with the reason) without a GPU."""

import numpy as np
import pytest
import torch

from harness.core import catalogue
from harness.studies import host, host_plan
from tests.test_host import emulate

pytestmark = pytest.mark.gpu

HOST = [v.id for v in catalogue.select(family="001")]
SIZES = (1, 2047, 2048, 2049, 2**25)
BIG = 2**31 + 2049  # past 2^31 elements, a partial last tile


def _tree(vid: str) -> str:
    v = catalogue.get(vid)
    return "interleaved" if "001:V0" in v.seeds else "sequential"


@pytest.fixture(scope="module", params=[(n, d) for n in SIZES for d in ("int32", "float32")])
def staged(request):
    n, dtype = request.param
    x = host.seed_like_host(n, dtype, seed=n)
    return x, x.clone(), host.exact_golden(x), host_plan.stage(x)


@pytest.mark.parametrize("vid", HOST)
def test_equals_golden_and_leaves_host_data(vid, staged, needs_cupy):
    x, before, g, s = staged
    v = catalogue.get(vid)
    r = host_plan.HostRunner(v, s, streams=3, chunk=2**20 + 5).check(g)  # chunk does not divide n
    assert r.ok, r.message
    if x.dtype == torch.int32 or (g.integer_valued and g.abs_sum <= 2**24):
        assert r.exact_required and r.value == g.value
    elif v.backend == "cuda":  # the float32 result is the emulated tree's, bit for bit
        assert r.value == float(emulate(x.numpy(), _tree(vid)))
    assert torch.equal(x, before), "the caller's host array was modified"


@pytest.mark.parametrize("vid", ["cuda/001-v3-streams", "triton/001-streams"])
@pytest.mark.parametrize(
    "streams,chunk", [(1, 2048), (2, 2**20), (8, 3000), (5, 2**24), (4, 2**30)]
)
def test_pipeline_any_streams_and_chunk(vid, streams, chunk, needs_cupy):
    n = 2**22 + 1001
    x = host.seed_like_host(n, "int32", seed=streams)
    s = host_plan.stage(x)
    r = host_plan.HostRunner(catalogue.get(vid), s, streams=streams, chunk=chunk).check(
        host.exact_golden(x)
    )
    assert r.ok and r.exact_required, r.message


@pytest.mark.parametrize("vid", HOST)
def test_adversarial_within_bound(vid, needs_cupy):
    n = 2**22
    x = host.adversarial_input(n)
    g = host.exact_golden(x)
    r = host_plan.HostRunner(catalogue.get(vid), host_plan.stage(x)).check(g)
    assert r.ok and r.tolerance > 0, r.message
    naive = host.naive_running_sum(x)
    assert r.abs_err < abs(naive - g.value)  # the tree beats the naive loop
    if vid.startswith("cuda/"):
        assert r.value == float(emulate(x.numpy(), _tree(vid)))


def test_stage_accepts_numpy_and_torch(needs_cupy):
    a = np.arange(10_000, dtype=np.int32)
    v4, t_pinned = catalogue.get("cuda/001-v4-smem"), catalogue.get("triton/001-pinned")
    assert host_plan.HostRunner(v4, host_plan.stage(a)).trip() == int(a.sum())
    t = torch.from_numpy(a.copy()).reshape(100, 100)
    assert host_plan.HostRunner(t_pinned, host_plan.stage(t)).trip() == int(a.sum())
    assert np.array_equal(a, np.arange(10_000, dtype=np.int32))


@pytest.mark.slow
def test_past_2_31_elements(needs_cupy):
    """One check per variant at n = 2^31 + 2049 (8 GiB of int32: exact, wrapped), one host array,
    one set of device buffers shared by all; 64-bit sizes and offsets throughout."""
    x = host.seed_like_host(BIG, "int32", seed=31)
    g = host.exact_golden(x)
    s = host_plan.stage(x)
    failures = []
    for vid in HOST:
        r = host_plan.HostRunner(catalogue.get(vid), s, streams=4, chunk=2**26).check(g)
        if not r.ok:
            failures.append(f"{vid}: {r.message}")
    assert not failures
    assert host.exact_golden(x) == g, "the caller's host array was modified"
    del s
    torch.cuda.empty_cache()


def test_timed_table_and_sweep_smoke(needs_cupy):
    from harness.report import host_tables
    from harness.studies import session, suites

    found = host.cases(host.host_variants(), [2**14], sweep_sizes=[2**22], streams=[1, 2],
                       chunks=[2**20])  # fmt: skip
    rows = suites.run([suites.Case("host", *c) for c in found], reps=3)
    table = {(r.variant, r.metric): r for r in rows if r.config == ""}
    assert {v for v, m in table if m == "e2e"} >= set(HOST) | set(host.PEERS)
    assert not session.failed(rows), session.failed(rows)
    for (vid, metric), r in table.items():
        assert r.median_ms > 0
        if metric in ("h2d", "kernels"):
            assert r.median_ms <= table[vid, "device"].median_ms * 1.05 + 0.01
    # the sweep's copies: the H2D copy alone (pinned, pageable) and V2's, one copy on one stream
    copies = {r.variant for r in rows if r.metric == "h2d" and r.config == "sweep"}
    assert copies == {"H2D pinned", "H2D pageable", host.ONE_COPY_ID}
    page = host_tables.markdown({}, rows)
    assert "copy-engine bound" in page and "adversarial input" in page
