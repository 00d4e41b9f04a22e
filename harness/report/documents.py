"""The one loader: every committed result file read by schema string into a Document
(records.Document). FAMILIES has one entry per family: its kind, its schema (spelled in
records.py; the committed files of older versions were rewritten in the current one:
experiments/migrate_legacy_results), its parser and, where it holds times, its long-format rows.
The pytest-benchmark, host and accuracy families parse into result records, a ROWS document
(every suite writes one, `reduce-ladder run --json` too) into rows and the records rebuilt from
them, the others are read as they are (raw) for their own tables; pytest-benchmark's JSON is
known by its shape, a manifest (profile-raw/, sanitize-raw/: *.manifest.json) by being a list.

load_document(path, kind) reads any of them (kind: the family, or families, the caller
accepts); load_run only what the report compares (a suite's records or the benchmark suite). Every
failure is a ReportError with the file's name and what is wrong. rows(doc) gives a document's
timed measurements as records.Row, whatever its family (harness.report.readers reads the
studies' own shapes).

Every output (a --json file, an --out folder, a generated doc) follows one rule, here:
check_output before the work (a thing in the way, or a place nothing can be written, is a
ReportError; the check leaves nothing behind), output_path when writing (missing parent folders
are created, without a word).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from harness.report import readers, records
from harness.report.records import Document, ResultRecord, Row


class ReportError(Exception):
    """A file that cannot be read or understood; the CLI prints it and exits 2."""


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


def merge_documents(docs: list[dict], keys: tuple[str, ...]) -> dict:
    """Documents of one family read as one (a run over variants added later writes its own file
    beside the first): the first document's header, every document's lists under keys."""
    return dict(docs[0]) | {key: [item for d in docs for item in d.get(key, [])] for key in keys}


def load_document(path: str | Path, kind: str | tuple[str, ...] = ()) -> Document:
    """The file's Document; with kind, a ReportError unless it is of that family (or one of
    those families)."""
    doc = document_from(read_json(path), str(path))
    kinds = (kind,) if isinstance(kind, str) else kind
    if kinds and doc.kind not in kinds:
        want = " or ".join(FAMILY[k].schema or k for k in kinds)
        raise ReportError(f"{path}: not a {want} document (found {doc.schema or doc.kind!r})")
    return doc


def load_run(path: str | Path) -> Document:
    """A run the report can compare: pytest-benchmark's JSON, or a suite's ROWS document with
    result records in it (`reduce-ladder run --json`, `reduce-ladder bench ladder --json`)."""
    doc = load_document(path)
    if doc.kind != "pytest-benchmark" and not (doc.kind == "rows" and doc.records):
        raise ReportError(
            f"{path}: a {doc.kind} document ({doc.schema!r}), not a ladder run; expected a run "
            f"(from `reduce-ladder run --json`) or pytest-benchmark's JSON (from "
            "`pytest benchmarks/ --benchmark-json=...`)"
        )
    return doc


def document_from(doc: dict | list, path: str) -> Document:
    if isinstance(doc, dict) and isinstance(doc.get("benchmarks"), list) and "machine_info" in doc:
        family = FAMILY["pytest-benchmark"]
    elif isinstance(doc, list):
        family = FAMILY["manifest"]
    else:
        family = BY_SCHEMA.get(doc.get("schema")) if isinstance(doc, dict) else None
    if family is None:
        schema = doc.get("schema") if isinstance(doc, dict) else type(doc).__name__
        raise ReportError(
            f"{path}: unknown format (schema {schema!r}); expected a ROWS document "
            f"({records.ROWS_SCHEMA!r}, from `reduce-ladder run --json`), pytest-benchmark's JSON "
            "(from `pytest benchmarks/ --benchmark-json=...`) or another result document "
            f"({', '.join(f.schema for f in FAMILIES if f.schema)})"
        )
    try:
        return family.parse(path, doc)
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise ReportError(f"{path}: a result row lacks a field or has a bad one ({e})") from None


def _head(path: str, kind: str, doc: dict) -> Document:
    dev = doc.get("device") if isinstance(doc.get("device"), dict) else {}
    dev = dev or (doc.get("versions") or {})  # inductor-code/1: the device among the versions
    if isinstance(dev.get("device"), str) and "name" not in dev:
        dev = {**dev, "name": dev["device"]}
    meta = {"device": dev, "mode": doc.get("mode"), "synthetic": doc.get("synthetic", False)}
    name, schema = dev.get("name") or records.NO_GPU, doc.get("schema", "")
    return Document(path, kind, schema, name, doc.get("created", ""), meta=meta, raw=doc)


def _bench(path: str, doc: dict) -> Document:
    rows = []
    for b in doc["benchmarks"]:
        info = b.get("extra_info") or {}
        if "variant" not in info:
            continue  # not one of ours
        try:
            rows.append(ResultRecord.from_json(info))
        except (KeyError, TypeError, ValueError) as e:
            raise ReportError(f"{path}: benchmark {b.get('name')!r} lacks a field ({e})") from None
    if not rows:
        raise ReportError(
            f"{path}: pytest-benchmark JSON without reduce-ladder benchmarks (was the suite "
            "skipped, e.g. run without a GPU?)"
        )
    mi = doc.get("machine_info") or {}
    gpu = mi.get("gpu") or {}
    name = gpu.get("name") or next((r.device for r in rows if r.device), "") or "unknown device"
    schema = (mi.get("reduce_ladder") or {}).get("schema", "")
    meta = {"device": gpu, "synthetic": mi.get("synthetic", False)}
    created = doc.get("datetime", "")
    return Document(path, "pytest-benchmark", schema, name, created, rows, meta, doc)


def _records(kind: str, key: str):
    """The parser of a family whose documents hold result records under `key`."""

    def parse(path: str, doc: dict) -> Document:
        out = _head(path, kind, doc)
        out.records = [ResultRecord.from_json(r) for r in doc.get(key) or [] if "variant" in r]
        return out

    return parse


def _rows(path: str, doc: dict) -> Document:
    out = _head(path, "rows", doc)
    vs = {**(doc.get("versions") or {}), "schema": doc["schema"]}
    versions = tuple(sorted((k, str(v)) for k, v in vs.items()))
    out.rows = [records.row_from_json(r, out.device, versions) for r in doc["rows"]]
    out.records = records.records_from_rows(out.rows)
    return out


def _manifest(path: str, doc: list) -> Document:
    if not all(isinstance(r, dict) and "variant" in r for r in doc):
        raise ValueError("a manifest is a list of launches, each naming its variant")
    return Document(path, "manifest", "", "", "", raw={"launches": doc})


@dataclass(frozen=True)
class Family:
    """One family of result documents: its kind, its schema string (none: known by its shape),
    its parser and, where it holds times, its rows."""

    kind: str
    schema: str
    parse: Callable[[str, dict | list], Document]
    rows: Callable[[Document], Iterable[Row]] | None = None


def _raw(kind: str, schema: str, rows: Callable[[Document], Iterable[Row]] | None = None) -> Family:
    """A family read as it is (the Document's raw): its own tables read its own fields."""
    return Family(kind, schema, lambda path, doc: _head(path, kind, doc), rows)


_RECORD_ROWS = readers.record_rows_of
FAMILIES: tuple[Family, ...] = (
    Family("pytest-benchmark", records.BENCH_SCHEMA, _bench, _RECORD_ROWS),
    Family("host", records.HOST_SCHEMA, _records("host", "table"), _RECORD_ROWS),
    Family("accuracy", records.ACCURACY_SCHEMA, _records("accuracy", "results"), _RECORD_ROWS),
    Family("rows", records.ROWS_SCHEMA, _rows,  # as written
           lambda doc: [r for r in doc.rows if r.median_ms is not None]),
    _raw("fastest-ablation", records.FASTEST_ABLATION_SCHEMA, readers.rounds_rows),
    _raw("hopper-loads", records.HOPPER_LOADS_SCHEMA, readers.rounds_rows),
    _raw("repro-sweep", records.REPRO_SWEEP_SCHEMA, readers.repro_sweep_rows),
    _raw("call-profile", records.CALL_PROFILE_SCHEMA, readers.call_profile_rows),
    _raw("small-n", records.SMALL_N_SCHEMA, readers.small_n_rows),
    _raw("inductor-code", records.INDUCTOR_CODE_SCHEMA, readers.inductor_rows),
    _raw("distributed", records.DISTRIBUTED_SCHEMA, readers.distributed_rows),
    _raw("profile", records.PROFILE_SCHEMA),
    _raw("sanitize", records.SANITIZE_SCHEMA),
    _raw("reproducible", records.REPRODUCIBLE_SCHEMA),
    _raw("compare", records.COMPARE_SCHEMA),
    _raw("census", records.CENSUS_SCHEMA),
    Family("manifest", "", _manifest),
)  # fmt: skip
FAMILY = {f.kind: f for f in FAMILIES}
# pytest-benchmark's JSON is known by its shape (its schema sits in machine_info), a manifest by
# being a list
BY_SCHEMA = {f.schema: f for f in FAMILIES if f.kind != "pytest-benchmark" and f.schema}


def rows(doc: Document) -> list[Row]:
    """The document's timed measurements as long-format rows ([] for a family without times)."""
    make = FAMILY[doc.kind].rows
    return list(make(doc)) if make else []


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
