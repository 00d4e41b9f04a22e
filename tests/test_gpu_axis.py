"""The axis family on the GPU: every CUDA and Triton axis variant on the issue's shapes and on
small ragged ones, int32 exact (wrapping past 2^31), float32 within each mapping's bound, the
same bits on two runs, each CUDA stage equal to its Triton twin on integer data, and the result
compared with torch.sum(x, dim). Skipped (with the reason) without a GPU.

Kept to a few tens of seconds: one int32 and one float32 tensor per shape (made once per module),
each variant run on the shapes its mapping takes, but where its longest chain of serial adds
would make one call take most of a second (SLOW_CHAIN)."""

import functools

import pytest
import torch

import harness
from harness.check import axis_verify
from harness.check.verify import gamma
from harness.core import axis_geometry as geom
from harness.core import catalogue

pytestmark = pytest.mark.gpu

BIG = [
    ((4096, 4096), 0),
    ((4096, 4096), 1),
    ((2**20, 64), 1),
    ((262_144, 128), 0),
    ((8, 2**20), 1),
    ((8, 2**20), 0),
    ((2**20, 4), 1),
    ((8, 65536, 8), 1),
    ((3, 1000, 257), 1),
]
RAGGED = [
    ((1, 1), 0),
    ((1, 1), 1),
    ((1, 5000), 1),
    ((5000, 1), 0),
    ((37, 70), 0),
    ((37, 70), -1),
    ((1000, 33), 0),
    ((3, 40, 33), 0),
    ((3, 40, 33), 2),
    ((5, 2049, 3), 1),
    ((9, 5), 1),
    ((600, 5), 0),
    ((3, 70001), 1),
]
# A launch whose longest chain of dependent adds passes SLOW_CHAIN (r0 on (8, 2^20): 8 threads
# down 2^20 elements each; c0 on (262144, 128); a column stage over 8 long rows) runs for a
# large fraction of a second per call: those pairs are left out, the stages meant for the shape
# (r1, c2, the fastest pair) cover it.
SLOW_CHAIN = 65_536


def _ok(v, shape, dim):
    p = geom.problem(shape, dim % len(shape))
    return v.launch.mapping.takes(p) and v.launch.mapping.chain_length(p) <= SLOW_CHAIN


CASES = [
    pytest.param(v.id, s, d, id=f"{v.id}-{'x'.join(map(str, s))}-dim{d}")
    for s, d in BIG + RAGGED
    for v in catalogue.AXIS_VARIANTS
    if _ok(v, s, d)
]


@functools.cache
def _int32(shape):
    g = torch.Generator(device="cuda").manual_seed(sum(shape))
    return torch.randint(-(2**31), 2**31, shape, dtype=torch.int64, device="cuda", generator=g).to(
        torch.int32
    )


@functools.cache
def _float32(shape):
    g = torch.Generator(device="cuda").manual_seed(3 * sum(shape))
    return torch.randn(shape, device="cuda", generator=g) * 100


@functools.cache
def _small_ints(shape):
    # integers in [-8, 8]: every partial sum of a column or row of these shapes stays far below
    # 2^24, so every order of addition gives the same float32 bits
    g = torch.Generator(device="cuda").manual_seed(5 * sum(shape))
    return torch.randint(-8, 9, shape, device="cuda", generator=g).to(torch.float32)


@pytest.fixture(scope="module", autouse=True)
def _free_inputs():
    """The inputs are made once per module (about 1.5 GB for the big shapes) and freed after."""
    yield
    for made in (_int32, _float32, _small_ints):
        made.cache_clear()
    torch.cuda.empty_cache()


@pytest.mark.parametrize(("vid", "shape", "dim"), CASES)
def test_int32_exact_and_equal_to_torch_sum_wrapped(vid, shape, dim, needs_cupy):
    x = _int32(shape)
    r = axis_verify.check_axis(catalogue.get_axis(vid), x, dim)
    assert r.ok and r.exact_required, r.message
    got = harness.reduce_sum(x, vid, dim=dim)
    want = torch.sum(x, dim=dim)  # int64: wrapped here to what an int32 accumulator holds
    assert got.dtype == torch.int32 and got.shape == want.shape
    assert torch.equal(got.to(torch.int64), torch.remainder(want + 2**31, 2**32) - 2**31)


