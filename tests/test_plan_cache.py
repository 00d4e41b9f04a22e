"""The plan cache without a GPU: triton/fastest and every other 1-D family's Triton twin (the
multi-pass ladder, seeds 004 and 001, the reproducible pair) interpreted over CPU tensors (the GPU
twins: tests/test_gpu_callable.py, tests/test_gpu_cache_families.py). Keys, LRU eviction, clear,
info, threads, a capture's own workspace, and sums bit-identical to a fresh plan's."""

import threading

import pytest
import torch

import harness
from harness.check import verify
from harness.core import catalogue, device
from harness.launch import plan_cache, rebind
from harness.launch.plan import make_plan
from tests.threads import current_device, run_in_threads

V = catalogue.get("triton/fastest")
N = 5003


def other_streams(dev: str, k: int) -> list:
    """k streams other than the current one, as the cache sees them (a pointer each): real CUDA
    streams on a GPU (a launch may run on them; the caller keeps the list alive), stand-in
    numbers on the CPU, where nothing is launched on a stream."""
    if dev == "cuda":
        return [torch.cuda.Stream() for _ in range(k)]
    return [type("Stream", (), {"cuda_stream": 1 + i})() for i in range(k)]


def fresh_sum(x: torch.Tensor) -> torch.Tensor:
    return make_plan(V, x.reshape(-1)).run().clone()[0]


@pytest.fixture
def cache() -> plan_cache.PlanCache:
    return plan_cache.PlanCache(max_entries=3)


def test_key_names_variant_dtype_n_alignment_device_stream(dev):
    base = torch.zeros(N + 4, device=dev)
    for off in range(4):
        x = base[off : off + N]
        key = plan_cache.key_of(V, "float32", x, 7)
        assert key == (V.id, "float32", N, x.data_ptr() % 16, x.get_device(), 7)
    assert {plan_cache.key_of(V, "float32", base[o : o + N], 0)[3] for o in range(4)} == {
        0,
        4,
        8,
        12,
    }


def test_hit_for_a_new_tensor_of_the_same_class_and_bits_equal_uncached(cache, dev):
    xs = [verify.seed_like_input(N, "float32", dev) * (k + 1) for k in range(3)]
    for x in xs:
        launch = cache.get(V, "float32", x)
        out = launch.workspace[0].new_empty(())
        launch(x, out)
        assert verify.same_bits(out, fresh_sum(x))
    info = cache.info()
    assert (info.misses, info.hits, info.size, info.evictions) == (1, 2, 1, 0)


def test_each_alignment_class_and_size_misses(cache, dev):
    base = torch.randn(N + 8, device=dev)
    cache.get(V, "float32", base[:N])
    cache.get(V, "float32", base[1 : N + 1])  # another alignment class
    cache.get(V, "float32", base[: N - 1])  # another n
    cache.get(V, "float64", base[:N].double())  # another dtype
    info = cache.info()
    assert info.misses == 4 and info.hits == 0


def test_distinct_streams_get_distinct_workspaces(cache, dev):
    x = torch.randn(N, device=dev)
    s1, s2 = other_streams(dev, 2)
    a = cache.get(V, "float32", x, stream_ptr=s1.cuda_stream)
    b = cache.get(V, "float32", x, stream_ptr=s2.cuda_stream)
    assert a is not b
    assert a.workspace[1].data_ptr() != b.workspace[1].data_ptr()  # two ticket counters
    assert cache.get(V, "float32", x, stream_ptr=s1.cuda_stream) is a


def test_lru_evicts_the_least_recently_used(cache, dev):
    xs = [torch.randn(N + k, device=dev) for k in range(4)]
    first = cache.get(V, "float32", xs[0])
    cache.get(V, "float32", xs[1])
    cache.get(V, "float32", xs[2])
    assert cache.get(V, "float32", xs[0]) is first  # now most recent: xs[1] is the oldest
    cache.get(V, "float32", xs[3])
    info = cache.info()
    assert info.size == 3 and info.evictions == 1
    assert [k[2] for k in cache.cached_keys()] == [N + 2, N, N + 3]
    cache.get(V, "float32", xs[1])  # evicted: a miss
    assert cache.info().misses == 5


