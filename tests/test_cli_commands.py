"""The command line's shape: every sub-command registered explicitly, the studies reachable from
the one command, and one policy for the commands that need a GPU."""

import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from harness.cli.main import COMMANDS, STUDIES, build_parser, command_names, main
from harness.core import device

ROOT = Path(__file__).resolve().parents[1]
no_gpu = pytest.mark.skipif(device.gpu_available(), reason="exercises the no-GPU path")


def test_every_command_is_registered_from_an_imported_module_or_a_study():
    assert all(isinstance(m, types.ModuleType) or m in STUDIES for m in COMMANDS)
    assert all(callable(study_main) for study_main, _ in STUDIES.values())
    assert set(command_names(build_parser())) == {
        "run",
        "check",
        "list",
        "report",
        "inspect",
        "host",
        "fastest-bench",
        "bench",
        "ablation",
        "profile",
        "sanitize",
        "accuracy",
        "compare",
        "distributed",
    }


def test_sub_commands_import_nothing_private_from_main():
    cli_dir = ROOT / "harness" / "cli"
    for path in cli_dir.glob("*.py"):
        text = path.read_text()
        assert "from harness.cli.main import _" not in text, path
        assert "import_module" not in text, path  # registration is by plain imports


@pytest.mark.parametrize("command", ["fastest-bench", "ablation"])
def test_study_help_is_its_own_parser(command, capsys):
    assert main([command, "--help"]) == 0
    out = capsys.readouterr().out
    assert "--json" in out


@no_gpu
@pytest.mark.parametrize(
    "argv",
    [
        ["host"],
        ["host", "--sizes", "2^11"],
        ["fastest-bench", "--dtypes", "float32"],
        ["ablation", "--log2", "20"],
    ],
)
def test_commands_that_need_a_gpu_exit_2_with_one_line(argv, tmp_path, capsys):
    target = tmp_path / "out.json"
    assert main([*argv, "--json", str(target)]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "needs an NVIDIA GPU" in lines[0], captured.err
    assert captured.out == ""
    assert not target.exists()


@no_gpu
def test_benchmarks_without_a_gpu_say_so_in_one_line():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "benchmarks/",
            "-q",
            "-p",
            "no:cacheprovider",
            "--bench-sizes",
            "10",
            "-k",
            "sweep and float32 and tile-256",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = [line for line in proc.stdout.splitlines() if "benchmarks need an NVIDIA GPU" in line]
    assert proc.returncode == 0 and len(lines) == 1, proc.stdout + proc.stderr  # all skipped
    assert "no timings were written" in lines[0]
