"""The comparison report, rendered from SYNTHETIC recorded runs (tests/data/make_synthetic.py:
made-up numbers, not measurements) in both formats: its rows, its ratios, and that every plot is
a valid PNG that drew the expected series. Keeps the report from silently rotting."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import warnings
from pathlib import Path

import pytest

from harness.cli.main import main
from harness.core import catalogue
from harness.report import devices, plots, records, run_report
from harness.report.documents import load_run
from harness.report.ladder_table import PEER_LABELS, PEER_ORDER, markdown_ladder

DATA = Path(__file__).parent / "data"
CLI_JSON = DATA / "synthetic_run_cli.json"
BENCH_JSON = DATA / "synthetic_bench.json"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _raw_rows(path: Path) -> list[dict]:
    """The file's whole-reduction times as written, each {variant, backend, stage, dtype, n,
    total, gbps_total} (a row's identity is the catalogue's, GB/s its bytes / time): a ROWS
    document's rows, or pytest-benchmark's (each benchmark's extra_info its case's rows)."""
    doc = json.loads(path.read_text())
    rows = doc.get("rows") or [r for b in doc["benchmarks"] for r in b["extra_info"]["rows"]]
    return [{"variant": r["variant"], "backend": catalogue.get(r["variant"]).backend,
             "stage": catalogue.get(r["variant"]).stage, "dtype": r["dtype"], "n": r["shape"],
             "total": {"median_ms": r["median_ms"]},
             "gbps_total": r["bytes"] / r["median_ms"] / 1e6}
            for r in rows if r["metric"] == "total"]  # fmt: skip


def _ms(rows: list[dict], vid: str, dtype: str, n: int) -> float:
    (r,) = [r for r in rows if r["variant"] == vid and r["dtype"] == dtype and r["n"] == n]
    return r["total"]["median_ms"]


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> run_report.WrittenReport:
    out = tmp_path_factory.mktemp("report")
    return run_report.write_report([CLI_JSON, BENCH_JSON], out)


def _table_row(md: str, first_cells: tuple[str, ...], section: str) -> list[str]:
    """Cells of the Markdown table row starting with first_cells, within `section`."""
    text = md.split(section, 1)[1]
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if tuple(cells[: len(first_cells)]) == first_cells:
            return cells
    raise AssertionError(f"no row {first_cells} after {section!r}")


def test_the_committed_bench_fixture_is_its_generators_output():
    """synthetic_bench.json is make_synthetic.bench_doc()'s output for the variants it was made
    with, field for field, but its rows' suite: "pytest-benchmark", bench/2's reader's, which
    experiments/migrate_legacy_results kept when it converted the file, where the generator
    writes the suite's name as benchmarks/test_bench.py does."""
    spec = importlib.util.spec_from_file_location("make_synthetic", DATA / "make_synthetic.py")
    make = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make)
    made, committed = make.bench_doc(), json.loads(BENCH_JSON.read_text())
    assert {**made, "benchmarks": []} == {**committed, "benchmarks": []}
    by_name = {b["name"]: b for b in made["benchmarks"]}
    for b in committed["benchmarks"]:
        rows = b["extra_info"]["rows"]
        assert {r["suite"] for r in rows} == {"pytest-benchmark"}
        ladder = [{**r, "suite": "ladder"} for r in rows]
        assert by_name[b["name"]] == {**b, "extra_info": {"rows": ladder}}, b["name"]


def test_both_formats_load_to_the_same_cases():
    a, b = load_run(CLI_JSON), load_run(BENCH_JSON)
    assert a.raw["suite"] == "ladder" and b.kind == "pytest-benchmark"
    key = {(r.variant, r.dtype, r.n) for r in a.results if not r.v.wrong}
    assert key == {(r.variant, r.dtype, r.n) for r in b.results}
    assert a.dtypes() == b.dtypes() == ["float32", "int32"]
    small = [r for r in b.results if r.n <= 2**20]
    assert small and all(r.median("call") > r.median("graph") for r in small)


def test_ladder_table_rows_and_ratios(written):
    md = written.markdown.read_text()
    raw = _raw_rows(CLI_JSON)
    n = written.ref_n["float32"]
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
    measured = {r["variant"] for r in raw}
    for peer in PEER_ORDER:  # the peers this run measured are rows of the ladder table too
        if peer in measured:
            assert _table_row(md, ("peer", peer), section)
        else:  # a peer newer than the run: no empty row
            assert f"| {peer} |" not in md
    copy = _table_row(md, ("peer", "peer/copy"), section)
    assert copy[4] == "100" and copy[5] == copy[6] == "-"  # the yardstick gets no sum ratios
    demo = _table_row(md, ("5", "v5-wrong-nosync"), section)
    assert demo[-1] == "race showed (wrong)"


