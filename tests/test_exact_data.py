"""tests/exact_data.py, which the GPU tests draw from, shown to see what it is meant to see: on the
CPU path a variant's result EQUALS the exact sum of the data, and a kernel that reads one element
past the view (poison), drops one, or returns n * x[0] gives another value."""

import pytest
import torch

from harness.check import verify
from harness.core import catalogue
from tests import exact_data


def test_values_are_nonzero_signed_and_seeded():
    a = exact_data.signed_integer_values(10_000, seed=1)
    assert a.min() == -8 and a.max() == 8 and (a != 0).all()
    assert (a < 0).any() and (a > 0).any()
    assert (a == exact_data.signed_integer_values(10_000, seed=1)).all()
    assert not (a == exact_data.signed_integer_values(10_000, seed=2)).all()


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32"])
def test_view_sits_between_poison(dtype):
    x = exact_data.signed_integers(1000, dtype, seed=3, device="cpu")
    assert x.numel() == 1000 and x.is_contiguous()
    over = torch.as_strided(x, (1001,), (1,))  # one element past the end: the poison
    if x.dtype.is_floating_point:
        assert torch.isnan(over[-1]) and not torch.isnan(x).any()
    else:
        assert int(over[-1]) == exact_data.INT_POISON
    assert exact_data.exact_total(x, step=7) == int(x.to(torch.int64).sum())


@pytest.mark.interpreter
@pytest.mark.parametrize("n", [257, 2049])
def test_a_kernel_that_misses_or_over_reads_is_caught(n):
    v = catalogue.get("triton/tile-256")
    x = exact_data.signed_integers(n, "float32", seed=n, device="cpu")
    want = exact_data.exact_total(x)
    r = verify.check_variant(v, x)
    assert r.ok and r.value == want
    over = verify.check_variant(v, torch.as_strided(x, (n + 1,), (1,)))  # reads the poison
    assert not over.ok or over.value != want
    short = x[: n - 1]  # one element dropped: the sum moves by 1 to 8
    assert verify.check_variant(v, short).value != want
    assert want != n * float(x[0])  # no constant data: n * x[0] is not the sum


def test_signs_with_marks_places_each_mark_on_signs():
    marks = ((1, 64.0), (5, 128.0), (-1, 1024.0))
    x = exact_data.signs_with_marks(10, marks, torch.float32, "cpu", seed=3)
    assert x.dtype == torch.float32 and x.numel() == 10
    assert [float(x[i]) for i, _ in marks] == [64.0, 128.0, 1024.0]
    rest = [float(v) for i, v in enumerate(x.tolist()) if i not in (1, 5, 9)]
    assert set(rest) <= {-1.0, 1.0} and len(rest) == 7
    assert torch.equal(x, exact_data.signs_with_marks(10, marks, torch.float32, "cpu", seed=3))
