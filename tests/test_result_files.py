"""Every committed result file goes through the one loader (harness.report.documents): each JSON
file under results/ (and the census, docs/census-sm_90.json) loads as a family the loader knows,
so a new format cannot sneak in beside it; every file that is not JSON is of a kind this file
names, with why it is there; the families with times turn into long-format rows
(documents.rows); and the console captures that are kept outside archive/ regenerate byte
for byte from their JSON."""

from __future__ import annotations

import json
from fnmatch import fnmatch
from pathlib import Path

import pytest

from harness.report import distributed_tables, documents, records
from harness.report.documents import FAMILIES, FAMILY, ReportError, load_document, rows
from harness.report.markdown import grid
from harness.report.records import Row

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results"
CENSUS = ROOT / "docs" / "census-sm_90.json"
JSON_FILES = [*sorted(RESULTS.rglob("*.json")), CENSUS]

# Every file under results/ that is not JSON, by pattern (relative to results/), and why it is
# there. A file that matches none fails test_every_other_file_is_known: say here what it is.
OTHER_FILES = {
    "*/README.md": "a folder's page (results/compare/'s: written by `reduce-ladder compare`)",
    "*/archive/README.md": "says the captures beside it are archived evidence, not regenerated",
    "*/archive/*.txt": "console captures of a GPU session, archived evidence, not regenerated",
    "*/superseded/README.md": "what the superseded runs were and why they were replaced",
    "*/superseded/*.txt": "console captures of superseded runs, archived evidence",
    "*/env.txt": "nvidia-smi and versions at the session: read by `reduce-ladder compare`",
    "*/newcomer.txt": "a new user's transcript on a bare GPU machine: the README's install line "
    "and its two commands, with wall times and exit codes (evidence, not regenerated)",
    "*/distributed*.txt": "the distributed tables of the JSON beside it, regenerated (below)",
    "*/*.log": "pytest's and the GPU scripts' logs of the session, kept as evidence",
    "*/junit.xml": "pytest's JUnit report of the GPU session, kept as evidence",
    "*/seed004.md": "seed 004's table: `python benchmarks/seed_table.py` from seed004.json",
    "compare/*.png": "`reduce-ladder compare`'s plots (tests/test_compare.py regenerates them)",
    "*/report/*": "`reduce-ladder report` / `profile --render` / `distributed --render` output",
    "*/inductor/inductor-*.py": "the code torch.compile wrote (experiments.inductor_code)",
    "*/profile*-raw/*": "Nsight Compute's raw output (CSV, logs), parsed into profile*.json",
    "*/sanitize*-raw/*.txt": "compute-sanitizer's logs, parsed into sanitize*.json",
}


def _rel(p: Path) -> str:
    return p.relative_to(ROOT).as_posix()


@pytest.mark.parametrize("path", JSON_FILES, ids=_rel)
def test_every_committed_json_file_loads(path: Path):
    doc = load_document(path)
    assert doc.kind in FAMILY
    family = FAMILY[doc.kind]
    if family.schema and doc.kind != "pytest-benchmark":
        assert doc.schema == family.schema
    suite = doc.raw.get("suite") if doc.kind == "rows" else doc.kind  # a ROWS document: its suite
    for r in rows(doc):
        assert isinstance(r, Row) and r.suite == suite and r.median_ms >= 0
        assert r.versions and isinstance(r.n, int)


# Families with no committed file yet (none: the ROWS document of `reduce-ladder bench SUITE
# --json` is committed as results/<device>/axis*.json and callable-families.json).
NOT_YET_COMMITTED: set[str] = set()


def test_every_family_has_a_committed_file_and_a_schema_of_its_own():
    kinds = {load_document(p).kind for p in JSON_FILES}
    want = set(FAMILY) - (NOT_YET_COMMITTED - kinds)
    assert kinds == want, f"families without a committed file: {want - kinds}"
    schemas = [f.schema for f in FAMILIES if f.schema]
    assert len(schemas) == len(set(schemas))


def test_a_format_the_loader_does_not_know_is_refused(tmp_path: Path):
    unknown = tmp_path / "new.json"
    unknown.write_text(json.dumps({"schema": records.ROWS_SCHEMA + "-new", "rows": []}))
    with pytest.raises(ReportError, match="unknown format"):
        load_document(unknown)
    with pytest.raises(ReportError, match=f"not a {FAMILY['distributed'].schema} document"):
        load_document(RESULTS / "nvidia-h200" / "callable.json", "distributed")