def raw_stage(raw: list[dict], vid: str) -> str:
    return next(r["stage"] for r in raw if r["variant"] == vid)


def test_sweep_covers_every_variant_and_size(written):
    md = written.markdown.read_text()
    run = written.runs[0]
    for dtype in ("float32", "int32"):
        section = f"## {dtype}"
        body = md.split(section, 1)[1]
        for vid in {r.variant for r in run.results if r.dtype == dtype}:
            cells = _table_row(body, (vid,), "Effective GB/s")
            assert len(cells) == 1 + len(run.sizes(dtype))
        assert "Small sizes: launch overhead" in body
    assert "SYNTHETIC TEST DATA" in md


def _valid_png(path: Path) -> None:
    import matplotlib.image

    assert path.read_bytes()[:8] == PNG_SIGNATURE
    img = matplotlib.image.imread(path)
    assert img.ndim == 3 and img.shape[0] > 200 and img.shape[1] > 200


def test_bandwidth_panels_are_readable(written):
    """Every variant on exactly one panel, at most 8 lines a panel, the peers on each."""
    run = written.runs[0]
    peers = [PEER_LABELS[p] for p in plots.PANEL_PEERS]
    for dtype in ("float32", "int32"):
        bw = written.plots[f"bandwidth_vs_n_{dtype}.png"]
        _valid_png(Path(bw["path"]))
        drawn = [line for p in bw["panels"] for line in p["lines"] if line not in peers]
        ids = {
            r.variant
            for r in run.results
            if r.v.backend != "peer" and r.dtype == dtype and not r.v.wrong
        }
        assert sorted(drawn) == sorted(v.split("/", 1)[1] for v in ids)  # each exactly once
        for p in bw["panels"]:
            assert len(p["lines"]) <= 8 and p["lines"][-len(peers) :] == peers, p
            assert p["title"].startswith(("CUDA: ", "Triton: "))


def test_ladder_plot_and_comparison_plot(written):
    run = written.runs[0]
    peers = [PEER_LABELS[p] for p in PEER_ORDER if p in plots.PEER_STYLE]  # lines drawn
    expected = {"report.md"} | set(written.plots)
    assert {p.name for p in written.out_dir.iterdir()} == expected
    for dtype in ("float32", "int32"):
        lad = written.plots[f"ladder_{dtype}_log2n24.png"]
        _valid_png(Path(lad["path"]))
        assert lad["bars"] == ["CUDA", "Triton twin"]
        assert lad["lines"] == peers
        cuda = {
            r.variant.split("/", 1)[1]
            for r in run.results
            if r.v.backend == "cuda" and r.dtype == dtype and not r.v.wrong
        }
        assert set(lad["categories"]) == cuda
    cmp = written.plots["compare.png"]
    _valid_png(Path(cmp["path"]))
    assert {p.split(", ")[1] for p in cmp["panels"]} == {"float32", "int32"}
    assert "peer/copy" in cmp["variants"] and "cuda/v0-gmem-interleaved" in cmp["variants"]
    # titled with both runs' devices and dates
    for name, date in (("SYNTHETIC-GPU-A", "2000-01-01"), ("SYNTHETIC-GPU-B", "2000-01-02")):
        assert name in cmp["title"] and date in cmp["title"]


def test_comparison_ratios(written):
    md = written.markdown.read_text()
    a, b = _raw_rows(CLI_JSON), _raw_rows(BENCH_JSON)
    vid, n = "triton/chunked-1024", 2**24
    ratio = _ms(a, vid, "float32", n) / _ms(b, vid, "float32", n)
    cells = _table_row(md, (vid,), "## Comparison")
    assert cells[3] == f"{ratio:.2f}" and ratio > 1  # the synthetic GPU B is faster


