"""The axis family on the CPU: every Triton axis kernel interpreted against the exact golden at
small, ragged shapes (and compiled on the GPU, where the `dev` fixture gives CUDA tensors), the
geometry, and the family kept out of the 1-D catalogue. Bad input: tests/test_axis_bad_input.py;
the CUDA kernels on a GPU: tests/test_gpu_axis.py; their NVRTC compile: tests/test_nvrtc.py and
below."""

import re

import pytest
import torch

import harness
from harness.check import axis_verify
from harness.compile import nvrtc
from harness.core import axis_geometry as geom
from harness.core import axis_vector as vec
from harness.core import catalogue, dtypes, records_axis
from tests.test_catalogue import cuda_sources

TRITON = [v.id for v in catalogue.AXIS_VARIANTS if v.backend == "triton"]
# Ragged on purpose: M, N not multiples of 8 / 32 / 256; N = 1; M = 1; a reduced dim long enough
# for c2 and c3 to split (600 rows: 3 splits); rows of 4 and 5 (r3's one and two lanes); two rows
# long enough for r4 to split (70001: 2 splits, a length no multiple of 4); 3-D along every dim.
CASES = [
    ((1, 1), 0),
    ((1, 1), 1),
    ((1, 37), 0),
    ((1, 37), 1),
    ((37, 1), 0),
    ((37, 1), 1),
    ((37, 70), 0),
    ((37, 70), -1),
    ((600, 5), 0),
    ((5, 600), 1),
    ((9, 4), 1),
    ((9, 5), 1),
    ((2, 70001), 1),
    ((3, 40, 33), 0),
    ((3, 40, 33), 1),
    ((3, 40, 33), 2),
    ((2, 600, 5), -2),
]


INTERPRETED_CHAIN = 2048


def _takes(vid, shape, dim):
    """Whether the variant takes the case; a column stage takes rows too (one column per row,
    read with stride 1), checked here only on tiny rows problems to keep the interpreter fast."""
    mapping = catalogue.get_axis(vid).launch.mapping
    p = geom.problem(shape, dim % len(shape))
    if mapping.along == "columns" and p.rows and p.numel > 64:
        return False
    # the long rows are there for r4's splits: a stage that would add thousands of elements in
    # one lane (r0, r2) takes a minute in the interpreter there, and is checked on shorter rows
    return mapping.takes(p) and mapping.chain_length(p) <= INTERPRETED_CHAIN


def _cases(vids):
    return [(vid, s, d) for vid in vids for s, d in CASES if _takes(vid, s, d)]


@pytest.mark.parametrize(("vid", "shape", "dim"), _cases(TRITON))
def test_triton_axis_int32_exact_and_equal_to_torch_sum(vid, shape, dim, dev):
    g = torch.Generator().manual_seed(sum(shape) + dim)
    x = torch.randint(-(2**31), 2**31, shape, dtype=torch.int64, generator=g).to(torch.int32)
    x = x.to(dev)
    r = axis_verify.check_axis(catalogue.get_axis(vid), x, dim)
    assert r.ok and r.exact_required, r.message
    got = harness.reduce_sum(x, vid, dim=dim)
    want = torch.sum(x, dim=dim)  # int64 in torch: the int32 sum wrapped modulo 2^32 is ours
    assert got.dtype == torch.int32 and got.shape == want.shape
    assert torch.equal(got.to(torch.int64), torch.remainder(want + 2**31, 2**32) - 2**31)


@pytest.mark.parametrize(("vid", "shape", "dim"), _cases(TRITON))
def test_triton_axis_float32(vid, shape, dim, dev):
    g = torch.Generator().manual_seed(7 * sum(shape) + dim)
    ints = torch.randint(-8, 9, shape, generator=g).to(torch.float32).to(dev)
    r = axis_verify.check_axis(catalogue.get_axis(vid), ints, dim)
    assert r.ok and r.exact_required, r.message  # integer data: every partial exact
    x = (torch.randn(shape, generator=g) * 1e3).to(dev)
    r = axis_verify.check_axis(catalogue.get_axis(vid), x, dim)
    assert r.ok and not r.exact_required, r.message
    got = harness.reduce_sum(x, vid, dim=dim)
    assert got.dtype == torch.float32 and got.shape == torch.sum(x, dim=dim).shape
    again = harness.reduce_sum(x, vid, dim=dim)
    assert torch.equal(got.view(torch.int32), again.view(torch.int32))  # the same bits


