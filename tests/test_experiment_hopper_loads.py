"""experiments/hopper_loads off the GPU: its kernels (its own .cu file, including
cuda_kernels/fastest.cu) compile for Hopper without spills, its error bound's chain counts every
addition, and without a GPU it exits 2 before any work."""

import pytest

from experiments.hopper_loads import experiment as hopper_loads
from harness.compile import nvrtc
from harness.core import device

EXPRESSIONS = [
    f"reduce_hinted<{load}, {hopper_loads.THREADS}, {hopper_loads.UNROLL}>"
    for load in hopper_loads.HINTED.values()
] + [f"reduce_bulk<{hopper_loads.THREADS}, {s}, {b}>" for s, b, _ in hopper_loads.BULK.values()]


NO_NVRTC = "libnvrtc not installed (pip install -e '.[cuda13]')"


@pytest.mark.skipif(not nvrtc.available(), reason=NO_NVRTC)
def test_study_kernels_compile_for_sm90_without_spills():
    r = nvrtc.compile_file(hopper_loads.SOURCE, "sm_90", EXPRESSIONS)
    assert set(r.lowered) == set(EXPRESSIONS) == set(hopper_loads.name_expressions())
    assert len(r.resources) == len(set(EXPRESSIONS)), r.log
    assert r.source == "hopper_loads.cu"
    for name, res in r.resources.items():
        assert res.spill_store_bytes == 0 and res.stack_bytes == 0, name


@pytest.mark.parametrize("stages,tile_bytes,per_sm", list(hopper_loads.BULK.values()))
def test_bulk_rings_fit_static_shared_memory(stages, tile_bytes, per_sm):
    # 48 KiB is the static __shared__ limit; the ring plus its barriers and the block tree's slots.
    assert stages * tile_bytes + 8 * stages + 4 * 32 <= 48 * 1024
    assert tile_bytes % (16 * hopper_loads.THREADS) == 0 and per_sm >= 1


def test_chain_counts_lane_adds_and_trees():
    n, threads, grid = 2**28, 256, 528
    per_lane = -(-n // (4 * threads * grid)) + 1
    assert hopper_loads._chain(n, threads, grid) == per_lane + 2 + 16 + 3
    assert hopper_loads._chain(2 * n, threads, grid) > hopper_loads._chain(n, threads, grid)


@pytest.mark.skipif(device.cupy_gpu()[0], reason="exercises the no-GPU path")
def test_without_gpu_exits_2(tmp_path, capsys):
    out = tmp_path / "h.json"
    assert hopper_loads.main(["--json", str(out)]) == 2
    assert "needs a GPU" in capsys.readouterr().err and not out.exists()


def test_bad_sizes_are_a_usage_error():
    with pytest.raises(SystemExit) as e:
        hopper_loads.main(["--json", "x.json", "--log2", "40"])
    assert e.value.code == 2


@pytest.mark.skipif(not nvrtc.available(), reason=NO_NVRTC)
def test_its_source_is_not_a_product_source():
    """The experiment's kernels left cuda_kernels/: the CPU path and the census no longer compile
    them, and a compile error in the file names it (its includes resolve in cuda_kernels/)."""
    from harness.compile import cuda_source

    assert "hopper_loads.cu" not in cuda_source.sources()
    text = cuda_source.expand(hopper_loads.SOURCE)
    assert '#line 1 "hopper_loads.cu"' in text and '#line 1 "fastest.cu"' in text
    broken = text + "\n__global__ void broken() { int x = ; }\n"
    with pytest.raises(nvrtc.CudaCompileError, match=r"hopper_loads\.cu"):
        nvrtc.compile_source(broken, "hopper_loads.cu", [], "sm_90")
