"""harness.check.verify's test inputs and per-block references, on the CPU: the overflow kinds
each hold the values their docstring promises, the seed-like input is the seeds' `rand() % 100`,
first-pass partials come out of a poisoned buffer (a block that writes nothing shows as NaN, not
as a stale value), and the reference partials are computed where x lives. Expected values are
worked out by hand in the comments."""

from __future__ import annotations

import math
import zlib

import pytest
import torch

import harness
from harness.check import verify
from harness.core import catalogue
from harness.launch import api
from tests.overflow_data import OVERFLOW_KINDS, overflow_input
from tests.reference import reference_partials

INT32_MAX = 2**31 - 1
INT32_MIN = -(2**31)
NEAR = 2**20  # "within 2^20 of INT32_MAX / INT32_MIN"


def _kind(kind: str, n: int = 4096, seed: int = 0) -> torch.Tensor:
    return overflow_input(n, kind, "cpu", torch.Generator().manual_seed(seed))


def test_near_max_values_lie_within_2_20_of_int32_max():
    x = _kind("near-max").to(torch.int64)
    assert x.dtype == torch.int64 and x.numel() == 4096
    assert int(x.min()) > INT32_MAX - NEAR and int(x.max()) <= INT32_MAX


def test_near_min_values_lie_within_2_20_of_int32_min():
    x = _kind("near-min").to(torch.int64)
    assert int(x.min()) >= INT32_MIN and int(x.max()) < INT32_MIN + NEAR


def test_alternating_values_are_near_2_31_in_magnitude_with_both_signs():
    x = _kind("alternating").to(torch.int64)
    mag = x.abs()
    assert int(mag.min()) > INT32_MAX - NEAR and int(mag.max()) <= INT32_MAX
    # 4096 fair signs: P(fewer than 1500 of one sign) is below 1e-60
    assert int((x > 0).sum()) > 1500 and int((x < 0).sum()) > 1500


# 2^24 draws of randint(0, 2^20) (upper bound exclusive): every one of the 2^20 offsets is drawn
# with probability 1 - 2^20 exp(-16) > 0.99999, so both ends of each range are attained.
MANY = 2**24


def test_near_max_attains_both_ends_of_its_range():
    x = _kind("near-max", MANY).to(torch.int64)
    assert (int(x.min()), int(x.max())) == (INT32_MAX - NEAR + 1, INT32_MAX)


def test_near_min_attains_both_ends_of_its_range():
    x = _kind("near-min", MANY).to(torch.int64)
    assert (int(x.min()), int(x.max())) == (INT32_MIN, INT32_MIN + NEAR - 1)


def test_alternating_attains_both_ends_of_its_range_in_both_signs():
    x = _kind("alternating", MANY).to(torch.int64)
    pos, neg = x[x > 0], x[x < 0]
    assert pos.numel() + neg.numel() == MANY  # no zero
    assert (int(pos.min()), int(pos.max())) == (INT32_MAX - NEAR + 1, INT32_MAX)
    assert (int(neg.min()), int(neg.max())) == (-INT32_MAX, -(INT32_MAX - NEAR + 1))


def test_full_range_values_spread_over_all_of_int32():
    x = _kind("full-range").to(torch.int64)
    # uniform over 2^32 values: each quarter of the range holds about 1024 of 4096 draws
    quarters = torch.bucketize(x, torch.tensor([-(2**30), 0, 2**30]))
    counts = torch.bincount(quarters, minlength=4)
    assert int(counts.min()) > 800, counts.tolist()
    # some values lie far from both ends (not one of the near-* kinds)
    assert int((x.abs() < 2**30).sum()) > 1500


@pytest.mark.parametrize("kind", OVERFLOW_KINDS)
def test_overflow_input_is_int32_on_the_device_asked_and_seeded(kind):
    a, b = _kind(kind, 100, seed=7), _kind(kind, 100, seed=7)
    assert a.dtype == torch.int32 and a.device.type == "cpu" and torch.equal(a, b)
    assert not torch.equal(a, _kind(kind, 100, seed=8))
    assert overflow_input(5, kind, "meta").device.type == "meta"


def test_an_unknown_overflow_kind_is_an_error():
    with pytest.raises(ValueError, match="unknown overflow kind 'wide'"):
        overflow_input(10, "wide", "cpu")