def test_clear_drops_entries_and_counters(cache, dev):
    x = torch.randn(N, device=dev)
    a = cache.get(V, "float32", x)
    cache.clear()
    assert cache.info() == plan_cache.CacheInfo(0, 0, 0, 0, 3)
    assert cache.get(V, "float32", x) is not a


def test_threads_share_one_entry_and_sum_right(dev):
    cache = plan_cache.PlanCache(max_entries=8)
    x = verify.seed_like_input(N, "int32", dev)
    want = fresh_sum(x)
    start = threading.Barrier(4)

    def worker() -> list:  # interpreted: the launch itself serializes (stream.INTERPRETER)
        start.wait()
        done = []
        for _ in range(3):
            with current_device(x):  # a new thread: a build or a launch needs its context
                launch = cache.get(V, "int32", x)
                out = launch.workspace[0].new_empty(())
                launch(x, out)
            done.append((launch, out))
        return done

    results = run_in_threads(worker)
    assert len({id(launch) for launch, _ in results}) == 1  # built once
    assert all(verify.same_bits(out, want) for _, out in results)
    info = cache.info()
    assert (info.misses, info.hits) == (1, 11)


def test_bad_sizes_and_modes_are_refused(dev):
    with pytest.raises(ValueError, match="max_entries"):
        plan_cache.PlanCache(max_entries=0)
    with pytest.raises(ValueError, match="launch mode"):
        rebind.bind(V, "float32", torch.ones(4, device=dev), 0, "jit")  # a mode no longer kept


@pytest.mark.parametrize("dtype", catalogue.FASTEST_DTYPES)
def test_reduce_sum_through_the_cache_equals_a_fresh_plan(dtype, dev):
    plan_cache.clear()
    base = verify.seed_like_input(N + 3, dtype, dev)
    for off in range(3):
        x = base[off : off + N]
        for _ in range(2):
            got = harness.reduce_sum(x, V.id)
            assert got.shape == () and verify.same_bits(got, fresh_sum(x)), (dtype, off)
        part = harness.partials(x, V.id)
        assert part.shape == (1,) and verify.same_bits(part[0], got)
    classes = {base[off:].data_ptr() % 16 for off in range(3)}  # 2 for float64, else 3
    info = plan_cache.info()
    assert info.misses == len(classes) and info.hits == 6 - len(classes)  # partials: a plan


def test_reduce_sum_keeps_shapes_and_noncontiguous_inputs(dev):
    plan_cache.clear()
    x = verify.seed_like_input(600, "int32", dev).reshape(20, 30)
    assert verify.same_bits(harness.reduce_sum(x, V.id), fresh_sum(x))
    assert verify.same_bits(harness.reduce_sum(x.t(), V.id), fresh_sum(x.t().contiguous()))


def _no_checked_path(*args, **kwargs):
    raise AssertionError("the checked path ran where the hot path should have hit")


def test_hot_path_hits_after_the_first_call_and_skips_the_checks(dev, monkeypatch):
    from harness.launch import api

    plan_cache.clear()
    x = verify.seed_like_input(N, "float32", dev)
    want = fresh_sum(x)
    assert verify.same_bits(harness.reduce_sum(x, V.id), want)  # checked path: builds the entry
    monkeypatch.setattr(api, "_checked_sum", _no_checked_path)
    again = harness.reduce_sum(x * 1, V.id)  # a new tensor of the same class: the hot path
    assert verify.same_bits(again, want) and again.data_ptr() != x.data_ptr()
    first = harness.reduce_sum(x, V.id)
    assert first.data_ptr() != again.data_ptr()  # a new result per call, never a shared buffer
    # a tensor of its own, not a view of a block others share (docs/runtime.md says why)
    assert again._base is None and again.untyped_storage().nbytes() == again.element_size()
    info = plan_cache.info()
    assert (info.misses, info.hits) == (1, 2)


