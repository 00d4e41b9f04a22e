"""reduce_sum(x, variant, out=...): the sum written into the caller's tensor (as torch.sum's
out=), on the hot path and the checked path, and every wrong out refused before any launch. Runs
on the GPU when there is one, else with triton/fastest interpreted (the `dev` fixture)."""

import numpy as np
import pytest
import torch

import harness
from harness.launch import plan_cache

FASTEST = "triton/fastest"
N = 5003


def negated_view(n: int, dev) -> torch.Tensor:
    """A float32 view with the negative bit: its memory holds the negated values (zeros here)."""
    return torch.complex(torch.zeros(n, device=dev), torch.zeros(n, device=dev)).conj().imag


def _x(dev: str, dtype=torch.float32) -> torch.Tensor:
    g = torch.Generator().manual_seed(3)
    return torch.randint(-50, 50, (N,), generator=g).to(dtype).to(dev)


def test_out_gets_the_sum_on_both_paths(dev):
    plan_cache.clear()
    x = _x(dev)
    want = harness.reduce_sum(x, FASTEST)  # the checked path (a miss), then cached
    for _ in range(2):  # the hot path: the key is cached now
        out = torch.full((), float("nan"), device=dev)
        assert harness.reduce_sum(x, FASTEST, out=out) is out
        assert torch.equal(out, want)
    plan_cache.clear()
    out = torch.full((1,), float("nan"), device=dev)  # one element of any shape, on a miss
    assert harness.reduce_sum(x, FASTEST, out=out) is out and out[0] == want
    assert torch.equal(x, _x(dev))  # the caller's data unchanged


def test_out_with_a_multi_pass_variant_and_an_empty_input(dev):
    x = _x(dev)
    v = "triton/tile-256"
    out = torch.full((), float("nan"), device=dev)
    assert harness.reduce_sum(x, v, out=out) is out
    assert out == harness.reduce_sum(x, v)
    empty = torch.zeros(0, device=dev)
    assert harness.reduce_sum(empty, FASTEST, out=out) is out and out == 0


@pytest.mark.parametrize(
    "make_out, error, message",
    [
        (lambda x: torch.zeros(2, device=x.device), ValueError, "one element"),
        (lambda x: torch.zeros((), dtype=torch.float64, device=x.device), TypeError, "dtype"),
        (lambda x: x[7:8], ValueError, "overlaps the input"),
        (lambda x: np.zeros(1, dtype=np.float32), TypeError, "torch tensor or a CuPy array"),
        (lambda x: negated_view(1, x.device), ValueError, "negative bit"),
    ],
)
def test_a_wrong_out_is_refused_before_any_launch(dev, make_out, error, message):
    for cached in (False, True):  # the checked path, then the hot path (which defers to it)
        x = _x(dev)
        if not cached:
            plan_cache.clear()
        else:
            harness.reduce_sum(x, FASTEST)
        before = x.clone()
        out = make_out(x)
        with pytest.raises(error, match=message):
            harness.reduce_sum(x, FASTEST, out=out)
        assert torch.equal(x, before)


def test_bfloat16_sums_into_a_float32_out(dev):
    x = _x(dev, torch.bfloat16)
    out = torch.zeros((), dtype=torch.float32, device=dev)
    assert harness.reduce_sum(x, FASTEST, out=out) is out
    assert out == harness.reduce_sum(x, FASTEST)
    with pytest.raises(TypeError, match="dtype"):
        harness.reduce_sum(x, FASTEST, out=torch.zeros((), dtype=torch.bfloat16, device=dev))


def test_out_is_written_in_place_as_autograd_sees_it(dev):
    """out= bumps out's version counter on both paths, as torch.sum(out=) does: a product that
    saved out for its backward then fails loudly, not with a gradient from the overwritten
    value."""
    plan_cache.clear()
    x = _x(dev)
    for path in ("checked", "hot"):
        out = torch.ones((), device=dev)
        w = torch.ones((), device=dev, requires_grad=True)
        y = w * out  # saves out for w's gradient
        before = out._version
        harness.reduce_sum(x, FASTEST, out=out)
        assert out._version > before, path
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.backward()
