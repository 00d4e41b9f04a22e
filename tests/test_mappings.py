"""Tile mappings (harness.core.mappings) and the pass policy, checked without a GPU: every
mapping's grid, the elements each block reads, the block of each element, the error bound's chain
length, the Triton meta-parameters against the kernels' signatures, and the Launch checks."""

import inspect
import itertools

import pytest

from harness.core import catalogue, mappings
from harness.core.mappings import (
    CHUNKED,
    GRID_STRIDE,
    SINGLE_LAUNCH,
    SPLIT_PAIR,
    TILES,
    Launch,
    one_pass,
    plan_passes,
)

CATALOGUE_LAUNCHES = sorted({v.launch for v in catalogue.VARIANTS if v.launch}, key=repr)
# Beside the catalogue's: small fixed grids (so that grid-stride wraps several times and chunked
# runs with fewer blocks than its cap), odd tile counts, and a small single-launch record.
EXTRA_LAUNCHES = [
    Launch(threads=32, mapping=TILES, tiles=3),
    Launch(threads=64, mapping=SPLIT_PAIR, tiles=2),
    Launch(threads=32, mapping=GRID_STRIDE, max_blocks=3),
    Launch(threads=32, mapping=CHUNKED, max_blocks=3),
    Launch(threads=32, mapping=SINGLE_LAUNCH, tiles=4, max_blocks=8, per_sm=1),
]
LAUNCHES = CATALOGUE_LAUNCHES + EXTRA_LAUNCHES
SIZES = [1, 2, 31, 255, 256, 257, 511, 512, 513, 1000, 4099, 65_537, 262_145, 1_000_003]
# The reproducible mapping has its own plan (one_launch False for that reason) but one pass.
MULTI_PASS = [
    launch
    for launch in LAUNCHES
    if not launch.mapping.one_launch and launch.mapping is not mappings.REPRODUCIBLE
]


def _id(launch: Launch) -> str:
    return launch.describe()


def block_elements(launch: Launch, p: mappings.Pass, block: int) -> list[range]:
    """The elements block b of pass p reads, written out independently of block_of: per_thread
    adjacent tiles of `threads` (tiles, chunked); tile b, b + grid, ... (split-pair, grid-stride);
    everything (one launch: how its blocks share the input is the kernel's business)."""
    t, k, m = launch.threads, p.per_thread, launch.mapping
    if m.one_launch or m is mappings.REPRODUCIBLE:
        return [range(0, p.n)]
    if m in (SPLIT_PAIR, GRID_STRIDE):
        starts = range(block * t, p.n, p.blocks * t)
    else:
        starts = [(block * k + j) * t for j in range(k)]
    clipped = (range(max(0, s), min(p.n, s + t)) for s in starts)
    return [r for r in clipped if r]


def test_every_mapping_is_in_the_catalogue_and_the_registry():
    used = {v.launch.mapping for v in catalogue.VARIANTS if v.launch}
    assert used == set(mappings.MAPPINGS.values())
    assert {m.name for m in used} == set(mappings.MAPPINGS)


# The small extra launches make many blocks: their sizes stop short of the largest (CPU time).
PARTITION_CASES = [(launch, n) for launch in CATALOGUE_LAUNCHES for n in SIZES] + [
    (launch, n) for launch in EXTRA_LAUNCHES for n in SIZES if n < 100_000
]


@pytest.mark.parametrize(
    ("launch", "n"), PARTITION_CASES, ids=lambda c: _id(c) if isinstance(c, Launch) else str(c)
)
def test_blocks_of_every_pass_partition_the_input(launch, n):
    for p in plan_passes(launch, n):
        seen = bytearray(p.n)
        for b in range(p.blocks):
            ranges = block_elements(launch, p, b)
            assert ranges, f"block {b} of {p.blocks} reads nothing (n={p.n})"
            for r in ranges:
                for i in r:
                    seen[i] += 1
        assert all(c == 1 for c in seen), "an element is read twice or never"


