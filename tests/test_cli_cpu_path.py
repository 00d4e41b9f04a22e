"""`run` / `check` without a GPU: what the CPU path checks, and that a run which would check
nothing is a usage error (exit 2, saying why), never "passed"."""

import json

import pytest

from harness.cli.main import main
from harness.compile import nvrtc
from harness.core import device
from harness.report.documents import load_document

pytestmark = pytest.mark.skipif(device.gpu_available(), reason="exercises the no-GPU path")


def test_sizes_above_the_interpreter_limit_are_a_usage_error_when_nothing_is_left(capsys):
    assert main(["run", "--sizes", "2^24", "2^25"]) == 2
    captured = capsys.readouterr()
    assert "2^24, 2^25" in captured.err and "2^16" in captured.err
    assert "passed" not in captured.out


def test_a_size_past_any_limit_is_named(capsys):
    assert main(["check", "--sizes", "2^40"]) == 2
    err = capsys.readouterr().err
    assert "2^40" in err and "2^16" in err


def test_sizes_above_the_limit_are_named_and_the_rest_run(tmp_path, capsys):
    out = tmp_path / "cpu.json"
    argv = ["check", "--variants", "triton/tile-256", "--sizes", "1000,2^20", "--json", str(out)]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "above the interpreter's limit of 2^16 skipped: 2^20" in text
    assert "1 Triton twin under" in text and "1 Triton twins" not in text
    doc = json.loads(out.read_text())
    results = load_document(out).results  # the cases joined from the rows
    assert [(r.variant, r.n) for r in results] == [("triton/tile-256", 1000)]
    assert doc["compile"] == []  # a Triton variant named alone: no CUDA source to compile


def test_a_cuda_variant_runs_its_twin_interpreted_and_compiles_its_source(tmp_path, capsys):
    out = tmp_path / "cpu.json"
    rc = main(["check", "--variants", "cuda/v3-sequential", "--sizes", "257", "--json", str(out)])
    text = capsys.readouterr().out
    assert rc == 0, text
    assert "its Triton twin triton/tile-256 runs interpreted" in text
    assert "its source sequential.cu is compiled by NVRTC" in text
    doc = json.loads(out.read_text())
    results = load_document(out).results  # the cases joined from the rows
    assert [r.variant for r in results] == ["triton/tile-256"]
    assert all(r.status == "ok" for r in results)
    assert [c["source"] for c in doc["compile"]] == ["sequential.cu"]
    if nvrtc.available():
        assert doc["compile"][0]["status"] == "ok"
        assert "CPU path passed: 1 interpreted check, 1 source compiled" in text


def test_only_peers_on_the_cpu_is_a_usage_error(capsys):
    assert main(["check", "--variants", "peer/torch.sum", "peer/copy"]) == 2
    assert "peers are library calls on the GPU" in capsys.readouterr().err


def test_study_004_checks_its_twins_and_compiles_only_its_source(tmp_path, capsys):
    out = tmp_path / "s.json"
    assert main(["check", "--study", "004", "--sizes", "300", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    results = load_document(out).results  # the cases joined from the rows
    assert {r.variant for r in results} == {
        "triton/tile-256",
        "triton/quad-adjacent-256",
    }
    assert [c["source"] for c in doc["compile"]] == ["unroll_blocks.cu"]


def test_wide_adds_the_result_and_the_golden_on_the_cpu_too(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    argv = ["check", "--variants", "triton/tile-256", "--sizes", "1000"]
    assert main(argv) == 0
    compact = capsys.readouterr().out
    assert main([*argv, "--wide"]) == 0
    wide = capsys.readouterr().out
    assert "golden" not in compact and "result" not in compact
    assert "golden" in wide and "result" in wide and "tolerance" in wide
