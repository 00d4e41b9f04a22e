"""The row: its JSON form round-trips, every committed results/ file reads through the loader into
rows (and the ladder's cases joined from them), and every schema string is spelled in one place.
(A result record's JSON, the older documents' items, read into rows: the migration experiment's
old reader, tests/test_experiment_migrate_legacy_results.py.)"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from harness.report import records
from harness.report.documents import Document, load_document

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
    }
    found = []
    for folder in ("harness", "benchmarks", "tests", "experiments"):
        for p in (ROOT / folder).rglob("*.py"):
            if p not in allowed and spelled.search(p.read_text()):
                found.append(p.relative_to(ROOT).as_posix())
    assert found == [], f"schema strings outside records.py: {found}"
