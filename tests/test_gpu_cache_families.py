"""The plan cache of every 1-D family but the fastest pair (tests/test_gpu_callable.py has those),
on the GPU: the multi-pass ladder (seeds 000/002, in place, split pairs, grid-stride, chunked,
dynamic shared memory), seed 004's and seed 001's kernels and the reproducible pair. For each
variant: a second call hits (and takes the hot path); sums bit-identical to the uncached plan's
on integer and float data at several sizes and alignments (out= too); eviction; a side stream
kept busy (every launch on the caller's stream); four threads on their own streams and on one
shared stream; a warmed call captured in a CUDA graph and replayed after the data changed; no
host synchronization and no CuPy stream object per call. Skipped (with the reason) without a GPU.
"""

from __future__ import annotations

import threading

import pytest
import torch

import harness
from harness.check import verify
from harness.core import catalogue, dtypes
from harness.launch import api, plan_cache, stream
from harness.launch.plan import make_plan
from tests.threads import run_in_threads

pytestmark = pytest.mark.gpu

# Every variant the families' cache serves, the wrong demonstrations (racy by design) aside.
CACHED = [
    v.id
    for v in catalogue.VARIANTS
    if v.launch is not None and not v.wrong and not v.launch.mapping.one_launch
]
# One or two of each kind, for the longer tests.
SOME = [
    "cuda/v0-gmem-interleaved",  # in place: the entry's scratch copy
    "cuda/v4-split-256",
    "cuda/v8-shuffle-chunked",
    "cuda/v8-shuffle-strided",
    "cuda/004-smem-unroll4-dyn",  # dynamic shared memory
    "cuda/004-gmem",  # seed 004, in place
    "cuda/001-v4-smem",  # seed 001: a 64-bit n
    "triton/tile-256",
    "triton/quad-adjacent-256",
    "triton/001-pinned",
    "cuda/reproducible",
    "triton/reproducible",
]
SIZES = (1, 257, 2**16 + 3, 2**20 + 5)  # one block / one pass up to several passes and chunks
REPS = 8


def has_float32(vid: str) -> bool:
    return "float32" in catalogue.get(vid).dtypes


@pytest.fixture(autouse=True)
def empty_cache():
    plan_cache.clear()
    yield
    plan_cache.clear()


def uncached(vid: str, x: torch.Tensor) -> torch.Tensor:
    """The uncached path's sum: a plan built for x (what reduce_sum did before the cache)."""
    return make_plan(catalogue.get(vid), x.reshape(-1)).run().clone()[0]


def data(vid: str, n: int, kind: str) -> torch.Tensor:
    """Integer data (int32 over its whole range, sums wrap; or seed-like integers in a float
    dtype) or float data (normal, so the order of additions shows in the bits)."""
    dts = catalogue.get(vid).dtypes
    if kind == "int":
        if "int32" in dts:
            return torch.randint(-(2**31), 2**31 - 1, (n,), dtype=torch.int32, device="cuda")
        return verify.seed_like_input(n, dts[0], "cuda")
    return torch.randn(n, device="cuda") * 100


KINDS = [(v, k) for v in CACHED for k in ("int", "float") if k == "int" or has_float32(v)]


@pytest.mark.parametrize(("vid", "kind"), KINDS)
def test_hits_and_equals_the_uncached_path_bit_for_bit(vid, kind, needs_cupy):
    for n in SIZES:
        base = data(vid, n + 3, kind)
        for off in (0, 1, 3):  # alignment classes (the reproducible kernel's scalar path too)
            x = base[off : off + n]
            want = uncached(vid, x)
            out = torch.full((), 7, dtype=api.result_dtype(vid, x.dtype), device="cuda")
            got = [harness.reduce_sum(x, vid), harness.reduce_sum(x.clone(), vid)]
            assert api._hit(x, vid) is not None, (vid, n, off)  # warm: the hot path
            got += [harness.reduce_sum(x, vid), harness.reduce_sum(x, vid, out=out), out]
            assert all(verify.same_bits(g, want) for g in got), (vid, kind, n, off)
    info = plan_cache.info()
    assert info.hits > info.misses > 0


@pytest.mark.parametrize("vid", [v for v in SOME if "reproducible" in v])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64"])
def test_reproducible_pair_other_dtypes_equal_the_uncached_path(vid, dtype, needs_cupy):
    for n in SIZES:
        x = torch.randn(n + 1, device="cuda").to(getattr(torch, dtype))[1:]
        want = uncached(vid, x)
        for _ in range(2):
            assert verify.same_bits(harness.reduce_sum(x, vid), want), (vid, dtype, n)


@pytest.mark.parametrize("vid", SOME)
def test_eviction_frees_the_oldest_and_rebuilds_the_same_sum(vid, needs_cupy):
    v = catalogue.get(vid)
    cache = plan_cache.PlanCache(max_entries=2)
    xs = [data(vid, 5000 + 1000 * k, "int") for k in range(3)]
    name = dtypes.name_of(xs[0].dtype)
    first = cache.get(v, name, xs[0])
    assert cache.get(v, name, xs[0].clone()) is first
    cache.get(v, name, xs[1])
    cache.get(v, name, xs[2])  # evicts xs[0]'s entry
    info = cache.info()
    assert (info.hits, info.misses, info.evictions, info.size) == (1, 3, 1, 2)
    again = cache.get(v, name, xs[0])
    assert again is not first
    out = again.proto.new_empty(())
    again(xs[0], out)
    assert verify.same_bits(out, uncached(vid, xs[0]))