def test_hot_path_leaves_every_other_input_to_the_checked_path(dev):
    from harness.launch import api

    plan_cache.clear()
    x = verify.seed_like_input(N, "float32", dev)
    harness.reduce_sum(x, V.id)
    assert api._hit(x, V.id) is not None
    assert api._hit(x[:-1], V.id) is None  # another n: a miss, nothing built by _hit
    assert api._hit(x.reshape(1, N).t().contiguous().t(), V.id) is not None  # contiguous 2-d
    assert api._hit(torch.stack([x, x], 1)[:, 0], V.id) is None  # not contiguous
    assert api._hit(x, "triton/tile-256") is None  # not a single-launch variant id
    assert plan_cache.info().size == 1
    with pytest.raises(TypeError, match="unsupported dtype"):
        harness.reduce_sum(x.long(), V.id)  # still refused, with the same message, once warm
    assert harness.reduce_sum(x[:0], V.id).item() == 0


def test_lookup_misses_without_building_or_counting(cache, dev):
    x = torch.randn(N, device=dev)
    key = plan_cache.key_of(V, "float32", x, 0)
    assert cache.lookup(key) is None and cache.info() == plan_cache.CacheInfo(0, 0, 0, 0, 3)
    entry = cache.get(V, "float32", x)
    assert cache.lookup(key) is entry and cache.lookup(key) is entry
    assert cache.info().hits == 2


def test_a_capture_takes_the_entry_of_any_stream_or_says_to_warm_up(cache, dev):
    """for_capture: the kernel, grid and configuration do not depend on the stream, so a capture
    on a stream nothing ran on yet launches another stream's entry (with its own workspace); with
    no entry of that shape at all it refuses, naming the warm-up, and builds nothing."""
    x = torch.randn(N, device=dev)
    with pytest.raises(plan_cache.PlanCacheMiss, match="call it once"):
        cache.for_capture(V, "float32", x)
    assert cache.info().size == 0 and cache.info().misses == 0
    (side,) = other_streams(dev, 1)
    other = cache.get(V, "float32", x, stream_ptr=side.cuda_stream)  # built for another stream
    assert cache.for_capture(V, "float32", x) is other
    with pytest.raises(plan_cache.PlanCacheMiss):
        cache.for_capture(V, "float32", x[:-1])  # another n: another kernel grid


@pytest.mark.parametrize("dtype", catalogue.FASTEST_DTYPES)
def test_small_path_threshold_is_inclusive_in_bytes(dtype):
    from harness.core import dtypes
    from harness.launch import single_launch

    t = single_launch.SMALL_MAX_BYTES // dtypes.get(dtype).itemsize
    assert single_launch.takes_small_path(dtype, t)
    assert not single_launch.takes_small_path(dtype, t + 1)
    assert not single_launch.takes_small_path(dtype, 10, max_bytes=0)  # the switch-off


def test_small_kernels_compile_without_spills_for_every_dtype_and_block():
    """NVRTC (no GPU needed) compiles every reduce_fastest_small the plan or the sweep launches;
    none spills, and each fits its __launch_bounds__ (registers x threads <= 64 Ki)."""
    from harness.compile import cuda_source, nvrtc
    from harness.launch import single_launch

    if not nvrtc.available():
        pytest.skip("libnvrtc not installed (pip install -e '.[cuda13]')")
    exprs = {
        single_launch.small_expression(d, b): b
        for d in catalogue.get("cuda/fastest").dtypes
        for b in (256, 512, 1024)
    }
    r = nvrtc.compile_source(cuda_source.expand("fastest.cu"), "fastest.cu", list(exprs))
    assert len(r.lowered) == len(exprs)
    for expr, threads in exprs.items():
        res = r.resources[r.lowered[expr]]
        assert res.spill_store_bytes == 0 and res.registers * threads <= 65536, (expr, res)


# -- every other 1-D family: the multi-pass ladder, seed 004's and 001's, the reproducible pair --
# (their interpreted Triton twins; the CUDA kernels and captures: tests/test_gpu_cache_families.py)

