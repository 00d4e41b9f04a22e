"""experiments/reproducible_sweep without a GPU: usage errors exit 2, and so does a run without a
GPU, before any work. (The timed run: benchmarks/gpu_session.sh's `repro-sweep` step.)"""

import pytest

from experiments.reproducible_sweep import experiment as reproducible_sweep
from harness.core import catalogue, device


@pytest.mark.parametrize("argv", [["--sizes", "5"], ["--sizes", "40"], ["--dtypes", "int32"]])
def test_usage_errors_exit_2(argv):
    with pytest.raises(SystemExit) as e:
        reproducible_sweep.main(argv)
    assert e.value.code == 2


@pytest.mark.skipif(device.cupy_gpu()[0], reason="exercises the no-GPU path")
def test_without_a_gpu_exits_2(capsys):
    assert reproducible_sweep.main(["--sizes", "12"]) == 2
    assert "needs a GPU" in capsys.readouterr().err


def test_the_first_cuda_shape_is_the_catalogues():
    """The sweep's first CUDA row is the catalogue's own launch (threads, per_sm; UNROLL and
    PREFETCH are the source's REPRO_UNROLL / REPRO_PREFETCH: 4, on)."""
    v = catalogue.get("cuda/reproducible")
    threads, unroll, per_sm, prefetch = reproducible_sweep.CUDA_SHAPES[0]
    assert (threads, per_sm) == (v.launch.threads, v.launch.per_sm)
    assert (unroll, prefetch) == (4, True)