SIXTEEN = [(vid, s, d) for vid, s, d in _cases(TRITON) if s in ((37, 70), (600, 5), (3, 40, 33))]


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize(("vid", "shape", "dim"), SIXTEEN)
def test_triton_axis_16_bit_floats_added_in_float32_rounded_once(vid, shape, dim, dtype, dev):
    g = torch.Generator().manual_seed(11 * sum(shape) + dim)
    # integers times 16: sums past 256 (bfloat16's last exact integer), so the one rounding counts
    ints = (torch.randint(-8, 9, shape, generator=g) * 16).to(dtype).to(dev)
    r = axis_verify.check_axis(catalogue.get_axis(vid), ints, dim)
    assert r.ok and r.exact_required, r.message
    x = torch.randn(shape, generator=g).to(dtype).to(dev)
    r = axis_verify.check_axis(catalogue.get_axis(vid), x, dim)
    assert r.ok and not r.exact_required, r.message
    got = harness.reduce_sum(x, vid, dim=dim)
    assert got.dtype == dtype and got.shape == torch.sum(x, dim=dim).shape


def test_general_float_error_is_within_the_stated_bound_per_mapping(dev):
    x = (torch.randn(700, 40, generator=torch.Generator().manual_seed(1)) * 1e4).to(dev)
    for vid in ("triton/axis-c0-thread-column", "triton/axis-c2-split-columns"):
        r = axis_verify.check_axis(catalogue.get_axis(vid), x, 0)
        assert r.ok and 0 < r.worst_ratio <= 1, r


def test_non_contiguous_input_is_read_from_a_copy_and_left_alone(dev):
    base = torch.randint(-50, 50, (40, 33), dtype=torch.int32).to(dev)
    keep = base.clone()
    x = base.t()  # (33, 40), not contiguous
    for vid, dim in (("triton/axis-r1-block-row", 1), ("triton/axis-c1-column-tiles", 0)):
        got = harness.reduce_sum(x, vid, dim=dim)
        assert torch.equal(got.to(torch.int64), torch.sum(x, dim=dim))
    assert torch.equal(base, keep)


def test_a_record_works_as_well_as_its_id(dev):
    x = torch.arange(12, dtype=torch.float32).reshape(3, 4).to(dev)
    v = catalogue.get_axis("triton/axis-fastest")
    assert torch.equal(harness.reduce_sum(x, v, dim=0), torch.sum(x, dim=0))
    assert torch.equal(harness.reduce_sum(x, v, dim=-1), torch.sum(x, dim=1))


def test_the_cache_reuses_kernels_and_partials_per_shape_dim_and_stream(dev):
    from harness.launch import axis_plan, plan_cache

    cache = plan_cache.AxisCache(max_entries=2)
    v = catalogue.get_axis("triton/axis-c2-split-columns")
    x = torch.randint(-50, 50, (600, 5), dtype=torch.int32).to(dev)
    p = axis_plan.check(v, tuple(x.shape), 0)
    a = cache.get(v, x, p, 0, stream=0)
    assert len(a.partials) == 1 and a.partials[0].numel() == 3 * 5  # 3 splits x 5 columns
    assert cache.get(v, x.clone(), p, 0, stream=0) is a and (cache.hits, cache.misses) == (1, 1)
    side = torch.cuda.Stream() if dev == "cuda" else None  # a real one: the entry is made on it
    assert cache.get(v, x, p, 0, stream=side.cuda_stream if side else 1) is not a  # its own
    # partials per stream
    out = torch.empty(5, dtype=torch.int32, device=dev)
    a(x, out)
    assert torch.equal(out.to(torch.int64), torch.sum(x, dim=0))
    plan = axis_plan.make_plan(v, x, p)
    plan.poison()
    assert torch.equal(plan.run(), out)  # the plan's bits
    y = x[:300]
    cache.get(v, y, axis_plan.check(v, tuple(y.shape), 0), 0, stream=0)
    assert len(cache) == 2  # least recently used evicted


