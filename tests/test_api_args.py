"""The argument checks of harness.reduce_sum / harness.partials / harness.result_dtype: every bad
argument is a clear TypeError / ValueError raised before any plan is built or kernel launched,
and the caller's data is untouched. Runs on the GPU when there is one, else with the Triton
variants interpreted on the CPU (the `dev` fixture)."""

from __future__ import annotations

import contextlib
import dataclasses
import sys
import types

import numpy as np
import pytest
import torch

import harness
from harness.core import catalogue
from harness.launch import api, plan_cache
from harness.launch.errors import DeviceMemoryError

TWIN = "triton/tile-256"  # a multi-pass variant: float32 and int32
FASTEST = "triton/fastest"  # the single-launch family: float16 sums come back as float32


@pytest.fixture
def no_launch(monkeypatch):
    """Any plan or cached launch fails the test: a refused call must not get that far."""

    def launched(*args, **kwargs):
        raise AssertionError("a plan was built or a launch looked up for a refused call")

    monkeypatch.setattr(api, "make_plan", launched)
    monkeypatch.setattr(plan_cache, "default", launched)
    # Every test starts from no id known to the hot path: an id an earlier test (in any file)
    # made hot would send a refused input to the cache lookup first.
    monkeypatch.setattr(api, "_HOT_IDS", {})


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


@pytest.mark.parametrize("vid", [TWIN, FASTEST, "triton/reproducible"])
def test_a_meta_tensor_is_refused_once_its_size_is_cached(dev, vid):
    """A warm id and a cached entry of the same n (on the CPU: device index -1, like meta's):
    the hot path declines a meta tensor, and the checked path refuses it."""
    plan_cache.clear()
    harness.reduce_sum(torch.ones(16, device=dev), vid)
    assert api._hit(torch.ones(16, device=dev), vid) is not None
    with pytest.raises(ValueError, match="lives on meta"):
        harness.reduce_sum(torch.ones(16, device="meta"), vid)


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


def test_a_fitting_out_takes_the_hot_path_and_a_wrong_one_the_checked_path(dev, monkeypatch):
    """Once the key is cached, a fitting out= is written by the hot path alone (what out= is
    for: no result allocation, no checks); anything else is left to the checked path, which says
    what is wrong."""
    plan_cache.clear()
    x = torch.arange(1000, dtype=torch.float32, device=dev)  # sum 499,500: exact in float32
    harness.reduce_sum(x, FASTEST)  # the checked path builds the entry
    buf = torch.zeros(1002, device=dev)
    y = buf[1:1001]  # x's values at another alignment (another entry), with room either side
    y.copy_(x)
    harness.reduce_sum(y, FASTEST)

    def no_checked_path(*args, **kwargs):
        raise AssertionError("the checked path ran")

    monkeypatch.setattr(api, "_checked_sum", no_checked_path)
    for out in (torch.zeros((), device=dev), torch.zeros(1, device=dev)):
        assert harness.reduce_sum(x, FASTEST, out=out) is out and float(out) == 499_500.0
    # the bytes right before and right after y: touching, not overlapping
    for out in (buf[:1], buf[1001:]):
        assert harness.reduce_sum(y, FASTEST, out=out) is out and float(out) == 499_500.0
    for wrong in (
        torch.zeros(2, device=dev),  # two elements
        torch.zeros((), dtype=torch.float64, device=dev),  # another dtype
        x[10:11],  # inside x
        torch.zeros((), device=dev, requires_grad=True),
        torch.zeros(1, device=dev).to_sparse(),
        torch.zeros((), device="meta"),
    ):
        with pytest.raises(AssertionError, match="the checked path ran"):
            harness.reduce_sum(x, FASTEST, out=wrong)


# -- partials --------------------------------------------------------------------------------------


