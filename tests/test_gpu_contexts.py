"""No wrong sum under any way of calling: every family x every calling context, on the GPU.

Families (one or two variants each, CUDA and Triton): the fastest pair (plan cache, last-block
ticket), the reproducible pair (ticket, double-double), the 000/002 ladder (multi-pass, one of
them in place), seed 004's kernels and seed 001's. Contexts: eager on torch's default stream and
on a side stream; a CuPy array under a blocking and a non-blocking CuPy stream, and a torch tensor
under a non-blocking CuPy stream; four threads at once; torch.compile(fullgraph=True) in the
default, reduce-overhead and max-autotune-no-cudagraphs modes; CUDA graphs captured on torch's
default capture stream and on a given stream, replayed after the input's data changed; two graphs
replayed at once on two streams behind one gate; out=. Each test checks the exact sum (integer
data, summed exactly in int64 on the host: int32 wraps as the kernels do, float32 data small
enough that every partial is an exact integer) over many repetitions with fresh data, and its
name and assertion messages say what ran. Skipped (with the reason) without a GPU.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
import torch

import harness
from harness.core import catalogue
from harness.launch import plan_cache
from harness.launch.api import result_dtype
from harness.launch.rebind import BoundLaunch
from tests.threads import run_in_threads

pytestmark = pytest.mark.gpu

FAMILIES = {
    "fastest": ["cuda/fastest", "triton/fastest"],
    "reproducible": ["cuda/reproducible", "triton/reproducible"],
    "ladder": ["cuda/v8-shuffle-chunked", "cuda/v1-smem-interleaved", "triton/tile-256"],
    "seed004": ["cuda/004-smem-unroll4-dyn", "triton/quad-adjacent-256"],
    "seed001": ["cuda/001-v4-smem", "triton/001-pinned"],
}
VARIANTS = [v for vs in FAMILIES.values() for v in vs]
CACHED = FAMILIES["fastest"]
# Several blocks / programs, a partial last tile, past the fastest pair's one-block path (2^13):
# the ticket and every multi-pass chain run.
N = 2**18 + 5
REPS = 12
# float32 data in [-8, 8]: |any partial| <= 8 * N < 2^24, so every float32 addition is exact
# and any order gives the exact integer sum.
F32_MAX = 8


def dtype_of(vid: str) -> torch.dtype:
    return torch.int32 if "int32" in catalogue.get(vid).dtypes else torch.float32


def fresh(vid: str, n: int = N, device: str = "cuda") -> torch.Tensor:
    """Fresh integer data for vid: int32 over the full range (sums wrap), or small float32."""
    dt = dtype_of(vid)
    if dt == torch.int32:
        return torch.randint(-(2**31), 2**31 - 1, (n,), dtype=torch.int32, device=device)
    return torch.randint(-F32_MAX, F32_MAX + 1, (n,), device=device).to(torch.float32)


def exact(x: torch.Tensor) -> int | float:
    """The exact sum of x as the kernels must return it (int32: wrapped modulo 2^32)."""
    s = int(x.detach().to("cpu", torch.int64).sum())
    if x.dtype == torch.int32:
        return (s + 2**31) % 2**32 - 2**31
    return float(s)


def value(r) -> int | float:
    if hasattr(r, "get"):  # a CuPy 0-d array
        r = r.get()
    return r.item() if hasattr(r, "item") else r


@pytest.fixture(autouse=True)
def empty_cache():
    plan_cache.clear()
    yield
    plan_cache.clear()


def check_all(what: str, got: list, want: list) -> None:
    wrong = [(i, g, w) for i, (g, w) in enumerate(zip(got, want, strict=True)) if g != w]
    assert len(got) == len(want) > 0
    assert not wrong, f"{what}: {len(wrong)} of {len(got)} sums wrong, first {wrong[:3]}"


# -- eager -----------------------------------------------------------------------------------


@pytest.mark.parametrize("side_stream", [False, True], ids=["default-stream", "side-stream"])
@pytest.mark.parametrize("vid", VARIANTS)
def test_eager(vid, side_stream, needs_cupy):
    got, want = [], []
    s = torch.cuda.Stream() if side_stream else torch.cuda.current_stream()
    with torch.cuda.stream(s):
        for _ in range(REPS):
            x = fresh(vid)
            torch.cuda._sleep(1_000_000)  # the stream busy, as a user's is: a race shows
            out = torch.full((), -7, dtype=result_dtype(vid, x.dtype), device="cuda")
            r = harness.reduce_sum(x, vid)
            harness.reduce_sum(x, vid, out=out)
            got += [value(r), value(out)]
            want += [exact(x)] * 2
    check_all(f"{vid} eager on {'a side' if side_stream else 'the default'} stream", got, want)


@pytest.mark.parametrize("non_blocking", [False, True], ids=["blocking", "non-blocking"])
@pytest.mark.parametrize("vid", VARIANTS)
def test_cupy_stream(vid, non_blocking, needs_cupy):
    """CuPy arrays summed under the caller's CuPy stream, back to back, read at the end (the
    results are CuPy's, read on CuPy's current stream), then torch tensors under the same CuPy
    stream (read on torch's). A launch that strays onto another stream than the result's copy,
    or a per-call workspace freed and reused on another stream while a kernel still runs on
    this one, gives wrong sums here: the stream is kept busy so such a race shows."""
    import cupy

    s = cupy.cuda.Stream(non_blocking=non_blocking)
    busy = torch.cuda.ExternalStream(s.ptr)
    hosts = [fresh(vid, device="cpu") for _ in range(REPS)]
    with s:
        xcs = [cupy.asarray(h.numpy()) for h in hosts]  # made on s
        with torch.cuda.stream(busy):
            torch.cuda._sleep(2_000_000)
        rs = [harness.reduce_sum(xc, vid) for xc in xcs]
        assert all(isinstance(r, cupy.ndarray) for r in rs)
        got = [value(r) for r in rs]  # .get() on s
        xts = [h.cuda() for h in hosts]
        torch.cuda.synchronize()
        with torch.cuda.stream(busy):
            torch.cuda._sleep(2_000_000)  # a launch that strays onto s waits behind this
        rts = [harness.reduce_sum(xt, vid) for xt in xts]
        got += [value(r) for r in rts]  # read on torch's stream
    want = [exact(h) for h in hosts] * 2
    check_all(f"{vid} under a {'non-' if non_blocking else ''}blocking CuPy stream", got, want)


@pytest.mark.parametrize("vid", VARIANTS)
def test_cupy_views_under_a_non_blocking_stream(vid, needs_cupy):
    """CuPy views the kernels cannot read as they are (a stride of 2, a column of a 2-D array, a
    reversed array, whose negative strides the API copies before DLPack, which newer torch
    aborts on) are summed from a contiguous copy, which must be made on the caller's
    non-blocking stream: torch's default stream is kept busy, so that a copy made there instead
    is read before it is written. The caller's arrays are left as they are, and an out= inside
    the reversed array's memory is refused."""
    import cupy

    s = cupy.cuda.Stream(non_blocking=True)
    got, want = [], []
    with s:
        for _ in range(REPS // 2):
            h = fresh(vid, 2 * N, device="cpu")
            base = cupy.asarray(h.numpy())
            kept = base.copy()
            s.synchronize()
            views = {"stride 2": (base[::2], h[::2]), "reversed": (base[::-1], h),
                     "column": (base.reshape(N, 2)[:, 1], h.reshape(N, 2)[:, 1])}  # fmt: skip
            for v, hv in views.values():
                with torch.cuda.stream(torch.cuda.default_stream()):
                    torch.cuda._sleep(2_000_000)  # torch's stream busy; s is not
                got.append(value(harness.reduce_sum(v, vid)))
                want.append(exact(hv))
            assert bool((base == kept).all()), f"{vid} changed the caller's array"
        out = base[::-1][:1].reshape(())  # the reversed view's first element: base's last
        with pytest.raises(ValueError, match="overlaps the input"):
            harness.reduce_sum(base[::-1], vid, out=out)
    torch.cuda.synchronize()
    check_all(f"{vid}: strided and reversed CuPy views under a non-blocking stream", got, want)


@pytest.mark.parametrize("vid", VARIANTS)
def test_four_threads_at_once(vid, needs_cupy):
    start = threading.Barrier(4)
    harness.reduce_sum(fresh(vid), vid)  # a first call: the checked path, then every thread hits

    def worker() -> list:
        s = torch.cuda.Stream()
        xs = [fresh(vid) for _ in range(REPS)]
        torch.cuda.synchronize()
        start.wait()
        with torch.cuda.stream(s):
            outs = [harness.reduce_sum(x, vid) for x in xs]
        s.synchronize()
        return [(value(o), exact(x)) for o, x in zip(outs, xs, strict=True)]

    results = run_in_threads(worker)
    check_all(f"{vid} from 4 threads", [g for g, _ in results], [w for _, w in results])
    assert len(results) == 4 * REPS


# -- torch.compile -------------------------------------------------------------------------------

COMPILE_VARIANTS = [
    "cuda/fastest",
    "triton/fastest",
    "cuda/reproducible",
    "cuda/v8-shuffle-chunked",
]


@pytest.mark.parametrize("mode", ["default", "reduce-overhead", "max-autotune-no-cudagraphs"])
@pytest.mark.parametrize("vid", COMPILE_VARIANTS)
def test_torch_compile_fullgraph(vid, mode, needs_cupy):
    torch._dynamo.reset()

    def f(t: torch.Tensor) -> torch.Tensor:
        return torch.ops.reduce_ladder.sum(t * 1, vid)  # an op before it: a real graph

    compiled = torch.compile(f, fullgraph=True, mode=mode)
    x = fresh(vid)
    got, want = [], []
    for _ in range(REPS):
        x.copy_(fresh(vid))  # new data at the same address (reduce-overhead's static input)
        got.append(value(compiled(x)))  # .item() before the next replay overwrites it
        want.append(exact(x))
    check_all(f"{vid} under torch.compile(fullgraph=True, mode={mode!r})", got, want)
    torch._dynamo.reset()


@pytest.mark.parametrize("vid", ["cuda/axis-r4-split-rows", "triton/axis-c3-vector-columns",
                                 "triton/fastest"])  # fmt: skip
def test_reduce_overhead_keeps_nothing_in_the_graph_pool(vid, needs_cupy, monkeypatch):
    """torch.compile(mode="reduce-overhead") warms up inside its CUDA-graph memory pool: what a
    first call keeps (an axis sum's partials and counters, triton/fastest's workspace and its
    tuner's L2 flush buffer) must be made off the caller's thread, in torch's default pool, or the
    warm-up fails ("Detected 2 tensor(s) in the cudagraph pool not tracked as outputs", as it did
    after the compile tests above). The sums must be exact. The tuner runs here (conftest turns it
    off)."""
    from harness.core import timing
    from triton_kernels import fastest

    monkeypatch.setenv("REDUCE_LADDER_TRITON_TUNE", "1")
    monkeypatch.setattr(fastest, "_chosen", {})
    timing._flush_buffer.cache_clear()
    torch._dynamo.reset()
    axis = "axis" in vid
    shape, dim = ((3, 200_003), 1) if "r4" in vid else ((40_003, 5), 0)

    def f(t: torch.Tensor) -> torch.Tensor:
        return torch.ops.reduce_ladder.sum(t * 1, vid, dim if axis else None)

    def default_pool(t: torch.Tensor) -> bool:  # not in a CUDA graph's private pool
        ptr = t.data_ptr()
        for seg in torch.cuda.memory_snapshot():
            if seg["address"] <= ptr < seg["address"] + seg["total_size"]:
                return tuple(seg.get("segment_pool_id", (0, 0))) == (0, 0)
        raise AssertionError(f"{ptr:#x} is in no segment of torch's allocator")

    compiled = torch.compile(f, fullgraph=True, mode="reduce-overhead")
    size = shape if axis else (N,)
    x = torch.empty(size, device="cuda")
    for _ in range(4):  # small integers in float32: every order of additions is exact
        x.copy_(torch.randint(-F32_MAX, F32_MAX + 1, size, device="cuda"))
        got = compiled(x).clone()  # before the next replay overwrites it
        want = x.to(torch.int64).sum(dim if axis else None).to(torch.float32)
        assert torch.equal(got, want), f"{vid} under reduce-overhead"
    (entry,) = (plan_cache.default_axis() if axis else plan_cache.default()).cached_launches()
    kept = [*getattr(entry, "partials", ()), *(entry.workspace or ())]
    if not axis:
        assert fastest._chosen and timing._flush_buffer.cache_info().currsize == 1, "no tuning"
        kept += list(timing._flush_buffer())  # made by the tuner's first run
    assert kept and all(map(default_pool, kept)), f"{vid}: a cached buffer in the graph's pool"
    torch._dynamo.reset()


# -- CUDA graphs -----------------------------------------------------------------------------


def capture(fn: Callable[[], torch.Tensor], stream: torch.cuda.Stream | None):
    """fn warmed up once (on the current stream), then captured: on torch's default capture
    stream (stream=None, what torch.cuda.graph(g) does without stream=) or on `stream`."""
    fn()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=stream):
        out = fn()
    return g, out


@pytest.mark.parametrize("given_stream", [False, True], ids=["default-capture", "given-stream"])
@pytest.mark.parametrize("vid", VARIANTS)
def test_graph_replay_after_the_data_changed(vid, given_stream, needs_cupy):
    x = fresh(vid)
    o = torch.empty((), dtype=result_dtype(vid, x.dtype), device="cuda")
    stream = torch.cuda.Stream() if given_stream else None
    g, r = capture(lambda: harness.reduce_sum(x, vid), stream)
    g_out, _ = capture(lambda: harness.reduce_sum(x, vid, out=o), stream)
    plan_cache.clear()  # nothing a graph uses may live in the cache
    got, want = [], []
    for _ in range(REPS):
        x.copy_(fresh(vid))
        g.replay()
        g_out.replay()
        got += [value(r), value(o)]
        want += [exact(x)] * 2
    check_all(f"{vid} graph replays ({'given' if given_stream else 'default'} stream)", got, want)


@pytest.mark.parametrize("vid", VARIANTS)
def test_two_graphs_replayed_at_once(vid, needs_cupy):
    """Two graphs captured on torch's default capture stream (the same stream: they once shared
    one workspace), replayed on two streams that both wait on a long sleep on a third, so their
    kernels run at the same time."""
    xs = [fresh(vid), fresh(vid)]
    graphs = [capture(lambda x=x: harness.reduce_sum(x, vid), None) for x in xs]
    gate, s1, s2 = torch.cuda.Stream(), torch.cuda.Stream(), torch.cuda.Stream()
    got, want = [], []
    for _ in range(REPS):
        for x in xs:
            x.copy_(fresh(vid))
        torch.cuda.synchronize()
        with torch.cuda.stream(gate):
            torch.cuda._sleep(2_000_000)  # ~1 ms: both replays queue behind it
        for s, (g, _) in zip((s1, s2), graphs, strict=True):
            s.wait_stream(gate)
            with torch.cuda.stream(s):
                g.replay()
        torch.cuda.synchronize()
        got += [value(r) for _, r in graphs]
        want += [exact(x) for x in xs]
    check_all(f"{vid}: two graphs replayed at once on two streams", got, want)


# -- the ticket heals ---------------------------------------------------------------------------


@pytest.mark.parametrize("vid", CACHED)
def test_a_counter_two_launches_shared_is_back_at_zero(vid, needs_cupy):
    """Force the incident the plan cache exists to prevent: two launches of one cached entry
    sharing its workspace, run at the same time on two streams. Their sums may be wrong (that
    is the incident); afterwards the modular ticket must have left the counter at 0, so every
    later launch is right. A reset store instead could leave it off 0 for good."""
    x = fresh(vid)
    entry: BoundLaunch = plan_cache.default().get(catalogue.get(vid), "int32", x)
    partials, counter = entry.workspace
    gate, s2 = torch.cuda.Stream(), torch.cuda.Stream()
    outs = [torch.empty((), dtype=torch.int32, device="cuda") for _ in range(2)]
    for _ in range(50):
        with torch.cuda.stream(gate):
            torch.cuda._sleep(200_000)
        torch.cuda.current_stream().wait_stream(gate)
        s2.wait_stream(gate)
        entry(x, outs[0])  # on the entry's stream (the current one)
        entry.go_with(x, outs[1], s2.cuda_stream, partials.data_ptr(), counter.data_ptr())
    torch.cuda.synchronize()
    assert counter.item() == 0, f"{vid}: the shared counter was left at {counter.item()}"
    got = []
    for _ in range(REPS):
        x.copy_(fresh(vid))
        got.append((value(harness.reduce_sum(x, vid)), exact(x)))
    check_all(f"{vid} after a shared-counter incident", [g for g, _ in got], [w for _, w in got])


# -- the device guard ---------------------------------------------------------------------------


def test_another_current_device_takes_the_guarded_path(monkeypatch, needs_cupy):
    """With one GPU, the guard's logic: when x's device is not the current one, the hot path
    declines and the checked path makes x's device current for the call (the two-GPU run is
    its own test where a machine with two GPUs is lent)."""
    from harness.launch import api, stream

    vid = "cuda/fastest"
    x = fresh(vid)
    harness.reduce_sum(x, vid)  # warm: the hot path would hit
    assert api._hit(x, vid) is not None
    monkeypatch.setattr(api, "_current_device", lambda: x.get_device() + 1)
    assert api._hit(x, vid) is None
    entered: list[int] = []
    real = torch.cuda.device

    def recording(d: int):
        entered.append(d)
        return real(d)

    monkeypatch.setattr(stream.torch.cuda, "device", recording)
    assert value(harness.reduce_sum(x, vid)) == exact(x)
    assert entered == [x.get_device()]


# -- every variant captures --------------------------------------------------------------------

EVERY = [v.id for v in catalogue.VARIANTS if v.launch is not None and not v.wrong]


@pytest.mark.parametrize("use_op", [False, True], ids=["reduce_sum", "op"])
@pytest.mark.parametrize("vid", EVERY)
def test_every_variant_captures_and_replays(vid, use_op, needs_cupy):
    """Every variant of the catalogue (the wrong demonstrations aside), through reduce_sum and
    torch.ops.reduce_ladder.sum: warmed up once, captured on torch's default capture stream,
    replayed after the data changed, exact."""
    x = fresh(vid, 2**16 + 3)

    def call() -> torch.Tensor:
        return torch.ops.reduce_ladder.sum(x, vid) if use_op else harness.reduce_sum(x, vid)

    g, r = capture(call, None)
    got, want = [], []
    for _ in range(3):
        x.copy_(fresh(vid, x.numel()))
        g.replay()
        got.append(value(r))
        want.append(exact(x))
    check_all(f"{vid} captured through {'the op' if use_op else 'reduce_sum'}", got, want)
