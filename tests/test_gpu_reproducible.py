"""Family "reproducible" on the GPU: cuda/reproducible == triton/reproducible == the numpy model
(triton_kernels.reproducible.reference_sum) bit for bit, for every dtype at several n; the same
bits for grids as if on GPUs of 16, 80, 108, 132 and 144 SMs x 1..4 blocks per SM, on several
streams and over repeated runs; misaligned views; NaN / Inf / zeros / n = 0 / n = 1; the caller's
data unchanged; the counter left at 0; the public API and the torch op. Skipped without a GPU."""

import numpy as np
import pytest
import torch

import harness
from harness.check import verify
from harness.core import catalogue, dtypes, mappings
from harness.launch import reproducible_plan
from tests import exact_data
from triton_kernels.reproducible import reference_sum

pytestmark = pytest.mark.gpu

REPRO = ["cuda/reproducible", "triton/reproducible"]
DTYPES = ("float32", "float16", "bfloat16", "float64")
SIZES = (2**10, 2**20 + 3, 2**25)
SM_COUNTS = (16, 80, 108, 132, 144)


def _input(n: int, dtype: str, seed: int = 0) -> torch.Tensor:
    g = torch.Generator(device="cuda").manual_seed(seed)
    return torch.randn(n, device="cuda", generator=g).mul_(100).to(dtypes.torch_dtype(dtype))


def _model(x: torch.Tensor) -> bytes:
    """reference_sum's bits for x (bfloat16 passed as its exact float32 values)."""
    host = (x.float() if x.dtype == torch.bfloat16 else x).cpu().numpy()
    return reference_sum(host).tobytes()


def _run(vid: str, x: torch.Tensor, grid: int | None = None) -> torch.Tensor:
    v = catalogue.get(vid)
    plan = reproducible_plan.make_plan(v, dtypes.name_of(x.dtype), x, grid=grid)
    plan.poison()
    return plan.run().clone()


def _bits(t: torch.Tensor) -> bytes:
    return t.cpu().numpy().tobytes()


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_cuda_equals_triton_equals_model(dtype, n, needs_cupy):
    x = _input(n, dtype)
    want = _model(x)
    for vid in REPRO:
        assert _bits(_run(vid, x)) == want, vid


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("n", [2**22 + 5, 2**25])
def test_grid_sweep_same_bits(dtype, n, needs_cupy):
    x = _input(n, dtype, seed=1)
    want = _model(x)
    m = mappings.chunk_count(n)
    grids = sorted({min(m, sms * per_sm) for sms in SM_COUNTS for per_sm in (1, 2, 3, 4)})
    grids += [1, 7, m + 5]  # one block; an odd grid; more blocks than chunks
    for vid in REPRO:
        got = {g: _bits(_run(vid, x, grid=g)) for g in grids}
        bad = [g for g, b in got.items() if b != want]
        assert not bad, (vid, bad)


@pytest.mark.parametrize("vid", REPRO)
def test_repeated_runs_and_streams(vid, needs_cupy):
    x = _input(2**23 + 11, "float32", seed=2)
    want = _model(x)
    v = catalogue.get(vid)
    plan = reproducible_plan.make_plan(v, "float32", x)
    for _ in range(5):
        plan.poison()
        assert _bits(plan.run()) == want
        if vid.startswith("cuda/"):
            assert int(plan.workspace[2].item()) == 0, "counter not reset"
    streams = [torch.cuda.Stream() for _ in range(3)]
    plans = []
    torch.cuda.synchronize()
    for s in streams:  # a plan per stream (each its own counter), all in flight at once
        with torch.cuda.stream(s):
            plans.append(reproducible_plan.make_plan(v, "float32", x, grid=40 + len(plans) * 17))
            plans[-1].run()
    torch.cuda.synchronize()
    assert all(_bits(p.outs[0]) == want for p in plans)


