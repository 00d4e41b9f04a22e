"""Read any document the harness writes, in any version it ever wrote, into result records:

    kind               schema (records.py)                   records from
    "cli"              run/2, run/1                          "results"
    "pytest-benchmark" (pytest-benchmark's own JSON)          each benchmark's extra_info
                       extra_info: bench/2, bench/1
    "fastest-bench"    fastest-bench/2, fastest-bench/1      "results" (/1: "rows", one per n)
    "host"             host/2, host/1                        "table"
    "fastest-ablation" fastest-ablation/1                    none: times per design choice
                       (experiments/fastest_ablation)
    "accuracy"         accuracy/1                            "results" (ulps in each extra)

load_document reads any of them; load_run only what the report compares (a ladder run or the
benchmark suite). Every failure is a ReportError with the file's name and what is wrong.

Every output (a --json file, an --out folder, a generated doc) follows one rule, here:
check_output before the work (a thing in the way, or a place nothing can be written, is a
ReportError; the check leaves nothing behind), output_path when writing (missing parent folders
are created, without a word).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from harness.report import records, study_records
from harness.report.records import ResultRecord


class ReportError(Exception):
    """A file that cannot be read or understood; the CLI prints it and exits 2."""


@dataclass
class Document:
    path: str
    kind: str
    schema: str
    device: str  # the device's name
    created: str
    records: list[ResultRecord] = field(default_factory=list)
    meta: dict = field(default_factory=dict)  # device details, mode, synthetic
    raw: dict = field(default_factory=dict)  # the document as read (the host study's sweep...)

    @property
    def label(self) -> str:
        return f"{self.device} ({Path(self.path).name})"

    @property
    def timed(self) -> bool:
        return any(r.timed for r in self.records)

    def dtypes(self) -> list[str]:
        return sorted({r.dtype for r in self.records}, key=lambda d: (d != "float32", d))

    def sizes(self, dtype: str | None = None) -> list[int]:
        return sorted({r.n for r in self.records if dtype is None or r.dtype == dtype})


def read_json(path: str | Path) -> dict | list:
    p = Path(path)
    try:
        text = p.read_text()
    except FileNotFoundError:
        raise ReportError(f"{p}: no such file") from None
    except OSError as e:
        raise ReportError(f"{p}: cannot read it ({e.strerror or e})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise ReportError(f"{p}: not valid JSON ({e.msg} at line {e.lineno})") from None


def load_document(path: str | Path) -> Document:
    return document_from(read_json(path), str(path))


def load_run(path: str | Path) -> Document:
    """A run the report can compare: `reduce-ladder run --json` or pytest-benchmark's JSON."""
    doc = load_document(path)
    if doc.kind not in ("cli", "pytest-benchmark"):
        raise ReportError(
            f"{path}: a {doc.kind} document ({doc.schema!r}), not a ladder run; expected a run "
            f"document (from `reduce-ladder run --json`) or pytest-benchmark's JSON (from "
            "`pytest benchmarks/ --benchmark-json=...`)"
        )
    return doc


def document_from(doc: dict | list, path: str) -> Document:
    schema = doc.get("schema") if isinstance(doc, dict) else type(doc).__name__
    try:
        if schema in (records.RUN_SCHEMA, records.RUN_SCHEMA_V1):
            return _run(path, doc)
        if _is_pytest_benchmark(doc):
            return _bench(path, doc)
        if schema in (records.FASTEST_BENCH_SCHEMA, records.FASTEST_BENCH_SCHEMA_V1):
            return _fastest_bench(path, doc)
        if schema in (records.HOST_SCHEMA, records.HOST_SCHEMA_V1):
            return _host(path, doc)
        if schema == records.FASTEST_ABLATION_SCHEMA:
            return _head(path, "fastest-ablation", doc)
        if schema == records.ACCURACY_SCHEMA:
            return _records(_head(path, "accuracy", doc), doc["results"])
    except (KeyError, TypeError, ValueError) as e:
        raise ReportError(f"{path}: a result row lacks a field or has a bad one ({e})") from None
    raise ReportError(
        f"{path}: unknown format (schema {schema!r}); expected a run document "
        f"({records.RUN_SCHEMA!r}, from `reduce-ladder run --json`) or pytest-benchmark's JSON "
        "(from `pytest benchmarks/ --benchmark-json=...`)"
    )


def _is_pytest_benchmark(doc: dict | list) -> bool:
    if not isinstance(doc, dict):
        return False
    return isinstance(doc.get("benchmarks"), list) and "machine_info" in doc


def _head(path: str, kind: str, doc: dict) -> Document:
    dev = doc.get("device") or {}
    return Document(
        path,
        kind,
        doc.get("schema", ""),
        dev.get("name") or "no GPU",
        doc.get("created", ""),
        meta={"device": dev, "mode": doc.get("mode"), "synthetic": doc.get("synthetic", False)},
        raw=doc,
    )