def test_three_runs_compare_each_with_the_first(tmp_path):
    runs = [load_run(CLI_JSON), load_run(BENCH_JSON), load_run(CLI_JSON)]
    rows = [r for r in devices.device_rows(devices.run_points(runs)) if r.n == 2**24]
    rows = [r for r in rows if r.dtype == "float32"]
    row = next(r for r in rows if r.variant == "triton/chunked-1024")
    assert len(row.ms) == 3 and row.ratios[1] == 1.0 and row.ratios[0] > 1
    sizes = devices.common_sizes(runs, {"float32": 2**24, "int32": 2**20})
    md = "\n".join(devices.runs_markdown(runs, sizes))
    assert "| variant | A µs | B µs | C µs | A / B | A / C |" in md
    drawn = run_report.plot_compare(runs, {"float32": 2**24}, tmp_path / "compare.png")
    assert all(p.endswith(", float32") for p in drawn["panels"]) and drawn["title"].count("\n") == 2


def test_cli_report_prints_fitting_tables_the_comparison_and_updates_the_readme(
    tmp_path, capsys, monkeypatch
):
    """One CLI run covers the terminal (compact table within 100 columns at COLUMNS=100, its
    legend, the comparison), --readme and --host."""
    root = Path(__file__).resolve().parents[1]
    host = root / "results" / "nvidia-h200" / "host.json"
    readme = tmp_path / "README.md"
    readme.write_text("# x\n\nbefore\n<!-- ladder:begin -->\nold\n<!-- ladder:end -->\nafter\n")
    out = tmp_path / "rep"
    monkeypatch.setenv("COLUMNS", "100")
    args = ["report", str(BENCH_JSON), str(CLI_JSON), "--out", str(out), "--n", "2^20"]
    rc = main([*args, "--readme", str(readme), "--host", str(host)])
    text = capsys.readouterr().out
    assert rc == 0, text
    assert "SYNTHETIC-GPU-B" in text and "v8-shuffle-strided" in text
    assert max(len(line) for line in text.splitlines()) <= 100
    assert "× torch.sum" in text and "Triton µs" in text and "cum. ×" not in text
    # the legend says what each stage changes, and the compact table's twins
    assert "v3-sequential: " in text and "[twin tile-256]" in text
    # the comparison is printed too, not only written to report.md
    assert "A / B" in text and "SYNTHETIC-GPU-A" in text
    new = readme.read_text()
    assert new.startswith("# x\n\nbefore\n<!-- ladder:begin -->") and new.endswith("after\n")
    assert "old" not in new and "generated by: reduce-ladder report" in new
    assert "| 8 | v8-shuffle-strided |" in new
    assert (
        "(rep/bandwidth_vs_n_float32.png)" in new and (out / "ladder_float32_log2n20.png").exists()
    )
    # seed 001's host study (the committed H200 run) rendered to host.md and linked
    text = (out / "host.md").read_text()
    assert "end-to-end time, ms" in text and "GB/s of host data reduced" in text
    assert "Finding:" in text and "adversarial input" in text
    assert text.count("| 30 |") >= 2  # the seed's largest row, log2 n = 30
    assert "host.md" in (out / "report.md").read_text()
    assert main([*args, "--host", str(BENCH_JSON)]) == 2
    assert f"not a {records.ROWS_SCHEMA} document" in capsys.readouterr().err
    callable_rows = root / "results" / "nvidia-h200" / "callable-native.json"
    assert main([*args, "--host", str(callable_rows)]) == 2
    assert "rows of the callable suite, not the host study" in capsys.readouterr().err


def test_wide_terminal_table_shows_every_column():
    from rich.console import Console

    from harness.cli.main import build_parser
    from harness.report.ladder_table import ladder_console_table

    args = build_parser().parse_args(["report", str(CLI_JSON), "--out", "o", "--wide"])
    assert args.wide
    console = Console(width=250, record=True)
    console.print(ladder_console_table(load_run(CLI_JSON).rows, 2**24, "float32", wide=True))
    wide = console.export_text()
    for header in ("cum. ×", "step ×", "1st pass µs", "% copy", "Triton twin"):
        assert header in wide
    assert "v3-sequential: slot tid + s" in wide  # the legend, not a column


