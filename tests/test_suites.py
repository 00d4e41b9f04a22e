"""The named suites on the CPU: their case lists and selection, the one ROWS document (written,
then read back by the one loader into rows and records), `reduce-ladder bench`'s usage errors and
listing, and pytest-benchmark's collection of the suites (`-k SUITE`). The measurements
themselves run on a GPU: `pytest benchmarks/ -k SUITE --benchmark-enable`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli.main import main
from harness.cli.run import write_run
from harness.core import catalogue, device
from harness.core.timing import Timing
from harness.report import documents, records
from harness.studies import call_entries, session, suites

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", list(suites.SUITES))
def test_every_suite_has_cases_named_after_it(name):
    found = suites.cases(name, sizes=[2**12])
    assert found and all(c.suite == name and c.id.startswith(f"{name}-") for c in found)
    assert len({c.id for c in found}) == len(found)  # one id per case


def test_the_ladder_suite_is_the_runs_default_selection():
    found = suites.cases("ladder")
    want = [v.id for v in session.ladder_variants("float32")]
    assert [c.variant for c in found if c.n == 2**24] == want
    assert sorted({c.n for c in found}) == list(session.DEFAULT_SIZES)


def test_seed004_is_the_seed_table_case_list():
    found = suites.cases("seed004")
    assert {(c.dtype, c.n) for c in found} == {("int32", 2**24)}
    ids = {c.variant for c in found}
    assert {"cuda/004-gmem", "peer/cupy.sum-cub"} <= ids or any("004" in i for i in ids)
    own = [i for i in ids if any(s.startswith("004:") for s in catalogue.get(i).seeds)]
    assert own, ids


def test_selection_replaces_the_defaults_and_drops_what_cannot_run():
    found = suites.cases("fastest", variants=["cuda/fastest", "peer/cupy.sum-cub"],
                         dtypes=["float32", "bfloat16"], sizes=[2**10, 2**11])  # fmt: skip
    got = [(c.variant, c.dtype, c.n) for c in found]
    assert ("peer/cupy.sum-cub", "bfloat16", 2**10) not in got  # CuPy has no bfloat16
    assert ("cuda/fastest", "bfloat16", 2**11) in got and len(got) == 6


def test_callable_covers_every_api_variant_out_and_the_op_in_three_dtypes():
    found = suites.cases("callable", sizes=[2**10])
    assert {c.dtype for c in found} == {"float32", "int32", "bfloat16"}
    for v in ("cuda/fastest", "cuda/reproducible", "triton/tile-256"):
        assert {f"api {v}", f"api {v} out=", f"op {v}"} <= {c.variant for c in found}
    assert suites.get("callable").sizes == tuple(2**k for k in range(10, 31, 2))
    named = suites.cases("callable", variants=["cuda/fastest", "torch.sum"], dtypes=["int32"],
                         sizes=[2**10])  # fmt: skip
    assert [c.variant for c in named] == [
        "api cuda/fastest", "api cuda/fastest out=", "op cuda/fastest", "torch.sum"
    ]  # fmt: skip


def test_unknown_suite_is_a_key_error_naming_the_suites():
    with pytest.raises(KeyError, match="suites: ladder"):
        suites.cases("nope")


def _case(vid="cuda/v3-sequential", status="ok", timed=True, common=None) -> list[records.Row]:
    """A case's rows as session.check_and_time writes them: first pass and total (or one "check"
    row), the check's values, message and passes on the first."""
    common = common or {"device": "GPU X", "suite": "ladder", "versions": (("torch", "2.9"),)}
    ident = {**common, "variant": vid, "config": "", "dtype": "float32", "shape": 2**20}
    info = {"check": {"value": 1.0, "golden": 1, "abs_err": 0.0, "tolerance": 0.0}, "passes": 2}
    info |= {} if status == "ok" else {"message": "off by 3"}
    if not timed:
        return [records.Row(**ident, metric="check", median_ms=None, check=status, info=info)]
    t = Timing(0.05, 0.04, 0.045, 0.06, 10).record()
    return [records.Row(**ident, metric=m, **t, bytes=4 << 20, check=status,
                        info=info if m == "first_pass" else {})
            for m in ("first_pass", "total")]  # fmt: skip


