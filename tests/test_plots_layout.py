"""The plots as a reader meets them: a linear bandwidth axis (large n, where the stages differ,
not squeezed), an x label and a legend on every panel, and in the device comparison one y range
for every panel, capped so one outlier squeezes nothing."""

from pathlib import Path

import pytest

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


def test_chart_draws_rows_by_hue_and_panel(tmp_path):
    """A line per hue, sorted by x, a panel per value, and a PNG written."""
    rows = [{"variant": v, "dtype": d, "n": n, "median_ms": ms} for v, d, n, ms in [
        ("a", "float32", 2**20, 2.0), ("a", "float32", 2**10, 1.0), ("b", "float32", 2**10, 3.0),
        ("a", "int32", 2**10, 4.0)]]  # fmt: skip
    drawn = plots.chart(rows, tmp_path / "c.png", x="n", y="median_ms", hue="variant",
                        panel="dtype", xscale="log2", yscale="log")  # fmt: skip
    assert drawn == {"float32": {"a": [(2**10, 1.0), (2**20, 2.0)], "b": [(2**10, 3.0)]},
                     "int32": {"a": [(2**10, 4.0)]}}  # fmt: skip
    assert (tmp_path / "c.png").stat().st_size > 1000


def test_chart_sets_bars_of_a_category_side_by_side(tmp_path, monkeypatch):
    saved = {}
    monkeypatch.setattr(plots, "save", lambda fig, path, **kw: saved.setdefault("fig", fig))
    rows = [{"x": c, "bar": b, "y": 1.0} for b in ("CUDA", "Triton") for c in ("p", "q")]
    plots.chart(rows, tmp_path / "b.png", x="x", y="y", hue="bar", kind="bar",
                refs=[(2.0, "peer", {"color": "black"})])  # fmt: skip
    (ax,) = saved["fig"].axes
    centres = sorted(p.get_x() + p.get_width() / 2 for p in ax.patches)
    assert centres == pytest.approx([-0.2, 0.2, 0.8, 1.2])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["p", "q"]
    legend = {t.get_text() for t in ax.get_legend().get_texts()}  # matplotlib: lines first
    assert legend == {"CUDA", "Triton", "peer"}
