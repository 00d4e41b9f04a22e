"""Pass policy and tile mappings, checked without a GPU."""

import itertools

import pytest

from harness.core import catalogue
from harness.core.passes import block_elements, chain_length, one_pass, plan_passes

LAUNCHES = sorted({v.launch for v in catalogue.VARIANTS if v.launch}, key=repr)
SIZES = [1, 2, 31, 255, 256, 257, 511, 512, 513, 1000, 4099, 65_537, 262_145, 1_000_003]


@pytest.mark.parametrize("launch", LAUNCHES, ids=lambda launch: launch.describe())
@pytest.mark.parametrize("n", SIZES)
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


@pytest.mark.parametrize("launch", LAUNCHES, ids=lambda launch: launch.describe())
def test_passes_end_in_one_value(launch):
    for n in [*SIZES, 2**25, 2**31 - 1]:
        ps = plan_passes(launch, n)
        assert ps[0].n == n and ps[-1].blocks == 1
        for a, b in itertools.pairwise(ps):
            assert b.n == a.blocks
        assert len(ps) <= 6


def test_fixed_grid_is_capped_at_1024_blocks():
    launch = catalogue.get("cuda/v8-shuffle-strided").launch
    p = one_pass(launch, 2**25)
    assert p.blocks == 1024 and p.per_thread == 2**25 // (1024 * 256)


def test_seed_002_sizes():
    # 2^25 elements, 256 threads, one tile per block: 131072 blocks, as the seed launches.
    assert one_pass(catalogue.get("cuda/v3-sequential").launch, 2**25).blocks == 131072
    # plan A (half the blocks) and plan B (half the threads) both need 2^25 / 512 and 2^25 / 256.
    assert one_pass(catalogue.get("cuda/v4-split-256").launch, 2**25).blocks == 65536
    assert one_pass(catalogue.get("cuda/v4-split-128").launch, 2**25).blocks == 131072


def test_chain_length_counts_serial_and_tree_additions():
    # one tile of 256: 1 + 8 per pass; 2^16 elements -> 256 blocks -> 1: two passes.
    assert chain_length(catalogue.get("cuda/v3-sequential").launch, 2**16) == 2 * (1 + 8)
    # grid-stride, 2^25: 128 serial + 8 tree, then 1024 -> 4 blocks (1 + 8), then 1 (1 + 8).
    assert chain_length(catalogue.get("cuda/v8-shuffle-strided").launch, 2**25) == 136 + 9 + 9
