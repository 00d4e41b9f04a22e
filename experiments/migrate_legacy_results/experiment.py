"""One-off: the committed result files in a format no producer writes any more, rewritten in the
format its producer writes now, so that the loader (harness.report.documents) reads one version of
each family. Every measured value is copied as it was read, never recomputed; a file is written
only when the loader reads back from it the very records (and, where the old reader made rows of
it, the very rows) the old reader made of the old file.

    fastest-bench/1, /2  ->  rows/1, suite "fastest"  (`reduce-ladder fastest-bench --json` now)
    run/2                ->  rows/1, suite "ladder"   (`reduce-ladder run` / `check --json`)
    callable/1           ->  rows/1, suite "callable" (`reduce-ladder bench callable --json`)
    host/1, /2           ->  rows/1, suite "host"     (`reduce-ladder host --json`; host.py)
    bench/1, /2          ->  bench/3 in pytest-benchmark's JSON (each extra_info its case's
                             rows, what benchmarks/test_bench.py writes now; record_documents.py)
    accuracy/1           ->  rows/1, suite "accuracy" (`reduce-ladder accuracy --json`;
                             record_documents.py)
    fastest-ablation/1, hopper-loads/1, repro-sweep/1, small-n/1, call-profile/1, inductor-code/1
                         ->  rows/1, suite the old family's name (the experiments write it now)

The readers of the old versions live here now (they left harness/report with this
migration; the result record itself, legacy_record.py, left it when the harness came to write
rows only; the readers of a record's JSON as it is, bench/2's and accuracy/1's, are in
record_documents.py); a file already in the current format is left alone, so a second run changes
nothing. README.md lists the files converted.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from experiments import rounds_document
from experiments.call_profile import experiment as call_profile
from experiments.inductor_code import experiment as inductor_code
from experiments.migrate_legacy_results import host
from experiments.migrate_legacy_results import record_documents as by_record
from experiments.migrate_legacy_results.legacy_record import (
    BENCH_V2,
    ResultRecord,
    for_variant,
    record_rows,
    records_from_rows,
)
from experiments.reproducible_sweep import experiment as repro_sweep
from experiments.small_n_sweep import experiment as small_n
from harness.core import catalogue
from harness.core.catalogue import COPY_ID, CUB_ID, TORCH_SUM_ID
from harness.report import documents, records
from harness.report.records import Row, rows_document, timing_from
from harness.studies.suites import row_common

ROOT = Path(__file__).resolve().parents[2]
# the old schema strings, by family and version (records.py spells the current ones only)
_PREFIX = records.ROWS_SCHEMA.split("/")[0]
FASTEST_V1, FASTEST_V2 = (f"{_PREFIX}/fastest-bench/{v}" for v in (1, 2))
BENCH_V1 = f"{_PREFIX}/bench/1"
RUN_V2 = f"{_PREFIX}/run/2"  # `reduce-ladder run --json` before the rows: {"results": [record]}
CALLABLE_V1 = f"{_PREFIX}/callable/1"  # the per-call run before the callable suite: us per call
# the experiments' own documents before each wrote a ROWS document: schema -> the experiment's
# ROWS document of it
STUDIES = {
    f"{_PREFIX}/{suite}/1": write
    for suite, write in (
        ("fastest-ablation", partial(rounds_document, suite="fastest-ablation")),
        ("hopper-loads", partial(rounds_document, suite="hopper-loads")),
        ("repro-sweep", repro_sweep.document),
        ("small-n", small_n.document),
        ("call-profile", call_profile.document),
        ("inductor-code", inductor_code.document),
    )
}
DERIVED = {"vs_better_peer", "x_best_peer", "log2n"}  # ratios, exponents: of the numbers kept


def fixtures(root: Path) -> list[Path]:
    """The report tests' fixtures (outside results/), converted as the results are."""
    return sorted((root / "tests" / "data").glob("*.json"))


# -- the old readers ----------------------------------------------------------------------------

# fastest-bench/1 row keys, in order (cuda/ and triton/ reproducible with --variants), and the
# catalogue ids of those that are not one
FASTEST_BENCH_KEYS = ("cuda/fastest", "triton/fastest", "cuda/reproducible", "triton/reproducible",
                      "torch.sum", "cupy.sum-cub", "copy")  # fmt: skip
FASTEST_BENCH_IDS = {"torch.sum": TORCH_SUM_ID, "cupy.sum-cub": CUB_ID, "copy": COPY_ID}