@pytest.mark.parametrize("vid", SOME)
def test_a_busy_side_stream_gets_every_launch(vid, needs_cupy):
    """On a side stream kept busy, the data written on it then summed on it: a launch (or the
    in-place scratch copy) that strayed onto another stream would read the data before it is
    written. The entry is that stream's own (the default stream's is another)."""
    n = 2**20 + 5
    x = data(vid, n, "int")
    harness.reduce_sum(x, vid)  # the default stream's entry
    side = torch.cuda.Stream()
    got, want = [], []
    with torch.cuda.stream(side):
        for _ in range(REPS):
            new = data(vid, n, "int")
            side.wait_stream(torch.cuda.default_stream())
            torch.cuda._sleep(1_000_000)
            x.copy_(new)  # on the side stream, behind the sleep
            got.append(harness.reduce_sum(x, vid))
            want.append(uncached(vid, new))
    torch.cuda.synchronize()
    assert all(verify.same_bits(g, w) for g, w in zip(got, want, strict=True)), vid
    streams = {k[5] for k in plan_cache.default().cached_keys()}
    assert side.cuda_stream in streams and len(streams) == 2


@pytest.mark.parametrize("shared", [False, True], ids=["own-streams", "one-stream"])
@pytest.mark.parametrize("vid", SOME)
def test_four_threads(vid, shared, needs_cupy):
    """Four threads at once, each on its own stream or all on one (one entry shared: its lock
    keeps each call's chain of launches together)."""
    n = 2**18 + 3
    one = torch.cuda.Stream()
    start = threading.Barrier(4)
    harness.reduce_sum(data(vid, n, "int"), vid)  # a first call: every thread takes the hot path

    def worker() -> list:
        s = one if shared else torch.cuda.Stream()
        xs = [data(vid, n, "int") for _ in range(REPS)]
        wants = [uncached(vid, x) for x in xs]
        torch.cuda.synchronize()
        start.wait()
        with torch.cuda.stream(s):
            outs = [harness.reduce_sum(x, vid) for x in xs]
        s.synchronize()
        return list(zip(outs, wants, strict=True))

    results = run_in_threads(worker)
    assert len(results) == 4 * REPS
    wrong = [i for i, (g, w) in enumerate(results) if not verify.same_bits(g, w)]
    assert not wrong, f"{vid}: {len(wrong)} of {len(results)} sums wrong from 4 threads"


@pytest.mark.parametrize("use_op", [False, True], ids=["reduce_sum", "op"])
@pytest.mark.parametrize("vid", CACHED)
def test_a_warmed_call_captures_and_replays_after_the_data_changed(vid, use_op, needs_cupy):
    """Warmed up once, captured (the entry's kernels with a workspace of the graph's own), the
    cache cleared (the graph needs nothing of it), replayed over new data: the uncached sum."""
    n = 2**20 + 5
    x = data(vid, n, "int")

    def call() -> torch.Tensor:
        return torch.ops.reduce_ladder.sum(x, vid) if use_op else harness.reduce_sum(x, vid)

    call()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        r = call()
    plan_cache.clear()
    for _ in range(3):
        new = data(vid, n, "int")
        x.copy_(new)
        g.replay()
        assert verify.same_bits(r, uncached(vid, new)), vid


@pytest.mark.filterwarnings("ignore:The CUDA Graph is empty:UserWarning")
@pytest.mark.parametrize("vid", [*SOME, "cuda/fastest", "triton/fastest"])
def test_a_first_call_inside_a_capture_says_so_and_leaves_it_valid(vid, needs_cupy):
    """A variant never called with such an input cannot build inside a capture: it says so
    before anything is enqueued, caches nothing, and the caller's capture replays correctly."""
    x = data(vid, 5003, "int")
    y = torch.arange(1000, device="cuda", dtype=torch.int64)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        with pytest.raises(plan_cache.PlanCacheMiss, match="call it once"):
            harness.reduce_sum(x, vid)
        total = y.sum()
    g.replay()
    torch.cuda.synchronize()
    assert total.item() == 999 * 1000 // 2
    assert plan_cache.info().size == 0


@pytest.mark.parametrize("vid", SOME)
def test_a_warm_call_makes_no_cupy_stream_and_no_host_sync(vid, needs_cupy, monkeypatch):
    """Once warm, a call (hot path, and the checked path's cached launch) neither makes nor
    enters a CuPy stream object, nor goes through Triton's JIT (a Triton pass is launched bound),
    and torch sees no synchronizing call."""
    from triton.runtime.jit import JITFunction

    x = data(vid, 2**20 + 5, "int")
    want = uncached(vid, x)
    harness.reduce_sum(x, vid)
    entry = plan_cache.default().cached_launches()[-1]
    assert entry.variant.id == vid and entry.mode == ""  # rebind_passes' entry

    def no_stream(*args, **kwargs):
        raise AssertionError("a CuPy stream object was made or entered per call")

    def no_jit(*args, **kwargs):
        raise AssertionError("a warm call went through Triton's JIT")

    for name in ("cupy_stream", "on_torch_stream"):
        monkeypatch.setattr(stream, name, no_stream)
    monkeypatch.setattr(JITFunction, "run", no_jit)
    torch.cuda.set_sync_debug_mode("error")
    try:
        got = [harness.reduce_sum(x, vid) for _ in range(3)]
        out = entry.proto.new_empty(())
        entry(x, out)
    finally:
        torch.cuda.set_sync_debug_mode("default")
    assert all(verify.same_bits(g, want) for g in [*got, out]), vid