@pytest.mark.parametrize(("vid", "shape", "dim"), CASES)
def test_float32_within_the_bound_and_the_same_bits_twice(vid, shape, dim, needs_cupy):
    x = _float32(shape)
    r = axis_verify.check_axis(catalogue.get_axis(vid), x, dim)
    assert r.ok and not r.exact_required, r.message
    first = harness.reduce_sum(x, vid, dim=dim)
    second = harness.reduce_sum(x, vid, dim=dim)
    assert torch.equal(first.view(torch.int32), second.view(torch.int32)), "bits changed"
    want = torch.sum(x, dim=dim)
    assert first.shape == want.shape and first.dtype == want.dtype
    # ours within gamma_L * sum|x| of the exact sum; torch.sum, whatever its order, within
    # gamma_length * sum|x| (no element passes more than length - 1 additions)
    g = axis_verify.golden(x, dim % x.dim())
    length = x.shape[dim]
    tol = (gamma(r.chain_length, 2.0**-24) + gamma(length, 2.0**-24)) * g.abs_sum
    assert bool(((first.double() - want.double()).abs() <= tol).all())


TWINS = [
    pytest.param(v.id, v.twin or v.counterpart, s, d, id=f"{v.id}-{'x'.join(map(str, s))}-dim{d}")
    for s, d in BIG + RAGGED
    for v in catalogue.AXIS_VARIANTS
    if v.backend == "cuda" and _ok(v, s, d)
]


@pytest.mark.parametrize(("cuda_id", "triton_id", "shape", "dim"), TWINS)
def test_cuda_equals_its_triton_twin_on_integer_data(cuda_id, triton_id, shape, dim, needs_cupy):
    x = _small_ints(shape)
    a = harness.reduce_sum(x, cuda_id, dim=dim)
    b = harness.reduce_sum(x, triton_id, dim=dim)
    assert torch.equal(a, b) and torch.equal(a, torch.sum(x, dim=dim))


def test_non_contiguous_and_cupy_input(needs_cupy):
    import cupy

    base = _int32((300, 257))
    keep = base.clone()
    x = base.t()
    for vid in ("cuda/axis-fastest", "triton/axis-fastest"):
        for dim in (0, 1):
            got = harness.reduce_sum(x, vid, dim=dim)
            assert torch.equal(got, harness.reduce_sum(x.contiguous(), vid, dim=dim))
    assert torch.equal(base, keep)
    c = cupy.asarray(_small_ints((100, 33)))
    got = harness.reduce_sum(c, "cuda/axis-c1-column-tiles", dim=0)
    assert isinstance(got, cupy.ndarray) and got.shape == (33,)
    assert bool((got == c.sum(axis=0)).all())


def test_runs_on_the_callers_stream(needs_cupy):
    x = _small_ints((4096, 257))
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        got = harness.reduce_sum(x, "cuda/axis-c2-split-columns", dim=0)
        want = torch.sum(x, dim=0)
    s.synchronize()
    assert torch.equal(got, want)


SIXTEEN = [
    pytest.param(v.id, s, d, id=f"{v.id}-{'x'.join(map(str, s))}-dim{d}")
    for s, d in [((4096, 4096), 0), ((4096, 4096), 1), ((3, 1000, 257), 1), *RAGGED[4:]]
    for v in catalogue.AXIS_VARIANTS
    if _ok(v, s, d)
]


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize(("vid", "shape", "dim"), SIXTEEN)
def test_16_bit_floats_added_in_float32_rounded_once(vid, shape, dim, dtype, needs_cupy):
    v = catalogue.get_axis(vid)
    # integers in [-8, 8]: |sum| <= 8 x 4096 < 65504 (float16's largest) and sum|x| < 2^24, so
    # the float32 sum is exact and the output must be it rounded once (to nearest even)
    ints = _small_ints(shape).to(dtype)
    r = axis_verify.check_axis(v, ints, dim)
    assert r.ok and r.exact_required, r.message
    x = (_float32(shape) / 100).to(dtype)
    r = axis_verify.check_axis(v, x, dim)
    assert r.ok and not r.exact_required, r.message
    first = harness.reduce_sum(x, vid, dim=dim)
    second = harness.reduce_sum(x, vid, dim=dim)
    assert torch.equal(first.view(torch.int16), second.view(torch.int16)), "bits changed"
    want = torch.sum(x, dim=dim)  # torch: float32 accumulation, one rounding, any order
    assert first.dtype == want.dtype == dtype and first.shape == want.shape
    g = axis_verify.golden(x, dim % x.dim())
    u = axis_verify.OUTPUT_ROUNDING["float16" if dtype == torch.float16 else "bfloat16"]
    length = x.shape[dim]
    spread = (gamma(r.chain_length, 2.0**-24) + gamma(length, 2.0**-24)) * g.abs_sum
    tol = spread * (1 + u) + 2 * u * g.value.double().abs() + 2 * u * spread
    assert bool(((first.double() - want.double()).abs() <= tol).all())


