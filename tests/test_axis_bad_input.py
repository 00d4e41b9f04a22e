"""reduce_sum(x, variant, dim=d) on odd input, on the CPU and (where there is one) the GPU: every
error is raised before anything is launched (the plan and the cache are made to fail if
reached), and an empty dimension gives zeros of the output shape without a launch."""

import numpy as np
import pytest
import torch

import harness
from harness.core import catalogue, device
from harness.launch import axis_plan, plan_cache

ROWS = "triton/axis-r1-block-row"
COLS = "triton/axis-c1-column-tiles"
FASTEST = "triton/axis-fastest"
# The GPU where there is one (the Triton variants take CPU tensors only without a GPU).
DEVICE = "cuda" if device.gpu_available() else "cpu"


@pytest.fixture
def no_launch(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a plan was built: the error should have come before any launch")

    monkeypatch.setattr(axis_plan, "make_plan", refuse)
    monkeypatch.setattr(plan_cache, "default_axis", refuse)


def _x(*shape, dtype=torch.float32, on=None):
    return torch.ones(shape, dtype=dtype, device=on or DEVICE)


@pytest.mark.parametrize("dim", [2, -3, 5])
def test_dim_out_of_range(dim, no_launch):
    with pytest.raises(IndexError, match=r"out of range for a 2-D tensor \(expected -2 \.\. 1\)"):
        harness.reduce_sum(_x(3, 4), FASTEST, dim=dim)


def test_dim_not_an_int(no_launch):
    with pytest.raises(TypeError, match="dim must be an int"):
        harness.reduce_sum(_x(3, 4), FASTEST, dim=1.0)


@pytest.mark.parametrize("vid", ["triton/tile-256", "cuda/fastest", "cuda/v3-sequential"])
def test_a_1d_variant_given_dim(vid, no_launch):
    with pytest.raises(ValueError, match=r"takes no dim.*axis family"):
        harness.reduce_sum(_x(3, 4), vid, dim=0)


@pytest.mark.parametrize("vid", [ROWS, "cuda/axis-c2-split-columns", FASTEST])
def test_an_axis_variant_without_dim(vid, no_launch):
    with pytest.raises(ValueError, match="pass dim="):
        harness.reduce_sum(_x(3, 4), vid)
    with pytest.raises(ValueError, match="pass dim="):
        harness.reduce_sum(_x(3, 4), catalogue.get_axis(vid))


def test_an_unknown_axis_id_names_the_close_ones(no_launch):
    with pytest.raises(KeyError, match="did you mean triton/axis-r1-block-row"):
        harness.reduce_sum(_x(3, 4), "triton/axis-r1-block-rows", dim=1)


@pytest.mark.parametrize("shape", [(), (5,), (2, 3, 4, 5)])
def test_wrong_ndim(shape, no_launch):
    with pytest.raises(ValueError, match=f"takes a 2-D or 3-D tensor, got {len(shape)}-D"):
        harness.reduce_sum(torch.ones(shape), FASTEST, dim=0)


def test_a_row_stage_along_a_strided_dim(no_launch):
    with pytest.raises(ValueError, match=r"reduces rows; dim 0 .* use one of cuda/axis-c0"):
        harness.reduce_sum(_x(3, 4), ROWS, dim=0)
    for vid in ("cuda/axis-r2-warp-row", "triton/axis-r3-subwarp-rows", "cuda/axis-r4-split-rows"):
        with pytest.raises(ValueError, match="reduces rows"):
            harness.reduce_sum(_x(2, 3, 4), vid, dim=1)


def test_more_than_2_to_the_31_elements_on_a_32_bit_kernel(no_launch):
    # 2^31 + 2^16 elements, no memory behind them
    big = torch.zeros(1, device=DEVICE).expand(2**16, 2**15 + 1)
    with pytest.raises(ValueError, match="32 bits: at most 2,147,483,647 elements"):
        harness.reduce_sum(big, FASTEST, dim=1)


@pytest.mark.parametrize("dtype", [torch.float64, torch.int64, torch.int16, torch.uint8])
def test_a_dtype_the_variant_lacks(dtype, no_launch):
    with pytest.raises(TypeError, match="supports float32, int32, float16, bfloat16"):
        harness.reduce_sum(_x(3, 4, dtype=dtype), FASTEST, dim=1)


def test_out_is_not_taken_with_dim(no_launch):
    with pytest.raises(ValueError, match="out= is not supported with dim="):
        harness.reduce_sum(_x(3, 4), FASTEST, dim=1, out=torch.empty(3))


def test_numpy_input_is_refused(no_launch):
    with pytest.raises(TypeError, match="move host data to the GPU"):
        harness.reduce_sum(np.ones((3, 4), dtype=np.float32), FASTEST, dim=1)


def test_a_cpu_tensor_for_a_cuda_axis_variant(no_launch):
    with pytest.raises(ValueError, match="runs on a CUDA GPU"):
        harness.reduce_sum(_x(3, 4, on="cpu"), "cuda/axis-fastest", dim=1)


@pytest.mark.parametrize(
    ("shape", "dim", "want"),
    [((0, 5), 0, (5,)), ((0, 5), 1, (0,)), ((3, 0, 4), 1, (3, 4)), ((3, 0, 4), 2, (3, 0))],
)
@pytest.mark.parametrize("dtype", [torch.float32, torch.int32])
def test_an_empty_dimension_gives_zeros_without_a_launch(shape, dim, want, dtype, no_launch):
    for vid in (COLS, FASTEST):
        got = harness.reduce_sum(torch.empty(shape, dtype=dtype, device=DEVICE), vid, dim=dim)
        assert got.shape == want == torch.sum(torch.empty(shape), dim=dim).shape
        assert got.dtype == dtype and not got.any()