def test_rows_document_round_trips_through_the_one_loader(tmp_path):
    written = [*_case(), *_case("peer/torch.sum", "wrong"), *_case("triton/tile-256", timed=False)]
    assert [r.metric for r in written] == ["first_pass", "total", "first_pass", "total", "check"]
    doc = records.rows_document(written, suite="ladder", device={"name": "GPU X"}, options={})
    path = tmp_path / "rows.json"
    documents.write_document(path, doc)
    assert json.loads(path.read_text())["schema"] == records.ROWS_SCHEMA
    back = documents.load_document(path)
    assert back.kind == "rows" and back.device == "GPU X"
    assert [r.to_json() for r in back.rows] == [r.to_json() for r in written]
    assert dict(back.rows[0].versions)["schema"] == records.ROWS_SCHEMA
    # timed rows only from rows(); the cases joined from the rows say what was written
    assert len(documents.rows(back)) == 4
    joined = {r.variant: r for r in back.results}
    assert list(joined) == ["cuda/v3-sequential", "peer/torch.sum", "triton/tile-256"]
    for vid, status, ms in (("cuda/v3-sequential", "ok", 0.05), ("peer/torch.sum", "wrong", 0.05),
                            ("triton/tile-256", "ok", None)):  # fmt: skip
        r = joined[vid]
        assert (r.status, r.ms, r.median("first_pass"), r.info["passes"]) == (status, ms, ms, 2)
        assert r.sums["golden"] == 1 and r.message == ("" if status == "ok" else "off by 3")
        assert r.gbps == (4 << 20) / 0.05 / 1e6 if ms else r.gbps is None
    assert documents.load_run(path).results  # the report reads it as a run


def test_failed_rows_leave_wrong_demonstrations_out():
    demo = next(v for v in catalogue.select(include_wrong=True) if v.wrong)
    base = {"device": "d", "suite": "s", "config": "", "dtype": "float32", "shape": 1}
    rs = [records.Row(**base, variant=demo.id, metric="total", median_ms=1.0, check="wrong"),
          records.Row(**base, variant="cuda/fastest", metric="total", median_ms=1.0,
                      check="error")]  # fmt: skip
    assert [r.variant for r in session.failed(rs)] == ["cuda/fastest"]


def test_the_runner_turns_an_exception_into_the_cases_error_row(monkeypatch):
    """A suite's measure that raises: the case's one row, check "error" with the message; the
    run goes on with the next case."""
    from dataclasses import replace

    def measure(case, reps, timed):
        if case.variant == "boom":
            raise RuntimeError("no launch")
        return [records.Row("GPU", "fake", case.variant, "", "int32", case.n, "call", 1.0)]

    monkeypatch.setitem(suites.SUITES, "fake", replace(suites.get("callable"), measure=measure))
    found = [suites.Case("fake", v, "int32", 1024) for v in ("boom", "fine")]
    bad, fine = suites.run(found)
    assert (bad.variant, bad.metric, bad.check, bad.median_ms) == ("boom", "check", "error", None)
    assert bad.info["message"] == "RuntimeError: no launch" and fine.median_ms == 1.0
    assert session.failed([bad, fine]) == [bad]


def test_run_suite_writes_prints_and_counts_only_the_ids_asked(tmp_path, monkeypatch, capsys):
    """bench and fastest-bench end in suites.run_suite: the document written (as each input's
    cases are done), a table per dtype, the per-call suite's overheads; a failed peer fails only a
    run that counts it."""

    def row(variant, us, check="ok"):
        return records.Row("GPU", "s", variant, "", "int32", 1024, "call", us / 1e3, check=check)

    got = [row("api cuda/fastest", 9.5), row("launch cuda/fastest cupy-driver", 8.0),
           row("peer/torch.sum", 2.0, check="error")]  # fmt: skip
    out, early = tmp_path / "c.json", []

    def run(found, reps, progress=None, timed=True, rounds=1, saved=None):
        saved(got[:1])  # the first input's rows: written as they are done
        early.append(json.loads(out.read_text())["rows"])
        return got

    monkeypatch.setattr(suites, "run", run)
    assert suites.run_suite("callable", [], str(out), {"sizes": ["2^10"]}) == 1
    assert early == [[got[0].to_json()]]
    printed = capsys.readouterr().out
    assert "callable, int32: microseconds" in printed and "+1.50 us" in printed
    doc = json.loads(out.read_text())
    assert doc["suite"] == "callable" and doc["options"] == {"sizes": ["2^10"]}
    assert len(doc["rows"]) == 3
    assert suites.run_suite("callable", [], None, {}, counted=["api cuda/fastest"]) == 0