SPLIT_COLUMNS = [f"{b}/axis-{s}" for s in ("c2-split-columns", "c3-vector-columns", "fastest")
                 for b in ("cuda", "triton")]  # fmt: skip
SPLIT_ROWS = [f"{b}/axis-{s}" for s in ("r4-split-rows", "fastest") for b in ("cuda", "triton")]
# (variant, shape, dim): columns over 16 splits of 3 strips (c3, the fastest pair's pick), rows
# over 16 splits each (r4, the fastest pair's pick for 8 long rows)
SPLIT_CASES = [(v, (4096, 257), 0) for v in SPLIT_COLUMNS]
SPLIT_CASES += [(v, (8, 2**20), 1) for v in SPLIT_ROWS]


@pytest.mark.parametrize(("vid", "shape", "dim"), SPLIT_CASES)
def test_cached_calls_on_two_streams_and_in_a_cuda_graph(vid, shape, dim, needs_cupy):
    # c2 has partials, c3 and r4 partials and a ticket counter per strip or row, what an entry
    # of harness.launch.plan_cache.AxisCache owns: each stream gets its own, and a captured call
    # builds a plan whose partials and counters the graph owns (the counters zeroed by a node of
    # the graph: two graphs replayed at once on two streams, each replayed again, take no ticket
    # of the other's)
    x = _small_ints(shape)
    want = torch.sum(x, dim=dim)
    assert torch.equal(harness.reduce_sum(x, vid, dim=dim), want)  # warm-up: compiled, cached
    streams = [torch.cuda.Stream(), torch.cuda.Stream()]
    outs = []
    for s in streams:
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            outs.append(harness.reduce_sum(x, vid, dim=dim))
    torch.cuda.synchronize()
    assert all(torch.equal(o, want) for o in outs)
    graphs, captured = [torch.cuda.CUDAGraph(), torch.cuda.CUDAGraph()], []
    for graph in graphs:
        with torch.cuda.graph(graph):
            captured.append(harness.reduce_sum(x, vid, dim=dim))
    for _ in range(3):
        for graph, s in zip(graphs, streams, strict=True):
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                graph.replay()
        for s in streams:
            torch.cuda.current_stream().wait_stream(s)
        torch.cuda.synchronize()
        assert all(torch.equal(c, want) for c in captured)


# The small column sums (under a megabyte, split over a few blocks a strip), a 3-D
# middle dim of two strips a batch, and few long rows (r4: sanitize's (3, 200003), 8 rows of 2^20
# in 16 splits, 2 rows of 2^22): one launch, its last block per strip or row adding the partials.
SMALL_SPLITS = [((2048, 80), 0), ((288, 80), 0), ((512, 120), 0), ((2048, 224), 0),
                ((3, 600, 200), 1)]  # fmt: skip
LONG_ROWS = [((3, 200_003), 1), ((8, 2**20), 1), ((2, 2**22), 1)]
ONE_LAUNCH = [(v, shape, dim, "c3") for v in SPLIT_COLUMNS if "c2" not in v
              for shape, dim in SMALL_SPLITS]  # fmt: skip
ONE_LAUNCH += [(v, shape, dim, "r4") for v in SPLIT_ROWS for shape, dim in LONG_ROWS]


