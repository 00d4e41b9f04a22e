"""The last two documents whose items were a result record's JSON, their old readers (moved here
from harness/report/documents.py with this migration) and their conversions:

    bench/2 (pytest-benchmark's JSON, a record suite's extra_info one result record)
        ->  bench/3: the same pytest-benchmark JSON, each such extra_info {"rows": [the rows the
            old reader made of it]} (what benchmarks/test_bench.py writes now)
    accuracy/1 ({"results": [result record]})
        ->  rows/1, suite "accuracy" (what `reduce-ladder accuracy --json` writes now)

The old readers read a record's JSON as it is (record_json_rows), not through legacy_record's
ResultRecord: the loader read these two forms that way, and the converted files must give the
very rows it gave."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from experiments.migrate_legacy_results.legacy_record import BENCH_V2
from harness.report import documents, records
from harness.report.records import CASE_METRICS, NO_GPU, Document, Row, rows_document
from harness.studies.suites import row_common

# the accuracy study's document before it wrote rows: {"results": [record]}
ACCURACY_V1 = BENCH_V2.replace("bench/2", "accuracy/1")
BENCH_V3 = records.BENCH_SCHEMA
_RECORD_INFO = ("message", "check", "passes", "blocks_first_pass", "extra")
_STATS = ("median_ms", "min_ms", "p10_ms", "p90_ms", "reps")

# -- the old readers ----------------------------------------------------------------------------


def record_json_rows(d: dict, config: str = "", **common) -> list[Row]:
    """A result record's JSON as the rows a suite writes now: one per time it holds (first_pass,
    total, graph, call), or one "check" row (median None) when it holds none; its message, check
    values, passes, blocks and extra in the first row's info; common: device, suite, versions."""
    ident = {"variant": d["variant"], "config": config, "dtype": d["dtype"], "shape": int(d["n"]),
             "check": d.get("status") or "ok"}  # fmt: skip
    info = {k: d[k] for k in _RECORD_INFO if d.get(k) not in (None, "", {})}
    if isinstance(info.get("check"), dict):
        info["check"] = {k: x for k, x in info["check"].items() if x is not None}
    out = []
    for metric in CASE_METRICS:
        t = d.get(metric)
        if not isinstance(t, dict) or t.get("median_ms") is None:
            continue
        nbytes = d.get("bytes_first_pass" if metric == "first_pass" else "bytes_total")
        stats = {k: t.get(k) for k in _STATS}
        out.append(Row(**common, **ident, metric=metric, **stats, bytes=nbytes,
                       info={} if out else info))  # fmt: skip
    return out or [Row(**common, **ident, metric="check", median_ms=None, info=info)]


def _is_record(info: dict) -> bool:
    return "variant" in info


def _bench_common(doc: dict) -> dict[str, Any]:
    """device, suite, versions of a bench/2 file's rows: the device machine_info's gpu, else the
    first record's."""
    recs = [info for b in doc["benchmarks"] if _is_record(info := b.get("extra_info") or {})]
    mi = doc.get("machine_info") or {}
    gpu = mi.get("gpu") or {}
    name = gpu.get("name") or next((r["device"] for r in recs if r.get("device")), "")
    schema = (mi.get("reduce_ladder") or {}).get("schema", "")
    head = Document("", "pytest-benchmark", schema, name or "unknown device", "", {"device": gpu})
    return {"device": head.device, "suite": head.kind, "versions": documents.versions(head)}


def bench_v2_rows(doc: dict) -> list[Row]:
    """The rows the loader made of a bench/2 file: every record benchmark's rows (its
    extra_info a result record), then every other benchmark's (extra_info["rows"], a rows suite
    beside them)."""
    common = _bench_common(doc)
    infos = [b.get("extra_info") or {} for b in doc["benchmarks"]]
    out = [row for info in infos if _is_record(info) for row in record_json_rows(info, **common)]
    others = [r for info in infos if not _is_record(info) for r in info.get("rows") or []]
    return out + [records.row_from_json(r, common["device"], common["versions"]) for r in others]


def accuracy_v1_rows(doc: dict) -> list[Row]:
    """The rows the loader made of an accuracy/1 file: each record its one "check" row, config
    its data family, info its check and what else the study said (ulps, faithful, kappa...)."""
    dev = doc.get("device") if isinstance(doc.get("device"), dict) else {}
    head = Document("", "accuracy", doc.get("schema", ""), dev.get("name") or NO_GPU, "",
                    {"device": dev}, doc)  # fmt: skip
    common = {"device": head.device, "suite": "accuracy", "versions": documents.versions(head)}
    out = []
    for d in doc.get("results") or []:
        extra = dict(d.get("extra") or {})
        [row] = record_json_rows({**d, "extra": {}}, config=extra.pop("data", ""), **common)
        out.append(replace(row, info=row.info | extra))
    return out


# -- the conversions: (the document now, no records, the rows the loader must read back) -------


def bench_v3(doc: dict) -> tuple[dict, list, list[Row]]:
    """bench/2 -> bench/3: each record benchmark's extra_info its rows as the old reader made them
    (Row.to_json()), machine_info's schema bench/3; every other key of pytest-benchmark's JSON (its
    stats, params, options, commit and machine info) as it was, so its own `compare` still reads
    the file. The rows to read back are the old reader's."""
    common = _bench_common(doc)
    benchmarks = []
    for b in doc["benchmarks"]:
        info = b.get("extra_info") or {}
        if _is_record(info):
            rows = [r.to_json() for r in record_json_rows(info, **common)]
            b = {**b, "extra_info": {"rows": rows}}
        benchmarks.append(b)
    mi = doc["machine_info"]
    mi = {**mi, "reduce_ladder": {**mi["reduce_ladder"], "schema": BENCH_V3}}
    return {**doc, "machine_info": mi, "benchmarks": benchmarks}, [], bench_v2_rows(doc)


def accuracy_rows(doc: dict) -> tuple[dict, list, list[Row]]:
    """accuracy/1 -> the accuracy study's ROWS document: the old reader's rows, the old head's
    fields (seed, limits, families; created: when it was measured) beside them, the rows' versions
    the study's (suites.row_common of the device)."""
    want = accuracy_v1_rows(doc)
    common = row_common("accuracy", doc["device"])
    rows = [replace(r, versions=common["versions"]) for r in want]
    head: dict[str, Any] = {k: v for k, v in doc.items()
                            if k not in ("schema", "created", "device", "results")}  # fmt: skip
    new = rows_document(rows, suite="accuracy", device=doc["device"], **head)
    new["created"] = doc["created"]
    return new, [], want
