"""Odd input on the GPU: alignment, views, NaN/Inf, the 2^31 limit, out of memory, compile errors
through CuPy, and two processes sharing the kernel caches. Skipped (with the reason) without a GPU.
"""

import math

import pytest
import torch

import harness
from harness.check import verify
from harness.compile import cuda_loader, cuda_source
from harness.compile.nvrtc import CudaCompileError
from harness.core import catalogue
from harness.launch.errors import DeviceMemoryError
from tests import exact_data

pytestmark = pytest.mark.gpu
# Every variant the API runs (peers are library calls, checked in tests/test_peers.py).
ALL = [v.id for v in catalogue.select(dtype="float32") if v.launch is not None]


@pytest.mark.parametrize("vid", ALL)
def test_unaligned_and_strided_views(vid, needs_cupy):
    base = verify.seed_like_input(300_007, "float32", "cuda")
    keep = base.clone()
    for view in (base[1:], base[2:], base[3:], base[5:-7], base[::3]):
        got = float(harness.reduce_sum(view, vid))
        assert got == float(view.double().sum()), f"view of {view.numel()} at offset"
    assert torch.equal(base, keep)


@pytest.mark.parametrize("vid", ALL)
def test_nan_and_inf_propagate(vid, needs_cupy):
    v = catalogue.get(vid)
    for specials in ([math.nan], [math.inf], [-math.inf], [math.inf, -math.inf]):
        x = verify.seed_like_input(2**20 + 3, "float32", "cuda")
        for i, s in enumerate(specials):
            x[1234 + 500_000 * i] = s
        r = verify.check_variant(v, x)
        assert r.ok, (specials, r.message)


def test_empty_and_multidimensional(needs_cupy):
    import cupy

    assert float(harness.reduce_sum(torch.empty(0, device="cuda"), "cuda/v3-sequential")) == 0
    a = cupy.arange(24, dtype=cupy.float32).reshape(2, 3, 4)
    assert float(harness.reduce_sum(a, "cuda/v8-shuffle-chunked")) == 276.0
    assert (
        float(harness.reduce_sum(torch.tensor(5.0, device="cuda"), "cuda/v0-gmem-interleaved"))
        == 5.0
    )


def test_2_31_elements_are_refused_with_the_limit(needs_cupy):
    x = torch.empty(2**31, dtype=torch.float32, device="cuda")  # 8 GiB, never read
    with pytest.raises(ValueError, match="2,147,483,647"):
        harness.reduce_sum(x, "cuda/v8-shuffle-strided")
    del x


@pytest.mark.slow
@pytest.mark.parametrize(
    "vid",
    [
        "cuda/v8-shuffle-strided",
        "triton/grid-stride-1024",
        "cuda/v4-split-256",
        "cuda/v6-unroll-1024",
    ],
)
def test_largest_accepted_size_indexes_correctly(vid, needs_cupy):
    # +-1 data (every partial sum exact in float32, tests/exact_data.py) with distinct powers of
    # two at the first and the last indices: the result must EQUAL the exact sum, so one element
    # dropped, repeated or read past the end shows (a tolerance derived for 2^31 elements of
    # 0..3 would not).
    n = 2**31 - 1
    g = torch.Generator(device="cuda").manual_seed(7)
    x = (torch.randint(0, 2, (n,), dtype=torch.int8, device="cuda", generator=g) * 2 - 1).float()
    for i, v in ((0, 64.0), (n - 3, 128.0), (n - 2, 256.0), (n - 1, 512.0)):
        x[i] = v
    want = exact_data.exact_total(x)
    r = verify.check_variant(catalogue.get(vid), x)
    assert r.ok and r.value == want, (r.value, want, r.message)
    del x
    torch.cuda.empty_cache()


def test_out_of_device_memory_is_clear_and_recoverable(needs_cupy):
    # A 4 GiB input, then a filler that leaves about 1 GiB free: the in-place v0 needs a 4 GiB
    # scratch copy, which cannot be allocated.
    x = torch.ones(2**30, dtype=torch.float32, device="cuda")
    free, _ = torch.cuda.mem_get_info()
    filler = torch.empty(max(free - 2**30, 0), dtype=torch.uint8, device="cuda")
    with pytest.raises(DeviceMemoryError, match="scratch copy"):
        harness.reduce_sum(x, "cuda/v0-gmem-interleaved")
    del filler, x
    torch.cuda.empty_cache()
    y = verify.seed_like_input(100_000, "float32", "cuda")
    assert float(harness.reduce_sum(y, "cuda/v0-gmem-interleaved")) == float(y.double().sum())


def test_cuda_compile_error_names_file_and_line(monkeypatch, needs_cupy):
    real = cuda_source.expand

    def broken(name, *a):
        text = real(name, *a)
        return text + '#line 999 "interleaved.cu"\n__global__ void oops() { int y = ; }\n'

    cuda_loader.module.cache_clear()
    monkeypatch.setattr(cuda_source, "expand", broken)
    try:
        with pytest.raises(CudaCompileError) as e:
            cuda_loader.module("interleaved.cu")
        assert "interleaved.cu" in str(e.value) and "999" in str(e.value)
    finally:
        monkeypatch.undo()
        cuda_loader.module.cache_clear()
    x = verify.seed_like_input(1000, "float32", "cuda")
    assert float(harness.reduce_sum(x, "cuda/v1-smem-interleaved")) == float(x.double().sum())