@pytest.mark.parametrize(("shape", "dim"), [((2048, 80), 0), ((3, 600, 200), 1)])
@pytest.mark.parametrize("vid", ["triton/axis-fastest", "triton/axis-c3-vector-columns"])
def test_split_columns_are_one_launch_exact_with_the_counters_back_at_zero(vid, shape, dim, dev):
    """c3 split over several blocks a strip (the fastest pair's pick for small column sums; the
    3-D case: two strips a batch, the last one ragged) is one launch whose last block per strip
    adds the partials: exact on integer data, the same bits twice, every counter 0 after a call."""
    from harness.launch import axis_plan

    v = catalogue.get_axis(vid)
    p = axis_plan.check(v, shape, dim)
    (ps,) = v.launch.mapping.passes(p)
    assert ps.kind == "c3" and ps.grid[1] > 1, ps  # split: S blocks a strip
    g = torch.Generator().manual_seed(sum(shape))
    wide = torch.randint(-(2**31), 2**31, shape, dtype=torch.int64, generator=g)
    small = torch.randint(-8, 9, shape, generator=g).to(torch.float32)
    for x in (wide.to(torch.int32).to(dev), small.to(dev)):
        r = axis_verify.check_axis(v, x, dim)
        assert r.ok and r.exact_required, r.message
        plan = axis_plan.make_plan(v, x, p)
        partials, counters = plan.launch.workspace
        assert len(plan.launch.kernels) == 1 and plan.launch.partials == []
        assert partials.numel() == p.outer * ps.grid[1] * p.inner
        assert counters.numel() == ps.grid[0] and counters.dtype == torch.int32
        plan.poison()  # the partials, not the counters
        first = plan.run().clone()
        assert not counters.any()
        assert torch.equal(plan.run(), first) and not counters.any()
        want = torch.sum(x.to(torch.int64), dim=dim)
        if x.dtype == torch.int32:
            want = torch.remainder(want + 2**31, 2**32) - 2**31  # wrapped modulo 2^32
        assert torch.equal(first.to(torch.int64), want)


# The geometry, pure Python.


@pytest.mark.parametrize("length", [1, 7, 255, 256, 257, 600, 10_000, 262_144])
@pytest.mark.parametrize("inner", [1, 5, 32, 33, 128])
def test_splits_cover_the_reduced_dim_once(length, inner):
    p = geom.Problem(1, length, inner, (inner,))
    s, chunk = geom.SPLIT_COLUMNS.splits(p)
    assert chunk % 8 == 0 and (s - 1) * chunk < length <= s * chunk
    passes = geom.SPLIT_COLUMNS.passes(p)
    assert len(passes) == (1 if s == 1 else 2)
    assert passes[0].grid == (geom.cdiv(inner, 32), s) and passes[0].chunk == chunk


def test_chain_lengths_stated_per_mapping():
    rows = geom.Problem(4096, 4096, 1, (4096,))
    cols = geom.Problem(1, 262_144, 128, (128,))
    assert geom.THREAD_PER_ROW.chain_length(rows) == 4096
    assert geom.BLOCK_PER_ROW.chain_length(rows) == 16 + 8
    assert geom.WARP_PER_ROW.chain_length(rows) == 128 + 5
    assert geom.THREAD_PER_COLUMN.chain_length(cols) == 262_144
    assert geom.COLUMN_TILES.chain_length(cols) == 262_144 // 8 + 3
    s, chunk = geom.SPLIT_COLUMNS.splits(cols)
    assert (s, chunk) == (256, 1024)
    assert geom.SPLIT_COLUMNS.chain_length(cols) == 1024 // 8 + 3 + 256


