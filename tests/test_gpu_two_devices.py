"""Two GPUs in one process: every family with a cached plan (the fastest pair, the reproducible
pair, the multi-pass ladder, seed 004's and seed 001's kernels, the axis fastest pair) summing
tensors on cuda:1 while cuda:0 is current, and the reverse.

What each test proves (exact sums on integer data, fresh every repetition, as in
test_gpu_contexts.py):
- the call runs on the input's device and on THAT device's current stream, whichever device is
  current: the input's device has a side stream as its current one, kept busy by a gate before
  each rep's new data is written, so a launch on any other stream (or device) reads the old data
  and sums wrong; the caller's current device and streams are as they were after the call;
- the cache holds separate plans per device (keys and workspaces on each device);
- the grid comes from the SM count of the input's device (one GPU made to report fewer SMs);
- a CUDA graph captured on each device replays right with the other device current;
- torch.ops.reduce_ladder.sum under torch.compile(fullgraph=True) with inputs on both devices in
  one graph.
A Triton kernel compiled for the wrong device, or a CUDA function loaded in the other device's
context, fails these sums (the driver refuses the launch). Skipped, with the reason, on a machine
with fewer than two GPUs. NVLink multicast stays off (nothing here uses NCCL or symmetric memory).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import pytest
import torch

import harness
from harness.core import catalogue, mappings
from harness.launch import plan_cache
from harness.launch.api import result_dtype

pytestmark = pytest.mark.gpu

VARIANTS = [
    "cuda/fastest",
    "triton/fastest",
    "cuda/reproducible",
    "triton/reproducible",
    "cuda/v8-shuffle-chunked",
    "cuda/v1-smem-interleaved",
    "triton/tile-256",
    "cuda/004-smem-unroll4-dyn",
    "triton/quad-adjacent-256",
    "cuda/001-v4-smem",
    "triton/001-pinned",
]
AXIS = ["cuda/axis-fastest", "triton/axis-fastest"]
# A row sum, a tall-skinny column sum (split with a ticket combine) and a middle-dim sum.
AXIS_CASES = [((1000, 4096), 1), ((262_144, 128), 0), ((8, 4096, 33), 1)]
N = 2**18 + 5  # several blocks, a partial last tile, every multi-pass chain and ticket
REPS = 10
F32_MAX = 8  # float32 data in [-8, 8]: every partial of N elements is an exact integer
DIRECTIONS = [(1, 0), (0, 1)]  # (the input's device, the current one)
DIRECTION_IDS = ["on-cuda1-cuda0-current", "on-cuda0-cuda1-current"]


@pytest.fixture(autouse=True)
def two_gpus(needs_cupy) -> Iterator[None]:
    count = torch.cuda.device_count()
    if count < 2:
        pytest.skip(f"needs two GPUs in one process; this machine has {count}")
    plan_cache.clear()
    before = torch.cuda.current_device()
    yield
    torch.cuda.set_device(before)
    plan_cache.clear()


def dtype_of(vid: str) -> torch.dtype:
    return torch.int32 if "int32" in catalogue.get(vid).dtypes else torch.float32


def fresh(dt: torch.dtype, shape, device: int) -> torch.Tensor:
    """Integer data on `device`'s current stream: int32 over its full range (sums wrap), or
    float32 in [-F32_MAX, F32_MAX]."""
    if dt == torch.int32:
        return torch.randint(-(2**31), 2**31 - 1, shape, dtype=dt, device=f"cuda:{device}")
    return torch.randint(-F32_MAX, F32_MAX + 1, shape, device=f"cuda:{device}").to(dt)


def exact(x: torch.Tensor, dim: int | None = None) -> torch.Tensor:
    """The exact sum (along dim) on the host, in x's dtype: int32 wrapped modulo 2^32."""
    s = x.detach().to("cpu", torch.int64)
    s = s.sum() if dim is None else s.sum(dim)
    if x.dtype == torch.int32:
        return ((s + 2**31) % 2**32 - 2**31).to(torch.int32)
    return s.to(x.dtype)


def same(got: torch.Tensor, want: torch.Tensor) -> bool:
    return torch.equal(got.cpu().reshape(want.shape).to(want.dtype), want)


@contextlib.contextmanager
def current(device: int, streams: dict[int, torch.cuda.Stream]) -> Iterator[None]:
    """Each device's current stream set to streams[d] (set_stream also makes d current), then
    `device` current; everything as it was afterwards."""
    was_device = torch.cuda.current_device()
    was = [torch.cuda.current_stream(d) for d in streams]
    for s in streams.values():
        torch.cuda.set_stream(s)
    torch.cuda.set_device(device)
    try:
        yield
    finally:
        for s in was:
            torch.cuda.set_stream(s)
        torch.cuda.set_device(was_device)