@pytest.mark.parametrize(
    "argv,words",
    [
        (["bench", "nope"], "invalid choice: 'nope'"),
        (["bench", "fastest", "--variants", "cuda/fastst"], "did you mean cuda/fastest"),
        (["bench", "ladder", "--dtypes", "float8"], "invalid choice: 'float8'"),
        (["bench", "ladder", "--sizes", "0"], "at least 1"),
        (["bench", "seed004", "--dtypes", "float64"], "nothing to run"),
        (["bench", "ladder", "--reps", "0"], "at least 1"),
        (["bench", "axis", "--shapes", "x"], "invalid choice: 'x'"),
    ],
)
def test_bench_usage_errors_exit_2(argv, words, capsys):
    assert main(argv) == 2
    assert words in capsys.readouterr().err


def test_bench_lists_cases_without_a_gpu(capsys):
    assert main(["bench", "fastest", "--list", "--sizes", "2^10", "--dtypes", "int32"]) == 0
    assert capsys.readouterr().out.split() == [
        f"fastest-int32-2^10-{v}" for v in (*call_entries.FASTEST, *suites.FASTEST_PEERS)
    ]


@pytest.mark.skipif(device.gpu_available(), reason="checks the no-GPU answer")
def test_bench_without_a_gpu_exits_2_and_writes_nothing(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["bench", "ladder", "--json", str(out)]) == 2
    assert "needs an NVIDIA GPU" in capsys.readouterr().err and not out.exists()


def test_bench_refuses_a_folder_for_json(tmp_path, capsys):
    assert main(["bench", "ladder", "--json", str(tmp_path)]) == 2
    assert "folder" in capsys.readouterr().err


def test_pytest_benchmark_collects_one_suite_with_k():
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "benchmarks/", "--collect-only", "-q", "-p",
         "no:cacheprovider", "-k", "fastest", "--bench-sizes", "12,20"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    ).stdout  # fmt: skip
    got = [line.split("[", 1)[1].rstrip("]") for line in out.splitlines() if "[" in line]
    want = [c.id for c in suites.cases("fastest", sizes=[2**12, 2**20])]
    assert got == want, out[-2000:]


def test_entries_are_what_the_callable_suite_lists():
    assert suites.get("callable").variants("int32") == list(call_entries.entries())


def test_run_writes_a_rows_document_the_seed_table_and_the_report_read(tmp_path):
    """`run --json` (harness.cli.run.write_run): rows, mode and seed_tables in one ROWS document;
    benchmarks/seed_table.py and the report read its rows back."""
    import importlib.util

    vid = "cuda/004-smem" if "cuda/004-smem" in catalogue.BY_ID else "cuda/v3-sequential"
    tables_head = [{"seed": "004", "n": 2**20, "dtype": "float32"}]
    rows = _case(vid, common=suites.common("ladder"))
    path = tmp_path / "run.json"
    write_run(str(path), rows, mode="timed", seed_tables=tables_head)
    doc = json.loads(path.read_text())
    assert doc["schema"] == records.ROWS_SCHEMA and doc["mode"] == "timed"
    run = documents.load_run(path)
    assert [r.variant for r in run.results] == [vid] and run.timed
    spec = importlib.util.spec_from_file_location("seed_table", ROOT / "benchmarks/seed_table.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    seed, md = mod.markdown(run)
    assert seed == "004" and "## float32, n = 1,048,576" in md
