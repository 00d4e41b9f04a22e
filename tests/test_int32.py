"""int32 as a first-class dtype (issue 4), without a GPU: the wrapped golden, the catalogue's
int32 coverage and seed-004 records, every Triton twin interpreted on int32 data (random and
chosen to overflow) equal to the wrapped golden EXACTLY, and the partial tiles of the seed-004
in-place global-memory tree checked against numpy's wrapped int64 sum."""

import numpy as np
import pytest
import torch

import harness
from harness.check import verify
from harness.core import catalogue, mappings
from harness.core.mappings import one_pass
from tests.overflow_data import OVERFLOW_KINDS, overflow_input
from tests.reference import reference_partials

# Tile twins only (twin_of: the same tiles as CUDA blocks, so reference_partials applies).
# triton/fastest is a single-launch counterpart with its own tiles: its int32 checks (every size
# and offset, wrap) are in tests/test_fastest.py and test_fastest_int32_overflow_exact below.
TWINS = [v.id for v in catalogue.select(backend="triton", dtype="int32") if v.twin_of]
# One short of / exactly / one past a tile, one past a four-tile block, several blocks (2 passes);
# test_three_passes_int32 adds a 3-pass chain.
INT_SIZES = (1, 255, 256, 257, 1025, 5003)


def test_wrap_int32_and_golden_wrap():
    assert verify.wrap_int32(2**31) == -(2**31)
    assert verify.wrap_int32(-(2**31) - 1) == 2**31 - 1
    assert verify.wrap_int32(5 * 2**32 + 7) == 7
    x = torch.tensor([2**31 - 1, 1], dtype=torch.int32)
    g = verify.golden(x)
    assert g.value == -(2**31) and g.integer_valued and g.own_error == 0
    x = torch.full((1000,), -(2**31), dtype=torch.int32)  # exact sum -1000 * 2^31 = 0 mod 2^32
    assert verify.golden(x).value == 0
    t = torch.tensor([2**31, -(2**31) - 1, 3 * 2**32 + 5], dtype=torch.int64)
    assert verify.wrap_int32(t).tolist() == [-(2**31), 2**31 - 1, 5]


@pytest.mark.parametrize("kind", OVERFLOW_KINDS)
def test_overflow_inputs_really_overflow(kind):
    x = overflow_input(4096, kind, "cpu", torch.Generator().manual_seed(0))
    assert x.dtype == torch.int32
    exact = int(x.to(torch.int64).sum())
    partial = x[:256].to(torch.int64).cumsum(0)
    assert partial.abs().max() >= 2**31, "a block's running sum must leave the int32 range"
    if kind in ("near-max", "near-min"):
        assert abs(exact) > 4000 * 2**30  # the sum passes 2^31 about 2000 times over
    assert verify.golden(x).value == verify.wrap_int32(exact)


def test_int32_tolerance_is_zero():
    v = catalogue.get("triton/tile-256")
    g = verify.golden(torch.arange(10, dtype=torch.int32))
    assert verify.tolerance(v, "int32", 10, g) == 0.0


def test_every_non_wrong_cuda_stage_has_int32():
    for v in catalogue.VARIANTS:
        if v.backend == "cuda" and not v.wrong and v.family != "reproducible":  # floats only
            assert "int32" in v.dtypes, v.id
    stages = {v.stage for v in catalogue.select(backend="cuda", dtype="int32")}
    assert {str(i) for i in range(9)} | {f"004-{k}" for k in range(1, 7)} <= stages


def test_seed_004_records():
    recs = [v for v in catalogue.VARIANTS if any(s.startswith("004:") for s in v.seeds)]
    by_seed = {s: v for v in recs for s in v.seeds}
    assert set(by_seed) == {
        "004:reduceGmem",
        "004:reduceSmem",
        "004:reduceGmemUnroll",
        "004:reduceSmemUnroll",
        "004:reduceSmemDyn",
        "004:reduceSmemUnrollDyn",
    }
    for label, v in by_seed.items():
        assert v.backend == "cuda" and v.source == "unroll_blocks.cu" and v.family == "004"
        assert v.dtypes == ("int32",) and v.launch.threads == 256
        assert v.launch.mapping is mappings.TILES
        four = "Unroll" in label
        assert v.launch.tiles == (4 if four else 1)
        assert v.twin == ("triton/quad-adjacent-256" if four else "triton/tile-256")
        assert v.launch.in_place == label.startswith("004:reduceGmem")
        assert v.launch.dynamic_smem == label.endswith("Dyn")
    quad = catalogue.get("triton/quad-adjacent-256")
    assert quad.kernel == "adjacent_tiles_kernel" and quad.launch.tiles == 4
    # The seed-004 rungs print right after the main ladder (000/002 stages 0-8), in the seed's
    # order; then seed 001's host passes, then the fastest pair (then the peers).
    ladder = [
        v for v in catalogue.select(backend="cuda", dtype="int32") if v.family in ("ladder", "004")
    ]
    order = [v.id for v in catalogue.ladder_order(ladder)]
    assert order[-6:] == [by_seed[s].id for s in sorted(by_seed, key=lambda s: by_seed[s].stage)]
    fams = [v.family for v in catalogue.ladder_order(catalogue.VARIANTS)]
    assert list(dict.fromkeys(fams)) == ["ladder", "004", "001", "fastest", "reproducible", "peer"]
    runs = [f for i, f in enumerate(fams) if i == 0 or fams[i - 1] != f]
    assert runs == list(dict.fromkeys(fams)), "each family prints as one contiguous group"
    assert [by_seed[s].stage for s in ("004:reduceGmem", "004:reduceSmemUnrollDyn")] == [
        "004-1",
        "004-6",
    ]


