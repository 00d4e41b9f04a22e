"""The comparison report, rendered from SYNTHETIC recorded runs (tests/data/make_synthetic.py:
made-up numbers, not measurements) in both formats: its rows, its ratios, and that every plot is
a valid PNG that drew the expected series. Keeps the report from silently rotting."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli.main import main
from harness.report import build as report

DATA = Path(__file__).parent / "data"
CLI_JSON = DATA / "synthetic_run_cli.json"
BENCH_JSON = DATA / "synthetic_bench.json"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _raw_rows(path: Path) -> list[dict]:
    doc = json.loads(path.read_text())
    if "results" in doc:
        return doc["results"]
    return [b["extra_info"] for b in doc["benchmarks"]]


def _ms(rows: list[dict], vid: str, dtype: str, n: int) -> float:
    (r,) = [r for r in rows if r["variant"] == vid and r["dtype"] == dtype and r["n"] == n]
    return r["total"]["median_ms"]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> report.Rendered:
    out = tmp_path_factory.mktemp("report")
    return report.render([CLI_JSON, BENCH_JSON], out)


def _table_row(md: str, first_cells: tuple[str, ...], section: str) -> list[str]:
    """Cells of the Markdown table row starting with first_cells, within `section`."""
    text = md.split(section, 1)[1]
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if tuple(cells[: len(first_cells)]) == first_cells:
            return cells
    raise AssertionError(f"no row {first_cells} after {section!r}")


def test_both_formats_load_to_the_same_rows():
    a, b = report.load_run(CLI_JSON), report.load_run(BENCH_JSON)
    assert a.kind == "cli" and b.kind == "pytest-benchmark"
    key = {(r["variant"], r["dtype"], r["n"]) for r in a.rows if not r["wrong_demo"]}
    assert key == {(r["variant"], r["dtype"], r["n"]) for r in b.rows}
    assert a.dtypes() == b.dtypes() == ["float32", "int32"]
    small = [r for r in b.rows if r["n"] <= 2**20]
    assert small and all(r["graph_ms"] and r["call_ms"] > r["graph_ms"] for r in small)


def test_ladder_table_rows_and_ratios(rendered):
    md = rendered.markdown.read_text()
    raw = _raw_rows(CLI_JSON)
    n = rendered.ref_n["float32"]
    assert n == 2**24  # the largest size <= 2^25 in the fixture
    section = "## float32"
    ids = {r["variant"] for r in raw if r["dtype"] == "float32" and r["backend"] == "cuda"}
    for vid in ids:
        cells = _table_row(md, (raw_stage(raw, vid), vid.removeprefix("cuda/")), section)
        assert cells[7] != "-" or vid.endswith("nosync"), cells  # its Triton twin is beside it
    t = _ms(raw, "cuda/v8-shuffle-strided", "float32", n)
    cells = _table_row(md, ("8", "v8-shuffle-strided"), section)
    cub = _ms(raw, "peer/cupy.sum-cub", "float32", n)
    tor = _ms(raw, "peer/torch.sum", "float32", n)
    assert cells[2] == f"{t * 1e3:.1f}"
    assert cells[5] == f"{cub / t:.2f}" and cells[6] == f"{tor / t:.2f}"
    (r,) = [
        r
        for r in raw
        if r["variant"] == "cuda/v8-shuffle-strided" and r["n"] == n and r["dtype"] == "float32"
    ]
    (c,) = [
        r for r in raw if r["variant"] == "peer/copy" and r["n"] == n and r["dtype"] == "float32"
    ]
    assert cells[4] == f"{100 * r['gbps_total'] / c['gbps_total']:.0f}"
    assert cells[7] == "grid-stride-1024"
    for peer in report.PEER_ORDER:  # the peers are rows of the ladder table too
        assert _table_row(md, ("peer", peer), section)
    demo = _table_row(md, ("5", "v5-wrong-nosync"), section)
    assert demo[-1] == "race showed (wrong)"


def raw_stage(raw: list[dict], vid: str) -> str:
    return next(r["stage"] for r in raw if r["variant"] == vid)


def test_sweep_covers_every_variant_and_size(rendered):
    md = rendered.markdown.read_text()
    run = rendered.runs[0]
    for dtype in ("float32", "int32"):
        section = f"## {dtype}"
        body = md.split(section, 1)[1]
        for vid in {r["variant"] for r in run.rows if r["dtype"] == dtype}:
            cells = _table_row(body, (vid,), "Effective GB/s")
            assert len(cells) == 1 + len(run.sizes(dtype))
        assert "Small sizes: launch overhead" in body
    assert "SYNTHETIC TEST DATA" in md


def _valid_png(path: Path) -> None:
    import matplotlib.image

    assert path.read_bytes()[:8] == PNG_SIGNATURE
    img = matplotlib.image.imread(path)
    assert img.ndim == 3 and img.shape[0] > 200 and img.shape[1] > 200


def test_plots_are_pngs_with_the_expected_series(rendered):
    run = rendered.runs[0]
    peers = [report.PEER_LABELS[p] for p in report.PEER_ORDER]
    expected = {"report.md"} | set(rendered.plots)
    assert {p.name for p in rendered.out_dir.iterdir()} == expected
    for dtype in ("float32", "int32"):
        bw = rendered.plots[f"bandwidth_vs_n_{dtype}.png"]
        _valid_png(Path(bw["path"]))
        for backend in ("cuda", "triton"):
            ids = {
                r["variant"].split("/", 1)[1]
                for r in run.rows
                if r["backend"] == backend and r["dtype"] == dtype and not r["wrong_demo"]
            }
            assert set(bw["lines"][backend]) == ids | set(peers)
        lad = rendered.plots[f"ladder_{dtype}_log2n24.png"]
        _valid_png(Path(lad["path"]))
        assert lad["bars"] == ["CUDA", "Triton twin"]
        assert lad["lines"] == peers
        cuda = {
            r["variant"].split("/", 1)[1]
            for r in run.rows
            if r["backend"] == "cuda" and r["dtype"] == dtype and not r["wrong_demo"]
        }
        assert set(lad["categories"]) == cuda
    cmp = rendered.plots["compare.png"]
    _valid_png(Path(cmp["path"]))
    assert cmp["series"] == ["float32", "int32"]
    assert "peer/copy" in cmp["variants"] and "cuda/v0-gmem-interleaved" in cmp["variants"]


def test_comparison_ratios(rendered):
    md = rendered.markdown.read_text()
    a, b = _raw_rows(CLI_JSON), _raw_rows(BENCH_JSON)
    vid, n = "triton/chunked-1024", 2**24
    ratio = _ms(a, vid, "float32", n) / _ms(b, vid, "float32", n)
    cells = _table_row(md, (vid,), "## Comparison")
    assert cells[3] == f"{ratio:.2f}" and ratio > 1  # the synthetic GPU B is faster


def test_cli_report_prints_the_table_and_updates_the_readme(tmp_path, capsys):
    readme = tmp_path / "README.md"
    readme.write_text("# x\n\nbefore\n<!-- ladder:begin -->\nold\n<!-- ladder:end -->\nafter\n")
    out = tmp_path / "rep"
    rc = main(
        ["report", str(BENCH_JSON), "--out", str(out), "--n", "2^20", "--readme", str(readme)]
    )
    text = capsys.readouterr().out
    assert rc == 0, text
    assert "SYNTHETIC-GPU-B" in text and "v8-shuffle-strided" in text
    new = readme.read_text()
    assert new.startswith("# x\n\nbefore\n<!-- ladder:begin -->") and new.endswith("after\n")
    assert "old" not in new and "generated by: reduce-ladder report" in new
    assert "| 8 | v8-shuffle-strided |" in new
    assert (
        "(rep/bandwidth_vs_n_float32.png)" in new and (out / "ladder_float32_log2n20.png").exists()
    )


@pytest.mark.parametrize(
    "content,needle",
    [
        (None, "no such file"),
        ("{not json", "not valid JSON"),
        ('{"schema": "something/else"}', "unknown format"),
        ('{"machine_info": {}, "benchmarks": []}', "without reduce-ladder benchmarks"),
    ],
)
def test_bad_inputs_exit_2_with_a_message(tmp_path, capsys, content, needle):
    path = tmp_path / "run.json"
    if content is not None:
        path.write_text(content)
    assert main(["report", str(path), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err


def test_unwritable_out_and_missing_markers_exit_2(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main(["report", str(CLI_JSON), "--out", str(blocker / "sub")]) == 2
    assert "cannot write" in capsys.readouterr().err
    readme = tmp_path / "README.md"
    readme.write_text("no markers here\n")
    rc = main(["report", str(CLI_JSON), "--out", str(tmp_path / "o"), "--readme", str(readme)])
    assert rc == 2 and "<!-- ladder:begin -->" in capsys.readouterr().err
    assert readme.read_text() == "no markers here\n"


def test_host_study_renders_into_the_report(tmp_path):
    """`report --host` renders seed 001's study (here the committed H200 run) to host.md."""
    from pathlib import Path

    from harness.cli.main import main

    root = Path(__file__).resolve().parents[1]
    host = root / "results" / "nvidia-h200" / "host.json"
    bench = root / "tests" / "data" / "synthetic_bench.json"
    if not host.exists():
        pytest.skip("no committed host study")
    out = tmp_path / "rep"
    assert main(["report", str(bench), "--out", str(out), "--host", str(host)]) == 0
    text = (out / "host.md").read_text()
    assert "end-to-end time, ms" in text and "GB/s of host data reduced" in text
    assert "Finding:" in text and "adversarial input" in text
    assert text.count("| 30 |") >= 2  # the seed's largest row, log2 n = 30
    assert "host.md" in (out / "report.md").read_text()
    assert main(["report", str(bench), "--out", str(out), "--host", str(bench)]) == 2
