"""The per-call benchmark's usage checks and its derived figures, without a GPU (the timed run is
benchmarks/gpu_session.sh's `callable` step)."""

import pytest

from harness.core import device
from harness.launch.rebind import DEFAULT_MODE
from harness.studies import callable_bench


@pytest.mark.parametrize(
    "argv", [["--json", "x.json", "--dtypes", "float64"], ["--json", "x.json", "--sizes", "2^"]]
)
def test_usage_errors_exit_2_before_any_work(argv, tmp_path):
    with pytest.raises(SystemExit) as e:
        callable_bench.main(argv)
    assert e.value.code == 2


@pytest.mark.skipif(device.gpu_available(), reason="checks the no-GPU message")
def test_without_a_gpu_it_says_so(tmp_path, capsys):
    out = tmp_path / "c.json"
    assert callable_bench.main(["--json", str(out), "--sizes", "2^10"]) == 2
    assert "needs a CUDA GPU" in capsys.readouterr().err and not out.exists()


def test_overhead_is_api_minus_its_cached_launch():
    rows = [
        {"entry": "api cuda/fastest", "dtype": "int32", "n": 1024, "us_per_call": 9.5},
        {
            "entry": f"launch cuda/fastest {DEFAULT_MODE['cuda']}",
            "dtype": "int32",
            "n": 1024,
            "us_per_call": 8.0,
        },  # the mode the cache launches with (driver where cuda-python is)
        {"entry": "api triton/fastest", "dtype": "int32", "n": 1024, "error": "boom"},
    ]
    assert callable_bench.overheads({"results": rows}) == ["cuda/fastest int32 2^10: +1.50 us"]


def test_table_gives_ratios_to_torch_sum():
    rows = [
        {"entry": "torch.sum", "dtype": "float32", "n": 4096, "us_per_call": 10.0},
        {"entry": "api cuda/fastest", "dtype": "float32", "n": 4096, "us_per_call": 8.0},
    ]
    text = callable_bench._table_block(rows, "float32", 4096)
    assert "1.25x" in text.splitlines()[2] and "1.00x" in text.splitlines()[1]


def test_missing_json_folder_is_a_usage_error_before_any_work(tmp_path):
    with pytest.raises(SystemExit) as e:
        callable_bench.main(["--json", str(tmp_path / "missing" / "c.json"), "--sizes", "2^10"])
    assert e.value.code == 2


def _callable_doc(tmp_path):
    import json

    from harness.report import records

    rows = [
        {"entry": "torch.sum", "dtype": "float32", "n": 1024, "us_per_call": 10.0},
        {"entry": "api cuda/fastest", "dtype": "float32", "n": 1024, "us_per_call": 8.0},
        {"entry": "cupy.sum-cub", "dtype": "float32", "n": 1024, "error": "boom"},
    ]
    doc = {"schema": records.CALLABLE_SCHEMA, "device": {"name": "GPU"}, "results": rows}
    path = tmp_path / "callable.json"
    path.write_text(json.dumps(doc))
    return path


def test_callable_tables_ratio_to_torch_sum_and_join_with_device_time(tmp_path):
    from harness.core.timing import Timing
    from harness.report import callable_tables
    from harness.report.records import ResultRecord

    doc = callable_tables.load(_callable_doc(tmp_path))
    md = callable_tables.markdown(doc)
    assert "| 2^10 | 10.00 (1.00x) | 8.00 (1.25x) | - (-) |" in md

    def rec(vid, ms):
        t = Timing(median_ms=ms, min_ms=ms, p10_ms=ms, p90_ms=ms, reps=1)
        return ResultRecord(variant=vid, backend="x", dtype="float32", n=1024, total=t)

    rows = callable_tables.joined_rows(
        [rec("cuda/fastest", 0.004), rec("peer/torch.sum", 0.005)], doc
    )
    assert rows[0] == ["float32", "2^10", "cuda/fastest", "4.0", "1.25x", "8.0", "1.25x"]
    assert rows[1][2:] == ["torch.sum", "5.0", "1.00x", "10.0", "1.00x"]


def test_report_refuses_a_non_callable_document_before_writing(tmp_path):
    from harness.cli.main import main

    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": "something else"}')
    out = tmp_path / "rep"
    code = main(["report", "results/nvidia-h100/ladder-float32.json", "--out", str(out),
                 "--callable", str(bad)])  # fmt: skip
    assert code == 2 and not out.exists()
