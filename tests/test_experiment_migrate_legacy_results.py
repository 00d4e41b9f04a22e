"""experiments/migrate_legacy_results: the old fastest bench's side-by-side rows become records as
its reader made them, and a result record's JSON (bench/2's and accuracy/1's items) the rows its
reader made; a legacy folder is rewritten in the current formats with the very records and rows
(times, checks, the header) the old readers made, and a second run changes nothing; an accuracy/1
document becomes the study's own document; every committed result file (and the report tests'
fixtures) is in a current format already."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from experiments.migrate_legacy_results import experiment as migrate
from experiments.migrate_legacy_results import legacy_record
from experiments.migrate_legacy_results import record_documents as by_record
from harness.core import catalogue
from harness.core.timing import Timing
from harness.report import documents, records
from harness.report.records import Row

ROOT = Path(__file__).resolve().parents[1]
T = {"median_ms": 0.5, "min_ms": 0.4, "p10_ms": 0.45, "p90_ms": 0.55, "reps": 5}


def _timing(ms: float) -> dict:
    return Timing(median_ms=ms, min_ms=ms * 0.9, p10_ms=ms * 0.95, p90_ms=ms * 1.1, reps=7).record()


def test_fastest_bench_rows_become_records():
    row = {
        "dtype": "bfloat16",
        "n": 1024,
        "bytes_read": 2048,
        "cuda/fastest:ok": True,
        "cuda/fastest": T,
        "triton/fastest:ok": False,
        "triton/fastest:message": "|result - golden| = 1 > tolerance 0",
        "triton/fastest": T,
        "torch.sum": T,
        "cupy.sum-cub": {"error": "peer/cupy.sum-cub cannot take bfloat16: TypeError: no"},
        "copy": T,
        "cuda/fastest:graph": {"error": "RuntimeError: capture"},
    }
    got = {r.variant: r for r in migrate.fastest_bench_records(row, "GPU")}
    assert list(got) == [
        "cuda/fastest",
        "triton/fastest",
        "peer/torch.sum",
        "peer/cupy.sum-cub",
        "peer/copy",
    ]
    assert got["cuda/fastest"].ok and got["cuda/fastest"].extra["graph_error"]
    assert got["triton/fastest"].status == "wrong"  # checked, wrong, still timed
    assert got["peer/cupy.sum-cub"].status == "error" and got["peer/cupy.sum-cub"].total is None
    assert got["peer/copy"].extra["bytes_read"] == 2048 and got["peer/copy"].device == "GPU"


def test_a_result_records_json_reads_into_the_rows_a_suite_writes_and_joins_back():
    """bench/2's (and accuracy/1's) items, a result record's JSON, as their old reader read it
    (record_json_rows, moved here from the loader): one row per time, the check's values,
    message and passes on the first row, and the case joined from the rows says what the record
    said."""
    check = {"value": 4.0, "golden": 1, "abs_err": 3.0, "tolerance": 0.0, "exact_required": True}
    record = {
        "variant": "cuda/v3-sequential", "backend": "cuda", "stage": "3", "dtype": "float32",
        "n": 2**20, "status": "wrong", "ok": False,
        "message": "|result - golden| = 3 > tolerance 0",
        "check": {**check, "input_unchanged": None}, "first_pass": _timing(0.01),
        "total": _timing(0.02), "passes": 3, "blocks_first_pass": 4096,
        "bytes_first_pass": 4 * (2**20 + 4096), "bytes_total": 4_212_000,
        "gbps_total": 210.6, "device": "SYNTHETIC", "extra": {"graph_error": "x"},
    }  # fmt: skip
    common = {"device": "SYNTHETIC", "suite": "pytest-benchmark", "versions": ()}
    rows = by_record.record_json_rows(record, **common)
    assert [(r.metric, r.check, r.bytes) for r in rows] == [
        ("first_pass", "wrong", 4 * (2**20 + 4096)),
        ("total", "wrong", 4_212_000),
    ]
    assert rows[1].median_ms == 0.02 and rows[1].gbps == 4_212_000 / 0.02 / 1e6
    assert rows[0].info == {"message": record["message"], "check": check, "passes": 3,
                            "blocks_first_pass": 4096, "extra": {"graph_error": "x"}}  # fmt: skip
    assert rows[1].info == {}  # said once
    for r in rows:  # a row's JSON form round-trips, its info too
        back = records.row_from_json(json.loads(json.dumps(r.to_json())), r.device, r.versions)
        assert back == r and back.info == r.info
    [case] = records.results(rows)
    assert (case.variant, case.v.stage, case.status, case.ok) == ("cuda/v3-sequential", "3",
                                                                   "wrong", False)  # fmt: skip
    assert case.message == record["message"] and case.sums == check and case.device == "SYNTHETIC"
    assert case.ms == 0.02 and case.median("first_pass") == 0.01 and case.median("graph") is None
    assert case.gbps == rows[1].gbps and case.info["blocks_first_pass"] == 4096
    error = {"variant": "peer/copy", "dtype": "float32", "n": 8, "status": "error",
             "message": "boom"}  # fmt: skip
    untimed = by_record.record_json_rows(error, **common)
    assert [(r.metric, r.median_ms, r.check, r.info) for r in untimed] == [
        ("check", None, "error", {"message": "boom"})
    ]


def _legacy_folder(root: Path) -> dict[str, list[dict]]:
    """results/gpu/ with a file of each legacy family (fastest-bench/1, host/1, run/2,
    callable/1); the records the old readers made of each, by name."""
    folder = root / "results" / "gpu"
    folder.mkdir(parents=True)
    device = {"name": "GPU", "torch": "2.11"}
    row = {"dtype": "float32", "n": 1024, "bytes_read": 4096, "cuda/fastest:ok": True,
           "cuda/fastest": T, "copy": T}  # fmt: skip
    fastest = {"schema": migrate.FASTEST_V1, "created": "then", "device": device,
               "timing": "CUDA events", "wall_s": 3.0, "rows": [row]}  # fmt: skip
    trip = {"reps": 5, "e2e_ms": 0.05, "e2e_min_ms": 0.04, "e2e_spread_ms": 0.01,
            "device_ms": 0.04, "d2h_ms": 0.01, "h2d_ms": 0.02, "kernels_ms": 0.01}  # fmt: skip
    trip |= {"h2d_share": 0.02 / 0.05, "kernels_share": 0.01 / 0.05}
    host_row = {"n": 2048, "log2n": 11.0, "variant": "cuda/001-v2-pinned", "staging": "pinned",
                "value": 7.0, "golden": 7, "abs_err": 0.0, "bound": 0.0, "status": "ok", **trip,
                "gbps": 2048 * 4 / 0.05 / 1e6}  # fmt: skip
    host = {"schema": migrate.host.HOST_V1, "created": "then", "device": device,
            "method": {"units": "ms"}, "options": {"dtype": "float32"},
            "table": [host_row]}  # fmt: skip
    timed = legacy_record.for_variant(catalogue.get("cuda/fastest"), "float32", 1024, passes=1,
                                total=Timing(**T), bytes_total=4100, device="GPU")  # fmt: skip
    demo = legacy_record.for_variant(catalogue.get("cuda/v5-wrong-nosync"), "float32", 1024,
                               status="wrong", message="raced", device="GPU")  # fmt: skip
    run = {"schema": migrate.RUN_V2, "created": "then", "mode": "timed", "device": device,
           "results": [timed.to_json(), demo.to_json()],
           "seed_tables": [{"seed": "004"}]}  # fmt: skip
    calls = [{"dtype": "int32", "n": 1024, "calls_per_loop": 256, "loops": 5, "entry": e,
              "touched_bytes": 4096, "us_per_call": us, "min_us": us - 1}
             for e, us in (("torch.sum", 12.5), ("api cuda/fastest", 9.0))]  # fmt: skip
    per_call = {"schema": migrate.CALLABLE_V1, "created": "then", "device": device,
                "method": "a loop", "results": calls}  # fmt: skip
    docs = {"fastest.json": fastest, "host.json": host, "ladder-float32.json": run,
            "callable.json": per_call}  # fmt: skip
    for name, doc in docs.items():
        (folder / name).write_text(json.dumps(doc))
    return {"fastest.json": [r.to_json() for r in migrate.fastest(fastest)[1]],
            "ladder-float32.json": [timed.to_json(), demo.to_json()]}  # fmt: skip


def test_a_legacy_folder_is_rewritten_with_its_records_and_once(tmp_path: Path, capsys):
    before = _legacy_folder(tmp_path)
    assert migrate.main(["--root", str(tmp_path), "--dry-run"]) == 0
    assert "2 records kept" in capsys.readouterr().out
    fastest_file = tmp_path / "results" / "gpu" / "fastest.json"
    assert records.ROWS_SCHEMA not in fastest_file.read_text()  # a dry run writes nothing
    assert migrate.main(["--root", str(tmp_path)]) == 0
    fastest = documents.load_document(fastest_file, "rows")
    host = documents.load_document(tmp_path / "results" / "gpu" / "host.json", "rows")
    assert [r.to_json() for r in legacy_record.records_from_rows(fastest.rows)] == before[
        "fastest.json"
    ]
    assert fastest.raw["suite"] == "fastest" and fastest.created == "then"
    assert fastest.raw["timing"] == "CUDA events"
    assert host.raw["suite"] == "host" and host.raw["method"] == {"units": "ms"}
    assert {r.metric: r.median_ms for r in host.rows} == {
        "e2e": 0.05, "device": 0.04, "d2h": 0.01, "h2d": 0.02, "kernels": 0.01
    }  # fmt: skip
    assert host.rows[0].info == {"check": {"value": 7.0, "golden": 7, "abs_err": 0.0,
                                           "tolerance": 0.0}, "spread_ms": 0.01}  # fmt: skip
    ladder = documents.load_document(tmp_path / "results" / "gpu" / "ladder-float32.json", "rows")
    assert [r.to_json() for r in legacy_record.records_from_rows(ladder.rows)] == before[
        "ladder-float32.json"
    ]
    assert ladder.raw["suite"] == "ladder" and ladder.meta["mode"] == "timed"
    assert ladder.raw["seed_tables"] == [{"seed": "004"}] and ladder.created == "then"
    calls = documents.load_document(tmp_path / "results" / "gpu" / "callable.json", "rows")
    assert calls.raw["suite"] == "callable" and calls.raw["method"] == "a loop"
    assert not calls.results  # per-call entries, not cases of the ladder's suites
    got = {(r.variant, r.config, r.metric, r.check): (r.median_ms, r.min_ms, r.reps, r.bytes)
           for r in documents.rows(calls)}  # fmt: skip
    assert got == {
        ("torch.sum", "torch.sum", "call", "ok"): (12.5 / 1e3, 11.5 / 1e3, 5, 4096),
        ("api cuda/fastest", "api", "call", "ok"): (9.0 / 1e3, 8.0 / 1e3, 5, 4096),
    }
    capsys.readouterr()
    assert migrate.main(["--root", str(tmp_path)]) == 0
    assert capsys.readouterr().out == ""  # nothing left to convert
    assert not list(tmp_path.rglob("*.migrating"))


def test_every_committed_result_file_is_in_a_current_format(tmp_path: Path):
    copy = tmp_path / "results"
    shutil.copytree(ROOT / "results", copy, ignore=shutil.ignore_patterns("*.png", "*raw*"))
    files = [*copy.rglob("*.json"), *migrate.fixtures(ROOT)]
    assert migrate.fixtures(ROOT)  # the report tests' fixtures are walked too
    assert [p for p in files if migrate.convert(documents.read_json(p))] == []


def _record_benchmark(record: legacy_record.ResultRecord, name: str) -> dict:
    """One of bench/2's benchmarks: pytest-benchmark's entry, its extra_info the record."""
    return {"group": f"{record.dtype} n={record.n}", "name": name, "fullname": f"b.py::{name}",
            "params": {"case": [record.variant, record.dtype, record.n]}, "param": name,
            "extra_info": {"schema": legacy_record.BENCH_V2, **record.to_json()},
            "options": {"timer": "perf_counter"},
            "stats": {"min": 1e-5, "median": 2e-5, "rounds": 20, "iterations": 1}}  # fmt: skip


def test_bench_v2_and_accuracy_v1_files_become_the_rows_their_old_readers_made(tmp_path: Path):
    """A bench/2 file (record benchmarks after a rows suite's, as `pytest benchmarks/` over every
    suite wrote it) keeps pytest-benchmark's JSON, its form (indent 4, no final newline) and every
    key but the records' extra_info, which become their rows; an accuracy/1 file becomes the
    study's ROWS document, its head kept; the loader reads back the rows the old readers made."""
    folder = tmp_path / "results" / "gpu"
    folder.mkdir(parents=True)
    timed = legacy_record.for_variant(catalogue.get("cuda/fastest"), "float32", 1024, passes=1,
                                      check=legacy_record.Check(10.0, 10, 0.0, 0.0, True, None),
                                      total=Timing(**T), call=Timing(**T), bytes_total=4100,
                                      device="GPU")  # fmt: skip
    broken = legacy_record.for_variant(catalogue.get("peer/copy"), "float32", 1024,
                                       status="error", message="boom", device="GPU")  # fmt: skip
    axis = Row(device="GPU", suite="axis", variant="triton/axis", config="8x8 dim=1",
               dtype="float32", shape=(8, 8), metric="total", median_ms=0.01)  # fmt: skip
    axis_json = json.loads(json.dumps(axis.to_json()))
    bench = {
        "machine_info": {"node": "n", "gpu": {"name": "GPU", "torch": "2.11"},
                         "reduce_ladder": {"schema": legacy_record.BENCH_V2, "rounds": 20}},
        "commit_info": {"id": "0" * 40},
        "benchmarks": [{"name": "test_bench[axis]", "extra_info": {"rows": [axis_json]}},
                       _record_benchmark(timed, "test_reduce[a]"),
                       _record_benchmark(broken, "test_reduce[b]")],
        "datetime": "then", "version": "5.2.3",
    }  # fmt: skip
    check = {"value": 0.5, "golden": 0.5, "abs_err": 0.0}
    ok = {"variant": "triton/tile-256", "dtype": "float32", "n": 4096, "status": "ok", "ok": True,
          "message": "", "check": check, "device": "GPU",
          "extra": {"data": "uniform", "ulps": 0.0, "faithful": True, "kappa": 1.0}}  # fmt: skip
    failed = {"variant": "peer/torch.sum", "dtype": "float32", "n": 4096, "status": "error",
              "message": "RuntimeError: boom", "device": "GPU",
              "extra": {"data": "uniform"}}  # fmt: skip
    accuracy = {"schema": by_record.ACCURACY_V1, "created": "then",
                "device": {"name": "GPU", "torch": "2.11", "cupy": "14"}, "seed": 0,
                "limits": {"4096": 1e20}, "families": {"uniform": "uniform [0, 1)"},
                "results": [ok, failed]}  # fmt: skip
    (folder / "bench.json").write_text(json.dumps(bench, indent=4))
    (folder / "accuracy.json").write_text(json.dumps(accuracy, indent=1) + "\n")
    old_bench, old_accuracy = by_record.bench_v2_rows(bench), by_record.accuracy_v1_rows(accuracy)
    assert [r.suite for r in old_bench] == ["pytest-benchmark"] * 3 + ["axis"]  # records first
    assert [(r.variant, r.config, r.check, r.info) for r in old_accuracy] == [
        ("triton/tile-256", "uniform", "ok",
         {"check": check, "ulps": 0.0, "faithful": True, "kappa": 1.0}),
        ("peer/torch.sum", "uniform", "error", {"message": "RuntimeError: boom"}),
    ]  # fmt: skip
    assert migrate.main(["--root", str(tmp_path)]) == 0

    key = lambda r: (r.device, r.to_json())  # noqa: E731
    text = (folder / "bench.json").read_text()
    assert text.startswith('{\n    "machine_info"') and not text.endswith("\n")
    new = json.loads(text)
    assert new["machine_info"]["reduce_ladder"] == {"schema": records.BENCH_SCHEMA, "rounds": 20}
    for was, now in zip(bench["benchmarks"], new["benchmarks"], strict=True):
        assert {**was, "extra_info": None} == {**now, "extra_info": None}
    assert new["benchmarks"][0] == bench["benchmarks"][0]  # a rows benchmark as it was
    assert {k: v for k, v in new.items() if k not in ("machine_info", "benchmarks")} == {
        k: v for k, v in bench.items() if k not in ("machine_info", "benchmarks")
    }
    back = documents.load_document(folder / "bench.json", "pytest-benchmark")
    # in the file's order: the rows benchmark's, then the records'
    assert list(map(key, back.rows)) == list(map(key, [*old_bench[3:], *old_bench[:3]]))
    assert [(r.metric, r.check) for r in back.rows[1:]] == [
        ("total", "ok"), ("call", "ok"), ("check", "error")
    ]  # fmt: skip
    [case, error] = back.results
    assert case.sums == {**check, "value": 10.0, "golden": 10, "tolerance": 0.0,
                         "exact_required": True} and case.ms == 0.5  # fmt: skip
    assert error.status == "error" and error.message == "boom"

    acc = documents.load_document(folder / "accuracy.json", "rows")
    assert acc.raw["suite"] == "accuracy" and acc.created == "then" and acc.device == "GPU"
    assert {k: acc.raw[k] for k in ("seed", "limits", "families", "device")} == {
        k: accuracy[k] for k in ("seed", "limits", "families", "device")
    }
    assert list(map(key, acc.rows)) == list(map(key, old_accuracy))
    assert acc.raw["versions"] == {"cupy": "14", "torch": "2.11"}  # the study's row versions
    written = {p: p.read_text() for p in folder.iterdir()}
    assert migrate.main(["--root", str(tmp_path)]) == 0  # a second run changes nothing
    assert {p: p.read_text() for p in folder.iterdir()} == written


