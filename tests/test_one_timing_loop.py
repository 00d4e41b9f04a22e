"""One module holds a timing loop: harness/core/timing.py. No other module of the product makes a
timing CUDA event (torch.cuda.Event(enable_timing=True)) or reads the host's perf_counter; they
call timing's functions (time_ms, graph_ms, call_ms, loop_ms, serial_ms, trips). Checked on the
source with `ast`; the checker is tried on snippets first, so a pass is known to be able to fail.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("harness", "benchmarks", "triton_kernels", "porting", "experiments")
TIMING = "harness/core/timing.py"
# The modules still allowed a timing loop of their own, each with why (the list only shrinks):
ALLOWED = {
    # the same study's progress line: seconds since the start, printed, not a measurement
    "harness/studies/distributed.py",
}
# experiments/ are one-off studies whose findings are recorded; where their loop is what they
# study (the call profile's nanoseconds per step) it stays theirs. Nothing in the product
# imports them (tests/test_layout.py).
ALLOWED_FOLDERS = ("experiments/",)


def timing_calls(source: str) -> list[int]:
    """Lines that make a timing event or read perf_counter / perf_counter_ns."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            name = ast.unparse(node.func)
            if name.endswith("Event") and any(
                k.arg == "enable_timing" and ast.unparse(k.value) != "False" for k in node.keywords
            ):
                lines.append(node.lineno)
        if isinstance(node, ast.Attribute) and node.attr in ("perf_counter", "perf_counter_ns"):
            lines.append(node.lineno)
        if (
            isinstance(node, ast.ImportFrom)
            and node.module == "time"
            and any(a.name.startswith("perf_counter") for a in node.names)
        ):
            lines.append(node.lineno)
    return lines


@pytest.mark.parametrize(
    "snippet,found",
    [
        ("import torch\ne = torch.cuda.Event(enable_timing=True)", True),
        ("from torch.cuda import Event\ne = Event(enable_timing=flag)", True),
        ("import time\nt = time.perf_counter()", True),
        ("from time import perf_counter_ns", True),
        ("import torch\ne = torch.cuda.Event()", False),
        ("import torch\ne = torch.cuda.Event(enable_timing=False)", False),
        ("import time\ntime.sleep(1)", False),
    ],
)
def test_checker_finds_timing_loops(snippet, found):
    assert bool(timing_calls(snippet)) == found


def test_only_the_timing_module_times():
    bad = []
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel == TIMING or rel in ALLOWED or rel.startswith(ALLOWED_FOLDERS):
                continue
            bad += [f"{rel}:{line}" for line in timing_calls(path.read_text())]
    assert not bad, "a timing loop outside harness/core/timing.py: " + ", ".join(bad)


def test_the_timing_module_still_times_and_the_allowed_files_exist():
    assert timing_calls((ROOT / TIMING).read_text())
    for rel in ALLOWED:
        assert (ROOT / rel).is_file(), f"{rel} is gone: take it off ALLOWED"