def test_partials_of_a_multi_pass_variant_are_its_per_block_sums(dev):
    """Integer data: each tile of 256 sums exactly; 1000 elements -> 4 partials, any shape."""
    x = torch.arange(1000, dtype=torch.int32, device=dev)
    # tiles 0..255, 256..511, 512..767, 768..999: n (first + last) / 2 each
    want = [255 * 256 // 2, 256 * (256 + 511) // 2, 256 * (512 + 767) // 2, 232 * (768 + 999) // 2]
    assert harness.partials(x, TWIN).tolist() == want
    assert harness.partials(x.reshape(8, 125), TWIN).tolist() == want  # flattened
    assert harness.partials(x.float(), catalogue.get(TWIN)).tolist() == want


def test_partials_of_a_single_launch_variant_is_its_one_sum(dev):
    x = torch.arange(1000, dtype=torch.float32, device=dev).reshape(10, 100)
    got = harness.partials(x, FASTEST)
    assert got.shape == (1,) and float(got[0]) == 499_500.0


def test_multi_pass_partials_come_from_a_poisoned_buffer(dev, monkeypatch):
    """A first pass that writes only its first partial: the rest read back as NaN (the poison),
    not as the stale values earlier runs left in the memory."""
    real = api.make_plan

    def stale_plan(variant, x):
        bound = real(variant, x)
        for out in bound.outs:
            out.fill_(7.0)

        def first_block_only():
            bound.outs[0][0] = 1.0

        bound.launches[0] = first_block_only
        return bound

    monkeypatch.setattr(api, "make_plan", stale_plan)
    got = harness.partials(torch.ones(1000, device=dev), TWIN).tolist()
    assert got[0] == 1.0 and len(got) == 4 and all(v != v for v in got[1:])  # NaN


def test_single_launch_partials_come_from_a_poisoned_buffer(dev, monkeypatch):
    """A launch that writes nothing: its one partial reads back as NaN, not as stale memory."""
    real = api.make_plan

    def stale_plan(variant, x):
        bound = real(variant, x)
        bound.outs[0].fill_(7.0)
        bound.launches[0] = lambda: None  # writes nothing
        return bound

    monkeypatch.setattr(api, "make_plan", stale_plan)
    got = harness.partials(torch.ones(100, device=dev), FASTEST)
    assert got.shape == (1,) and got[0] != got[0]  # NaN


def test_a_variants_size_limit_holds_on_the_cached_path(dev):
    """The single-launch family builds no plan per call; its n limit is checked all the same:
    a record of triton/fastest with max_n = 100 takes 100 elements and refuses 101, naming 100."""
    small = dataclasses.replace(catalogue.get(FASTEST), max_n=100)
    assert float(harness.reduce_sum(torch.ones(100, device=dev), small)) == 100.0
    for call in (harness.reduce_sum, harness.partials):
        with pytest.raises(ValueError, match=r"at most n = 100 elements; got 101"):
            call(torch.ones(101, device=dev), small)


# -- CuPy arrays (a stand-in where CuPy is not installed) -----------------------------------------


class _CupyLike:
    """What the API reads of a CuPy array: its module, __cuda_array_interface__, DLPack, its span
    (data.ptr, shape, strides in bytes, size, itemsize), its device and copy(). reversed=True:
    the 1-D t read backwards (a[::-1]: a negative stride, data.ptr at t's last element), which
    DLPack cannot carry (torch.from_dlpack aborts the process on one: here, an error)."""

    __module__ = "cupy"

    def __init__(self, t: torch.Tensor, reversed: bool = False):
        self.t, self.reversed = t, reversed
        self.__cuda_array_interface__ = {"shape": tuple(t.shape), "version": 3}
        self.shape, self.size, self.itemsize = tuple(t.shape), t.numel(), t.element_size()
        steps = tuple(step * t.element_size() for step in t.stride())
        self.strides = tuple(-step for step in steps) if reversed else steps
        last = t.data_ptr() + (t.numel() - 1) * t.element_size()
        self.data = types.SimpleNamespace(ptr=last if reversed else t.data_ptr())
        self.device = contextlib.nullcontext()

    def copy(self) -> _CupyLike:
        return _CupyLike(self.t.flip(0) if self.reversed else self.t.clone())

    def __dlpack__(self, stream=None):
        if self.reversed:
            raise AssertionError("a negative stride reached torch.from_dlpack")
        return self.t.__dlpack__()

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()


def test_a_cupy_array_sums_and_comes_back_as_one(dev, monkeypatch):
    """A CuPy array is read through DLPack without a copy and the result goes back to CuPy."""
    if dev == "cuda":
        pytest.skip("the real CuPy is tested on the GPU (tests/test_gpu_bad_input.py)")
    monkeypatch.setitem(sys.modules, "cupy", types.SimpleNamespace(from_dlpack=_CupyLike))
    x = _CupyLike(torch.arange(300, dtype=torch.float32))
    s = harness.reduce_sum(x, TWIN)
    assert isinstance(s, _CupyLike) and float(s.t) == 300 * 299 / 2
    p = harness.partials(x, TWIN)
    # tiles 0..255 and 256..299
    assert isinstance(p, _CupyLike) and p.t.tolist() == [255 * 256 / 2, 44 * (256 + 299) / 2]
    out = _CupyLike(torch.zeros(()))
    assert harness.reduce_sum(x, TWIN, out=out) is out and float(out.t) == 300 * 299 / 2
    with pytest.raises(ValueError, match="overlaps the input"):
        harness.reduce_sum(x, TWIN, out=_CupyLike(x.t[3:4]))


def test_a_cupy_array_with_a_negative_stride_is_summed_from_a_copy(dev, monkeypatch):
    """a[::-1]: DLPack has no negative strides (torch.from_dlpack aborts the process on one), so
    the API sums a private copy; the caller's array is left as it is, and an out= inside its
    memory is still refused."""
    if dev == "cuda":
        pytest.skip("the real CuPy is tested on the GPU (tests/test_gpu_contexts.py)")
    monkeypatch.setitem(sys.modules, "cupy", types.SimpleNamespace(from_dlpack=_CupyLike))
    base = torch.arange(300, dtype=torch.float32)
    x = _CupyLike(base, reversed=True)
    assert float(harness.reduce_sum(x, TWIN).t) == 300 * 299 / 2
    assert harness.partials(x, TWIN).t.tolist() == [sum(range(44, 300)), sum(range(44))]
    assert torch.equal(base, torch.arange(300, dtype=torch.float32))
    with pytest.raises(ValueError, match="overlaps the input"):
        harness.reduce_sum(x, TWIN, out=_CupyLike(base[299:300]))  # x's first element


def test_only_cupy_arrays_are_read_through_the_cuda_array_interface(dev, no_launch):
    """A foreign object with __cuda_array_interface__ (e.g. a Numba array) and a CuPy object that
    is not an array are refused like any other non-tensor."""

    class NumbaLike(_CupyLike):
        __module__ = "numba.cuda"

    class CupyNotAnArray:
        __module__ = "cupy.cuda"

    t = torch.ones(8, device=dev)
    for x in (NumbaLike(t), CupyNotAnArray()):
        for call in (harness.reduce_sum, harness.partials):
            with pytest.raises(TypeError, match="expected a CuPy array or a torch tensor"):
                call(x, TWIN)
        with pytest.raises(TypeError, match="out must be a torch tensor or a CuPy array"):
            harness.reduce_sum(t, TWIN, out=x)


def test_cpu_tensors_need_the_interpreter(monkeypatch):
    """Without TRITON_INTERPRET=1 a Triton variant runs on the GPU only: a CPU tensor is refused
    (with the plan cache empty, as in a process that never interpreted)."""
    plan_cache.clear()
    monkeypatch.setattr(api.device, "interpreting", lambda: False)
    for vid in (TWIN, FASTEST):
        for call in (harness.reduce_sum, harness.partials):
            with pytest.raises(ValueError, match=r"runs on a CUDA GPU .* lives on cpu"):
                call(torch.ones(8), vid)


def test_non_tensors_are_refused_also_once_the_variant_is_cached(dev):
    plan_cache.clear()
    x = torch.ones(300, device=dev)
    harness.reduce_sum(x, FASTEST)  # FASTEST's id is now tried on the hot path first
    with pytest.raises(TypeError, match="move host data to the GPU"):
        harness.reduce_sum(np.ones(300, dtype=np.float32), FASTEST)
    for out in ([0.0], np.zeros(1, dtype=np.float32), 0.0):
        with pytest.raises(TypeError, match="out must be a torch tensor or a CuPy array"):
            harness.reduce_sum(x, FASTEST, out=out)


def test_an_input_that_requires_grad_may_take_an_out(dev):
    """x requiring grad is read, never written: its sum may go to an out= (which may not)."""
    x = torch.arange(300, dtype=torch.float32, device=dev).requires_grad_()
    for vid in (TWIN, FASTEST):
        out = torch.zeros((), device=dev)
        assert harness.reduce_sum(x, vid, out=out) is out and float(out) == 300 * 299 / 2


def test_an_empty_input_overlaps_no_out(dev):
    """An empty view has no bytes, whatever its strides: an out at its address is fine."""
    buf = torch.full((8,), 5.0, device=dev)
    empty = torch.as_strided(buf, (3, 0), (1, 1))  # 3 x 0: no element, starts at buf[0]
    for vid in (TWIN, FASTEST):
        out = buf[:1]
        assert harness.reduce_sum(empty, vid, out=out) is out and float(buf[0]) == 0.0
        buf[0] = 5.0


def test_no_memory_for_the_copy_of_a_strided_input_is_a_device_memory_error(dev, monkeypatch):
    """The private contiguous copy of a strided view can fail for memory: a DeviceMemoryError
    naming the bytes it needed (the process keeps working), not torch's error."""

    def no_memory(self, *args, **kwargs):
        raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 KiB\nmore")

    x = torch.ones(1000, device=dev)[::2]  # 500 float32: 2,000 bytes
    monkeypatch.setattr(torch.Tensor, "contiguous", no_memory)
    with pytest.raises(DeviceMemoryError, match=r"\(2,000 bytes\) \(CUDA out of memory"):
        harness.reduce_sum(x, TWIN)
    monkeypatch.undo()
    assert float(harness.reduce_sum(x, TWIN)) == 500.0


def test_an_empty_input_gives_an_empty_answer_on_its_device_in_its_dtype(dev):
    for dtype in (torch.int32, torch.float32):
        x = torch.empty(0, dtype=dtype, device=dev)
        s = harness.reduce_sum(x, TWIN)
        assert (s.dim(), s.dtype, s.device, s.item()) == (0, dtype, x.device, 0)
        p = harness.partials(x, TWIN)
        assert (p.shape, p.dtype, p.device) == ((0,), dtype, x.device)
    x16 = torch.empty(0, dtype=torch.float16, device=dev)
    s16 = harness.reduce_sum(x16, FASTEST)  # the single-launch family sums in float32
    assert (s16.dtype, s16.device, s16.item()) == (torch.float32, x16.device, 0.0)
    p16 = harness.partials(x16, FASTEST)
    assert (p16.shape, p16.dtype, p16.device) == ((0,), torch.float16, x16.device)


@pytest.mark.parametrize(
    ("vid", "wording"),
    [
        (TWIN, r"needs [\d,]+ bytes of device memory for its partial sums;"),
        ("triton/reproducible", "-chunk workspace"),
    ],
)
def test_no_memory_for_a_cached_workspace_is_a_device_memory_error(vid, wording, dev, monkeypatch):
    """A cache entry's workspace (made on the workspace thread) that does not fit: the
    DeviceMemoryError the uncached plan raised, nothing cached, and the next call builds."""
    real = torch.empty

    def no_memory(*args, **kwargs):
        if kwargs.get("dtype") in (torch.float64, torch.float32):
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 8 KiB\nmore")
        return real(*args, **kwargs)

    plan_cache.clear()
    x = torch.ones(5000, device=dev)
    monkeypatch.setattr(torch, "empty", no_memory)
    with pytest.raises(DeviceMemoryError, match=wording + r".*CUDA out of memory\. Tried"):
        harness.reduce_sum(x, vid)
    monkeypatch.undo()
    assert plan_cache.info().size == 0
    assert float(harness.reduce_sum(x, vid)) == 5000.0


@pytest.mark.parametrize("vid", [FASTEST, TWIN, "triton/reproducible"])
def test_a_view_with_the_negative_bit_sums_its_values(dev, vid):
    """x.conj().imag is a view whose memory holds the negated values (torch's negative bit): the
    sum is of the values it shows, on the checked path and on the hot path (which leaves such a
    view to the checked one), and the caller's tensor is left as it is."""
    plan_cache.clear()
    base = torch.randint(1, 50, (4099,)).float().to(dev)
    z = torch.complex(torch.zeros_like(base), base)
    before = base.clone(), z.clone()
    # contiguous (what the hot path would take), and strided (the checked path's copy)
    for view in (torch._neg_view(base), z.conj().imag):
        assert view.is_neg()
        want = -base.sum()
        for _ in range(2):  # a miss, then a key in the cache
            assert harness.reduce_sum(view, vid) == want
    assert torch.equal(base, before[0]) and torch.equal(z, before[1])