def gated_reps(
    data: int,
    now: int,
    shape: tuple[int, ...],
    dt: torch.dtype,
    call: Callable[[torch.Tensor], torch.Tensor],
    dim: int | None = None,
) -> list[tuple[int, bool]]:
    """REPS calls of call(x) (a sum along dim, or of everything), x on cuda:`data` whose current
    stream is a side stream, cuda:`now` current: each rep the side stream sleeps, then new data
    is written into x on it, then the call; (rep, exact?) each. Also asserts the current device
    and streams are left as set."""
    side = {data: torch.cuda.Stream(data), now: torch.cuda.Stream(now)}
    with current(now, side):
        x = fresh(dt, shape, data)
        results = []
        for rep in range(REPS):
            with torch.cuda.device(data):
                torch.cuda._sleep(2_000_000)  # on cuda:data's current (side) stream
            x.copy_(fresh(dt, shape, data))  # after the sleep, on the same stream
            r = call(x)
            assert torch.cuda.current_device() == now, "the call left another device current"
            for d, s in side.items():
                assert torch.cuda.current_stream(d) == s, f"the call changed cuda:{d}'s stream"
            assert r.device == x.device, f"the sum is on {r.device}, the input on {x.device}"
            results.append((rep, same(r, exact(x, dim))))
    return results


def check(what: str, results: list[tuple[int, bool]]) -> None:
    wrong = [rep for rep, ok in results if not ok]
    assert len(results) == REPS, f"{what}: {len(results)} reps ran, not {REPS}"
    assert not wrong, f"{what}: {len(wrong)} of {len(results)} sums wrong (reps {wrong})"


@pytest.mark.parametrize(("data", "now"), DIRECTIONS, ids=DIRECTION_IDS)
@pytest.mark.parametrize("vid", VARIANTS)
def test_sum_on_the_inputs_device_and_stream(vid, data, now):
    """reduce_sum (a new result and out=) and the op, on the input's device and current stream."""
    dt = dtype_of(vid)
    want_dtype = result_dtype(vid, dt)
    outs: list[torch.Tensor] = []

    def with_out(x: torch.Tensor) -> torch.Tensor:
        out = torch.full((), -7, dtype=want_dtype, device=x.device)
        outs.append(out)
        return harness.reduce_sum(x, vid, out=out)

    calls = {
        "reduce_sum": lambda x: harness.reduce_sum(x, vid),
        "out=": with_out,
        "the op": lambda x: torch.ops.reduce_ladder.sum(x, vid),
    }
    for name, call in calls.items():
        check(f"{vid} through {name}, cuda:{data} with cuda:{now} current",
              gated_reps(data, now, (N,), dt, call))  # fmt: skip
    assert all(o.device.index == data for o in outs)


@pytest.mark.parametrize(("data", "now"), DIRECTIONS, ids=DIRECTION_IDS)
@pytest.mark.parametrize(("shape", "dim"), AXIS_CASES, ids=lambda c: str(c))
@pytest.mark.parametrize("vid", AXIS)
def test_axis_sum_on_the_inputs_device_and_stream(vid, shape, dim, data, now):
    def call(x: torch.Tensor) -> torch.Tensor:
        return harness.reduce_sum(x, vid, dim=dim)

    for dt in (torch.int32, torch.float32):
        check(f"{vid} {dt} {shape} dim {dim}, cuda:{data} with cuda:{now} current",
              gated_reps(data, now, shape, dt, call, dim))  # fmt: skip


def test_the_cache_holds_a_plan_per_device():
    """Calls alternating between the devices: one entry per (variant, device), its workspace on
    its device, and after the first call on each device every further call is a hit."""
    xs = {d: {vid: fresh(dtype_of(vid), (N,), d) for vid in VARIANTS} for d in (0, 1)}
    for _ in range(3):
        for d in (0, 1):
            for vid, x in xs[d].items():
                assert same(harness.reduce_sum(x, vid), exact(x)), f"{vid} on cuda:{d}"
    cache = plan_cache.default()
    keys = cache.cached_keys()
    for vid in VARIANTS:
        devices = sorted(k[4] for k in keys if k[0] == vid)
        assert devices == [0, 1], f"{vid}: entries on devices {devices}, not one on each"
    for key, entry in zip(keys, cache.cached_launches(), strict=True):
        places = {t.device.index for t in entry.workspace if t.is_cuda}
        assert places <= {key[4]}, f"{key[0]} on cuda:{key[4]} has workspace on {places}"
    info = cache.info()
    assert info.misses == len(keys) == 2 * len(VARIANTS), info
    assert info.hits >= 2 * 2 * len(VARIANTS), info


def test_axis_cache_holds_a_plan_per_device():
    for d in (0, 1):
        for vid in AXIS:
            for shape, dim in AXIS_CASES:
                x = fresh(torch.int32, shape, d)
                assert same(harness.reduce_sum(x, vid, dim=dim), exact(x, dim)), (vid, d, shape)
    keys = plan_cache.default_axis().cached_keys()
    for vid in AXIS:
        for shape, dim in AXIS_CASES:
            devices = sorted(k[4] for k in keys if k[0] == vid and k[2] == shape and k[3] == dim)
            assert devices == [0, 1], f"{vid} {shape} dim {dim}: entries on {devices}"
    for key, entry in zip(keys, plan_cache.default_axis().cached_launches(), strict=True):
        tensors = [*entry.partials, *(entry.workspace or ())]
        assert {t.device.index for t in tensors} <= {key[4]}, key