FAMILIES = {
    "ladder": "triton/tile-256",
    "ladder-split": "triton/pair-split-128",
    "grid-stride": "triton/grid-stride-1024",
    "seed004": "triton/quad-adjacent-256",
    "seed001": "triton/001-pinned",
    "reproducible": "triton/reproducible",
}
FAMILY_IDS = list(FAMILIES.values())


def fresh_plan_sum(vid: str, x: torch.Tensor) -> torch.Tensor:
    """The uncached path's sum (a plan built for x, as reduce_sum did before the cache)."""
    return make_plan(catalogue.get(vid), x.reshape(-1)).run().clone()[0]


def dtypes_name(x: torch.Tensor) -> str:
    from harness.core import dtypes

    return dtypes.name_of(x.dtype)


def family_data(vid: str, n: int, k: int, dev: str) -> torch.Tensor:
    """Seed-like data of vid's first dtype (int32 where it has it, else float32), varied by k."""
    dtype = "int32" if "int32" in catalogue.get(vid).dtypes else "float32"
    return verify.seed_like_input(n, dtype, dev) * (k + 1)


@pytest.mark.parametrize("vid", FAMILY_IDS)
def test_family_entries_hit_for_new_tensors_and_sum_as_a_fresh_plan(vid, cache, dev):
    v = catalogue.get(vid)
    xs = [family_data(vid, N, k, dev) for k in range(3)]
    name = dtypes_name(xs[0])
    for x in xs:
        launch = cache.get(v, name, x)
        assert launch.mode == "" and launch.n == N  # rebind_passes' entry
        out = launch.proto.new_empty(())
        launch(x, out)
        assert out.dtype == launch.out_dtype and verify.same_bits(out, fresh_plan_sum(vid, x))
    info = cache.info()
    assert (info.misses, info.hits, info.size, info.evictions) == (1, 2, 1, 0)
    assert cache.cached_keys() == [plan_cache.key_of(v, name, xs[0], plan_cache.stream_of(xs[0]))]


@pytest.mark.parametrize("vid", FAMILY_IDS)
def test_family_keys_name_n_dtype_alignment_and_stream(vid, cache, dev):
    v = catalogue.get(vid)
    base = family_data(vid, N + 8, 0, dev)
    name = dtypes_name(base)
    a = cache.get(v, name, base[:N])
    assert cache.get(v, name, base[1 : N + 1]) is not a  # another alignment class
    assert cache.get(v, name, base[: N - 1]) is not a  # another n: other passes / chunks
    s1, s2 = other_streams(dev, 2)
    b = cache.get(v, name, base[:N], stream_ptr=s1.cuda_stream)
    c = cache.get(v, name, base[:N], stream_ptr=s2.cuda_stream)
    assert len({id(a), id(b), id(c)}) == 3
    if b.workspace:  # a one-pass chain has no partials between passes
        assert b.workspace[0].data_ptr() != c.workspace[0].data_ptr()  # never shared by streams
    info = cache.info()
    assert (info.misses, info.hits, info.size, info.evictions) == (5, 0, 3, 2)


def test_every_family_shares_one_table_its_lru_and_counters(dev):
    """The single-launch entries and the other families' live in one LRU: one bound, one order,
    one set of counters."""
    cache = plan_cache.PlanCache(max_entries=2)
    x = verify.seed_like_input(N, "float32", dev)
    fast = cache.get(V, "float32", x)
    tile = cache.get(catalogue.get("triton/tile-256"), "float32", x)
    assert fast.mode == rebind.DEFAULT_MODE["triton"] and tile.mode == ""  # rebind_passes' entry
    assert cache.get(V, "float32", x) is fast  # most recent now: the tile entry is the oldest
    cache.get(catalogue.get("triton/reproducible"), "float32", x)
    assert [k[0] for k in cache.cached_keys()] == [V.id, "triton/reproducible"]
    info = cache.info()
    assert (info.misses, info.hits, info.size, info.evictions) == (3, 1, 2, 1)