@pytest.mark.interpreter  # the accuracy study over Triton's interpreter
def test_an_accuracy_v1_document_becomes_the_one_the_study_writes_now():
    """The accuracy study's document, written as accuracy/1 wrote it (a result record per row:
    its data family and what the study said in extra), converts to the very rows and head the
    study writes now (what a legacy row and a newly written one have in common: all of it)."""
    from harness.studies import accuracy as study

    variants = [catalogue.get("triton/tile-256"), catalogue.get(catalogue.TORCH_SUM_ID)]
    doc = study.accuracy(variants, ["seed001", "cancellation"], [5000], log=lambda s: None,
                         where="cpu")  # fmt: skip
    results = []
    for r in doc["rows"]:
        info = dict(r["info"])
        record = {"variant": r["variant"], "dtype": r["dtype"], "n": r["shape"],
                  "status": r["check"], "message": info.pop("message", ""),
                  "device": doc["device"].get("name")}  # fmt: skip
        if "check" in info:
            record["check"] = info.pop("check")
        results.append(record | {"extra": {"data": r["config"], **info}})
    head = {k: doc[k] for k in ("created", "device", "seed", "limits", "families")}
    old = {"schema": by_record.ACCURACY_V1, **head, "results": results}
    new, recs, rows = migrate.convert(json.loads(json.dumps(old)))
    assert recs == [] and new == doc  # the study's document, its rows and head alike
    assert [r.to_json() for r in rows] == doc["rows"]