def fastest_bench_records(row: dict[str, Any], device: str | None) -> list[ResultRecord]:
    """The records of one fastest-bench/1 row (one dtype and n, every variant and peer side by
    side), in FASTEST_BENCH_KEYS order; a key the row lacks (a peer that cannot take the dtype)
    is left out. extra keeps bytes_read (n itemsize) and a graph capture's error."""
    out = []
    for key in FASTEST_BENCH_KEYS:
        timed = row.get(key)
        checked = f"{key}:ok" in row
        if timed is None and not checked:
            continue
        timed = timed if isinstance(timed, dict) else {}
        graph = row.get(f"{key}:graph") or {}
        status, message = "ok", ""
        if checked and not row[f"{key}:ok"]:
            # The bench times a variant whose check ran (and failed); one that raised has no time.
            message = row.get(f"{key}:message", "")
            status = "wrong" if timed.get("median_ms") is not None else "error"
        if "error" in timed:
            status, message = "error", message or timed["error"]
        extra: dict[str, Any] = {"bytes_read": row.get("bytes_read")}
        if "error" in graph:
            extra["graph_error"] = graph["error"]
        v = catalogue.get(FASTEST_BENCH_IDS.get(key, key))
        out.append(for_variant(v, row["dtype"], int(row["n"]), status=status, message=message,
                               total=timing_from(timed), graph=timing_from(graph), device=device,
                               extra=extra))  # fmt: skip
    return out


def bench_v1_record(info: dict) -> ResultRecord:
    """A bench/1 extra_info: the catalogue record beside the row, the check nested with its
    message, no wrong_demo or seeds of the row's own."""
    cat = info.get("catalogue") or {}
    check = info.get("check") or {}
    return replace(
        ResultRecord.from_json(info),
        wrong_demo=bool(info.get("wrong_demo") or cat.get("wrong")),
        seeds=tuple(cat.get("seeds") or ()),
        message=check.get("message") or "",
    )


def callable_rows(doc: dict, common: dict) -> list[Row]:
    """A callable/1 document's rows as its old reader made them (config "", no check, no reps;
    microseconds as milliseconds), info keeping the row's calls per loop and its loops."""
    out = []
    for r in doc.get("results", []):
        if r.get("us_per_call") is None:
            continue
        min_ms = None if r.get("min_us") is None else r["min_us"] / 1e3
        info = {k: r[k] for k in ("calls_per_loop", "loops") if k in r}
        out.append(Row(**common, variant=r["entry"], config="", dtype=r["dtype"], shape=r["n"],
                       metric="call", median_ms=r["us_per_call"] / 1e3, min_ms=min_ms,
                       bytes=r.get("touched_bytes"), info=info))  # fmt: skip
    return out


# -- the conversions: (the document now, the records the old reader made, the rows the loader
# must read back where the old reader made rows: None where the records say it all) ----------


def fastest(doc: dict) -> tuple[dict, list[ResultRecord]]:
    device = doc["device"]
    if doc["schema"] == FASTEST_V1:
        recs = [r for row in doc["rows"] for r in fastest_bench_records(row, device.get("name"))]
    else:
        recs = [ResultRecord.from_json(r) for r in doc["results"] if "variant" in r]
    common = row_common("fastest", device)
    rows = [row for r in recs for row in record_rows(r, **common)]
    head = {k: v for k, v in doc.items()
            if k not in ("schema", "created", "device", "results", "rows")}  # fmt: skip
    new = rows_document(rows, suite="fastest", device=device, **head)
    new["created"] = doc["created"]  # when it was measured
    return new, recs


def run(doc: dict) -> tuple[dict, list[ResultRecord], list[Row]]:
    """run/2 -> the ladder suite's ROWS document, as `reduce-ladder run --json` writes it now
    (mode and seed_tables beside the rows); the rows read back are the old reader's, suite
    "ladder" for "cli"."""
    recs = [ResultRecord.from_json(r) for r in doc["results"] if "variant" in r]
    common = row_common("ladder", doc["device"])
    rows = [row for r in recs for row in record_rows(r, **common)]
    head = {k: v for k, v in doc.items() if k not in ("schema", "created", "device", "results")}
    new = rows_document(rows, suite="ladder", device=doc["device"], **head)
    new["created"] = doc["created"]  # when it was measured
    return new, recs, rows


def per_call(doc: dict) -> tuple[dict, list[ResultRecord], list[Row]]:
    """callable/1 -> the callable suite's ROWS document (method, entries, Triton configs and the
    plan cache's counts beside the rows). What the suite writes beyond the old reader's rows is
    said by the old file: config the entry's kind (its first word), check "ok" (a row with a
    time was measured), reps its loops."""
    common = row_common("callable", doc["device"])
    rows = [replace(r, config=r.variant.split(" ")[0], check="ok", reps=r.info.get("loops"))
            for r in callable_rows(doc, common)]  # fmt: skip
    head = {k: v for k, v in doc.items() if k not in ("schema", "created", "device", "results")}
    new = rows_document(rows, suite="callable", device=doc["device"], **head)
    new["created"] = doc["created"]
    return new, [], rows


def bench(doc: dict) -> tuple[dict, list[ResultRecord], list[Row]]:
    """bench/1 -> bench/3, through bench/2 (what benchmarks/test_bench.py wrote next: the record
    in extra_info), whose rows are its old reader's (record_documents.bench_v3)."""
    recs, benchmarks = [], []
    for b in doc["benchmarks"]:
        info = b.get("extra_info") or {}
        if "variant" in info:
            recs.append(bench_v1_record(info))
            b = {**b, "extra_info": {"schema": BENCH_V2, **recs[-1].to_json()}}
        benchmarks.append(b)
    mi = doc["machine_info"]
    mi = {**mi, "reduce_ladder": {**mi["reduce_ladder"], "schema": BENCH_V2}}
    new, _, rows = by_record.bench_v3({**doc, "machine_info": mi, "benchmarks": benchmarks})
    return new, recs, rows