def test_cpu_mode_run_has_no_timings_and_nothing_is_written(tmp_path, capsys):
    doc = json.loads(CLI_JSON.read_text())
    checked = {}  # each record's one row without its timings: its check (what `check` writes)
    for r in doc["rows"]:
        key = (r["variant"], r["dtype"], r["shape"])
        keep = ("variant", "config", "dtype", "shape", "check", "info")
        checked.setdefault(key, {k: v for k, v in r.items() if k in keep} | {"metric": "check"})
    doc["rows"] = list(checked.values())
    doc["mode"] = "cpu"
    run = tmp_path / "cpu.json"
    run.write_text(json.dumps(doc))
    out = tmp_path / "o"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "No artists with labels" (nothing is drawn at all)
        assert main(["report", str(run), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "no timings to plot" in err and "cpu-mode" in err
    assert not out.exists()


def test_n_not_in_the_run_is_an_error_listing_the_sizes(tmp_path, capsys):
    out = tmp_path / "o"
    assert main(["report", str(CLI_JSON), "--out", str(out), "--n", "2^13"]) == 2
    err = capsys.readouterr().err
    assert "2^13" in err and "2^10, 2^16, 2^20, 2^24" in err
    assert not out.exists()


def test_triton_alone_stays_in_the_triton_columns(tmp_path):
    run = load_run(CLI_JSON)
    run.rows = [r for r in run.rows if not r.variant.startswith("cuda/")]
    md = markdown_ladder(run.rows, "float32", 2**24)
    cells = _table_row(md, ("0", "-"), "| stage")
    assert cells[2] == "-" and cells[7] == "tile-256" and cells[8] != "-"
    lad = plots.plot_ladder(run, "float32", 2**24, tmp_path / "ladder.png")
    assert lad["categories"] and all(c.startswith("triton/") for c in lad["categories"])


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


def test_peer_ratios_and_the_peer_rows():
    """The one place ratios are computed: each peer against the others (moved from
    test_peers.py), shown on the ladder table's peer rows and as text."""
    from harness.report.ladder_table import peer_ratios, results_at
    from harness.report.records import Row, results

    def total(vid: str, ms: float, gbps: float) -> Row:
        nbytes = round(gbps * ms * 1e6)
        return Row(device="GPU", suite="ladder", variant=vid, config="", dtype="float32", shape=8,
                   metric="total", median_ms=ms, bytes=nbytes, check="ok")  # fmt: skip

    rows = [
        total("peer/cupy.sum-cub", 1.0, 90.0),
        total("peer/torch.sum", 2.0, 45.0),
        total("peer/copy", 1.0, 100.0),
        total("peer/cupy.sum-nocub", 4.0, 22.5),
    ]
    at = results_at(results(rows), "float32", 8)
    foot = {r: peer_ratios(c, at) for r, c in at.items()}
    assert foot["peer/torch.sum"].x_cub == 0.5 and foot["peer/cupy.sum-cub"].x_torch == 2.0
    assert foot["peer/cupy.sum-nocub"].pct_copy == 22.5
    assert foot["peer/torch.sum"].text() == "0.50× CUB, 1.00× torch.sum, 45% of copy"
    md = markdown_ladder(rows, "float32", 8)
    assert "| peer | peer/torch.sum | 2000.0 | 45 | 45 | 0.50 | 1.00 | - |" in md
    failed = results_at(results([dataclasses.replace(rows[0], check="wrong"), *rows[1:]]),
                        "float32", 8)  # fmt: skip
    assert peer_ratios(failed["peer/cupy.sum-cub"], failed).x_torch is None
    assert peer_ratios(at["peer/torch.sum"], failed).x_cub is None


def test_run_and_check_tables_fit_100_columns_on_the_committed_runs():
    """The terminal tables of `run` and `check` at 100 columns, on real rows (the longest ids,
    seed 004's rungs, the wrong demonstrations' verdicts): no line longer than 100."""
    from rich.console import Console
    from rich.measure import Measurement

    from harness.report import tables
    from harness.report.ladder_table import ladder_console_table

    root = Path(__file__).resolve().parents[1] / "results" / "nvidia-h200"
    ladder = load_run(root / "ladder-int32.json")
    demos = load_run(root / "demos.json")
    checks = tables.rich_checks([*demos.rows, *ladder.rows], "correctness")
    compact = ladder_console_table(ladder.rows, 2**25, "int32", with_legend=False)
    wide = Console(width=400)
    for table in (checks, compact):  # their natural width: rich folds nothing to fit
        assert Measurement.get(wide, wide.options, table).maximum <= 100
    console = Console(width=100, record=True)
    console.print(ladder_console_table(ladder.rows, 2**25, "int32"))
    console.print(checks)
    text = console.export_text()
    assert "004-smem-unroll4-dyn" in text and "race showed (wrong)" in text
    assert max(len(line) for line in text.splitlines()) <= 100