@pytest.mark.parametrize(
    ("vid", "dtype"),
    [(v, d) for v in FAMILY_IDS for d in ("int32", "float32") if d in catalogue.get(v).dtypes],
)
def test_reduce_sum_of_each_family_hits_and_equals_the_uncached_path(vid, dtype, dev):
    """Through reduce_sum (the checked path's first call, then the hot path; out= too) on
    integer and float data, several alignment classes: bit for bit the fresh plan's sum."""
    from harness.launch import api

    plan_cache.clear()
    base = verify.seed_like_input(N + 3, dtype, dev)
    for off in range(3):
        x = base[off : off + N]
        want = fresh_plan_sum(vid, x)
        got = [harness.reduce_sum(x, vid), harness.reduce_sum(x.clone(), vid)]
        out = torch.full((), 7, dtype=api.result_dtype(vid, x.dtype), device=dev)
        assert harness.reduce_sum(x, vid, out=out) is out
        assert api._hit(x, vid) is not None  # the hot path serves this key now
        assert all(verify.same_bits(g, want) for g in [*got, out]), (vid, dtype, off)
    classes = {base[off:].data_ptr() % 16 for off in range(3)} | {0}  # clone(): aligned
    info = plan_cache.info()  # 3 calls and one _hit lookup per offset, one miss per class
    assert info.misses == len(classes) and info.hits == 12 - len(classes)


@pytest.mark.parametrize("vid", FAMILY_IDS)
def test_family_sums_keep_shapes_and_noncontiguous_inputs(vid, dev):
    plan_cache.clear()
    x = family_data(vid, 600, 0, dev).reshape(20, 30)
    for _ in range(2):  # the checked path, then the hot path (a 2-D contiguous tensor)
        assert verify.same_bits(harness.reduce_sum(x, vid), fresh_plan_sum(vid, x))
    xt = x.t()
    assert verify.same_bits(harness.reduce_sum(xt, vid), fresh_plan_sum(vid, xt.contiguous()))


@pytest.mark.parametrize("vid", FAMILY_IDS)
def test_family_eviction_frees_entries_and_rebuilds_the_same_sum(vid, dev):
    cache = plan_cache.PlanCache(max_entries=2)
    v = catalogue.get(vid)
    xs = [family_data(vid, N + k, k, dev) for k in range(3)]
    name = dtypes_name(xs[0])
    first = cache.get(v, name, xs[0])
    cache.get(v, name, xs[1])
    cache.get(v, name, xs[2])  # evicts xs[0]'s entry
    assert cache.info().evictions == 1 and [k[2] for k in cache.cached_keys()] == [N + 1, N + 2]
    again = cache.get(v, name, xs[0])
    assert again is not first and cache.info().misses == 4
    out = again.proto.new_empty(())
    again(xs[0], out)
    assert verify.same_bits(out, fresh_plan_sum(vid, xs[0]))


@pytest.mark.parametrize("vid", FAMILY_IDS)
def test_family_capture_launch_uses_a_workspace_of_its_own(vid, cache, dev):
    """in_capture's launches (what a CUDA-graph capture records) with the workspace it makes
    itself, not the entry's: the entry's partials are left as they were, the sum is the same.
    for_capture takes another stream's entry and refuses a shape nothing was built for."""
    v = catalogue.get(vid)
    x = family_data(vid, N, 0, dev)
    name = dtypes_name(x)
    with pytest.raises(plan_cache.PlanCacheMiss, match="call it once"):
        cache.for_capture(v, name, x)
    (side,) = other_streams(dev, 1)
    entry = cache.get(v, name, x, stream_ptr=side.cuda_stream)
    assert cache.for_capture(v, name, x) is entry
    for t in entry.workspace:
        t.fill_(3)
    before = [t.clone() for t in entry.workspace]
    out = entry.proto.new_empty(())
    entry.in_capture(x, out, 0)
    assert verify.same_bits(out, fresh_plan_sum(vid, x))
    assert all(torch.equal(a, b) for a, b in zip(entry.workspace, before, strict=True))


