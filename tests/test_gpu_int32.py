"""int32 on the GPU (issue 4): every int32 variant - the ladder's stages, seed 004's kernels, their
Triton twins - equals the golden wrapped modulo 2^32 EXACTLY at the issue's sizes, on random data
and on data chosen to overflow; every CUDA kernel's per-block partials equal its twin's (and the
mapping's exact partials, wrapped) on ANY int data, since addition modulo 2^32 does not depend on
the order; the timed seed-004 run yields its table. Skipped (with the reason) without a GPU."""

from functools import cache

import pytest
import torch

import harness
from harness.check import verify
from harness.core import catalogue
from harness.report import tables
from tests import exact_data
from tests.overflow_data import overflow_input
from tests.reference import reference_partials

pytestmark = pytest.mark.gpu

SIZES = (1, 255, 256, 257, 1000, 2**20 + 3, 2**24)
# Two input kinds, two properties: "seed-like" (the seed's 0..99: no partial sum wraps) and
# "full-range" (uniform over int32: partial sums wrap past +2^31 AND past -2^31 throughout every
# tree; two such values alone overflow with probability 1/8 each way). An int32 sum is addition
# modulo 2^32, associative and commutative, so no order, tree or chain of passes can change its
# bits: what an input kind can reveal is only whether the kernel wraps (int32 adds, not a float or
# saturating accumulator, nor an unwrapped wider one) and whether it reads each element once, and
# full-range shows both. The other overflow kinds of OVERFLOW_KINDS (near-max: positive
# wraps only, near-min: negative only, alternating: both ways) test the same wrap-around again,
# so they are left out here: 46 variants x 7 sizes x 2 kinds = 644 items instead of 1,610, no
# property lost. tests/test_int32.py checks that every overflow kind really overflows.
KINDS = ("seed-like", "full-range")
INT = [v.id for v in catalogue.select(dtype="int32") if v.launch is not None]
# Stages with a Triton twin (same tiles); cuda/fastest has a counterpart, not a twin.
CUDA_INT = [v.id for v in catalogue.select(backend="cuda", dtype="int32") if v.twin]


@cache
def _data(n: int, kind: str) -> tuple[torch.Tensor, verify.Golden]:
    gen = torch.Generator().manual_seed(n * 7 + KINDS.index(kind))
    if kind == "seed-like":
        x = verify.seed_like_input(n, "int32", "cpu", generator=gen).cuda()
    else:
        x = overflow_input(n, kind, "cuda", gen)
    return x, verify.golden(x)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("vid", INT)
def test_int32_equals_wrapped_golden(vid, n, kind, needs_cupy):
    x, g = _data(n, kind)
    assert g.value == verify.wrap_int32(int(x.to(torch.int64).sum()))
    r = verify.check_variant(catalogue.get(vid), x, g)
    assert r.ok and r.exact_required, r.message  # exact, and x left as it was (in-place kernels)
    assert isinstance(r.value, int) and r.value == g.value


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("vid", CUDA_INT)
def test_int32_cuda_partials_equal_twin_partials(vid, n, kind, needs_cupy):
    v = catalogue.get(vid)
    x, _ = _data(n, kind)
    cuda = harness.partials(x, v)
    twin = harness.partials(x, catalogue.get(v.twin))
    assert cuda.dtype == twin.dtype == torch.int32
    assert torch.equal(cuda, twin)
    assert torch.equal(cuda.to(torch.int64), verify.wrap_int32(reference_partials(v, x)))


def test_int32_sum_past_2_31_by_far(needs_cupy):
    """2^24 values alternating INT32_MAX, INT32_MAX - 1 (not constant: n * x[0] is wrong): the
    exact sum is (2^31 - 1) * 2^24 - 2^23 = 2^55 - 2^24 - 2^23, wrapped: -2^24 - 2^23."""
    x = (2**31 - 1 - torch.arange(2**24, device="cuda") % 2).to(torch.int32)
    g = verify.golden(x)
    assert g.value == -(2**24) - 2**23
    for vid in ("cuda/004-gmem", "cuda/004-smem-unroll4", "cuda/v8-shuffle-chunked"):
        r = verify.check_variant(catalogue.get(vid), x, g)
        assert r.ok and r.value == -(2**24) - 2**23, (vid, r.message)


# tests/test_int32.py's PARTIAL_TILES: the last tile's valid elements around the in-place tree's
# bounded (< 64) and lockstep paths, after whole tiles, in a poisoned buffer (an over-read of the
# partial tile adds 2^30 + 1), against numpy's int64 sum wrapped by hand.
@pytest.mark.parametrize("valid", (1, 2, 3, 31, 32, 33, 63, 64, 65, 100, 128, 129, 255))
@pytest.mark.parametrize("vid", ["cuda/004-gmem", "cuda/004-gmem-unroll4"])
def test_seed_004_in_place_partial_tiles(vid, valid, needs_cupy):
    import numpy as np

    n = 1024 + valid
    rng = np.random.default_rng(valid)
    a = rng.integers(-(2**31), 2**31, n, dtype=np.int64).astype(np.int32)
    want = (int(a.astype(np.int64).sum()) + 2**31) % 2**32 - 2**31
    buf = torch.full((n + 4096,), exact_data.INT_POISON, dtype=torch.int32, device="cuda")
    buf[:n] = torch.from_numpy(a).cuda()
    r = verify.check_variant(catalogue.get(vid), buf[:n])
    assert r.ok and r.value == want, (r.value, want, r.message)


def test_seed_004_timed_table(needs_cupy):
    from harness.report import records
    from harness.studies import session, suites

    vs = session.seed_variants(catalogue.select(dtype="int32"), "004")
    common = suites.common("ladder")
    rows = [r for v in vs for r in session.check_and_time(v, "int32", 2**20, common, reps=10)]
    # an optional peer not installed here (cuda.compute without the cccl extra) is skipped, with
    # its reason: every other case must be ok
    found = records.results(rows)
    missing = [r for r in found if r.info.get(session.UNAVAILABLE)]
    assert all(r.v.backend == "peer" and r.status == "skipped" for r in missing), missing
    found = [r for r in found if r not in missing]
    assert all(r.status == "ok" for r in found), [r.message for r in found]
    for r in found:  # in-place kernels: the scratch refill is outside the timed region
        if r.v.backend != "peer":  # a peer is one call: no first pass of its own
            assert 0 < r.median("first_pass") <= r.ms * 1.5
    rows = [r for r in rows if r.variant not in {m.variant for m in missing}]
    table = tables.seed_rows(rows, 2**20, "int32", "004")
    cuda_rows = [t for t in table if t["variant"].startswith("cuda/")]
    assert [t["kernel"] for t in cuda_rows] == [
        "reduceGmem",
        "reduceSmem",
        "reduceGmemUnroll",
        "reduceSmemUnroll",
        "reduceSmemDyn",
        "reduceSmemUnrollDyn",
    ]
    for t in cuda_rows:
        assert t["written"] == (1024 if "Unroll" in t["kernel"] else 4096)
        assert t["cuda_gbps"] > 0 and t["twin_gbps"] > 0
