"""The argument checks of harness.reduce_sum / harness.partials / harness.result_dtype: every bad
argument is a clear TypeError / ValueError raised before any plan is built or kernel launched,
and the caller's data is untouched. Runs on the GPU when there is one, else with the Triton
variants interpreted on the CPU (the `dev` fixture)."""

from __future__ import annotations

import pytest
import torch

import harness
from harness.core import catalogue
from harness.launch import api, plan_cache

TWIN = "triton/tile-256"  # a multi-pass variant: float32 and int32
FASTEST = "triton/fastest"  # the single-launch family: float16 sums come back as float32


@pytest.fixture
def no_launch(monkeypatch):
    """Any plan or cached launch fails the test: a refused call must not get that far."""

    def launched(*args, **kwargs):
        raise AssertionError("a plan was built or a launch looked up for a refused call")

    monkeypatch.setattr(api, "make_plan", launched)
    monkeypatch.setattr(plan_cache, "default", launched)


@pytest.mark.parametrize("bad", [3, None, 1.5, ["triton/tile-256"], b"triton/tile-256"])
def test_a_variant_neither_an_id_nor_a_record_is_a_type_error(dev, bad, no_launch):
    x = torch.ones(8, device=dev)
    for call in (
        lambda: harness.reduce_sum(x, bad),
        lambda: harness.partials(x, bad),
        lambda: api.result_dtype(bad, torch.float32),
    ):
        with pytest.raises(TypeError, match=f"variant id .* got {type(bad).__name__}"):
            call()


def test_a_variant_record_and_its_id_are_the_same_variant(dev):
    x = torch.arange(300, device=dev, dtype=torch.float32)
    by_id = harness.reduce_sum(x, TWIN)
    assert float(by_id) == 300 * 299 / 2
    assert torch.equal(harness.reduce_sum(x, catalogue.get(TWIN)), by_id)
    assert api.result_dtype(catalogue.get(FASTEST), torch.float16) == torch.float32
    assert api.result_dtype(FASTEST, torch.float32) == torch.float32
    assert api.result_dtype(TWIN, torch.int32) == torch.int32


def test_a_peer_record_is_refused_as_a_variant(dev, no_launch):
    with pytest.raises(ValueError, match=r"peer/torch\.sum is a peer"):
        harness.reduce_sum(torch.ones(4, device=dev), catalogue.get("peer/torch.sum"))
    with pytest.raises(ValueError, match="is a peer"):
        harness.partials(torch.ones(4, device=dev), "peer/torch.sum")


def test_result_dtype_refuses_an_unsupported_dtype_naming_the_supported_ones():
    with pytest.raises(TypeError, match=r"unsupported dtype torch.float64; .*float32, int32"):
        api.result_dtype(TWIN, torch.float64)


def test_a_meta_tensor_is_refused_for_every_variant(no_launch):
    """A tensor on no real device (meta): neither a GPU tensor nor the CPU tensor Triton's
    interpreter could read."""
    x = torch.ones(16, device="meta")
    for vid in (TWIN, FASTEST, "cuda/v3-sequential"):
        for call in (harness.reduce_sum, harness.partials):
            with pytest.raises(ValueError, match="lives on meta"):
                call(x, vid)


def test_a_sparse_tensor_is_refused_with_a_hint(dev, no_launch):
    x = torch.ones(16, device=dev).to_sparse()
    for call in (harness.reduce_sum, harness.partials):
        with pytest.raises(TypeError, match=r"dense \(strided\).*sparse_coo.*to_dense"):
            call(x, TWIN)


def test_an_unsupported_dtype_is_refused_before_any_launch(dev, no_launch):
    for dtype in (torch.bool, torch.complex64, torch.int64):
        x = torch.ones(16, dtype=dtype, device=dev)
        for call in (harness.reduce_sum, harness.partials):
            with pytest.raises(TypeError, match=f"unsupported dtype {dtype}"):
                call(x, TWIN)


# -- out= ----------------------------------------------------------------------------------------


def _refused(x, vid, out, error, message):
    """out is refused on the checked path and, once the key is cached, on the hot path; x and
    out keep their values."""
    for cached in (False, True):
        plan_cache.clear()
        if cached:
            harness.reduce_sum(x, vid)
        before, out_before = x.clone(), out.detach().clone()
        with pytest.raises(error, match=message):
            harness.reduce_sum(x, vid, out=out)
        assert torch.equal(x, before) and torch.equal(out.detach(), out_before)