def test_every_other_file_is_known():
    unknown = [
        _rel(p)
        for p in sorted(RESULTS.rglob("*"))
        if p.is_file()
        and p.suffix != ".json"
        and not any(fnmatch(p.relative_to(RESULTS).as_posix(), pat) for pat in OTHER_FILES)
    ]
    assert not unknown, (
        f"files under results/ of no known kind (add them to OTHER_FILES): {unknown}"
    )


def test_no_console_capture_outside_archive_but_the_regenerated_ones():
    loose = [p for p in RESULTS.glob("*/*.txt") if p.name not in ("env.txt", "newcomer.txt")]
    assert sorted(p.name for p in loose if not p.name.startswith("distributed")) == []


@pytest.mark.parametrize(
    "capture", sorted(RESULTS.glob("*/distributed*.txt")), ids=lambda p: p.name
)
def test_distributed_captures_regenerate_byte_identical(capture: Path):
    """What `reduce-ladder distributed` prints (distributed_tables.markdown) of the JSON beside
    the capture. If this fails, rewrite the capture from its JSON (the tables changed)."""
    doc = load_document(capture.with_suffix(".json"), "distributed").raw
    assert capture.read_text() == distributed_tables.markdown(doc) + "\n"


# The families whose parser reads their measurements into Document.rows; every other family is
# read as it is (its raw document, for its own tables) and holds no row.
ROW_FAMILIES = {"pytest-benchmark", "rows", "distributed"}


def test_rows_cover_every_family_with_times():
    held: dict[str, int] = {}  # kind -> rows read (Document.rows)
    counts: dict[str, int] = {}  # kind -> timed rows (documents.rows)
    for p in JSON_FILES:
        doc = load_document(p)
        held[doc.kind] = held.get(doc.kind, 0) + len(doc.rows)
        counts[doc.kind] = counts.get(doc.kind, 0) + len(rows(doc))
    assert all(FAMILY[k].parser for k in ROW_FAMILIES)  # a family without a parser holds none
    with_rows = ROW_FAMILIES - (NOT_YET_COMMITTED - set(counts))
    assert {k for k, n in held.items() if n} == with_rows
    assert {k for k, n in counts.items() if n} == with_rows
    assert not any(held[k] for k in set(held) - ROW_FAMILIES)


def test_a_pivot_of_rows_is_the_cases_table():
    doc = load_document(RESULTS / "nvidia-h200" / "ladder-float32.json")
    timed = [r for r in doc.results if r.timed]
    cell = lambda r: (r.median_ms, r.check, r.bytes)  # noqa: E731
    totals = [r for r in rows(doc) if r.metric == "total"]
    ids = [r.variant for r in timed]
    sizes, table = grid(totals, lambda r: r.variant, lambda r: r.n, cell, ids, label=lambda v: v)
    by = {line[0]: dict(zip(sizes, line[1:], strict=True)) for line in table}
    assert len(table) == len({r.variant for r in timed})
    for rec in timed:
        total = rec.by_metric["total"]
        assert by[rec.variant][rec.n] == (rec.ms, rec.status, total.bytes) and total.bytes


def test_readers_of_results_go_through_the_loader():
    """No module of the product, the porting tools or the experiments parses JSON itself but the
    loader (and the two that read what a child process hands them, not a result file)."""
    allowed = {
        "harness/report/documents.py",  # the loader
        "harness/studies/distributed.py",  # the ranks' records from a temporary folder
        "porting/triton_compile.py",  # its worker's stdin and stdout
    }
    found = []
    for top in ("harness", "porting", "experiments", "benchmarks"):
        for p in sorted((ROOT / top).rglob("*.py")):
            text = p.read_text()
            if ("json.load(" in text or "json.loads(" in text) and _rel(p) not in allowed:
                found.append(_rel(p))
    assert not found, f"read result files through harness.report.documents: {found}"
    assert documents.load_document is load_document