@pytest.mark.parametrize("offset", [1, 2, 3])
@pytest.mark.parametrize("dtype", DTYPES)
def test_misaligned_views(dtype, offset, needs_cupy):
    base = _input(2**20 + 9, dtype, seed=3)
    x = base[offset:]
    want = _model(x)
    before = base.clone()
    for vid in REPRO:
        assert _bits(_run(vid, x)) == want, vid
    assert verify.same_bits(before, base), "the caller's data changed"


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("n", [3 * 4096 - 100, 2**20 + 3])
def test_signed_zeros_cancellations_and_ties(dtype, n, needs_cupy):
    """Where the kernels' Fast2Sum could part from the model's TwoSum (exact_data.lane_edge_values):
    both backends still give the model's bits (float64 output shows the lanes' lo)."""
    x = torch.from_numpy(exact_data.lane_edge_values(n, seed=n)).to(
        "cuda", dtypes.torch_dtype(dtype)
    )
    want = _model(x)
    for vid in REPRO:
        assert _bits(_run(vid, x)) == want, vid


@pytest.mark.parametrize("vid", REPRO)
def test_nan_inf_zero_and_tiny(vid, needs_cupy):
    v = catalogue.get(vid)
    n = 2**20 + 3
    cases = {
        "nan": (n // 2, float("nan")),
        "inf": (n - 1, float("inf")),
        "-inf": (5, float("-inf")),
    }
    for name, (i, val) in cases.items():
        x = torch.randn(n, device="cuda")
        x[i] = val
        got = float(_run(vid, x).item())
        assert (np.isnan(got) and np.isnan(val)) or got == val, name
        if name == "nan":  # NaN's payload is the backend's own (CUDA's canonical 0x7fffffff)
            assert np.isnan(np.frombuffer(_model(x), dtype=np.float32)[0])
        else:
            assert _bits(_run(vid, x)) == _model(x), name
    both = torch.randn(n, device="cuda")
    both[3], both[n - 2] = float("inf"), float("-inf")
    assert np.isnan(float(_run(vid, both).item()))
    assert float(_run(vid, torch.zeros(n, device="cuda")).item()) == 0.0
    one = torch.tensor([1.5], device="cuda")
    assert float(_run(vid, one).item()) == 1.5
    assert float(harness.reduce_sum(torch.zeros(0, device="cuda"), v)) == 0.0
    for dtype in DTYPES:
        r = verify.check_variant(v, _input(4097, dtype, seed=4))
        assert r.ok and r.input_unchanged, (dtype, r.message)


@pytest.mark.parametrize("vid", REPRO)
def test_public_api_and_torch_op(vid, needs_cupy):
    x = _input(1024 * 1025, "bfloat16", seed=5).reshape(1024, 1025)[:, :-1]  # non-contiguous
    want = _model(x.contiguous())
    s = harness.reduce_sum(x, vid)
    assert s.dtype == torch.float32 and _bits(s) == want
    t = torch.ops.reduce_ladder.sum(x.contiguous(), vid)
    assert t.dtype == torch.float32 and _bits(t) == want


def test_n_past_2_to_31(needs_cupy):
    """64-bit indices: +-1 data (float16, 4 GiB; every partial sum exact, tests/exact_data.py)
    with distinct powers of two around and past index 2^31. Both variants must EQUAL the exact
    sum, so one element dropped, repeated or read from a wrapped 32-bit index shows, and agree
    bit for bit."""
    x = exact_data.signs_with_marks(2**31 + 4099)
    want = exact_data.exact_total(x)
    a, b = (_run(vid, x) for vid in REPRO)
    assert _bits(a) == _bits(b)
    assert float(a.item()) == want, (float(a.item()), want)
    del x
    torch.cuda.empty_cache()


@pytest.mark.parametrize("vid", REPRO)
def test_subnormals_are_summed_not_flushed(vid, needs_cupy):
    """CuPy compiles with -ftz=true; the CUDA kernel widens and rounds in PTX without .ftz, so
    subnormal inputs count and a subnormal sum is kept (the model is IEEE, no flush)."""
    g = torch.Generator(device="cuda").manual_seed(5)
    tiny = torch.finfo(torch.float32).tiny  # the smallest normal; below it: subnormals
    x = (torch.rand(2**20 + 3, device="cuda", generator=g) - 0.5) * tiny
    assert bool((x.abs() < tiny).all()) and bool((x != 0).any())
    got = _run(vid, x)
    assert _bits(got) == _model(x) and float(got.item()) != 0.0
    few = torch.tensor([tiny / 8, tiny / 16, -tiny / 64], device="cuda")  # a subnormal sum
    assert _bits(_run(vid, few)) == _model(few) and 0 < float(_run(vid, few).item()) < tiny
