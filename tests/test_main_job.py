"""The main job's selection and what it prints while it runs (the GPU simulated: the session's
rows are made here): the torch.compile peers, whose first call compiles for seconds, run only when
named or with --all; a progress bar (on a terminal only) replaces a line per row, and a row that
is not ok is still printed as it happens."""

import argparse

import pytest

from harness.cli import run
from harness.cli.main import main
from harness.core import catalogue
from harness.report import records
from harness.studies import session

LEFT_OUT = [v.id for v in catalogue.VARIANTS if not v.by_default]


def test_the_compile_demonstrations_are_the_ones_left_out():
    assert sorted(LEFT_OUT) == sorted(catalogue.COMPILE_IDS)


def _ids(argv: list[str]) -> list[str]:
    p = argparse.ArgumentParser()
    run.selection_arguments(p)
    return [v.id for v in run.resolve(p.parse_args(argv)).variants]


def test_default_selection_leaves_them_out_all_and_naming_bring_them_back():
    default = _ids([])
    assert default and not set(LEFT_OUT) & set(default)
    everything = _ids(["--all"])
    assert set(LEFT_OUT) <= set(everything) and set(default) < set(everything)
    assert _ids(["--variants", LEFT_OUT[0]]) == [LEFT_OUT[0]]


@pytest.fixture
def simulated_gpu(monkeypatch):
    seen: list[tuple[str, int]] = []

    def check_and_time(v, dtype, n, common, *, timed=True, reps=None):
        seen.append((v.id, n))
        status = "wrong" if v.id == "cuda/v3-sequential" else "ok"
        return [records.Row(**common, variant=v.id, config="", dtype=dtype, shape=n,
                            metric="check", median_ms=None, check=status)]  # fmt: skip

    monkeypatch.setattr(run.device, "gpu_available", lambda: True)
    monkeypatch.setattr(run.device, "cupy_gpu", lambda: (True, ""))
    monkeypatch.setattr(run.device, "device_info", lambda: {"name": "sim"})
    monkeypatch.setattr(session, "check_and_time", check_and_time)
    return seen


def test_rows_are_not_printed_one_by_one_but_a_wrong_one_is(simulated_gpu, capsys, monkeypatch):
    monkeypatch.setattr(run, "gpu_sizes", lambda sel, timed: ([4096], []))
    assert main(["check", "--variants", "cuda/v2-strided-index,cuda/v3-sequential"]) == 1
    out = capsys.readouterr().out
    assert simulated_gpu == [("cuda/v2-strided-index", 4096), ("cuda/v3-sequential", 4096)]
    assert "cuda/v3-sequential n=4,096: wrong" in out
    assert "cuda/v2-strided-index n=4,096" not in out  # an ok row: only in the table
