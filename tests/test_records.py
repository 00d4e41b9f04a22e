"""The result record: its JSON form round-trips, every committed results/ file reads through the
loader into records, and every schema string is spelled in one place."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from harness.core import catalogue
from harness.core.timing import Timing
from harness.report import records
from harness.report.documents import Document, load_document
from harness.report.records import Check, ResultRecord

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


# ROWS documents of rows only, no 1-D result records: sums along a dim, calls from Python, sums
# from host memory, and the experiments' designs, paths and shapes
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


def _timing(ms: float) -> Timing:
    return Timing(median_ms=ms, min_ms=ms * 0.9, p10_ms=ms * 0.95, p90_ms=ms * 1.1, reps=7)


def test_json_form_round_trips_and_leaves_out_what_was_not_measured():
    rec = records.for_variant(
        catalogue.get("cuda/v3-sequential"),
        "float32",
        2**20,
        status="wrong",
        message="|result - golden| = 3 > tolerance 0",
        check=Check(value=4.0, golden=1, abs_err=3.0, tolerance=0.0, exact_required=True),
        first_pass=_timing(0.01),
        total=_timing(0.02),
        passes=3,
        blocks_first_pass=4096,
        bytes_first_pass=4 * (2**20 + 4096),
        bytes_total=4_212_000,
        device="SYNTHETIC",
        extra={"graph_error": "x"},
    )
    doc = rec.to_json()
    assert ResultRecord.from_json(doc) == rec
    assert doc["ok"] is False and doc["seeds"] == list(catalogue.get("cuda/v3-sequential").seeds)
    assert doc["gbps_total"] == 4_212_000 / 0.02 / 1e6
    assert doc["check"] == {
        "value": 4.0,
        "golden": 1,
        "abs_err": 3.0,
        "tolerance": 0.0,
        "exact_required": True,
    }
    assert "graph" not in doc and "call" not in doc and None not in doc.values()
    # the identity first, in the order the record declares it
    assert list(doc)[:9] == [
        "variant",
        "backend",
        "stage",
        "family",
        "seeds",
        "twin",
        "wrong_demo",
        "dtype",
        "n",
    ]


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_committed_result_file_reads_through_the_loader(path: Path):
    doc = load_document(path)
    assert isinstance(doc, Document) and doc.device.startswith("NVIDIA ")
    if doc.kind == "rows" and doc.raw.get("suite") in ROWS_ONLY:
        from harness.report.documents import rows

        found = rows(doc)
        assert not doc.records and found and all(r.median_ms > 0 for r in found)
        return
    assert doc.records
    for r in doc.records:
        assert r.variant and r.backend in ("cuda", "triton", "peer") and r.n > 0 and r.dtype
        assert r.status in ("ok", "wrong", "error")
        assert ResultRecord.from_json(r.to_json()) == r
    ladder = doc.kind == "pytest-benchmark" or doc.raw.get("suite") == "ladder"
    if ladder and doc.meta.get("mode") != "check":
        timed = [r for r in doc.records if r.ok]
        assert timed and all(r.total and r.gbps_total > 0 for r in timed)
    if doc.kind == "rows" and doc.raw.get("suite") == "fastest":  # `reduce-ladder fastest-bench`
        ids = {r.variant for r in doc.records}
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
