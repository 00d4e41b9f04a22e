"""The native launch (harness.launch.native, rebind's "native" mode) on the GPU, for the fastest
and the reproducible pairs and the multi-pass ladder (the in-place chains excepted: stage 0,
seeds 004 and 001 keep the Python launch): built once, the same bits as the uncached plan and as
the default Python launch for every dtype, size and alignment, through reduce_sum's hot path
(result allocated in C++) and with out=, from threads at once, on a second stream, and inside a
CUDA-graph capture (which launches its Python twin). Skipped (with the reason) without a GPU, or
where the launcher cannot be built (no compiler or ninja)."""

import pytest
import torch

import harness
from harness.check import verify
from harness.core import catalogue
from harness.launch import native, plan_cache
from harness.launch.plan import make_plan
from tests.threads import run_in_threads

pytestmark = pytest.mark.gpu
FASTEST = ["cuda/fastest", "triton/fastest"]
MULTI_PASS = ["cuda/v4-split-256", "cuda/v8-shuffle-chunked", "cuda/001-v4-smem",
              "triton/tile-256", "triton/chunked-1024"]  # fmt: skip
NATIVE = [*FASTEST, "cuda/reproducible", "triton/reproducible", *MULTI_PASS]  # every family
IN_PLACE = ["cuda/v0-gmem-interleaved", "cuda/004-gmem"]  # a copy first: the Python launch
CASES = [(vid, d) for vid in NATIVE for d in catalogue.get(vid).dtypes]
SIZES = (1, 17, 1000, 2**12 + 5, 2**16 + 3, 2**20 + 7, 2**24 + 1)


@pytest.fixture(autouse=True)
def native_default(monkeypatch, needs_cupy):
    """The process-wide cache with CUDA launches in the native mode, for these tests only."""
    try:
        native.load()
    except native.NativeUnavailable as why:
        pytest.skip(str(why))
    cache = plan_cache.PlanCache(launch_modes={"cuda": "native", "triton": "native"})
    monkeypatch.setattr(plan_cache, "_default", cache)
    yield


def fresh_sum(vid: str, x: torch.Tensor) -> torch.Tensor:
    return make_plan(catalogue.get(vid), x.reshape(-1)).run().clone()[0]


@pytest.mark.parametrize(("vid", "dtype"), CASES)
def test_native_hot_path_equals_the_uncached_plan_bit_for_bit(vid, dtype):
    for n in SIZES:
        base = verify.seed_like_input(n + 3, dtype, "cuda")
        for off in range(4):
            x = base[off : off + n]
            want = fresh_sum(vid, x)
            for _ in range(3):  # a miss, then hits through launch.call
                got = harness.reduce_sum(x, vid)
                assert got.shape == () and got.dtype == want.dtype
                assert verify.same_bits(got, want), (n, off)
            out = torch.full((), -7, dtype=want.dtype, device="cuda")  # poisoned
            assert harness.reduce_sum(x, vid, out=out) is out
            assert verify.same_bits(out, want), (n, off)
    launch = plan_cache.default().get(catalogue.get(vid), dtype, base[: SIZES[-1]])
    assert launch.mode == "native" and launch.call is not None


@pytest.mark.parametrize("vid", NATIVE)
def test_native_equals_the_default_launch_on_float_data(vid):
    v = catalogue.get(vid)
    python_cache = plan_cache.PlanCache()  # the default modes: cupy-driver, bound
    for n in (1000, 2**20 + 7, 2**24):
        x = torch.randn(n + 1, device="cuda")[1:]  # unaligned: Triton's head and bulk pointers
        py = python_cache.get(v, "float32", x)
        assert py.mode != "native"
        want = torch.empty((), device="cuda")
        py(x, want)
        assert verify.same_bits(harness.reduce_sum(x, vid), want), n
        if vid in (*FASTEST, "cuda/reproducible"):  # they take a ticket: back at 0
            assert int(plan_cache.default().get(v, "float32", x).workspace[-1].item()) == 0


@pytest.mark.parametrize("vid", NATIVE)
def test_native_calls_from_threads_at_once_each_get_their_sum(vid):
    dtype = "int32" if "int32" in catalogue.get(vid).dtypes else "float32"  # integer-valued
    xs = [verify.seed_like_input(2**20 + 7, dtype, "cuda") for _ in range(4)]
    wants = [fresh_sum(vid, x).item() for x in xs]  # the uncached plan's, one at a time
    harness.reduce_sum(xs[0], vid)  # built before the threads start

    def work():
        got = []
        for _ in range(50):
            for x, want in zip(xs, wants, strict=True):
                got.append((harness.reduce_sum(x, vid).item(), want))
        return got

    pairs = run_in_threads(work)
    assert pairs and all(g == w for g, w in pairs)


@pytest.mark.parametrize("vid", NATIVE)
def test_native_on_a_second_stream_and_in_a_graph(vid):
    x = verify.seed_like_input(2**20 + 7, "float32", "cuda")
    want = fresh_sum(vid, x)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        assert verify.same_bits(harness.reduce_sum(x, vid), want)
        assert verify.same_bits(harness.reduce_sum(x, vid), want)  # the side stream's hit
    torch.cuda.current_stream().wait_stream(side)
    graph, out = torch.cuda.CUDAGraph(), None
    with torch.cuda.graph(graph):
        out = harness.reduce_sum(x, vid)
    for _ in range(3):
        out.fill_(-1)
        graph.replay()
        torch.cuda.synchronize()
        assert verify.same_bits(out, want)


@pytest.mark.parametrize("vid", IN_PLACE)
def test_an_in_place_chain_keeps_the_python_launch_and_its_sum(vid):
    x = verify.seed_like_input(2**20 + 7, "int32", "cuda")
    keep = x.clone()
    want = fresh_sum(vid, x)
    for _ in range(2):
        assert verify.same_bits(harness.reduce_sum(x, vid), want)
    assert torch.equal(x, keep)  # the chain works on its copy
    launch = plan_cache.default().get(catalogue.get(vid), "int32", x)
    assert launch.mode == "" and launch.call is None