@pytest.mark.parametrize("launch", MULTI_PASS, ids=_id)
@pytest.mark.parametrize("n", [1, 31, 257, 1000, 4099, 65_537])
def test_block_of_names_the_block_that_reads_each_element(launch, n):
    # block_of is what the reference partials use (vectorized over a tensor of indices); it must
    # agree with block_elements element by element.
    p = one_pass(launch, n)
    owner = [-1] * n
    for b in range(p.blocks):
        for r in block_elements(launch, p, b):
            for i in r:
                owner[i] = b
    assert [launch.mapping.block_of(launch, p, i) for i in range(n)] == owner


def test_single_launch_has_no_per_block_owner():
    launch = catalogue.get("cuda/fastest").launch
    with pytest.raises(ValueError, match="single-launch"):
        launch.mapping.block_of(launch, one_pass(launch, 1000), 0)


@pytest.mark.parametrize("launch", LAUNCHES, ids=_id)
def test_passes_end_in_one_value(launch):
    for n in [*SIZES, 2**25, 2**31 - 1]:
        ps = plan_passes(launch, n)
        assert ps[0].n == n and ps[-1].blocks == 1
        for a, b in itertools.pairwise(ps):
            assert b.n == a.blocks
        assert len(ps) <= 6
        if launch.mapping.one_launch:
            assert len(ps) == 1


@pytest.mark.parametrize("launch", MULTI_PASS, ids=_id)
def test_grid_covers_n_with_the_mappings_tile_count(launch):
    t = launch.threads
    for n in SIZES:
        p = one_pass(launch, n)
        assert p.blocks >= 1 and p.per_thread >= 1
        # blocks x t lanes x per_thread elements cover n, and neither one block fewer nor one
        # element per thread fewer would (tiles / split-pair: per_thread is the tile count)
        assert n <= p.blocks * t * p.per_thread
        assert (p.blocks - 1) * t * p.per_thread < n or p.blocks * t * (p.per_thread - 1) < n
        if launch.max_blocks:
            assert p.blocks <= launch.max_blocks


def test_fixed_grid_is_capped_at_1024_blocks():
    launch = catalogue.get("cuda/v8-shuffle-strided").launch
    p = one_pass(launch, 2**25)
    assert p.blocks == 1024 and p.per_thread == 2**25 // (1024 * 256)


def test_chunked_uses_fewer_blocks_than_its_cap_when_whole_tiles_suffice():
    # 1024 * 256 + 1 elements: 2 tiles per block, so 513 blocks own all of them, not 1024.
    launch = catalogue.get("cuda/v7-fixed-chunked").launch
    p = one_pass(launch, 1024 * 256 + 1)
    assert (p.blocks, p.per_thread) == (513, 2)
    assert one_pass(catalogue.get("cuda/v8-shuffle-strided").launch, 1024 * 256 + 1).blocks == 1024


def test_seed_002_sizes():
    # 2^25 elements, 256 threads, one tile per block: 131072 blocks, as the seed launches.
    assert one_pass(catalogue.get("cuda/v3-sequential").launch, 2**25).blocks == 131072
    # plan A (half the blocks) and plan B (half the threads) both need 2^25 / 512 and 2^25 / 256.
    assert one_pass(catalogue.get("cuda/v4-split-256").launch, 2**25).blocks == 65536
    assert one_pass(catalogue.get("cuda/v4-split-128").launch, 2**25).blocks == 131072


def test_chain_length_counts_serial_and_tree_additions():
    # one tile of 256: 1 + 8 per pass; 2^16 elements -> 256 blocks -> 1: two passes.
    assert catalogue.get("cuda/v3-sequential").launch.chain_length(2**16) == 2 * (1 + 8)
    # grid-stride, 2^25: 128 serial + 8 tree, then 1024 -> 4 blocks (1 + 8), then 1 (1 + 8).
    assert catalogue.get("cuda/v8-shuffle-strided").launch.chain_length(2**25) == 136 + 9 + 9