# The bits of each kind at n = 1000 from a generator seeded 0: a regression pin (recorded from
# overflow_input itself), for what no property above fixes, e.g. the exact bounds of full-range
# (a wider range wrapped into int32 would look just as uniform).
CRC32_N1000_SEED0 = {
    "full-range": "a468b227",
    "near-max": "cfded1ea",
    "near-min": "396f2d69",
    "alternating": "fc78ae98",
}


def test_every_kind_makes_the_pinned_bits():
    assert set(CRC32_N1000_SEED0) == set(OVERFLOW_KINDS)
    for kind, crc in CRC32_N1000_SEED0.items():
        assert format(zlib.crc32(_kind(kind, 1000).numpy().tobytes()), "08x") == crc, kind


def test_seed_like_input_is_rand_mod_100_in_the_dtype():
    g = torch.Generator().manual_seed(1)
    x = verify.seed_like_input(20_000, "float32", "cpu", generator=g)
    assert x.dtype == torch.float32 and x.shape == (20_000,)
    assert torch.equal(x, torch.round(x))  # integers
    # 0..99, both ends drawn: P(one value missing from 20,000 draws) = 100 * 0.99^20000 ~ 1e-85
    assert float(x.min()) == 0.0 and float(x.max()) == 99.0
    assert verify.seed_like_input(10, "int32", "cpu").dtype == torch.int32
    assert verify.seed_like_input(10, "float32", "meta").device.type == "meta"


def test_seed_like_input_follows_its_generator():
    def draw(seed: int) -> torch.Tensor:
        return verify.seed_like_input(100, "int32", "cpu", torch.Generator().manual_seed(seed))

    assert torch.equal(draw(3), draw(3)) and not torch.equal(draw(3), draw(4))


def test_wrap_int32_of_a_tensor_keeps_int64_and_wraps_both_ways():
    t = torch.tensor([0, INT32_MAX, INT32_MAX + 1, INT32_MIN, INT32_MIN - 1, 2**40 + 3])
    got = verify.wrap_int32(t)
    assert got.dtype == torch.int64
    # 2^31 -> -2^31; -2^31 - 1 -> 2^31 - 1; 2^40 + 3 = 256 * 2^32 + 3 -> 3
    assert got.tolist() == [0, INT32_MAX, INT32_MIN, INT32_MIN, INT32_MAX, 3]


def test_first_pass_partials_come_from_a_poisoned_buffer(monkeypatch, dev):
    """A first pass that writes only its first partial: the others read back as NaN (the
    poison), not as the stale values earlier runs left in the memory."""
    v = catalogue.get("triton/tile-256")
    real = api.make_plan

    def stale_plan(variant, x):
        bound = real(variant, x)
        for out in bound.outs:
            out.fill_(7.0)  # what an earlier run might have left in reused memory

        def first_block_only():
            bound.outs[0][0] = 1.0

        bound.launches[0] = first_block_only
        return bound

    monkeypatch.setattr(api, "make_plan", stale_plan)
    got = harness.partials(torch.ones(1000, device=dev), v)
    # 1000 elements in tiles of 256: 4 partials
    assert got.shape == (4,) and float(got[0]) == 1.0
    assert all(math.isnan(p) for p in got[1:].tolist()), got.tolist()


def test_reference_partials_number_the_elements_on_xs_device(monkeypatch):
    """The element ids the mapping reads are made where x lives (no host round trip)."""
    v = catalogue.get("triton/tile-256")
    mapping = type(v.launch.mapping)  # a frozen record: the spy goes on its class
    real = mapping.block_of
    seen = []

    def spy(self, launch, p, idx):
        seen.append((idx.device.type, idx.dtype))
        return real(self, launch, p, idx)

    monkeypatch.setattr(mapping, "block_of", spy)
    reference_partials(v, torch.ones(1000, dtype=torch.int32, device="meta"))
    assert seen == [("meta", torch.int64)]


def test_reference_partials_are_computed_where_x_lives():
    """On a tensor of the meta device (shapes only, no data): the reference comes back there,
    with one partial per block (1000 elements, tiles of 256: 4 blocks)."""
    x = torch.ones(1000, dtype=torch.int32, device="meta")
    for vid in ("triton/tile-256", "cuda/v3-sequential"):
        got = reference_partials(catalogue.get(vid), x)
        assert got.device.type == "meta" and got.dtype == torch.int64 and got.shape == (4,)
