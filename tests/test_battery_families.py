"""The accuracy battery's families hold what docs/reproducible.md#the-data-battery says of them, and
regenerate the committed documents' inputs on the CPU.

Stored documents: results/<device>/accuracy.json's rows, per (family, n) at seed 0, the
correctly rounded sum and kappa of the data the GPU run summed; results/<device>/reproducible.json
records the reproducible kernels' result bits per input, and triton_kernels.reproducible's numpy
model reproduces them bit for bit. Regenerating the data here and getting the same numbers proves
the promise "the same (family, n, seed, dtype) gives the same bits on every machine".

Family properties: each checked from its definition, with the bounds worked out in comments."""

from __future__ import annotations

import dataclasses
import json
import math
import zlib
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import torch

from harness.check import battery, exact
from triton_kernels.reproducible import reference_sum

ROOT = Path(__file__).resolve().parent.parent
ACCURACY = sorted(ROOT.glob("results/*/accuracy.json"))
REPRODUCIBLE = sorted(ROOT.glob("results/*/reproducible.json"))
STORED_N_MAX = 2**20 + 3  # the larger stored inputs (2^25) take seconds each to regenerate


def _accuracy_cases() -> list[tuple[str, str, int, int, float, float]]:
    """(family, dtype, n, seed, golden, kappa) of every committed accuracy document, once each."""
    cases = set()
    for path in ACCURACY:
        doc = json.loads(path.read_text())
        for r in doc["rows"]:  # config: the data family; info: the check and the kappa
            info = r.get("info", {})
            if r["shape"] <= STORED_N_MAX and r.get("config") and info.get("check"):
                golden, kappa = info["check"]["golden"], info["kappa"]
                cases.add((r["config"], r["dtype"], r["shape"], doc["seed"], golden, kappa))
    return sorted(cases)


def test_stored_documents_are_committed():
    assert ACCURACY and REPRODUCIBLE
    assert {c[0] for c in _accuracy_cases()} == set(battery.NAMES)


@pytest.mark.parametrize("case", _accuracy_cases(), ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}")
def test_stored_accuracy_inputs_regenerate_with_the_same_sum_and_kappa(case):
    family, dtype, n, seed, golden, kappa = case
    x = battery.get(family).generate(n, seed, dtype)
    assert exact.round_nearest(exact.exact_sum(x), "float32") == golden
    assert battery.kappa(x) == kappa


def _reproducible_cases() -> list[tuple[str, str, int, int, str]]:
    """(family, dtype, n, seed, bits) per committed input at offset 0, once each."""
    cases = set()
    for path in REPRODUCIBLE:
        doc = json.loads(path.read_text())
        for inp in doc["inputs"]:
            if inp["offset"] or inp["n"] > STORED_N_MAX:
                continue
            for results in doc["results"].values():
                entry = results.get(inp["key"], {})
                if "bits" in entry:
                    row = (inp["family"], inp["dtype"], inp["n"], inp["seed"], entry["bits"])
                    cases.add(row)
    return sorted(cases)


@pytest.mark.parametrize(
    "case", _reproducible_cases(), ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}-{c[4]}"
)
def test_stored_reproducible_inputs_regenerate_to_the_same_result_bits(case):
    family, dtype, n, seed, bits = case
    x = battery.get(family).generate(n, seed, dtype)
    assert format(int(np.float32(reference_sum(x)).view(np.uint32)), "08x") == bits


# -- round_to -------------------------------------------------------------------------------------


def test_round_to_float32_gives_float32_from_any_float_input():
    a = battery.round_to(np.array([0.1, 1 + 2.0**-30]), "float32")  # float64 in
    assert a.dtype == np.float32
    # 0.1 -> the nearest float32 (13421773 * 2^-27); 1 + 2^-30 -> 1 (below half of 2^-23)
    assert Fraction(float(a[0])) == Fraction(13421773, 2**27) and a[1] == 1.0


@pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")  # 1e30 -> inf
def test_round_to_each_dtype_rounds_to_that_format():
    # 1 + 2^-8: a float16 (10 fraction bits); bfloat16 (7) is at a tie, to even: 1.
    # 1 + 3 * 2^-8: bfloat16 tie between 1 + 2^-6 and 1 + 2^-7... to even: 1 + 2^-6.
    # 1e30: beyond float16's 65504 (inf), a bfloat16 (8 exponent bits) 1e30 rounded to 8 bits.
    x = np.array([1 + 2.0**-8, 1 + 3 * 2.0**-8, 1e30], dtype=np.float32)
    f16 = battery.round_to(x, "float16")
    bf16 = battery.round_to(x, "bfloat16")
    assert f16.dtype == bf16.dtype == np.float32
    assert f16[0] == 1 + 2.0**-8 and f16[1] == 1 + 3 * 2.0**-8 and np.isinf(f16[2])
    assert bf16[0] == 1.0 and bf16[1] == 1 + 2.0**-6
    # 1e30 = 1.5777218... * 2^99: to 7 fraction bits, 202 / 128 * 2^99
    assert Fraction(float(bf16[2])) == Fraction(202, 128) * 2**99
    assert np.array_equal(battery.round_to(x, "float32"), x)


def test_round_to_an_unknown_dtype_is_an_error():
    with pytest.raises(ValueError, match=r"unknown dtype 'float64'; the battery has float32"):
        battery.round_to(np.zeros(2, dtype=np.float32), "float64")


# -- each family's definition ---------------------------------------------------------------------


def test_uniform_lies_in_0_1_with_kappa_1():
    for dtype in battery.ALL_DTYPES:
        x = battery.get("uniform").generate(10_000, 0, dtype)
        # [0, 1) in float32; rounded to float16 / bfloat16 the draws above 1 - 2^-12 / 1 - 2^-9
        # (half a unit below 1) become 1.0
        assert x.min() >= 0.0 and (x.max() < 1.0 if dtype == "float32" else x.max() <= 1.0)
        assert 0.48 < x.mean() < 0.52  # mean 1/2, standard error 0.0029
        assert battery.kappa(x) == 1.0


def test_normal_is_standard_normal():
    x = battery.get("normal").generate(40_000, 0, "float32").astype(np.float64)
    # mean 0 (standard error 0.005), variance 1 (standard error 0.007), both signs
    assert abs(x.mean()) < 0.03 and abs(x.var() - 1) < 0.04