# Chain lengths the string-switched pass policy gave before the mappings became objects (the
# error bounds every committed check used), for n = 1, 1000, 65537, 2^25, 2^31 - 1.
PINNED_CHAIN_LENGTHS = {
    "cuda/v3-sequential": (9, 18, 27, 36, 36),
    "cuda/v4-adjacent-256": (10, 20, 20, 30, 40),
    "cuda/v4-split-128": (9, 18, 27, 36, 36),
    "cuda/v7-fixed-chunked": (9, 18, 27, 154, 8218),
    "cuda/v8-shuffle-strided": (9, 18, 27, 154, 8218),
    "cuda/001-v4-smem": (12, 12, 24, 36, 36),
}


@pytest.mark.parametrize("vid", PINNED_CHAIN_LENGTHS)
def test_chain_length_matches_the_pinned_bounds(vid):
    launch = catalogue.get(vid).launch
    got = tuple(launch.chain_length(n) for n in (1, 1000, 65_537, 2**25, 2**31 - 1))
    assert got == PINNED_CHAIN_LENGTHS[vid]


@pytest.mark.parametrize("vid", PINNED_CHAIN_LENGTHS)
def test_triton_twin_has_its_cuda_stages_pinned_chain(vid):
    # a twin runs the same tiles (the same mapping and sizes): the same pinned numbers
    twin = catalogue.get(vid).twin
    if twin is None:
        pytest.skip(f"{vid} has no Triton twin")
    launch = catalogue.get(twin).launch
    got = tuple(launch.chain_length(n) for n in (1, 1000, 65_537, 2**25, 2**31 - 1))
    assert got == PINNED_CHAIN_LENGTHS[vid]


# The single-launch chain, worked out by hand: the busiest lane's serial adds (grid-stride steps
# over tiles of threads x tiles, `tiles` adds each, plus a head and a tail element), its block's
# reduction (42: 32 serial + 10 tree levels), then the last block's combine of at most 2048
# partials over >= 32 lanes (2048 / 32 = 64) and its reduction (42): serial + 42 + 106.
# cuda/fastest: 256 threads x 32 tiles = 8192 a step, grid min(2048, 4/SM * SMs);
# triton/fastest: 1024 x 1 a step, grid min(2048, 2/SM * SMs).
#   2 SMs (the CPU path): cuda grid 8, n <= 8192: 1 step, 32 + 2 = 34 -> 182;
#     n = 2^25: 4096 tiles / 8 = 512 steps, 512 * 32 + 2 = 16386 -> 16534.
#     triton grid 4, n <= 1024: 1 + 2 = 3 -> 151; n = 2^25: 32768 / 4 = 8192 steps -> 8342.
#   132 SMs (an H100): cuda grid 528, n = 2^25: ceil(4096 / 528) = 8 steps, 258 -> 406;
#     triton grid 264: ceil(32768 / 264) = 125 steps, 127 -> 275.
PINNED_SINGLE_LAUNCH = {
    (2, "cuda/fastest"): (182, 182, 16534),
    (2, "triton/fastest"): (151, 151, 8342),
    (132, "cuda/fastest"): (182, 182, 406),
    (132, "triton/fastest"): (151, 151, 275),
}


@pytest.mark.parametrize(("sms", "vid"), PINNED_SINGLE_LAUNCH)
def test_single_launch_chain_is_pinned(sms, vid, monkeypatch):
    monkeypatch.setattr(mappings, "sm_count", lambda: sms)
    launch = catalogue.get(vid).launch
    got = tuple(launch.chain_length(n) for n in (1, 1000, 2**25))
    assert got == PINNED_SINGLE_LAUNCH[sms, vid]


