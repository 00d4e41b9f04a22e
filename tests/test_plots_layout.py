"""The plots as a reader meets them: no empty grid cells beyond the peers' legend, a linear
bandwidth axis (large n, where the stages differ, not squeezed), an x label on every panel, and
in the device comparison one y range for every panel, capped so one outlier squeezes nothing."""

import math
from pathlib import Path

import pytest

from harness.report import devices, plots
from harness.report.documents import load_run

DATA = Path(__file__).parent / "data" / "synthetic_run_cli.json"


@pytest.mark.parametrize("panels", range(3, 12))
def test_grid_has_the_fewest_spare_cells_one_for_the_legend(panels):
    rows, cols = plots.grid_shape(panels)
    spare = rows * cols - panels
    assert spare == min(math.ceil((panels + 1) / c) * c - panels for c in (3, 4)) >= 1
    assert plots.grid_shape(7) == (2, 4)  # the committed float32 figure: no empty cell


def test_bandwidth_plot_is_linear_with_x_labels_everywhere(tmp_path, monkeypatch):
    import matplotlib.figure

    saved = {}
    monkeypatch.setattr(plots, "save", lambda fig, path, **kw: saved.setdefault("fig", fig))
    drawn = plots.plot_bandwidth_vs_n(load_run(DATA), "float32", tmp_path / "b.png")
    fig: matplotlib.figure.Figure = saved["fig"]
    panels = [ax for ax in fig.axes if ax.get_title()]
    assert len(panels) == len(drawn["panels"])
    assert all(ax.get_yscale() == "linear" and ax.get_xlabel() == "log2 n" for ax in panels)
    spare = [ax for ax in fig.axes if ax.get_visible() and not ax.get_title()]
    assert len(spare) == 1 and spare[0].get_legend().get_title().get_text() == "on every panel"


def test_compare_y_range_is_shared_and_capped():
    rows = [devices.DeviceRow.__new__(devices.DeviceRow) for _ in range(2)]
    for r, ratio in zip(rows, (0.8, 4.0), strict=True):
        object.__setattr__(r, "ratios", [ratio])
    lo, hi = plots.y_range(rows, [0.7])
    assert lo < 0.65 and hi == plots.CAP