@pytest.mark.parametrize("vid", [V.id, *FAMILY_IDS])
def test_an_entry_keeps_no_reference_to_the_tensor_it_was_built_for(vid, cache, dev):
    import gc

    from torch.multiprocessing.reductions import StorageWeakRef

    x = family_data(vid, N, 0, dev)
    ref = StorageWeakRef(x.untyped_storage())
    entry = cache.get(catalogue.get(vid), dtypes_name(x), x)
    del x
    gc.collect()
    assert ref.expired() and cache.cached_launches() == [entry]


def test_family_threads_share_one_entry_and_sum_right(dev):
    vid = "triton/tile-256"
    cache = plan_cache.PlanCache(max_entries=8)
    v = catalogue.get(vid)
    x = verify.seed_like_input(N, "int32", dev)
    want = fresh_plan_sum(vid, x)
    start = threading.Barrier(4)

    def worker() -> list:
        start.wait()
        done = []
        for _ in range(2):
            with current_device(x):  # a new thread: a build or a launch needs its context
                launch = cache.get(v, "int32", x)
                out = launch.proto.new_empty(())
                launch(x, out)  # the entry's lock serializes the interpreted launches
            done.append((launch, out))
        return done

    results = run_in_threads(worker)
    assert len({id(launch) for launch, _ in results}) == 1
    assert all(verify.same_bits(out, want) for _, out in results)
    assert (cache.info().misses, cache.info().hits) == (1, 7)


def test_builds_dispatch_by_family(monkeypatch, dev):
    """The single-launch family binds through rebind, every other 1-D family (CUDA's in-place
    and dynamic-shared-memory kernels too, keyed here without a GPU) through rebind_passes."""
    from harness.launch import rebind_passes

    built: list[tuple[str, str]] = []
    monkeypatch.setattr(rebind, "bind", lambda v, *a: built.append(("rebind", v.id)) or v)
    monkeypatch.setattr(rebind_passes, "bind", lambda v, *a: built.append(("passes", v.id)) or v)
    cache = plan_cache.PlanCache()
    x = torch.empty(N, dtype=torch.int32, device="meta")
    ids = ["cuda/fastest", "cuda/v0-gmem-interleaved", "cuda/004-smem-dyn", "cuda/reproducible"]
    for vid in ids:
        cache.get(catalogue.get(vid), "int32", x, stream_ptr=5)
    assert built == [("rebind", ids[0])] + [("passes", i) for i in ids[1:]]
    assert [k[0] for k in cache.cached_keys()] == ids


def test_pack_lays_out_the_driver_launch_parameters():
    """rebind.pack, what every driver-mode launch passes cuLaunchKernel: one address per
    parameter, each value in 8 bytes (a 4-byte parameter is the low half, what the driver
    reads), and a rewritten cell is what the array points at (the per-call rebinding)."""
    import ctypes

    import numpy as np

    cells, addr, _keep = rebind.pack((0x1000, 0x2000, 7, np.uint64(2**40 + 3), np.uint32(5)))
    params = (ctypes.c_void_p * 5).from_address(addr)
    assert [ctypes.c_void_p.from_address(params[i]).value for i in range(3)] == [0x1000, 0x2000, 7]
    assert ctypes.c_uint64.from_address(params[3]).value == 2**40 + 3
    assert ctypes.c_uint32.from_address(params[4]).value == 5
    cells[0].value = 0xDEAD0
    assert ctypes.c_void_p.from_address(params[0]).value == 0xDEAD0


def test_a_driver_kernel_as_a_native_step_writes_x_and_out_per_call():
    """DriverKernel.step, what the native launch of a CUDA entry adds: its pointers in order (the
    placeholders X and OUT become slots written per call), then the scalars as integers; a
    middle pass of a chain has neither."""
    import numpy as np

    k = rebind.DriverKernel.__new__(rebind.DriverKernel)  # no GPU: the fields step reads
    k.function, k.grid, k.scalars = 0xF00, (80, 256, 0), (np.uint64(5003),)
    fixed = [torch.empty(4), torch.empty(1, dtype=torch.int32)]
    step = k.step(rebind.X, rebind.OUT, *fixed)
    params = [0, 0, fixed[0].data_ptr(), fixed[1].data_ptr(), 5003]
    assert step == (0xF00, 80, 256, 0, params, [0], [0], 1)
    assert all(type(p) is int for p in step[4])
    middle = k.step(fixed[0].data_ptr(), 0x2000)
    assert middle == (0xF00, 80, 256, 0, [fixed[0].data_ptr(), 0x2000, 5003], [], [], -1)
    first, last = k.step(rebind.X, 0x2000), k.step(0x2000, rebind.OUT)
    assert (first[5], first[7], last[5], last[7]) == ([0], -1, [], 1)