class _FewerSMs:
    """A GPU's properties, but for its SM count."""

    def __init__(self, real, sms: int) -> None:
        self._real, self.multi_processor_count = real, sms

    def __getattr__(self, name: str):
        return getattr(self._real, name)


@pytest.mark.parametrize("vid", ["cuda/fastest", "triton/fastest", "cuda/reproducible"])
def test_the_grid_follows_the_inputs_device(vid, monkeypatch):
    """cuda:1 made to report a quarter of its SMs: built with cuda:0 current, its plan's grid
    is sized by cuda:1's count and cuda:0's plan by cuda:0's (whichever device saw first)."""
    real = torch.cuda.get_device_properties
    sms = real(1).multi_processor_count
    fewer = sms // 4

    def props(device=None):
        index = torch.cuda._utils._get_device_index(device, optional=True)
        p = real(index)
        return _FewerSMs(p, fewer) if index == 1 else p

    monkeypatch.setattr(torch.cuda, "get_device_properties", props)
    mappings.sm_count_of.cache_clear()
    try:
        blocks = {}
        for d in (1, 0):
            x = fresh(dtype_of(vid), (2**24,), d)
            with torch.cuda.device(1 - d):
                assert same(harness.reduce_sum(x, vid), exact(x)), f"{vid} on cuda:{d}"
            key = next(k for k in plan_cache.default().cached_keys() if k[4] == d)
            blocks[d] = plan_cache.default().lookup(key).blocks
    finally:
        mappings.sm_count_of.cache_clear()
    # Each grid is a per-SM count times the SMs (the reproducible pair's balanced to fewer):
    # cuda:1's at most a quarter of cuda:0's.
    assert blocks[1] < blocks[0] and blocks[1] * sms <= blocks[0] * fewer, (blocks, fewer, sms)


@pytest.mark.parametrize("vid", VARIANTS + AXIS)
def test_a_graph_captured_on_each_device(vid):
    """A graph per device (captured with that device current, on a stream of its own: torch's
    default capture stream is made once, on whichever device was current first), replayed in
    turn with the other device current after the data changed: exact."""
    axis = vid in AXIS
    shape, dim = AXIS_CASES[1] if axis else ((2**16 + 3,), None)
    dt = torch.int32 if axis else dtype_of(vid)
    graphs = {}
    for d in (0, 1):
        with torch.cuda.device(d):
            x = fresh(dt, shape, d)

            def call(x=x) -> torch.Tensor:
                return harness.reduce_sum(x, vid, dim=dim)

            call()  # the warm-up a capture needs
            torch.cuda.synchronize()
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g, stream=torch.cuda.Stream(d)):
                r = call()
            graphs[d] = (g, x, r)
    results = {0: [], 1: []}
    for _ in range(3):
        for d, (g, x, r) in graphs.items():
            with torch.cuda.device(1 - d):
                x.copy_(fresh(dt, shape, d))
                g.replay()
                results[d].append(same(r, exact(x, dim)))
    for d, ok in results.items():
        assert len(ok) == 3 and all(ok), f"{vid}: cuda:{d}'s graph replayed wrong sums: {ok}"


@pytest.mark.parametrize(
    ("vid", "dim"),
    [("cuda/fastest", None), ("triton/fastest", None), ("cuda/reproducible", None),
     ("cuda/v8-shuffle-chunked", None), ("cuda/axis-fastest", 1), ("triton/axis-fastest", 0)],
)  # fmt: skip
def test_torch_compile_with_inputs_on_both_devices(vid, dim):
    """One compiled graph, an op on each device's input: both exact, each on its device."""
    torch._dynamo.reset()

    def f(a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        op = torch.ops.reduce_ladder.sum
        return op(a * 1, vid, dim), op(b * 1, vid, dim)  # an op before each: a real graph

    compiled = torch.compile(f, fullgraph=True)
    dt = torch.int32 if dim is not None else dtype_of(vid)
    shape = (512, 1000) if dim is not None else (N,)
    ok = []
    try:
        for rep in range(REPS):
            with torch.cuda.device(rep % 2):  # either device current
                a, b = fresh(dt, shape, 0), fresh(dt, shape, 1)
                ra, rb = compiled(a, b)
                assert (ra.device.index, rb.device.index) == (0, 1)
                ok.append(same(ra, exact(a, dim)) and same(rb, exact(b, dim)))
    finally:
        torch._dynamo.reset()
    assert len(ok) == REPS and all(ok), f"{vid} compiled over two devices: {ok}"
