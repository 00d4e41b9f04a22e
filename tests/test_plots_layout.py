"""The plots as a reader meets them: a linear bandwidth axis (large n, where the stages differ,
not squeezed), an x label and a legend on every panel, and in the device comparison one y range
for every panel, capped so one outlier squeezes nothing."""

from pathlib import Path

from harness.report import devices, plots
from harness.report.documents import load_run

DATA = Path(__file__).parent / "data" / "synthetic_run_cli.json"


def test_bandwidth_plot_is_linear_with_x_labels_everywhere(tmp_path, monkeypatch):
    import matplotlib.figure

    saved = {}
    monkeypatch.setattr(plots, "save", lambda fig, path, **kw: saved.setdefault("fig", fig))
    drawn = plots.plot_bandwidth_vs_n(load_run(DATA), "float32", tmp_path / "b.png")
    fig: matplotlib.figure.Figure = saved["fig"]
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in panels] == [p["title"] for p in drawn["panels"]]
    assert all(ax.get_yscale() == "linear" and ax.get_xlabel() == "n" for ax in panels)
    assert all(ax.get_xscale() == "log" and ax.get_ylim()[0] == 0 for ax in panels)
    for ax, p in zip(panels, drawn["panels"], strict=True):
        assert [t.get_text() for t in ax.get_legend().get_texts()] == p["lines"]


def test_compare_y_range_is_shared_and_capped():
    rows = [devices.DeviceRow.__new__(devices.DeviceRow) for _ in range(2)]
    for r, ratio in zip(rows, (0.8, 4.0), strict=True):
        object.__setattr__(r, "ratios", [ratio])
    lo, hi = plots.y_range(rows, [0.7])
    assert lo < 0.65 and hi == plots.CAP
