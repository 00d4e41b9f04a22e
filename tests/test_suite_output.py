"""What `python -m pytest` prints on a machine without a GPU: one line per skip reason (not one
per test file), and no warning from a test whose point is a NaN."""

import subprocess
import sys
from pathlib import Path

import pytest

from harness.core import device

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(device.torch_gpu()[0], reason="the GPU tests run on this machine")
def test_gpu_skips_are_one_line_and_nan_tests_do_not_warn():
    files = ["tests/test_gpu_accuracy.py", "tests/test_gpu_sanitize.py", "tests/test_bad_input.py"]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *files],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:]
    skipped = [line for line in done.stdout.splitlines() if line.startswith("SKIPPED")]
    assert len(skipped) == 1, skipped
    assert "tests/conftest.py: needs an NVIDIA GPU" in skipped[0]
    assert "warning" not in done.stdout.splitlines()[-1]