def test_out_inside_a_non_contiguous_input_is_refused(dev):
    """A strided view is summed from a private copy, but an out inside it would still write
    into the caller's data: refused, as for a contiguous x."""
    base = torch.arange(10, dtype=torch.float32, device=dev)
    keep = base.clone()
    x = base[::2]  # elements 0, 2, 4, 6, 8
    for out in (base[2:3], base[8:9], base[0:1]):  # on an element of x
        with pytest.raises(ValueError, match="overlaps the input"):
            harness.reduce_sum(x, TWIN, out=out)
    # inside x's span but between its elements: refused too (the rule is the span)
    with pytest.raises(ValueError, match="overlaps the input"):
        harness.reduce_sum(x, TWIN, out=base[7:8])
    assert torch.equal(base, keep)
    # just past the span (element 9): accepted, and x is left as it was
    out = base[9:10]
    assert harness.reduce_sum(x, TWIN, out=out) is out
    assert float(out) == 0 + 2 + 4 + 6 + 8 and torch.equal(base[:9], keep[:9])


def test_a_float32_out_straddling_a_float16_inputs_first_element_is_refused(dev):
    """The fastest family sums float16 into float32: a 4-byte out can start 2 bytes before x and
    cover x's first element."""
    buf = torch.zeros(64, dtype=torch.float16, device=dev)
    buf[3:] = 1
    x = buf[3:]  # starts at byte 6
    straddling = buf[:4].view(torch.float32)[1:2]  # bytes 4..7: x's first element is 6..7
    _refused(x, FASTEST, straddling, ValueError, "overlaps the input")
    assert torch.equal(buf[3:], torch.ones(61, dtype=torch.float16, device=dev))
    # bytes 0..3 end where buf[2] ends, before x begins: no overlap, so the sum is written
    below = buf[:2].view(torch.float32)
    x2 = buf[2:]
    buf[2] = 0
    plan_cache.clear()
    assert harness.reduce_sum(x2, FASTEST, out=below) is below and float(below) == 61.0


def test_a_float32_out_right_after_a_float16_input_is_accepted(dev):
    buf = torch.ones(66, dtype=torch.float16, device=dev)
    x = buf[:62]  # bytes 0..123
    after = buf[62:].view(torch.float32)[:1]  # bytes 124..127: the first byte past x
    for cached in (False, True):
        plan_cache.clear()
        if cached:
            harness.reduce_sum(x, FASTEST)
        after.fill_(-1)
        assert harness.reduce_sum(x, FASTEST, out=after) is after
        assert float(after) == 62.0
    assert torch.equal(x, torch.ones(62, dtype=torch.float16, device=dev))


def test_out_as_the_inputs_last_element_is_refused(dev):
    x = torch.ones(300, device=dev)
    _refused(x, FASTEST, x[299:], ValueError, "overlaps the input")
    _refused(x, TWIN, x[299:], ValueError, "overlaps the input")


def test_an_out_that_requires_grad_is_refused(dev):
    """As torch.sum's out=: a result written in place cannot take part in autograd."""
    x = torch.ones(300, device=dev)
    for vid in (FASTEST, TWIN):
        out = torch.zeros((), device=dev, requires_grad=True)
        _refused(x, vid, out, ValueError, "requires grad")


def test_a_sparse_out_is_refused(dev):
    x = torch.ones(300, device=dev)
    out = torch.zeros(1, device=dev).to_sparse()
    for cached in (False, True):
        plan_cache.clear()
        if cached:
            harness.reduce_sum(x, FASTEST)
        with pytest.raises(TypeError, match=r"dense \(strided\)"):
            harness.reduce_sum(x, FASTEST, out=out)


def test_an_out_on_another_device_is_refused(dev):
    x = torch.ones(300, device=dev)
    for out in (torch.zeros((), device="meta"), torch.zeros((), device="cpu")):
        if out.device == x.device:
            continue
        for cached in (False, True):
            plan_cache.clear()
            if cached:
                harness.reduce_sum(x, FASTEST)
            with pytest.raises(ValueError, match=f"out is on {out.device}, the input on"):
                harness.reduce_sum(x, FASTEST, out=out)


def test_a_wrong_out_is_refused_before_any_launch(dev, no_launch):
    x = torch.ones(300, device=dev)
    for out, error in (
        (torch.zeros(2, device=dev), ValueError),
        (torch.zeros((), dtype=torch.float64, device=dev), TypeError),
        (x[5:6], ValueError),
        (torch.zeros((), device=dev, requires_grad=True), ValueError),
        (torch.zeros(1, device=dev).to_sparse(), TypeError),
        ([0.0], TypeError),
    ):
        with pytest.raises(error):
            harness.reduce_sum(x, TWIN, out=out)
