"""What a new user meets first: every --help names `reduce-ladder COMMAND` and keeps its
paragraphs, an unknown command is named as such, empty or negative selections are usage errors,
--quiet is quiet, and the CPU path says what it compiled."""

import pytest

from harness.cli import run
from harness.cli.main import build_parser, command_names, main
from harness.compile import nvrtc
from harness.core import device


def _out_err(capsys) -> tuple[str, str]:
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    return captured.out, captured.err


@pytest.mark.parametrize("command", command_names(build_parser()))
def test_every_help_names_reduce_ladder_command(command, capsys):
    assert main([command, "--help"]) == 0
    out, _ = _out_err(capsys)
    assert out.startswith(f"usage: reduce-ladder {command} ")
    assert "python" not in out.split("\n\n")[0]


@pytest.mark.parametrize("command", ["fastest-bench", "ablation"])
def test_study_help_keeps_the_docstring_paragraphs(command, capsys):
    from experiments.fastest_ablation import experiment as fastest_ablation
    from harness.cli import bench

    doc = {"fastest-bench": bench.FASTEST_DOC, "ablation": fastest_ablation.__doc__}[command]
    assert main([command, "--help"]) == 0
    out, _ = _out_err(capsys)
    paragraphs = [p for p in doc.split("\n\n") if p.strip()][:3]
    for p in paragraphs:  # each as written, a paragraph of its own (not run into one)
        assert "\n\n" + p.splitlines()[0] + "\n" in out
    assert f"    reduce-ladder {command} --json" in out


def test_unknown_command_lists_the_commands(capsys):
    assert main(["frobnicate"]) == 2
    _, err = _out_err(capsys)
    assert "unknown command 'frobnicate'" in err and "unrecognized" not in err
    assert all(c in err for c in ("run", "check", "report", "distributed"))


def test_misspelt_command_is_suggested(capsys):
    assert main(["reprot"]) == 2
    assert "did you mean report?" in _out_err(capsys)[1]


def test_options_without_a_command_still_run(capsys):
    assert main(["--sizes", "0"]) == 2  # `run --sizes 0`: a usage error of run's, not a command
    assert "at least 1" in _out_err(capsys)[1]


@pytest.mark.parametrize("command", ["check", "run"])
def test_variants_with_nothing_after_it_is_a_usage_error(command, capsys):
    assert main([command, "--variants"]) == 2
    out, err = _out_err(capsys)
    assert "--variants needs at least one id" in err and out == ""


@pytest.mark.parametrize("size", ["-5", "0", "-2^4"])
def test_non_positive_size_says_at_least_1(size, capsys):
    assert main(["check", "--sizes", size]) == 2
    _, err = _out_err(capsys)
    if size != "-2^4":
        assert "at least 1" in err and "write an integer" not in err


def test_quiet_prints_only_the_verdict(capsys):
    argv = ["check", "--variants", "triton/tile-256,cuda/v3-sequential", "--sizes", "257"]
    assert main(argv) == 0
    loud, _ = _out_err(capsys)
    assert main([*argv, "--quiet"]) == 0
    quiet, _ = _out_err(capsys)
    assert len(quiet.splitlines()) == 1 < len(loud.splitlines())
    # the verdict: the CPU path's, or on a GPU the counts of the two rows checked there
    gpu = device.gpu_available()
    assert quiet.startswith("summary: {'ok': 2," if gpu else "CPU path passed: 1 interpreted check")


@pytest.mark.skipif(not nvrtc.available(), reason="needs NVRTC")
def test_cpu_path_compiles_the_demonstrations_kernels_not_zero():
    (row,) = run.compile_sources(["seed_bugs.cu"])
    assert row["status"] == "ok" and row["kernels"] > 0, row


def test_api_unknown_id_is_a_short_keyerror_with_the_close_id():
    import torch

    import harness
    from harness.core import catalogue

    with pytest.raises(KeyError) as info:
        harness.reduce_sum(torch.ones(5), "tile-256")
    text = str(info.value)
    assert "did you mean triton/tile-256?" in text
    assert len(text) < 160 and "cuda/v3-sequential" not in text  # not all 59 ids
    with pytest.raises(catalogue.UnknownVariant, match="no id is close"):
        catalogue.get("frobnicate")
