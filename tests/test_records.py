"""The row: its JSON form round-trips, a result record's JSON (the older documents' items) reads
into rows, every committed results/ file reads through the loader into rows (and the ladder's
cases joined from them), and every schema string is spelled in one place."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from harness.core.timing import Timing
from harness.report import records
from harness.report.documents import Document, load_document, record_rows

ROOT = Path(__file__).resolve().parents[1]
# Documents of other kinds committed beside the result documents: Nsight Compute counters and
# compute-sanitizer verdicts (their own schemas, read by harness.report.profile_tables and the
# GPU tests) and the manifests their drivers write beside the raw tool output.
NOT_RESULT_SCHEMAS = {
    records.PROFILE_SCHEMA,
    records.SANITIZE_SCHEMA,
    records.DISTRIBUTED_SCHEMA,  # K ranks per run (harness.report.distributed_tables reads them)
    records.REPRODUCIBLE_SCHEMA,  # result bits per input (harness.studies.accuracy)
    records.COMPARE_SCHEMA,  # `reduce-ladder compare`: ratios between device folders
}


# ROWS documents of rows only, no case of the ladder's suites: sums along a dim, calls from
# Python, sums from host memory, and the experiments' designs, paths and shapes
ROWS_ONLY = ("axis", "callable", "host", "fastest-ablation", "hopper-loads", "repro-sweep",
             "small-n", "call-profile", "inductor-code")  # fmt: skip


def _result_documents() -> list[Path]:
    out = []
    for p in sorted((ROOT / "results").rglob("*.json")):
        if p.parent.name.endswith("-raw"):
            continue
        doc = json.loads(p.read_text())
        if isinstance(doc, dict) and doc.get("schema") in NOT_RESULT_SCHEMAS:
            continue
        out.append(p)
    return out


COMMITTED = _result_documents()


def _timing(ms: float) -> dict:
    return Timing(median_ms=ms, min_ms=ms * 0.9, p10_ms=ms * 0.95, p90_ms=ms * 1.1, reps=7).record()


def test_a_result_records_json_reads_into_the_rows_a_suite_writes_and_joins_back():
    """bench/2's (and accuracy/1's) items, a result record's JSON: one row per time, the check's
    values, message and passes on the first row, and the case joined from the rows says what the
    record said."""
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
    rows = record_rows(record, **common)
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
    untimed = record_rows({"variant": "peer/copy", "dtype": "float32", "n": 8, "status": "error",
                           "message": "boom"}, **common)  # fmt: skip
    assert [(r.metric, r.median_ms, r.check, r.info) for r in untimed] == [
        ("check", None, "error", {"message": "boom"})
    ]


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_committed_result_file_reads_through_the_loader(path: Path):
    doc = load_document(path)
    assert isinstance(doc, Document) and doc.device.startswith("NVIDIA ")
    for r in doc.rows:  # every row's JSON form round-trips, its info too
        back = records.row_from_json(json.loads(json.dumps(r.to_json())), r.device, r.versions)
        assert back == r and back.info == r.info
    if doc.kind == "rows" and doc.raw.get("suite") in ROWS_ONLY:
        from harness.report.documents import rows

        found = rows(doc)
        assert not doc.results and found and all(r.median_ms > 0 for r in found)
        return
    if accuracy := [r for r in doc.rows if r.suite == "accuracy"]:  # a row per variant, datum, n
        assert accuracy == doc.rows and not doc.results
        assert all(
            r.config and r.metric == "check" and r.check in ("ok", "error") for r in doc.rows
        )
        return
    assert doc.results
    for r in doc.results:
        assert r.variant and r.v.backend in ("cuda", "triton", "peer") and r.n > 0 and r.dtype
        assert r.status in ("ok", "wrong", "error")
    ladder = doc.kind == "pytest-benchmark" or doc.raw.get("suite") == "ladder"
    if ladder and doc.meta.get("mode") != "check":
        timed = [r for r in doc.results if r.ok]
        assert timed and all(r.timed and r.gbps > 0 for r in timed)
    if doc.kind == "rows" and doc.raw.get("suite") == "fastest":  # `reduce-ladder fastest-bench`
        ids = {r.variant for r in doc.results}
        pairs = ({"cuda/fastest", "triton/fastest"}, {"cuda/reproducible", "triton/reproducible"})
        assert "peer/copy" in ids and any(pair <= ids for pair in pairs)  # --variants picks one


def test_schema_strings_are_spelled_in_one_place():
    spelled = re.compile(r"""["']reduce-ladder/[a-z-]+/\d+["']""")
    allowed = {
        ROOT / "harness" / "report" / "records.py",
        ROOT / "harness" / "compile" / "census.py",  # a lower layer: records.py names it
        ROOT / "harness" / "report" / "documents.py",  # the loader: the older forms' names
    }
    found = []
    for folder in ("harness", "benchmarks", "tests", "experiments"):
        for p in (ROOT / folder).rglob("*.py"):
            if p not in allowed and spelled.search(p.read_text()):
                found.append(p.relative_to(ROOT).as_posix())
    assert found == [], f"schema strings outside records.py: {found}"