def _as_pytest_benchmark(rows_doc: Path, tmp_path: Path) -> Path:
    """pytest-benchmark's JSON of a rows suite (what `pytest benchmarks/ -k axis
    --benchmark-json` writes: each benchmark's extra_info holds its case's rows, no record), made
    from a committed ROWS document's rows, one benchmark per (variant, dtype, config)."""
    doc = json.loads(rows_doc.read_text())
    cases: dict[tuple, list[dict]] = {}
    for r in doc["rows"]:
        cases.setdefault((r["variant"], r["dtype"], r.get("config", "")), []).append(r)
    gpu = {"name": doc["device"]["name"], **doc.get("versions", {})}
    out = tmp_path / "bench.json"
    out.write_text(json.dumps({
        "machine_info": {"gpu": gpu, "reduce_ladder": {"schema": records.BENCH_SCHEMA}},
        "datetime": doc.get("created", ""),
        "benchmarks": [{"name": f"test_bench[{k}]", "extra_info": {"rows": rs}}
                       for k, rs in cases.items()],
    }))  # fmt: skip
    return out


def test_a_rows_suite_benchmark_file_reads_as_its_rows(tmp_path: Path):
    """A rows suite's pytest-benchmark file (axis here) gives the same rows as the ROWS document
    of the same run, the axis report reads it, and `report RUN` refuses it with where it goes."""
    from harness.report import axis_tables

    committed = RESULTS / "nvidia-h200" / "axis-tritonbench.json"
    bench = _as_pytest_benchmark(committed, tmp_path)
    got, want = load_document(bench), load_document(committed)
    assert got.kind == "pytest-benchmark" and not got.results
    key = lambda r: (r.variant, r.dtype, r.config, r.metric)  # noqa: E731
    assert sorted(map(key, rows(got))) == sorted(map(key, rows(want))) != []
    assert {r.device for r in rows(got)} == {want.device}
    assert axis_tables.lines(axis_tables.load(bench)) == axis_tables.lines(rows(want))
    with pytest.raises(ReportError, match=r"rows of the axis suite.*--axis"):
        documents.load_run(bench)


def test_a_benchmark_file_of_several_suites_reads_as_all_of_them(tmp_path: Path):
    """A file where the ladder's benchmarks (the synthetic fixture's, bench/2's records once,
    their rows since experiments/migrate_legacy_results) sit beside a rows-only suite's (axis),
    as `pytest benchmarks/` over every suite writes it: rows() holds both suites' rows, none
    dropped, and the ladder's cases join as they do alone."""
    axis = json.loads(_as_pytest_benchmark(RESULTS / "nvidia-h200" / "axis-tritonbench.json",
                                           tmp_path).read_text())  # fmt: skip
    records_only = ROOT / "tests" / "data" / "synthetic_bench.json"
    mixed = json.loads(records_only.read_text())
    mixed["benchmarks"] += axis["benchmarks"]
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps(mixed))
    got, alone = load_document(path), load_document(records_only)
    key = lambda r: (r.suite, r.variant, r.dtype, r.config, r.shape, r.metric)  # noqa: E731
    axis_rows = [r for r in rows(got) if r.suite == "axis"]
    assert axis_rows and len(axis_rows) == len(rows(load_document(tmp_path / "bench.json")))
    assert sorted(map(key, set(rows(got)) - set(axis_rows))) == sorted(map(key, rows(alone)))
    assert len(got.results) == len(alone.results) > 0


@pytest.mark.parametrize("form", ["bench/2", "accuracy/1", "run/2"])
def test_a_file_in_an_older_form_says_how_to_convert_it(form, tmp_path):
    """The loader reads today's forms only; a file an older version wrote (a pytest-benchmark
    file's schema sits in machine_info) is refused with the command that converts it."""
    schema = "reduce-ladder/" + form  # (schema strings are spelled in records.py only)
    doc = json.loads((ROOT / "tests/data/synthetic_bench.json").read_text())
    if schema.startswith("reduce-ladder/bench/"):
        doc["machine_info"]["reduce_ladder"]["schema"] = schema
    else:
        doc = {"schema": schema, "results": [{"variant": "cuda/fastest", "dtype": "float32"}]}
    path = tmp_path / "old.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(documents.ReportError, match="migrate_legacy_results") as e:
        documents.load_document(path)
    assert schema in str(e.value)