@pytest.mark.parametrize("n", [6400, 6401, 64, 4, 3, 2, 1])
def test_cancellation_pairs_cancel_exactly_and_one_in_64_is_small(n):
    x = battery.get("cancellation").generate(n, 0, "float32")
    small = x[(x >= 0) & (x < 1)]
    big = x[np.abs(x) >= 1]
    # one small term in 64 (at least one); the rest in pairs, so the parity is the small part's:
    # n = 6400 -> 100 small, 3150 pairs; 6401 -> 101 small (100 + the odd one), 3150 pairs;
    # n = 64 -> 2 small (1 + the odd one left by 63), 31 pairs; n = 4 -> 2 small (1 + the odd
    # one left by 3), 1 pair; n = 3 -> 1 small, 1 pair; n = 2 -> 2 small (1 + the odd one); 1 -> 1
    want_small = {6400: 100, 6401: 101, 64: 2, 4: 2, 3: 1, 2: 2, 1: 1}[n]
    assert small.size == want_small and big.size == n - want_small
    assert np.array_equal(np.sort(big), np.sort(-big))  # +v and -v, each pair exactly
    assert exact.exact_sum(x).fraction() == exact.exact_sum(small).fraction()
    if n >= 6400:
        # v = 1e8 N(0, 1): the median |v| is 1e8 * 0.6745 (the normal's quartile); 3150 draws
        assert 6.2e7 < np.median(np.abs(big)) < 7.3e7
        assert not np.array_equal(x[: big.size // 2], -x[big.size // 2 : big.size])  # shuffled


def test_mixed_repeats_1e30_1_minus_1e30():
    for dtype in battery.get("mixed").dtypes:
        x = battery.get("mixed").generate(3001, 0, dtype)
        big = battery.round_to(np.array([1e30]), dtype)[0]  # 1e30 in the format
        assert np.all(x[0::3] == big) and np.all(x[1::3] == 1.0) and np.all(x[2::3] == -big)
        # 1001 times 1e30, 1000 times 1 and -1e30: the sum is 1e30 + 1000 exactly
        assert exact.exact_sum(x).fraction() == Fraction(float(big)) + 1000


def test_seed001_is_2_24_then_ones():
    for dtype in battery.get("seed001").dtypes:
        x = battery.get("seed001").generate(1000, 0, dtype)
        assert x[0] == 2.0**24 and np.all(x[1:] == 1.0)
        assert exact.exact_sum(x).fraction() == 2**24 + 999
    assert battery.get("seed001").generate(1, 0).tolist() == [2.0**24]


def test_subnormals_are_the_formats_own_with_both_signs():
    for dtype in battery.ALL_DTYPES:
        f = exact.float_format(dtype)
        x = battery.get("subnormals").generate(4000, 0, dtype)
        step = 2.0**f.min_exponent  # the smallest subnormal; normals start at 2^fraction_bits steps
        m = x.astype(np.float64) / step
        assert np.array_equal(m, np.round(m))  # whole multiples of the smallest subnormal
        assert np.abs(m).min() >= 1 and np.abs(m).max() < 2**f.fraction_bits  # subnormal, not 0
        # random signs: 4000 fair draws, each sign between 1800 and 2200 (6 standard errors)
        assert 1800 < (x > 0).sum() < 2200 and 1800 < (x < 0).sum() < 2200


def test_constant_is_a_tenth_in_the_format():
    # 0.1 in float32: 13421773 * 2^-27; in bfloat16 (8 significant bits): 205 * 2^-11;
    # in float16 (11 significant bits): 1638 * 2^-14
    want = {
        "float32": Fraction(13421773, 2**27),
        "bfloat16": Fraction(205, 2**11),
        "float16": Fraction(1638, 2**14),
    }
    for dtype, tenth in want.items():
        x = battery.get("constant").generate(7, 0, dtype)
        assert all(Fraction(float(v)) == tenth for v in x)


@pytest.mark.parametrize("n", [1, 2, 4, 5, 1000, 4096, 4097, 5 * 1024, 10_000])
def test_past_limit_places_the_pattern_in_one_lane_summing_to_1(n):
    x = battery.get("past-limit").generate(n, 0, "float32")
    hits = np.flatnonzero(x).tolist()
    pattern = list(battery.PAST_LIMIT_PATTERN)
    if n > 4 * 1024:
        # all five at stride 1024: one lane of the reproducible design
        assert hits == [0, 1024, 2048, 3072, 4096]
    elif n >= 5:
        # n <= 4096 has no room for five at stride 1024: the stride is n // 5
        assert hits == [k * (n // 5) for k in range(5)]
    else:
        assert hits == list(range(n))  # stride 1: the pattern's first n values
    assert x[hits].tolist() == pattern[: len(hits)]
    if n >= 5:
        assert exact.exact_sum(x).fraction() == 1


def test_kappa_is_taken_on_the_float32_values():
    # float64 1 + 2^-30 and -1: in float32 they are 1 and -1, whose sum is 0 (kappa inf), while
    # the float64 values would give 2 / 2^-30 = 2^31
    assert battery.kappa(np.array([1 + 2.0**-30, -1.0])) == math.inf
    assert battery.kappa(np.array([3.0, -1.0])) == 2.0


def test_stored_documents_describe_the_families_as_the_battery_does():
    for path in ACCURACY:
        doc = json.loads(path.read_text())
        assert doc["families"] == {f.name: f.description for f in battery.FAMILIES}, path


# The bits of every family at n = 1000, seed 0: the committed documents name their inputs by
# (family, n, seed, dtype) alone, so the generators' output is pinned. A regression pin,
# recorded from the generators as they made the committed results (the tests above reproduce
# those results' sums, kappas and reproducible bits from the same data); it also holds what no
# stored sum shows: the order of the cancellation family's shuffle.
CRC32_N1000_SEED0 = {
    ("uniform", "float32"): "076fbd01",
    ("uniform", "float16"): "dfe75dff",
    ("uniform", "bfloat16"): "9dd69ff9",
    ("normal", "float32"): "f8771976",
    ("normal", "float16"): "869b24ff",
    ("normal", "bfloat16"): "ba28236e",
    ("cancellation", "float32"): "e04c9945",
    ("cancellation", "bfloat16"): "0a5fc886",
    ("seed001", "float32"): "754c1e05",
    ("seed001", "bfloat16"): "754c1e05",
    ("mixed", "float32"): "6dbc66fb",
    ("mixed", "bfloat16"): "e72b9973",
    ("subnormals", "float32"): "91cd8567",
    ("subnormals", "float16"): "eb40ce7c",
    ("subnormals", "bfloat16"): "acf80dda",
    ("constant", "float32"): "6ddf5b1d",
    ("constant", "float16"): "767068e5",
    ("constant", "bfloat16"): "8e97dbb5",
    ("past-limit", "float32"): "fa793c2b",
    ("past-limit", "bfloat16"): "fa793c2b",
}


def test_every_family_makes_the_pinned_bits():
    assert set(CRC32_N1000_SEED0) == {(f.name, d) for f in battery.FAMILIES for d in f.dtypes}
    for (family, dtype), crc in CRC32_N1000_SEED0.items():
        x = battery.get(family).generate(1000, 0, dtype)
        assert format(zlib.crc32(x.tobytes()), "08x") == crc, (family, dtype)


# -- Family and to_tensor -------------------------------------------------------------------------


def test_generate_refuses_a_negative_size_and_defaults_to_seed_0():
    f = battery.get("normal")
    with pytest.raises(ValueError, match="n must be at least 0, got -1"):
        f.generate(-1)
    assert np.array_equal(f.generate(100), f.generate(100, seed=0, dtype="float32"))
    assert f.generate(0).shape == (0,)


def test_a_generator_giving_the_wrong_array_is_caught():
    for wrong in (
        lambda n, rng, dtype: np.zeros(n, dtype=np.float64),  # not float32
        lambda n, rng, dtype: np.zeros(n + 1, dtype=np.float32),  # not n values
    ):
        with pytest.raises(AssertionError):
            battery.Family("wrong", "a broken generator", wrong).generate(4)


def test_families_cannot_be_changed():
    with pytest.raises(dataclasses.FrozenInstanceError):
        battery.get("uniform").within_limit = False


def test_to_tensor_keeps_the_dtype_with_an_offset():
    x = battery.get("normal").generate(100, 0, "bfloat16")
    for offset in (0, 1, 3):
        t = battery.to_tensor(x, "bfloat16", "cpu", offset)
        assert t.dtype == torch.bfloat16 and t.storage_offset() == offset
        assert np.array_equal(t.float().numpy(), x)


def test_to_tensor_without_an_offset_starts_at_its_buffer():
    x = battery.get("uniform").generate(10, 0)
    t = battery.to_tensor(x, "float32", "cpu")
    assert t.storage_offset() == 0 and t.untyped_storage().nbytes() == 40
    padded = battery.to_tensor(x, "float32", "cpu", offset=2)
    head = padded.untyped_storage()  # the two elements before the view: NaN
    assert np.isnan(np.frombuffer(bytes(head)[:8], dtype=np.float32)).all()
