"""experiments/call_profile without a GPU: it runs up to a mocked launch (the Python path's
figures) and its usage errors exit 2. (The GPU run: benchmarks/gpu_session.sh's `callable` step.)"""

import pytest

from experiments.call_profile import experiment as call_profile
from harness.core import device


def test_call_profile_runs_without_a_gpu_up_to_a_mocked_launch(tmp_path, capsys):
    from harness.report import documents

    if device.gpu_available():
        pytest.skip("the GPU run is benchmarks/gpu_session.sh's `callable` step")
    out = tmp_path / "p.json"
    assert call_profile.main(["--n", "2^10", "--calls", "20", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "launch MOCKED" in text and "cProfile, op" in text
    read = documents.load_document(out, "rows")  # the per-call times as rows, the rest beside
    doc = read.raw
    assert doc["suite"] == "call-profile" and "per_call_us" not in doc
    assert doc["launch_mocked"] and doc["variant"] == "triton/fastest"
    assert set(doc["steps_ns"]) >= {"key", "cache lookup", "output allocation", "launch"}
    assert {r.variant for r in documents.rows(read)} >= {
        "reduce_sum",
        "op",
        "noop op (dispatch alone)",
    }
    assert "api.py" in doc["profiles"]["reduce_sum"]  # the profile names the hot path


def test_call_profile_takes_a_multi_pass_variant(tmp_path, capsys):
    # every family's call is cached: a multi-pass Triton twin profiles like the fastest pair
    if device.gpu_available():
        pytest.skip("the GPU run is benchmarks/gpu_session.sh's `callable` step")
    argv = ["--variant", "triton/tile-256", "--n", "2^12", "--calls", "20"]
    assert call_profile.main(argv) == 0
    assert "triton/tile-256" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv",
    [["--variant", "cuda/tile-256"], ["--variant", "peer/torch.sum"], ["--n", "0"],
     ["--dtype", "int8"], ["--calls", "1"], ["--variant", "triton/tile-256", "--dtype", "float64"]],
)  # fmt: skip
def test_call_profile_usage_errors_exit_2(argv):
    with pytest.raises(SystemExit) as e:
        call_profile.main(argv)
    assert e.value.code == 2
