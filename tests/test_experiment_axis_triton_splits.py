"""experiments/axis_triton_splits: its usage errors and candidate grids without a GPU; on a GPU,
every candidate it times sums right (the timed run: its README)."""

import pytest

from experiments.axis_triton_splits import experiment as sweep


@pytest.mark.parametrize(
    "argv", [["--along", "diagonal"], ["--along", "rows", "--dtype", "bfloat16"]]
)
def test_usage_errors_exit_2(argv):
    with pytest.raises(SystemExit) as e:
        sweep.main(argv)
    assert e.value.code == 2


def test_column_candidates_cover_the_strip_widths_that_fit():
    lanes = sorted({c[0] for c in sweep.column_candidates(128)})  # 32 quads: at most 32 lanes
    assert lanes == [4, 8, 16, 32]
    assert max(c[0] for c in sweep.column_candidates(2**20)) == 256
    assert all(la <= 32 * w for la, w, _ in sweep.column_candidates(4096))  # a row group at least
    assert {c[2] for c in sweep.column_candidates(80)} == set(sweep.SPLITS)
    assert all(c[2] <= 64 for c in sweep.row_candidates())


def test_without_a_gpu_it_exits_2(monkeypatch, capsys):
    from harness.core import device

    monkeypatch.setattr(device, "torch_gpu", lambda: (False, "none here"))
    assert sweep.main([]) == 2
    assert "needs an NVIDIA GPU" in capsys.readouterr().err


@pytest.mark.gpu
@pytest.mark.parametrize("along", ["columns", "rows"])
def test_every_candidate_sums_right_on_the_gpu(along):
    line = sweep.sweep_shape((288, 4096) if along == "columns" else (80, 8192), along, "float32")
    assert "wrong=0" in line, line