@pytest.mark.parametrize(("vid", "shape", "dim", "kind"), ONE_LAUNCH)
def test_splits_are_one_launch_with_the_same_bits_every_run(vid, shape, dim, kind, needs_cupy):
    from harness.launch import axis_plan

    v = catalogue.get_axis(vid)
    x = _float32(shape)
    p = axis_plan.check(v, shape, dim)
    (ps,) = v.launch.mapping.passes(p)
    assert ps.kind == kind and ps.grid[1] > 1, ps
    r = axis_verify.check_axis(v, _int32(shape), dim)
    assert r.ok and r.exact_required, r.message
    plan = axis_plan.make_plan(v, x, p)
    counters = plan.launch.workspace[1]
    assert len(plan.launch.kernels) == 1 and counters.numel() == ps.grid[0]
    plan.poison()
    first = plan.run().clone()
    for _ in range(20):  # whichever block is last, the same order: the same bits
        assert torch.equal(plan.run().view(torch.int32), first.view(torch.int32))
    torch.cuda.synchronize()
    assert not counters.any()
    assert torch.equal(harness.reduce_sum(x, vid, dim=dim).view(torch.int32),
                       first.view(torch.int32))  # fmt: skip


VECTORIZED = [v.id for v in catalogue.AXIS_VARIANTS if v.stage in ("r3", "r4", "c3", "fastest")]
MISALIGNED = [((64, 4100), 1), ((4100, 64), 0), ((3, 40, 64), 1)]


@pytest.mark.parametrize(
    ("vid", "shape", "dim"),
    # a row stage takes rows only (the last dim): the column shapes go to c3 and the fastest pair
    [(v, s, d) for v in VECTORIZED for s, d in MISALIGNED
     if d == len(s) - 1 or not catalogue.get_axis(v).stage.startswith("r")],
)  # fmt: skip
def test_a_misaligned_input_gives_the_same_bits_as_an_aligned_one(vid, shape, dim, needs_cupy):
    # the CUDA vectorized stages read 16-byte quads only from an aligned input: a contiguous view
    # one element into its storage takes the scalar path, which must add the same elements in
    # the same order. Triton specializes on the pointer's alignment and picks its layout (and so
    # tl.sum's order) from it: there only the bound and the same bits twice are required.
    base = _float32((1 + shape[0] * shape[1] * (shape[2] if len(shape) == 3 else 1),))
    x = base[1:].view(shape)
    assert x.is_contiguous() and x.data_ptr() % 16 != 0
    a = harness.reduce_sum(x, vid, dim=dim)
    b = harness.reduce_sum(x.clone(), vid, dim=dim)
    if vid.startswith("cuda/"):
        assert torch.equal(a.view(torch.int32), b.view(torch.int32))
    again = harness.reduce_sum(x, vid, dim=dim)
    assert torch.equal(a.view(torch.int32), again.view(torch.int32))
    r = axis_verify.check_axis(catalogue.get_axis(vid), x, dim)
    assert r.ok and not r.exact_required, r.message


@pytest.mark.parametrize("dtype", [torch.float32, torch.int32, torch.bfloat16])
def test_the_golden_on_the_cpu_gives_the_gpu_goldens_verdict(dtype, needs_cupy):
    # the sanitize study checks with golden_on_cpu (ATen's float64 / int64 reduce is reported by
    # initcheck); both goldens must judge alike: right sums pass with the same worst ratio
    g = torch.Generator(device="cuda").manual_seed(5)
    x = (torch.randn(3, 40_003, device="cuda", generator=g) * 100).to(dtype)
    for vid, dim in (("cuda/axis-r4-split-rows", 1), ("triton/axis-c3-vector-columns", 0)):
        v = catalogue.get_axis(vid)
        on_gpu, on_cpu = axis_verify.check_axis(v, x, dim), axis_verify.check_axis(v, x, dim, True)
        assert on_gpu.ok and on_cpu.ok, (on_gpu.message, on_cpu.message)
        assert on_cpu.exact_required == on_gpu.exact_required
        assert on_cpu.worst_ratio == pytest.approx(on_gpu.worst_ratio, rel=1e-9, abs=0)