def test_seed_004_first_pass_block_counts_match_the_seed():
    # The seed's table: 65536 partials for one-tile kernels, 16384 for four-tile ones, at 16M.
    for v in catalogue.select(backend="cuda", dtype="int32"):
        if v.family == "004":
            assert one_pass(v.launch, 2**24).blocks == (16384 if v.launch.tiles == 4 else 65536)


@pytest.mark.parametrize("n", INT_SIZES)
@pytest.mark.parametrize("vid", TWINS)
def test_twin_int32_exact(vid, n, dev):
    """Random (seed-like) and overflowing int32 data: result == wrapped golden, per-program
    partials == the mapping's exact partials wrapped modulo 2^32."""
    v = catalogue.get(vid)
    gen = torch.Generator().manual_seed(n)
    inputs = [verify.seed_like_input(n, "int32", "cpu", generator=gen)]
    # full-range wraps partial sums both ways; the other overflow kinds add no property to a sum
    # modulo 2^32 (see KINDS in tests/test_gpu_int32.py)
    inputs.append(overflow_input(n, "full-range", "cpu", gen))
    for x in inputs:
        x = x.to(dev)
        r = verify.check_variant(v, x)
        assert r.ok and r.exact_required, r.message
        assert r.value == verify.wrap_int32(int(x.to(torch.int64).sum()))
        got = harness.partials(x, v)
        assert got.dtype == torch.int32
        ref = verify.wrap_int32(reference_partials(v, x))
        assert torch.equal(got.to(torch.int64), ref), "per-program partials differ"


def test_fastest_int32_overflow_exact(dev):
    """triton/fastest (one launch, last-program combine) on int32 data chosen to overflow: the
    result equals the wrapped golden exactly (several programs at 70_003 elements)."""
    v = catalogue.get("triton/fastest")
    for n in (5003, 70_003):
        x = overflow_input(n, "full-range", dev, torch.Generator().manual_seed(n))
        r = verify.check_variant(v, x)
        assert r.ok and r.exact_required, r.message
        assert r.value == verify.wrap_int32(int(x.to(torch.int64).sum()))


def test_three_passes_int32(dev):
    v = catalogue.get("triton/tile-256")
    x = overflow_input(70_003, "full-range", dev, torch.Generator().manual_seed(3))
    r = verify.check_variant(v, x)
    assert r.ok and r.value == verify.wrap_int32(int(x.to(torch.int64).sum())), r.message


# The partial tiles of seed 004's in-place global-memory tree (unroll_blocks.cu,
# gmem_tree_in_place: the bounded path below 64 valid elements, the lockstep last warp above it):
# a last tile of `valid` elements after whole tiles / blocks. Here the Triton twins run them
# (interpreted on the CPU, compiled on a GPU), against numpy's int64 sum wrapped modulo 2^32 --
# an independent reference; tests/test_gpu_int32.py runs the CUDA kernels themselves at the
# same sizes (test_seed_004_in_place_partial_tiles).
PARTIAL_TILES = (1, 2, 3, 31, 32, 33, 63, 64, 65, 100, 128, 129, 255)


@pytest.mark.parametrize("valid", PARTIAL_TILES)
@pytest.mark.parametrize("vid", ["triton/tile-256", "triton/quad-adjacent-256"])
def test_partial_tiles_equal_numpy_wrapped(vid, valid, dev):
    n = 1024 + valid  # one whole four-tile block (four one-tile blocks), then the partial tile
    rng = np.random.default_rng(valid)
    a = rng.integers(-(2**31), 2**31, n, dtype=np.int64).astype(np.int32)
    want = (int(a.astype(np.int64).sum()) + 2**31) % 2**32 - 2**31  # numpy, wrapped by hand
    x = torch.from_numpy(a).to(dev)
    r = verify.check_variant(catalogue.get(vid), x)
    assert r.ok and r.exact_required and r.value == want, r.message