def study(doc: dict) -> tuple[dict, list[ResultRecord], list[Row]]:
    """An experiment's own document -> the ROWS document the experiment writes now (its header
    kept, "created" only where it was said), and its rows; main checks that it keeps every
    number but DERIVED's."""
    new = STUDIES[doc["schema"]](doc)
    if "created" not in doc:
        del new["created"]
    return new, [], documents.document_from(new, "converted").rows


def _numbers(x: Any, path: tuple = ()) -> list[tuple[tuple, float]]:
    """(the keys above it, the number) of every number in a document (not its booleans)."""
    if isinstance(x, dict):
        return [n for k, v in x.items() for n in _numbers(v, (*path, k))]
    if isinstance(x, list):
        return [n for v in x for n in _numbers(v, path)]
    return [(path, x)] if isinstance(x, int | float) and not isinstance(x, bool) else []


def kept(old: dict, new: dict) -> bool:
    """Every number of the old document is in the new one (a time in microseconds: in ms), but
    DERIVED's."""
    have = {x for _, x in _numbers(new)}
    return all(x in have or x / 1e3 in have for p, x in _numbers(old) if not DERIVED & set(p))


def convert(doc: dict | list) -> tuple | None:
    """The document in its current format, the records the old reader made of it and (where the
    conversion says them) the rows the loader must read back, or None where it is current (or
    not a family this migration converts)."""
    if not isinstance(doc, dict):
        return None
    if isinstance(doc.get("benchmarks"), list) and "machine_info" in doc:
        schema = (doc["machine_info"].get("reduce_ladder") or {}).get("schema")
        if schema == BENCH_V2:
            return by_record.bench_v3(doc)
        return bench(doc) if schema == BENCH_V1 else None
    if doc.get("schema") == by_record.ACCURACY_V1:
        return by_record.accuracy_rows(doc)
    if doc.get("schema") in (FASTEST_V1, FASTEST_V2):
        return fastest(doc)
    if doc.get("schema") == RUN_V2:
        return run(doc)
    if doc.get("schema") == CALLABLE_V1:
        return per_call(doc)
    if doc.get("schema") in STUDIES:
        return study(doc)
    return host.host(doc) if doc.get("schema") in (host.HOST_V1, host.HOST_V2) else None


def _same(got: list, want: list, ordered: bool = True) -> bool:
    """Records or rows field for field (a row's device too, which its JSON form leaves out);
    ordered=False: the same ones in any order."""
    key = lambda x: (getattr(x, "device", None), x.to_json())  # noqa: E731
    if ordered:
        return list(map(key, got)) == list(map(key, want))
    text = lambda x: json.dumps(key(x), sort_keys=True)  # noqa: E731
    return sorted(map(text, got)) == sorted(map(text, want))


def _text(doc: dict, was: str) -> str:
    """doc in the form of the file it replaces: pytest-benchmark's own indent and no final
    newline, a generator's one line (the report tests' fixtures), else the harness's indent."""
    if was.startswith("{\n    "):
        return json.dumps(doc, indent=4)
    return json.dumps(doc) + "\n" if was.count("\n") == 1 else json.dumps(doc, indent=1) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, default=ROOT, help="the repository (default: this one)")
    ap.add_argument("--dry-run", action="store_true", help="check and say, write nothing")
    a = ap.parse_args(argv)
    bad = 0
    for path in [*sorted((a.root / "results").rglob("*.json")), *fixtures(a.root)]:
        old = documents.read_json(path)
        got = convert(old)
        if got is None:
            continue
        new, recs, want_rows = (*got, None) if len(got) == 2 else got
        tmp = path.with_name(path.name + ".migrating")
        tmp.write_text(_text(new, path.read_text()))
        try:  # read back as the file will be read
            back = documents.load_document(tmp)
            # the records the old reader made; where it made rows alone (no records), the rows
            rows_alone = want_rows is not None and not recs
            same = rows_alone or _same(records_from_rows(back.rows), recs)
            if want_rows is not None:
                # a pytest-benchmark file's rows come back in its benchmarks' order, where
                # bench/2's reader read the records' rows first: the same rows
                ordered = back.kind != "pytest-benchmark"
                same = same and _same(back.rows, want_rows, ordered)
            if isinstance(old, dict) and old.get("schema") in STUDIES:
                same = same and kept(old, back.raw)
            if back.raw.get("suite") == "host":  # every value of the old document in the rows
                same = same and host.host_v2(back.rows, back.raw) == host.as_host_v2(old)  # type: ignore
        except documents.ReportError:
            same = False
        rel = path.relative_to(a.root).as_posix()
        said = f"{len(recs)} records" + (f", {len(want_rows)} rows" if want_rows else "")
        print(f"{rel}: {said} {'kept' if same else 'CHANGED: not written'}")
        if same and not a.dry_run:
            tmp.replace(path)
        else:
            tmp.unlink()
        bad += not same
    return 1 if bad else 0
