"""The fastest pair as users call it, on the GPU: the plan cache (hits, eviction, two streams,
threads), sums bit-identical to the uncached plan's in the default launch mode, CUDA-graph
capture and replay of reduce_sum and of torch.ops.reduce_ladder.sum, torch.compile(fullgraph=True)
of a function calling the op, two streams at once. Skipped (with the reason) without a GPU."""

import threading

import pytest
import torch

import harness
from harness.check import verify
from harness.core import catalogue
from harness.launch import plan_cache, rebind
from harness.launch.plan import make_plan
from tests.threads import run_in_threads

pytestmark = pytest.mark.gpu

FASTEST = ["cuda/fastest", "triton/fastest"]
SIZES = (1, 17, 1000, 2**12, 2**16 + 3, 2**20 + 7, 2**24 + 1)


def fresh_sum(vid: str, x: torch.Tensor) -> torch.Tensor:
    return make_plan(catalogue.get(vid), x.reshape(-1)).run().clone()[0]


@pytest.fixture(autouse=True)
def empty_default_cache():
    plan_cache.clear()
    yield
    plan_cache.clear()


@pytest.mark.parametrize("dtype", catalogue.FASTEST_DTYPES)
@pytest.mark.parametrize("vid", FASTEST)
def test_reduce_sum_equals_the_uncached_plan_bit_for_bit(vid, dtype, needs_cupy):
    for n in SIZES:
        base = verify.seed_like_input(n + 3, dtype, "cuda")
        for off in range(4):
            x = base[off : off + n]
            want = fresh_sum(vid, x)
            for _ in range(2):  # a miss, then a hit
                assert verify.same_bits(harness.reduce_sum(x, vid), want), (n, off)
            assert verify.same_bits(harness.partials(x, vid)[0], want), (n, off)
    info = plan_cache.info()
    assert info.hits >= info.misses > 0


@pytest.mark.parametrize("vid", FASTEST)
def test_the_default_launch_mode_equals_the_uncached_plan(vid, needs_cupy):
    v = catalogue.get(vid)
    mode = rebind.LAUNCH_MODES[v.backend][0]  # "native" is tested in tests/test_gpu_native.py
    cache = plan_cache.PlanCache(launch_modes={v.backend: mode})
    for n in (1000, 2**20 + 7):
        x = torch.randn(n + 1, device="cuda")[1:]
        launch = cache.get(v, "float32", x)
        assert launch.mode == mode
        out = torch.empty((), device="cuda")
        launch(x, out)
        assert verify.same_bits(out, fresh_sum(vid, x)), n
        assert int(launch.workspace[1].item()) == 0  # the ticket counter is back at 0
        # CuPy is here: both backends' kernels go through its cuLaunchKernel binding
        assert isinstance(launch.go.keep, rebind.DriverKernel)


def test_a_triton_kernel_through_the_driver_equals_its_own_launcher(needs_cupy):
    """rebind.BoundTriton launches through DriverKernel.of_triton where it can: the same sum as
    Triton's own launcher, the tensors' pointers written per call."""
    from triton_kernels import tiles

    x, outs = torch.randn(3 * 2**16 + 5, device="cuda"), torch.empty(2, 8192, device="cuda")
    grid, n = (x.numel() + 255) // 256, x.numel()
    k = rebind.BoundTriton(
        tiles.adjacent_tiles_kernel, grid, (x, outs[0], n), {"BLOCK": 256, "TILES": 1}
    )
    assert k.driver is not None
    k((x, outs[0]), torch.cuda.current_stream().cuda_stream)
    k.launch(torch.cuda.current_stream().cuda_stream, k._with([x.data_ptr(), outs[1].data_ptr()]))
    torch.cuda.synchronize()
    assert torch.equal(outs[0][:grid], outs[1][:grid])


@pytest.mark.parametrize("vid", FASTEST)
def test_new_tensors_of_one_class_hit_and_eviction_is_lru(vid, needs_cupy):
    v = catalogue.get(vid)
    cache = plan_cache.PlanCache(max_entries=2)
    x1, x2 = torch.randn(5000, device="cuda"), torch.randn(5000, device="cuda")
    a = cache.get(v, "float32", x1)
    assert cache.get(v, "float32", x2) is a  # another tensor, same class: a hit
    cache.get(v, "float32", torch.randn(6000, device="cuda"))
    cache.get(v, "float32", torch.randn(7000, device="cuda"))  # evicts n = 5000
    info = cache.info()
    assert (info.hits, info.misses, info.evictions, info.size) == (1, 3, 1, 2)
    assert cache.get(v, "float32", x1) is not a


@pytest.mark.parametrize("vid", FASTEST)
def test_two_streams_at_once_get_their_own_counter(vid, needs_cupy):
    n = 2**22 + 3
    xs = [verify.seed_like_input(n, "int32", "cuda") for _ in range(2)]
    want = [fresh_sum(vid, x) for x in xs]
    torch.cuda.synchronize()
    streams = [torch.cuda.Stream() for _ in range(2)]
    outs: list[list[torch.Tensor]] = [[], []]
    for _ in range(20):  # interleaved: both streams' launches in flight together
        for k, s in enumerate(streams):
            with torch.cuda.stream(s):
                outs[k].append(harness.reduce_sum(xs[k], vid))
    torch.cuda.synchronize()
    for k in range(2):
        assert all(verify.same_bits(o, want[k]) for o in outs[k]), k
    keys = plan_cache.default().cached_keys()
    assert {k[5] for k in keys} == {s.cuda_stream for s in streams}
    counters = {e.workspace[1].data_ptr() for e in plan_cache.default().cached_launches()}
    assert len(counters) == 2


