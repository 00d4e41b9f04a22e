"""The command line: usage errors exit 2 with a clear message, the CPU path runs without a GPU."""

import json

import pytest

from harness.cli.common import UsageError, parse_size
from harness.cli.main import main
from harness.core import device
from harness.report.documents import load_document


@pytest.mark.parametrize(
    "text,n",
    [
        ("1000", 1000),
        ("2^24", 2**24),
        ("2**25", 2**25),
        ("2^20+3", 2**20 + 3),
        ("2^31-1", 2**31 - 1),
    ],
)
def test_parse_size(text, n):
    assert parse_size(text) == n


@pytest.mark.parametrize("text", ["0", "-5", "abc", "2^", "1e6", ""])
def test_bad_sizes_are_refused(text):
    with pytest.raises(UsageError):
        parse_size(text)


def test_unknown_variant_lists_the_valid_ones(capsys):
    assert main(["check", "--variants", "cuda/nope"]) == 2
    err = capsys.readouterr().err
    assert "unknown variant" in err and "cuda/v3-sequential" in err


def test_unknown_dtype(capsys):
    assert main(["check", "--dtype", "float99"]) == 2
    assert "float32" in capsys.readouterr().err


def test_bad_size_exit_code(capsys):
    assert main(["check", "--sizes", "0"]) == 2
    assert "at least 1" in capsys.readouterr().err


@pytest.mark.skipif(device.gpu_available(), reason="exercises the no-GPU path")
def test_cpu_path_runs_and_says_timings_need_a_gpu(tmp_path, capsys):
    out = tmp_path / "cpu.json"
    rc = main(
        [
            "check",
            "--sizes",
            "1,257",
            "--variants",
            "triton/tile-256,triton/chunked-1024",
            "--json",
            str(out),
        ]
    )
    text = capsys.readouterr().out
    assert rc == 0, text
    assert "Timings need an NVIDIA GPU" in text
    doc = json.loads(out.read_text())
    results = load_document(out).results  # the cases joined from the rows
    assert doc["mode"] == "cpu" and len(results) == 4
    assert all(r.status == "ok" for r in results)


@pytest.mark.skipif(device.gpu_available(), reason="exercises the no-GPU path")
def test_default_command_without_gpu_does_not_crash(capsys):
    rc = main(["--sizes", "257", "--variants", "triton/tile-256"])
    assert rc == 0
    assert "No GPU" in capsys.readouterr().out
