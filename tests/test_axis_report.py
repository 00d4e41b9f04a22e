"""The axis suite's case list and its report (harness.studies.axis_bench and
harness.report.axis_tables), on made-up rows: the pivot, the ratios, and each target's verdict,
met and missed; and one small case measured on the GPU."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from harness.report import axis_tables, run_report
from harness.report.records import Row
from harness.studies import axis_bench


def _row(variant: str, ms: float, shape=(1024, 64), dim=1, dtype="float32", nbytes=None) -> Row:
    read = math.prod(shape) * 4
    cfg = f"{'x'.join(map(str, shape))} dim={dim}"
    return Row(device="GPU", suite="axis", variant=variant, config=cfg, dtype=dtype, shape=shape,
               metric="total", median_ms=ms, bytes=nbytes or read)  # fmt: skip


def _case(shape, dim, pair_ms, torch_ms, copy_ms, triton_ms=None) -> list[Row]:
    read = math.prod(shape) * 4
    return [
        _row("cuda/axis-r2-warp-row", pair_ms * 1.5, shape, dim),
        _row("triton/axis-r2-warp-row", pair_ms * 2, shape, dim),
        _row("cuda/axis-fastest", pair_ms, shape, dim),
        _row("triton/axis-fastest", triton_ms or pair_ms, shape, dim),
        _row("peer/torch.sum", torch_ms, shape, dim),
        _row("peer/cupy.sum", torch_ms * 2, shape, dim),
        _row("copy", copy_ms, shape, dim, nbytes=2 * read),
    ]


def test_lines_pivot_the_rows_per_shape() -> None:
    rows = [*_case((1024, 64), 1, 0.01, 0.02, 0.016), _row("x", 1.0, (4, 4), 0, dtype="int32")]
    rows.append(Row("GPU", "fastest-bench", "cuda/fastest", "", "float32", 10, "total", 1.0))
    ls = axis_tables.lines(rows)
    assert [(ln.dtype, ln.shape, ln.dim) for ln in ls] == [
        ("float32", (1024, 64), 1), ("int32", (4, 4), 0)]  # fmt: skip
    ln = ls[0]
    assert ln.best("cuda/axis-") == ("cuda/axis-fastest", 0.01)
    assert ln.best("triton/axis-") == ("triton/axis-fastest", 0.01)
    assert ln.ratio("peer/torch.sum") == pytest.approx(2.0)
    assert ln.read_limit == pytest.approx(0.8)  # half the copy's 16 us over the pair's 10 us
    assert ln.read_bytes == 1024 * 64 * 4
    assert math.isnan(ls[1].pair_ms)  # nothing of ours timed there


def test_targets_met_and_missed_with_their_size() -> None:
    big = (2**20, 64)  # 256 MiB: counts in the geomean
    met = axis_tables.targets(axis_tables.lines(_case(big, 1, 1.0, 2.0, 2.0)))
    assert all("met on all 1" in t for t in (met[0], met[1], met[3])), met
    assert "100.0% over 1 cases" in met[2]
    missed = axis_tables.lines(_case(big, 1, 1.0, 1.2, 1.0, triton_ms=1.25))
    verdicts = axis_tables.targets(missed)
    assert "missed on 1 of 1" in verdicts[1] and "1.20x" in verdicts[1]  # short rows: 1.5x
    assert "short by 35.0% points" in verdicts[2]  # 50% of the limit against 85%
    assert "missed on 1 of 1" in verdicts[3] and "0.80x" in verdicts[3]
    assert "met on all 1" in verdicts[0]  # 1.2x >= 1.00x
    # a wide row is not held to the 1.5x target
    wide = axis_tables.targets(axis_tables.lines(_case((64, 4096), 1, 1.0, 1.2, 2.0)))
    assert "no shape measured" in wide[1]


def test_markdown_and_plot(tmp_path) -> None:
    rows = _case((1024, 64), 1, 0.01, 0.02, 0.016) + _case((4096, 4096), 0, 0.1, 0.12, 0.2)
    text = axis_tables.markdown(rows, "GPU")
    assert (
        "| float32 1024x64 dim 1 | fastest 10.0 | fastest 10.0 | 10.0 | 2.00x | - | 4.00x |" in text
    )
    assert "| float32 4096x4096 dim 0 |" in text
    axis_tables.plot(rows, tmp_path / "axis.png", "GPU")
    assert (tmp_path / "axis.png").stat().st_size > 1000


def test_the_axis_suite_cases_and_configs() -> None:
    from harness.studies import suites

    got = suites.cases("axis", variants=["cuda/axis-fastest", "peer/cupy.sum"],
                       dtypes=["float32", "bfloat16"])  # fmt: skip
    issue = axis_bench.SHAPE_SETS["reference"]
    assert len(got) == len(issue) * 3  # cupy.sum has no bfloat16
    first = got[0]
    assert (first.variant, first.dtype, first.config) == ("cuda/axis-fastest", "float32",
                                                          "1048576x64 dim=1")  # fmt: skip
    assert first.n == 2**26 and first.id.startswith("axis-float32-")
    assert axis_bench.parse_config("8x16x4 dim=1") == ((8, 16, 4), 1)
    assert axis_bench.config((8, 16, 4), 1) == "8x16x4 dim=1"
    assert set(axis_bench.subjects()) >= {"cuda/axis-r0-thread-row", "peer/torch.sum", "copy"}


def test_the_segmented_peer_takes_2d_rows_only_and_says_why_not(monkeypatch) -> None:
    """cuda.compute's segmented reduce: no bfloat16 case; a column or middle-dim sum, or a
    machine without cuda.compute, gives a "skipped" row with the reason (how to install it),
    before any input is made (so this runs on the CPU), never an error."""
    import sys

    from harness.studies import session, suites

    assert not axis_bench.supports(axis_bench.CCCL, "bfloat16")
    assert axis_bench.supports(axis_bench.CCCL, "int32")
    for cfg in ("4096x64 dim=0", "8x4096x8 dim=1"):
        (row,) = axis_bench.measure(axis_bench.CCCL, "float32", cfg, suites.common("axis"))
        assert row.check == "skipped" and "rows of a 2-D tensor" in row.info["message"]
    monkeypatch.setitem(sys.modules, "cuda.compute", None)  # not installed, whatever is here
    (row,) = axis_bench.measure(axis_bench.CCCL, "int32", "4096x64 dim=1", suites.common("axis"))
    assert row.check == "skipped" and row.median_ms is None
    assert "not installed" in row.info["message"] and "[cccl]" in row.info["message"]
    assert not session.failed([row])


def test_measure_on_the_gpu() -> None:
    from harness.core import device
    from harness.studies import suites

    ok, why = device.torch_gpu()
    if not ok:
        pytest.skip(f"needs an NVIDIA GPU: {why}")
    cfg = axis_bench.config((512, 64), 1)
    rows = [r for v in (*axis_tables.FASTEST, "peer/torch.sum", "peer/torch.compile", "copy",
                        "cuda/axis-c0-thread-column")
            for r in axis_bench.measure(v, "float32", cfg, suites.common("axis"))]  # fmt: skip
    by = {r.variant: r for r in rows}
    assert {by[v].check for v in axis_tables.FASTEST} == {"ok"}
    assert all(by[v].median_ms > 0 and by[v].reps >= 1 for v in by if by[v].check != "skipped")
    assert by["copy"].bytes == 2 * 512 * 64 * 4
    assert by["cuda/axis-fastest"].bytes == 512 * 64 * 4 + 512 * 4
    (ln,) = axis_tables.lines(rows)
    assert ln.read_limit > 0 and ln.ratio("peer/torch.sum") > 0


@pytest.mark.parametrize("device", ["nvidia-h100", "nvidia-h200"])
def test_the_committed_axis_report_regenerates_from_its_runs(device, tmp_path):
    """results/<device>/report/axis.md is what `reduce-ladder report ... --axis RUNS` writes from
    the committed runs it names (its last line), byte for byte; each run was measured on that
    device with 0 wrong sums."""
    root = Path(__file__).resolve().parents[1] / "results" / device
    committed = (root / "report" / "axis.md").read_text()
    names = re.findall(r"`([^`]+\.json)`", committed.splitlines()[-1])
    assert names and names[0] == "axis.json"
    runs = [root / n for n in names]
    rows = axis_tables.load(*runs)
    assert {r.device for r in rows} == {rows[0].device} and device.split("-")[1] in rows[
        0
    ].device.lower()
    assert not [r for r in rows if r.check in ("wrong", "error")]
    run_report.write_page(run_report.PAGES["axis"], runs, rows, tmp_path, [])
    assert (tmp_path / "axis.md").read_text() == committed


def test_a_stage_that_refuses_the_shape_is_skipped_and_any_other_error_is_raised(monkeypatch):
    """The suite's "skipped" is for a shape the stage does not take (axis_plan.check's refusal),
    said before the check runs; an error inside the check (a launch's TypeError) is raised, so
    the runner makes it the case's "error" row, never a skip that hides a failure."""
    import torch

    from harness.check import axis_verify
    from harness.studies import session, suites

    monkeypatch.setattr(axis_bench, "input_for", lambda shape, dtype: torch.ones(shape))
    v = "triton/axis-r2-warp-row"  # a row stage: a column sum is not one it takes
    (row,) = axis_bench.measure(v, "float32", "64x512 dim=0", suites.common("axis"))
    assert row.check == "skipped" and row.median_ms is None and not session.failed([row])

    def broken(*args, **kwargs):
        raise TypeError("launch() missing 1 required positional argument")

    monkeypatch.setattr(axis_verify, "check_axis", broken)
    with pytest.raises(TypeError, match="missing 1 required"):
        axis_bench.measure(v, "float32", "64x512 dim=1", suites.common("axis"))