@pytest.mark.parametrize("vid", FASTEST)
def test_threads_with_their_own_streams(vid, needs_cupy):
    x = verify.seed_like_input(2**20 + 7, "int32", "cuda")
    want = fresh_sum(vid, x)
    torch.cuda.synchronize()
    start = threading.Barrier(4)

    def worker() -> list:
        s = torch.cuda.Stream()
        start.wait()
        with torch.cuda.stream(s):
            outs = [harness.reduce_sum(x, vid) for _ in range(10)]
        s.synchronize()
        return outs

    results = run_in_threads(worker)
    assert len(results) == 40 and all(verify.same_bits(r, want) for r in results)
    assert plan_cache.info().misses == 4  # one entry per stream


def _capture(fn, x: torch.Tensor, calls: int = 3):
    """fn(x) warmed on a side stream, then captured `calls` times on it (as timing.graph_ms)."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.stream(stream):
        fn(x)  # the warm-up: builds the cache entry for the capture stream
        torch.cuda.synchronize()
        with torch.cuda.graph(graph, stream=stream):
            outs = [fn(x) for _ in range(calls)]
    torch.cuda.current_stream().wait_stream(stream)
    return graph, outs, stream


@pytest.mark.parametrize("use_op", [False, True])
@pytest.mark.parametrize("vid", FASTEST)
def test_cuda_graph_capture_and_replay(vid, use_op, needs_cupy):
    from harness.launch import torch_op  # noqa: F401  (registers the op)

    def fn(t):
        return torch.ops.reduce_ladder.sum(t, vid) if use_op else harness.reduce_sum(t, vid)

    x = verify.seed_like_input(2**20 + 3, "int32", "cuda")
    graph, outs, _ = _capture(fn, x)
    plan_cache.clear()  # frees every entry's workspace: the graph owns its own
    x.copy_(verify.seed_like_input(x.numel(), "int32", "cuda"))  # new data, same addresses
    graph.replay()
    torch.cuda.synchronize()
    want = fresh_sum(vid, x)
    assert all(verify.same_bits(o, want) for o in outs)


@pytest.mark.filterwarnings("ignore:The CUDA Graph is empty:UserWarning")  # the aborted capture
def test_a_miss_inside_a_capture_says_to_warm_up(needs_cupy):
    x = torch.randn(12345, device="cuda")
    stream = torch.cuda.Stream()
    graph = torch.cuda.CUDAGraph()
    with (
        torch.cuda.stream(stream),
        pytest.raises(plan_cache.PlanCacheMiss, match="before"),
        torch.cuda.graph(graph, stream=stream),
    ):
        harness.reduce_sum(x, "cuda/fastest")


@pytest.mark.parametrize("vid", FASTEST)
def test_torch_compile_fullgraph_calls_the_op(vid, needs_cupy):
    from harness.launch import torch_op  # noqa: F401

    def f(t: torch.Tensor) -> torch.Tensor:
        return torch.ops.reduce_ladder.sum(t * 2, vid) + 1

    x = verify.seed_like_input(2**20 + 7, "float32", "cuda")
    explained = torch._dynamo.explain(f)(x)
    assert explained.graph_break_count == 0
    compiled = torch.compile(f, fullgraph=True)
    got = compiled(x)
    assert verify.same_bits(got, fresh_sum(vid, x * 2) + 1)


@pytest.mark.parametrize("dtype", catalogue.FASTEST_DTYPES)
def test_op_eager_equals_reduce_sum(dtype, needs_cupy):
    from harness.launch import torch_op  # noqa: F401

    x = verify.seed_like_input(2**16 + 5, dtype, "cuda")[1:]
    for vid in FASTEST:
        assert verify.same_bits(torch.ops.reduce_ladder.sum(x, vid), fresh_sum(vid, x))
    assert verify.same_bits(torch.ops.reduce_ladder.sum(x), fresh_sum("cuda/fastest", x))


def test_cupy_input_still_returns_cupy(needs_cupy):
    import cupy

    a = cupy.arange(10_000, dtype=cupy.int32)  # sum < 2^31: no wrap
    for vid in FASTEST:
        got = harness.reduce_sum(a, vid)
        assert isinstance(got, cupy.ndarray) and int(got) == int(a.sum())


def _threshold(dtype: str) -> int:
    from harness.core import dtypes
    from harness.launch import single_launch

    return single_launch.SMALL_MAX_BYTES // dtypes.get(dtype).itemsize


@pytest.mark.parametrize("dtype", catalogue.FASTEST_DTYPES)
def test_small_n_path_at_its_boundary(dtype, needs_cupy):
    """n = threshold - 1, threshold (the small kernel, one block) and threshold + 1 (the
    multi-block kernel), offsets 0..3: golden within the bound, the cache equal to the plan."""
    from harness.launch import single_launch

    v = catalogue.get("cuda/fastest")
    t = _threshold(dtype)
    for n in (t - 1, t, t + 1):
        small = single_launch.takes_small_path(dtype, n)
        assert small == (n <= t)
        base = verify.seed_like_input(n + 3, dtype, "cuda")
        for off in range(4):
            x = base[off : off + n]
            r = verify.check_variant(v, x)
            assert r.ok, (n, off, r.message)
            plan = make_plan(v, x)
            assert (plan.first_blocks == 1) or not small
            assert verify.same_bits(harness.reduce_sum(x, v.id), fresh_sum(v.id, x)), (n, off)