@pytest.mark.parametrize("launch", LAUNCHES, ids=_id)
def test_chain_length_never_shrinks_as_n_grows(launch):
    ns = sorted({*SIZES, *(2**k + d for k in range(1, 32) for d in (-1, 0, 1))})
    lengths = [launch.chain_length(n) for n in ns if n >= 1]
    assert lengths == sorted(lengths)


def test_triton_meta_matches_the_tile_kernels_signatures():
    # What plan.py launches a tile twin with: BLOCK, num_warps, TILES for the "tiles" mapping, and
    # the per-thread count as an argument only where the mapping says so. The kernels'
    # constexprs and arguments must be exactly those.
    pytest.importorskip("triton")
    from triton_kernels import tiles

    for v in catalogue.select(backend="triton"):
        if v.launch.mapping.one_launch or v.launch.mapping is mappings.REPRODUCIBLE:
            with pytest.raises(ValueError, match="tuner"):
                v.launch.mapping.triton_meta(v.launch)
            continue
        meta = v.launch.mapping.triton_meta(v.launch)
        assert meta["BLOCK"] == v.launch.threads and meta["num_warps"] == v.launch.threads // 32
        params = inspect.signature(getattr(tiles, v.kernel).fn).parameters.values()
        constexprs = {p.name for p in params if "constexpr" in str(p.annotation)}
        args = [p.name for p in params if "constexpr" not in str(p.annotation)]
        assert constexprs == set(meta) - {"num_warps"}, v.id
        extra = ["per_thread"] if v.launch.mapping.triton_takes_per_thread else []
        assert args == ["x_ptr", "out_ptr", "n", *extra], v.id


def test_descriptions_tell_the_mappings_apart():
    # the same threads (and tiles / max_blocks) under each multi-pass mapping read differently
    same = [
        Launch(threads=256, mapping=TILES, tiles=2, max_blocks=1024),
        Launch(threads=256, mapping=SPLIT_PAIR, tiles=2, max_blocks=1024),
        Launch(threads=256, mapping=GRID_STRIDE, tiles=2, max_blocks=1024),
        Launch(threads=256, mapping=CHUNKED, tiles=2, max_blocks=1024),
        Launch(threads=256, mapping=SINGLE_LAUNCH, tiles=2, max_blocks=1024, per_sm=4),
    ]
    assert len({launch.describe() for launch in same}) == len(same)
    for launch in LAUNCHES:
        assert str(launch.threads) in launch.describe()


def test_sum_dtype_is_the_input_dtype_except_single_launch_16_bit():
    for m in (TILES, SPLIT_PAIR, GRID_STRIDE, CHUNKED):
        assert m.sum_dtype("float32") == "float32" and m.sum_dtype("int32") == "int32"
    assert SINGLE_LAUNCH.sum_dtype("float16") == SINGLE_LAUNCH.sum_dtype("bfloat16") == "float32"
    assert SINGLE_LAUNCH.sum_dtype("float64") == "float64"


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"threads": 256, "mapping": "tiles"}, TypeError, "mapping objects"),
        ({"threads": 100, "mapping": TILES}, ValueError, "power of two"),
        ({"threads": 2048, "mapping": TILES}, ValueError, "power of two"),
        ({"threads": 256, "mapping": GRID_STRIDE}, ValueError, "max_blocks"),
        ({"threads": 256, "mapping": CHUNKED}, ValueError, "max_blocks"),
        ({"threads": 256, "mapping": SINGLE_LAUNCH, "max_blocks": 64}, ValueError, "per_sm"),
    ],
)
def test_launch_rejects_incomplete_records(kwargs, error, match):
    with pytest.raises(error, match=match):
        Launch(**kwargs)


def test_a_pass_needs_at_least_one_element():
    for m in mappings.MAPPINGS.values():
        launch = next(launch for launch in LAUNCHES if launch.mapping is m)
        with pytest.raises(ValueError, match="n >= 1"):
            one_pass(launch, 0)
