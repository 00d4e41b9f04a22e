"""experiments/small_n_sweep: its usage errors and its summary without a GPU; on a GPU, every block
size it times sums right. (The timed run: benchmarks/gpu_session.sh's `callable` step.)"""

import pytest
import torch

from experiments.small_n_sweep import experiment as small_n_sweep
from harness.check import verify
from harness.core import catalogue


@pytest.mark.parametrize(
    "argv", [["--log2", "40"], ["--dtypes", "int8"], ["--json", "/no/such/folder/s.json"]]
)
def test_small_n_sweep_usage_errors_exit_2(argv):
    with pytest.raises(SystemExit) as e:
        small_n_sweep.main(argv)
    assert e.value.code == 2


def test_small_n_sweep_summary_names_the_last_size_where_small_wins():
    def row(n, small, multi):
        return {"dtype": "int32", "n": n, "us": {"small B512": small, "multi-block": multi}}

    rows = [row(1024, 2.0, 2.5), row(4096, 2.4, 2.5), row(16384, 3.0, 2.8), row(65536, 2.0, 4.0)]
    want = "int32: small B512 >= multi-block up to n = 2^12 (16 KiB)"
    assert small_n_sweep.summary(rows) == [want]
    assert "at no n" in small_n_sweep.summary([row(1024, 3.0, 2.0)])[0]


@pytest.mark.gpu
@pytest.mark.parametrize("block", [256, 512, 1024])
@pytest.mark.parametrize("dtype", ["float32", "int32", "bfloat16", "float64"])
def test_small_kernel_every_block_the_sweep_times(block, dtype, needs_cupy):
    """What the sweep times at each block size sums right (int32 exactly)."""
    for n in (1, 5003, 2**16 + 3):
        x = verify.seed_like_input(n + 1, dtype, "cuda")[1:]
        fns = small_n_sweep.paths(dtype, x)
        fn, out = fns[f"small B{block}"]
        fn()
        torch.cuda.synchronize()
        got = verify.compare(
            catalogue.get("cuda/fastest"), dtype, n, verify.as_number(out[0]), verify.golden(x),
            True,
        )  # fmt: skip
        assert got.ok, (n, got.message)