def test_native_or_keeps_the_python_launch_where_the_launcher_is_unavailable(monkeypatch):
    """rebind.native_or: the native launch's into and call where it builds (its steps added in
    order), else the Python launch kept and the reason said as a warning."""
    from harness.launch import native

    def python_go(x, out):
        return None

    def unavailable():
        raise native.NativeUnavailable("no compiler here")

    monkeypatch.setattr(native, "load", unavailable)
    with pytest.warns(RuntimeWarning, match="no compiler here"):
        assert rebind.native_or(python_go, 7, torch.empty(1), lambda: [("s",)]) == (python_go, None)

    added: list = []

    class Launch:
        def __init__(self, stream, proto):
            added.append(("stream", stream, proto.dtype))

        def add(self, *step):
            added.append(step)

        def into(self, x, out):
            return out

        def call(self, x):
            return x

    monkeypatch.setattr(native, "load", lambda: type("Module", (), {"Launch": Launch}))
    go, call = rebind.native_or(python_go, 7, torch.empty(1), lambda: [("a", 1), ("b", 2)])
    assert go.__name__ == "into" and call.__name__ == "call"
    assert added == [("stream", 7, torch.float32), ("a", 1), ("b", 2)]


@pytest.mark.parametrize("vid", ["triton/fastest", "triton/tile-256", "triton/reproducible"])
def test_threads_summing_different_data_through_one_entry_sum_right(vid, dev):
    """Four threads, each its own data, the same cache key: one entry (its workspace, its ticket
    counter), every sum right (interpreted: Triton's interpreter is not thread-safe, so the
    launches take one lock; on the GPU, the entry's own lock and the stream order)."""
    plan_cache.clear()
    harness.reduce_sum(torch.ones(N, device=dev), vid)  # built: every thread hits
    start = threading.Barrier(4)

    def worker(k: int) -> list:
        start.wait()
        xs = [torch.full((N,), float(k + 1 + 4 * i), device=dev) for i in range(3)]
        return [(float(harness.reduce_sum(x, vid)), N * float(x[0])) for x in xs]

    counter = iter(range(4))
    results = run_in_threads(lambda: worker(next(counter)))
    assert len(results) == 12 and all(got == want for got, want in results), results
    plan_cache.clear()


@pytest.mark.skipif(device.gpu_available(), reason="an interpreted launch only: a GPU launch is "
                    "never cut off between two programs")  # fmt: skip
@pytest.mark.parametrize(
    "vid, shape, dim",
    [("triton/fastest", (N,), None), ("triton/axis-r4-split-rows", (3, 200_003), 1),
     ("triton/axis-c3-vector-columns", (40_003, 5), 0)],
)  # fmt: skip
def test_a_ticket_counter_left_behind_is_zeroed_before_the_next_launch(vid, shape, dim):
    """An interpreted launch runs its programs one after another in Python: an exception or a
    KeyboardInterrupt between two of them leaves the ticket counter part-way. The next launch of
    that entry must still sum right (it zeroes the counter first)."""
    plan_cache.clear()
    x = torch.randint(-50, 50, shape).float()
    want = x.sum() if dim is None else x.sum(dim)
    assert torch.equal(harness.reduce_sum(x, vid, dim=dim), want)
    cache = plan_cache.default() if dim is None else plan_cache.default_axis()
    (entry,) = cache.cached_launches()
    counter = entry.workspace[1]
    counter.fill_(3)  # what a launch stopped after three programs leaves
    assert torch.equal(harness.reduce_sum(x, vid, dim=dim), want)
    assert counter.eq(0).all()  # and left at 0 by the launch, as always
    plan_cache.clear()
