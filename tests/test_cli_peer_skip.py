"""The main job on a GPU where an optional peer is not installed (cuda.compute without the cccl
extra): its rows are shown as skipped, not ERROR; one line says how to add it; exit 0. The legend
of the ladder table is printed once, not once per size. The GPU is simulated: the session's rows
come from the synthetic run document, and the peers' records from the real session code."""

import dataclasses
import json
import sys
from pathlib import Path

import pytest

from harness.cli import run
from harness.cli.main import main
from harness.core import catalogue
from harness.report.documents import load_document
from harness.studies import session

DATA = Path(__file__).parent / "data" / "synthetic_run_cli.json"
SIZES = [2**16, 2**20]


@pytest.fixture
def simulated_gpu(monkeypatch):
    monkeypatch.setitem(sys.modules, "cuda.compute", None)  # not installed, whatever is here
    doc = json.loads(DATA.read_text())
    cccl = [catalogue.get(i) for i in catalogue.CCCL_IDS]
    common = {"device": "sim", "suite": "ladder", "versions": ()}
    missing = {i: session.check_and_time(v, "float32", 1000, common) for i, v in zip(
        catalogue.CCCL_IDS, cccl, strict=True)}  # fmt: skip

    cases: dict[tuple, list] = {}  # (variant, dtype, n) -> its rows
    for r in load_document(DATA).rows:
        cases.setdefault((r.variant, r.dtype, r.n), []).append(r)
    cases |= {(i, "float32", n): [dataclasses.replace(r, shape=n) for r in rs]
              for i, rs in missing.items() for n in SIZES}  # fmt: skip

    def run_cases(found, reps=None, progress=None, timed=True, rounds=1, saved=None):
        # the runner: each case's rows
        return [r for c in found for r in cases.get((c.variant, c.dtype, c.n), [])]

    monkeypatch.setattr(run.device, "gpu_available", lambda: True)
    monkeypatch.setattr(run.device, "cupy_gpu", lambda: (True, ""))
    monkeypatch.setattr(run, "gpu_sizes", lambda sel, timed: (SIZES, []))
    monkeypatch.setattr(run.device, "device_info", lambda: doc["device"])
    monkeypatch.setattr(run.suites, "run", run_cases)


def test_missing_optional_peer_is_skipped_not_an_error(simulated_gpu, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["run", "--dtype", "float32"]) == 0
    out = capsys.readouterr().out
    assert "ERROR" not in out and " error" not in out
    hints = [line for line in out.splitlines() if ".[cccl]" in line]
    assert len(hints) == 1, hints  # one line, not one per row
    assert hints[0].strip().startswith("skipped " + ", ".join(catalogue.CCCL_IDS))
    assert "'skipped': 4" in out  # the summary counts them apart


def test_the_legend_is_printed_once_for_several_sizes(simulated_gpu, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["run", "--dtype", "float32"]) == 0
    out = capsys.readouterr().out
    v = catalogue.get("cuda/v3-sequential")
    legend_lines = [line for line in out.splitlines() if v.change[:40] in line]
    assert len(legend_lines) == 1
    assert out.count("n = 65,536") == 1 and out.count("n = 1,048,576") == 1