def test_fastest_picks_by_shape():
    pick = vec.BY_SHAPE.pick
    assert pick(geom.problem((2**20, 4), 1)) is vec.SUBWARP_ROWS
    assert pick(geom.problem((2**20, 64), 1)) is vec.SUBWARP_ROWS
    assert pick(geom.problem((512, 512), 1)) is vec.SPLIT_ROWS  # too few rows for r3
    assert pick(geom.problem((4096, 4096), 1)) is vec.SPLIT_ROWS
    assert pick(geom.problem((8, 2**24), 1)) is vec.SPLIT_ROWS
    for shape, dim in [((4096, 4096), 0), ((8, 2**24), 0), ((3, 1000, 257), 1)]:
        assert pick(geom.problem(shape, dim)) is vec.VECTOR_COLUMNS


def test_triton_fastest_takes_split_columns_for_moderate_widths():
    """The Triton twin's own choice: c2 on many rows of 512..8192 columns, else the CUDA's."""
    pick = vec.BY_SHAPE_TRITON.pick
    for shape in [(4096, 4096), (65536, 1024), (512, 512), (8192, 8192)]:
        assert pick(geom.problem(shape, 0)) is geom.SPLIT_COLUMNS, shape
    for shape in [(262144, 128), (2**20, 64), (1024, 2**18), (256, 4096), (8, 2**24)]:
        assert pick(geom.problem(shape, 0)) is vec.VECTOR_COLUMNS_TRITON, shape
    assert pick(geom.problem((2**20, 64), 1)) is vec.SUBWARP_ROWS
    for shape in [(8, 2**24), (4096, 4096)]:
        assert pick(geom.problem(shape, 1)) is vec.SPLIT_ROWS_TRITON


def test_triton_fastest_splits_its_own_way():
    """Fewer, longer c3 programs and more r4 splits of few long rows than the CUDA fastest's,
    each split still covering the reduced dim once (a function of the shape only)."""
    tall = geom.problem((288, 32768), 0)  # 256 strips: the CUDA c3 splits the rows in two
    assert vec.VECTOR_COLUMNS.passes(tall)[0].grid == (256, 2)
    assert vec.VECTOR_COLUMNS_TRITON.passes(tall)[0].grid == (256, 1)
    few = geom.problem((80, 32768), 1)  # 80 rows: one block each for CUDA, 4 splits for Triton
    assert vec.SPLIT_ROWS.passes(few)[0].grid == (80, 1)
    (four,) = vec.SPLIT_ROWS_TRITON.passes(few)
    assert four.grid == (80, 4) and four.chunk == 8192 and four.chunk % vec.ROW_TILE == 0
    bf16 = geom.problem((288, 32768), 0, itemsize=2)  # 16-bit columns: the CUDA's splits
    assert vec.BY_SHAPE_TRITON.passes(bf16) == vec.VECTOR_COLUMNS.passes(bf16)
    for shape, dim in [((131072, 80), 0), ((80, 131072), 1), ((7, 100_003), 1)]:
        p = geom.problem(shape, dim)
        ours = vec.BY_SHAPE_TRITON.pick(p)
        (ps,) = ours.passes(p)
        assert (ps.grid[1] - 1) * ps.chunk < p.length <= ps.grid[1] * ps.chunk
        assert ours.chain_length(p) >= ps.chunk // (4 * 256)
    assert catalogue.get_axis("triton/axis-fastest").launch.mapping is vec.BY_SHAPE_TRITON
    assert catalogue.get_axis("cuda/axis-fastest").launch.mapping is vec.BY_SHAPE


