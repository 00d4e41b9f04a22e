"""The one loader: every committed result file read by its schema string into a records.Document
(FAMILIES: one entry per family, its parser and, where it holds times, its long-format rows:
rows(doc)); pytest-benchmark's JSON is known by its shape, a manifest (*.manifest.json) by being a
list. Every failure is a ReportError naming the file. Every output follows one rule, here:
check_output before the work, output_path (missing folders created) when writing."""

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
    if doc.kind not in ("pytest-benchmark", "rows") or not doc.records:
        suites = sorted({r.suite for r in doc.rows if r.suite})
        held = f"rows of the {', '.join(suites)} suite" if suites else f"a {doc.kind} document"
        raise ReportError(
            f"{path}: {held} ({doc.schema!r}), not a ladder run; expected a run (from "
            "`reduce-ladder run --json`) or pytest-benchmark's JSON of a record suite (from "
            "`pytest benchmarks/ --benchmark-json=...`); a callable or axis suite's file goes "
            "with --callable or --axis"
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
    """A record suite's benchmarks carry a result record (and its rows), a rows suite's
    (callable, axis) their rows only: either reads."""
    recs, row_json = [], []
    for b in doc["benchmarks"]:
        info = b.get("extra_info") or {}
        row_json += info.get("rows") or []
        if "variant" not in info:
            continue  # a rows-only benchmark, or not one of ours
        try:
            recs.append(ResultRecord.from_json(info))
        except (KeyError, TypeError, ValueError) as e:
            raise ReportError(f"{path}: benchmark {b.get('name')!r} lacks a field ({e})") from None
    if not recs and not row_json:
        raise ReportError(
            f"{path}: pytest-benchmark JSON without reduce-ladder benchmarks (was the suite "
            "skipped, e.g. run without a GPU?)"
        )
    mi = doc.get("machine_info") or {}
    gpu = mi.get("gpu") or {}
    name = gpu.get("name") or next((r.device for r in recs if r.device), "") or "unknown device"
    schema = (mi.get("reduce_ladder") or {}).get("schema", "")
    versions = tuple(sorted((k, str(gpu[k])) for k in readers.VERSION_KEYS if k in gpu))
    out = Document(path, "pytest-benchmark", schema, name, doc.get("datetime", ""), recs,
                   {"device": gpu, "synthetic": mi.get("synthetic", False)}, doc)  # fmt: skip
    out.rows = [records.row_from_json(r, name, versions) for r in row_json]
    return out


def _bench_rows(doc: Document) -> Iterable[Row]:
    """A record suite's rows from its records (their call time is pytest-benchmark's rounds),
    a rows suite's as written."""
    if doc.records:
        return readers.record_rows_of(doc)
    return [r for r in doc.rows if r.median_ms is not None]


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
    its parser (none: read as it is, the Document's raw, for its own tables, with the result
    records under records_key where it holds some) and, where it holds times, its rows."""

    kind: str
    schema: str
    rows: Callable[[Document], Iterable[Row]] | None = None
    parser: Callable[[str, dict | list], Document] | None = None
    records_key: str = ""

    def parse(self, path: str, doc: dict | list) -> Document:
        if self.parser:
            return self.parser(path, doc)
        out = _head(path, self.kind, doc)  # type: ignore[arg-type]
        if self.records_key:
            found = doc.get(self.records_key) or []  # type: ignore[union-attr]
            out.records = [ResultRecord.from_json(r) for r in found if "variant" in r]
        return out


FAMILIES: tuple[Family, ...] = (
    Family("pytest-benchmark", records.BENCH_SCHEMA, _bench_rows, _bench),
    Family("host", records.HOST_SCHEMA, readers.record_rows_of, records_key="table"),
    Family("accuracy", records.ACCURACY_SCHEMA, readers.record_rows_of, records_key="results"),
    Family("rows", records.ROWS_SCHEMA,  # as written
           lambda doc: [r for r in doc.rows if r.median_ms is not None], _rows),
    Family("fastest-ablation", records.FASTEST_ABLATION_SCHEMA, readers.rounds_rows),
    Family("hopper-loads", records.HOPPER_LOADS_SCHEMA, readers.rounds_rows),
    Family("repro-sweep", records.REPRO_SWEEP_SCHEMA, readers.repro_sweep_rows),
    Family("call-profile", records.CALL_PROFILE_SCHEMA, readers.call_profile_rows),
    Family("small-n", records.SMALL_N_SCHEMA, readers.small_n_rows),
    Family("inductor-code", records.INDUCTOR_CODE_SCHEMA, readers.inductor_rows),
    Family("distributed", records.DISTRIBUTED_SCHEMA, readers.distributed_rows),
    *(Family(kind, schema) for kind, schema in (
        ("profile", records.PROFILE_SCHEMA), ("sanitize", records.SANITIZE_SCHEMA),
        ("reproducible", records.REPRODUCIBLE_SCHEMA), ("compare", records.COMPARE_SCHEMA),
        ("census", records.CENSUS_SCHEMA))),
    Family("manifest", "", None, _manifest),
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