def _records(out: Document, rows: list[dict]) -> Document:
    out.records = [ResultRecord.from_json(r) for r in rows]
    return out


def _run(path: str, doc: dict) -> Document:
    out = _head(path, "cli", doc)
    out.records = [ResultRecord.from_json(r) for r in doc.get("results", []) if "variant" in r]
    return out


def _bench(path: str, doc: dict) -> Document:
    rows = []
    for b in doc["benchmarks"]:
        info = b.get("extra_info") or {}
        if "variant" not in info:
            continue  # not one of ours
        try:
            rows.append(_bench_record(info))
        except (KeyError, TypeError, ValueError) as e:
            raise ReportError(f"{path}: benchmark {b.get('name')!r} lacks a field ({e})") from None
    if not rows:
        raise ReportError(
            f"{path}: pytest-benchmark JSON without reduce-ladder benchmarks (was the suite "
            "skipped, e.g. run without a GPU?)"
        )
    mi = doc.get("machine_info") or {}
    gpu = mi.get("gpu") or {}
    name = gpu.get("name") or next((r.device for r in rows if r.device), "")
    return Document(
        path,
        "pytest-benchmark",
        (mi.get("reduce_ladder") or {}).get("schema", ""),
        name or "unknown device",
        doc.get("datetime", ""),
        rows,
        {"device": gpu, "synthetic": mi.get("synthetic", False)},
        doc,
    )


def _bench_record(info: dict) -> ResultRecord:
    r = ResultRecord.from_json(info)
    if info.get("schema") == records.BENCH_SCHEMA:
        return r
    # bench/1: the catalogue record beside the row, the check nested with its message, no
    # wrong_demo or seeds of the row's own
    cat = info.get("catalogue") or {}
    check = info.get("check") or {}
    return replace(
        r,
        wrong_demo=bool(info.get("wrong_demo") or cat.get("wrong")),
        seeds=tuple(cat.get("seeds") or ()),
        message=check.get("message") or "",
    )


def _fastest_bench(path: str, doc: dict) -> Document:
    out = _head(path, "fastest-bench", doc)
    if doc["schema"] == records.FASTEST_BENCH_SCHEMA:
        out.records = [ResultRecord.from_json(r) for r in doc["results"]]
    else:
        for row in doc["rows"]:
            out.records += study_records.fastest_bench_records(row, out.device)
    return out


def _host(path: str, doc: dict) -> Document:
    out = _head(path, "host", doc)
    dtype = (doc.get("options") or {}).get("dtype")
    if doc["schema"] == records.HOST_SCHEMA:
        out.records = [ResultRecord.from_json(r) for r in doc.get("table") or []]
    else:
        out.records = [study_records.host_record(r, dtype) for r in doc.get("table") or []]
    return out


def write_document(path: str | Path, doc: dict) -> None:
    """Every JSON document the harness writes, in one form: indented by one, a final newline
    (values JSON cannot hold, such as paths, as their str); missing parent folders are created.
    OSError is the caller's to word."""
    output_path(path).write_text(json.dumps(doc, indent=1, default=str) + "\n")


# -- outputs: one rule for every file and folder the harness writes -----------------------------


def output_path(path: str | Path, *, folder: bool = False) -> Path:
    """path, ready to be written: its missing parent folders (and, for a folder, itself)
    created."""
    p = Path(path)
    (p if folder else p.parent).mkdir(parents=True, exist_ok=True)
    return p


def check_output(path: str | Path, *, folder: bool = False, option: str = "") -> Path:
    """Before the work: can path (a file, or with folder=True a folder) be written? Missing
    folders are fine (output_path creates them); a file where a folder is needed, a folder where
    a file is, or a place where nothing can be written is a ReportError naming what is in the
    way. The proof is a write: folders made for it, and a file it created, are removed again;
    an existing file is opened for appending and sent zero bytes, which changes nothing and
    still fails where writing would (a full device, a read-only file system)."""
    p = Path(path)
    where = f"cannot write {path}" + (f" ({option})" if option else "")
    if folder and p.exists() and not p.is_dir():
        raise ReportError(f"{where}: {path} is a file, not a folder")
    if not folder and p.is_dir():
        raise ReportError(f"{where}: it is a folder; give a file name")
    folders = p if folder else p.parent
    missing = []
    while not folders.exists() and folders != folders.parent:
        missing.append(folders)
        folders = folders.parent
    if not folders.is_dir():
        raise ReportError(f"{where}: {folders} is a file, not a folder")
    made: list[Path] = []
    try:
        for d in reversed(missing):
            d.mkdir()
            made.append(d)
        target = p / ".reduce-ladder-write-test" if folder else p
        existed = target.exists()
        fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
        try:
            os.write(fd, b"")
        finally:
            os.close(fd)
            if not existed:
                target.unlink()
    except OSError as e:
        raise ReportError(f"{where}: {e.strerror or e}") from None
    finally:
        for d in reversed(made):
            d.rmdir()
    return p