@pytest.mark.parametrize(
    ("shape", "grid", "lanes"),
    [
        ((2**20, 64), (2, 256), 8),  # 16 lanes for CUDA: 8 lanes in 2 strips x 256 splits
        ((262144, 128), (4, 128), 8),
        ((131072, 288), (5, 103), 16),
        ((2048, 80), (3, 32), 8),  # splits of 2 row groups (64 rows), not MIN_SPLIT_ROWS
        ((16, 2**20, 16), (16, 32), 4),  # never more lanes than the columns' quads
    ],
)
def test_triton_columns_narrow_below_512_columns(shape, grid, lanes):
    """Under NARROW_COLUMNS 4-byte columns the Triton fastest's c3 takes about 8 strips of at
    least 8 lanes and about 512 programs; 16-bit inputs and wider outputs keep its other rule."""
    p = geom.problem(shape, len(shape) - 2)
    (ps,) = vec.VECTOR_COLUMNS_TRITON.passes(p)
    assert (ps.grid, ps.lanes) == (grid, lanes)
    assert vec.VECTOR_COLUMNS_TRITON.chain_length(p) >= -(-ps.chunk // (256 // lanes))
    bf16 = geom.problem(shape, len(shape) - 2, itemsize=2)
    assert vec.BY_SHAPE_TRITON.passes(bf16) == vec.VECTOR_COLUMNS.passes(bf16)
    wide = geom.problem((32768, 1024), 0)
    assert not vec.VECTOR_COLUMNS_TRITON.narrow(wide)


def test_split_columns_combine_in_their_own_launch():
    """c3 split over S blocks a strip is one launch: the strip's last block adds the S partials
    with the split's own tile (G = 256 / lanes row groups), so its chain is the split's plus
    ceil(S / G) + log2(G) + COLUMN_UNROLL."""
    p = geom.problem((2048, 80), 0)  # 80 columns: 32 lanes (20 of them with columns), 8 groups
    assert vec.VECTOR_COLUMNS.lanes(p) == 32 and vec.VECTOR_COLUMNS.splits(p) == (8, 256)
    (only,) = vec.VECTOR_COLUMNS.passes(p)
    assert (only.kind, only.grid, only.chunk, only.lanes) == ("c3", (1, 8), 256, 32)
    assert vec.VECTOR_COLUMNS.chain_length(p) == (256 // 8 + 3 + 8) + (1 + 3 + 8)
    big = geom.problem((65536, 1024), 0)
    s, chunk = vec.VECTOR_COLUMNS.splits(big)
    assert (s, chunk) == (128, 512) and len(vec.BY_SHAPE.passes(big)) == 1
    assert vec.VECTOR_COLUMNS.chain_length(big) == (512 // 8 + 3 + 8) + (128 // 8 + 3 + 8)


# The family apart from the 1-D catalogue, and its sources.


def test_axis_variants_stay_out_of_the_1d_catalogue():
    axis_ids = set(catalogue.AXIS_BY_ID)
    assert not axis_ids & set(catalogue.BY_ID)
    assert not any(v.family == "axis" for v in catalogue.VARIANTS)
    assert not any(v.family == "axis" for v in catalogue.select(include_wrong=True))
    assert "axis.cu" not in cuda_sources()  # the census and the CPU path's 1-D lists
    with pytest.raises(KeyError):
        catalogue.get("cuda/axis-r1-block-row")


def test_every_cuda_stage_has_a_triton_twin_and_the_fastest_pair_counterparts():
    for v in catalogue.AXIS_VARIANTS:
        assert v.family == "axis" and v.dtypes == records_axis.AXIS_DTYPES
        other = v.twin or v.counterpart or (v.twin_of[0] if v.twin_of else None)
        assert other in catalogue.AXIS_BY_ID, v.id
        theirs = catalogue.AXIS_BY_ID[other].launch
        if v.twin or v.twin_of:
            assert theirs == v.launch, v.id  # the same tiles
        else:  # the fastest pair: the same block, each its own choice of stage
            assert theirs.threads == v.launch.threads, v.id


@pytest.mark.skipif(not nvrtc.available(), reason="libnvrtc not installed")
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_axis_source_compiles_every_kind_without_spills(arch):
    r = nvrtc.compile_file(records_axis.SOURCE_CUDA, arch)
    assert set(r.lowered) == set(records_axis.name_expressions())
    # 8 kinds x 4 dtypes, and for the 2 16-bit floats the two-pass split's partials: c2's first
    # pass writing float32, its second (c0) reading them; r4 and c3 combine their splits in
    # their own launch, one kernel per dtype
    assert len(r.resources) == len(set(r.lowered.values())) == 8 * 4 + 2 * 2
    for name, res in r.resources.items():
        assert res.spill_store_bytes == res.spill_load_bytes == res.stack_bytes == 0, name


def test_every_axis_kernel_opens_with_its_comment():
    from cuda_kernels import source_path

    text = source_path(records_axis.SOURCE_CUDA).read_text().splitlines()
    for i, line in enumerate(text):
        if line.startswith("__global__"):
            above = text[i - 1]  # the template line
            assert above.startswith("template"), line
            assert text[i - 2].startswith("//"), f"no comment above {line}"


def _triton_jobs():
    """One compile job per Triton launch the plans make: each kind x dtype, r4 and c3 split (their
    partials and counters), and the two-pass splits' passes through the accumulator's partials
    (as harness.launch.axis_plan)."""
    sizes = {
        "r0": ["rows", "length"],
        "r1": ["length"],
        "r2": ["rows", "length"],
        "c0": ["outer", "length", "inner"],
        "tiles": ["length", "inner", "chunk"],
        "r3": ["rows", "length"],
        "r4": ["length", "chunk"],
        "c3": ["length", "inner", "chunk"],
    }
    meta = {
        "r0": {"BLOCK": 256},
        "r1": {"BLOCK": 256},
        "r2": {"ROWS": 8, "WIDTH": 32},
        "c0": {"BLOCK": 256},
        "tiles": {"GROUPS": 8, "WIDTH": 32},
        "r3": {"ROWS": 8, "WIDTH": 128, "EVEN": True},
        "r4": {"TILE": vec.ROW_TILE, "EVEN": True},
        "c3": {"GROUPS": 8, "UNROLL": vec.COLUMN_UNROLL, "WIDTH": 128, "EVEN": True},
    }
    jobs = []
    for d in records_axis.AXIS_DTYPES:
        acc = dtypes.get(d).sum_dtype
        pairs = [(k, d, d, False) for k in sizes] + [(k, d, d, True) for k in ("r4", "c3")]
        pairs += [(k, d, acc, False) for k in records_axis.SPLIT_KINDS]
        pairs += [(k, acc, d, False) for k in records_axis.COMBINE_KINDS]
        for kind, src, dst, split in dict.fromkeys(pairs):
            args = {"x_ptr": (src, True), "out_ptr": (dst, True)}
            consts = {**meta[kind], "ACC": dtypes.get(src).sum_dtype, "num_warps": 8}
            if kind in records_axis.ONE_LAUNCH_SPLITS:  # the workspace (unused if not split)
                args |= {"part_ptr": (acc, True), "count_ptr": ("int32", True)}
                consts["SPLIT"] = split
            jobs.append(
                {
                    "module": "axis",
                    "kernel": records_axis.TRITON_KERNELS[kind],
                    "dtype": src,
                    "args": {**args, **{s: "int32" for s in sizes[kind]}},
                    "meta": consts,
                    "capability": 90,
                }
            )
    return jobs


def test_every_triton_axis_kernel_compiles_for_sm_90():
    """The real backend, not the interpreter (porting.triton_compile: a child process without
    TRITON_INTERPRET): every launch compiles, and bfloat16 outputs round to nearest even."""
    from porting.triton_compile import run_triton_jobs

    jobs = _triton_jobs()
    out = run_triton_jobs(jobs)
    assert len(out) == len(jobs) == 8 * 4 + 4 + 2 * 4
    for job, k in zip(jobs, out, strict=True):
        assert k["name"] == job["kernel"] and k["ptx"]
        if job["args"]["out_ptr"][0] == "bfloat16":
            assert "cvt.rn.bf16.f32" in k["ptx"], job
        # the vectorized stages' quads are single loads: 16 bytes for the 4-byte types (told
        # by EVEN that the contiguous dim is a multiple of 4), 8 for the 16-bit floats
        if job["kernel"] in ("rows_subwarp_kernel", "rows_split_kernel", "columns_vector_kernel"):
            wide = ".v4." if job["args"]["x_ptr"][0] in ("float32", "int32") else ".v2."
            assert re.search(r"ld\.global[.\w]*" + re.escape(wide), k["ptx"]), job


@pytest.mark.parametrize("length", [1, 4, 5, 64, 65_536, 70_001, 2**24])
@pytest.mark.parametrize("outer", [1, 8, 1024, 5000])
def test_row_splits_cover_each_row_once_in_whole_tiles(length, outer):
    p = geom.Problem(outer, length, 1, (outer,))
    s, chunk = vec.SPLIT_ROWS.splits(p)
    assert chunk % vec.ROW_TILE == 0 and (s - 1) * chunk < length <= s * chunk
    (only,) = vec.SPLIT_ROWS.passes(p)  # s > 1: the row's last block adds its s partials
    assert only.kind == "r4" and only.grid == (outer, s) and only.chunk == chunk
    per = chunk // (4 * 256) if s > 1 else -(-length // (4 * 256))
    combine = -(-s // 256) + vec.QUAD_FOLD + 8 if s > 1 else 0
    assert vec.SPLIT_ROWS.chain_length(p) == per + 2 * vec.QUAD_FOLD + 8 + combine


@pytest.mark.parametrize("length", [1, 7, 100, 600, 262_144])
@pytest.mark.parametrize("inner", [1, 5, 8, 80, 128, 4096])
def test_column_splits_cover_the_reduced_dim_once(length, inner):
    p = geom.Problem(2, length, inner, (2, inner))
    s, chunk = vec.VECTOR_COLUMNS.splits(p)
    lanes = vec.VECTOR_COLUMNS.lanes(p)
    assert lanes & (lanes - 1) == 0 and 4 * lanes >= min(inner, 4 * lanes)
    assert chunk % (256 // lanes) == 0 and (s - 1) * chunk < length <= s * chunk
    assert s <= vec.MAX_SPLITS
    (only,) = vec.VECTOR_COLUMNS.passes(p)  # one launch: the splits combine in it
    assert only.grid[1] == s and only.lanes == lanes and only.chunk == chunk
    (ours,) = vec.VECTOR_COLUMNS_TRITON.passes(p)  # the Triton fastest's, narrow rule included
    lanes, s, chunk = ours.lanes, ours.grid[1], ours.chunk
    assert lanes & (lanes - 1) == 0 and chunk % (256 // lanes) == 0
    assert (s - 1) * chunk < length <= s * chunk and s <= vec.MAX_SPLITS


def test_sub_warp_lanes_follow_the_row_length():
    lanes = [vec.SUBWARP_ROWS.lanes(geom.Problem(9, n, 1, (9,))) for n in (1, 4, 5, 64, 80, 128)]
    assert lanes == [1, 1, 2, 16, 32, 32]
    assert vec.SUBWARP_ROWS.passes(geom.Problem(1000, 4, 1, (1000,)))[0].grid == (4, 1)


def test_chain_lengths_of_the_vectorized_stages():
    short = geom.Problem(2**20, 4, 1, (2**20,))
    assert vec.SUBWARP_ROWS.chain_length(short) == 1 + vec.QUAD_FOLD + 0
    long_rows = geom.problem((8, 2**24), 1)
    s, chunk = vec.SPLIT_ROWS.splits(long_rows)
    assert (s, chunk) == (256, 65_536)
    combine = 256 // 256 + vec.QUAD_FOLD + 8  # the row's last block: 256 partials, one a thread
    assert vec.SPLIT_ROWS.chain_length(long_rows) == 64 + 16 + 8 + combine
    wide = geom.problem((8, 2**24), 0)  # 8 rows: one row group of 256 lanes, no split
    assert vec.VECTOR_COLUMNS.lanes(wide) == 256 and vec.VECTOR_COLUMNS.splits(wide) == (1, 8)
    assert vec.VECTOR_COLUMNS.chain_length(wide) == 8 + 0 + vec.COLUMN_UNROLL


@pytest.mark.parametrize(
    ("shape", "lanes"),
    [((224, 2048), 2), ((80, 32768), 32), ((120, 2**20), 256), ((8, 2**24), 256)],
)
def test_short_columns_get_blocks_enough(shape, lanes):
    """c3 never splits fewer than SHORT_COLUMNS rows: its blocks come from the columns, so the
    strips narrow until there are SHORT_TARGET_BLOCKS of them (wide outputs keep 256 lanes)."""
    p = geom.problem(shape, 0)
    assert vec.VECTOR_COLUMNS.lanes(p) == lanes and vec.VECTOR_COLUMNS.splits(p)[0] == 1
    (first,) = vec.VECTOR_COLUMNS.passes(p)
    assert first.grid[0] >= vec.SHORT_TARGET_BLOCKS and first.lanes == lanes


def test_a_sum_past_the_dtypes_range_is_its_infinity_and_a_finite_one_is_wrong(dev, monkeypatch):
    # row sums of about 1.25e5 (not integers: the float check) overflow float16's 65504, so
    # the rounded sum is +inf, and -inf for the negated row
    g = torch.Generator().manual_seed(3)
    x = (torch.rand(2, 1000, generator=g) * 50 + 100.5).to(torch.float16)
    x[1] = -x[1]
    x = x.to(dev)
    v = catalogue.get_axis("triton/axis-r2-warp-row")
    r = axis_verify.check_axis(v, x, 1)
    assert r.ok and r.worst_ratio == 0, r.message
    assert torch.equal(harness.reduce_sum(x, v.id, dim=1).cpu().float(),
                       torch.tensor([float("inf"), -float("inf")]))  # fmt: skip
    run = axis_verify.axis_plan.AxisPlan.run
    for fake in (65504.0, float("inf")):  # finite max, and +inf for the -inf row: both wrong

        def wrong(plan, fake=fake):
            return run(plan).fill_(fake)

        monkeypatch.setattr(axis_verify.axis_plan.AxisPlan, "run", wrong)
        assert not axis_verify.check_axis(v, x, 1).ok, fake


def test_rows_with_an_infinity_or_nan_must_give_the_ieee_outcome_exactly(dev, monkeypatch):
    """A row holding +inf sums to +inf, one holding +inf and -inf (or a NaN) to NaN, in any order:
    the check asks exactly that, where the bound (infinite there) once accepted any output, the
    unwritten poison included; an honest NaN row passes."""
    x = torch.rand(3, 1000) + 0.5  # not integers: the bound's branch
    x[0, 7] = float("inf")
    x[1, 3], x[1, 900] = float("inf"), -float("inf")
    x[2, 5] = float("nan")
    x = x.to(dev)
    v = catalogue.get_axis("triton/axis-r2-warp-row")
    r = axis_verify.check_axis(v, x, 1)
    assert r.ok, r.message
    run = axis_verify.axis_plan.AxisPlan.run
    for row, fake in ((0, 0.0), (0, -float("inf")), (0, float("nan")), (1, float("inf")),
                      (2, 1.0)):  # fmt: skip

        def wrong(plan, row=row, fake=fake):
            out = run(plan)
            out[row] = fake
            return out

        monkeypatch.setattr(axis_verify.axis_plan.AxisPlan, "run", wrong)
        assert not axis_verify.check_axis(v, x, 1).ok, (row, fake)
