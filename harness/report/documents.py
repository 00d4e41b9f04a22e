"""The one loader: every result file read by its schema string (pytest-benchmark's JSON by its
shape, a manifest by being a list) into a records.Document, the rows it holds in Document.rows;
rows(doc) its timed rows.
Every failure is a ReportError naming the file. Every output follows one rule: check_output
before the work, output_path when writing."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harness.report import records
from harness.report.records import Document, Row


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


def merge_documents(docs: list[dict]) -> dict:
    """Documents of one family read as one (one per dtype, size or step run; a run over variants
    added later writes its own file beside the first): the first document's header, every
    document's lists (its Family's `lists`) in order; ValueError unless one family that pools."""
    schemas = {d.get("schema") for d in docs}
    family = BY_SCHEMA.get(next(iter(schemas))) if len(schemas) == 1 else None
    if family is None or not family.lists:
        raise ValueError(f"not documents of one kind that pools lists ({schemas or 'none'})")
    pooled = {key: [item for d in docs for item in d.get(key, [])] for key in family.lists}
    return dict(docs[0]) | pooled


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
    cases of the ladder's suites in it (`reduce-ladder run --json`, `reduce-ladder bench ladder
    --json`)."""
    doc = load_document(path)
    if doc.kind not in ("pytest-benchmark", "rows") or not doc.results:
        suites = sorted({r.suite for r in doc.rows if r.suite})
        held = f"rows of the {', '.join(suites)} suite" if suites else f"a {doc.kind} document"
        raise ReportError(
            f"{path}: {held} ({doc.schema!r}), not a ladder run; expected a run (from "
            "`reduce-ladder run --json`) or pytest-benchmark's JSON of the ladder's suites (from "
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
        if isinstance(schema, str) and schema.startswith("reduce-ladder/"):
            raise _older(path, schema)
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
    meta = {"device": dev, "mode": doc.get("mode"), "synthetic": doc.get("synthetic", False)}
    name, schema = dev.get("name") or records.NO_GPU, doc.get("schema", "")
    return Document(path, kind, schema, name, doc.get("created", ""), meta=meta, raw=doc)


def _bench(path: str, doc: dict) -> Document:
    """Each benchmark's rows (extra_info["rows"]), whichever suites one file holds."""
    row_json = [r for b in doc["benchmarks"] for r in (b.get("extra_info") or {}).get("rows") or []]
    mi = doc.get("machine_info") or {}
    gpu = mi.get("gpu") or {}
    schema = (mi.get("reduce_ladder") or {}).get("schema", "")
    if schema and schema != records.BENCH_SCHEMA:
        raise _older(path, schema)
    if not row_json:
        raise ReportError(
            f"{path}: pytest-benchmark JSON without reduce-ladder benchmarks (was the suite "
            "skipped, e.g. run without a GPU?)"
        )
    meta = {"device": gpu, "synthetic": mi.get("synthetic", False)}
    out = Document(path, "pytest-benchmark", schema, gpu.get("name") or "unknown device",
                   doc.get("datetime", ""), meta, doc)  # fmt: skip
    out.rows = [records.row_from_json(r, out.device, versions(out)) for r in row_json]
    return out


def _older(path: str, schema: str) -> ReportError:
    return ReportError(
        f"{path}: unknown format (schema {schema!r}), not one this version reads; a form an older "
        "version wrote converts with `python -m experiments.migrate_legacy_results --root DIR` "
        "from a checkout (it rewrites DIR/results/**/*.json: its README.md)"
    )


def _rows(path: str, doc: dict) -> Document:
    out = _head(path, "rows", doc)
    out.rows = [records.row_from_json(r, out.device, versions(out)) for r in doc["rows"]]
    return out


def _distributed(path: str, doc: dict) -> Document:
    """distributed/1: each sum's local, combine and total times, its config the scaling and the
    combine, its shape (n per GPU, K)."""
    out = _head(path, "distributed", doc)
    common = {"device": out.device, "suite": out.kind, "versions": versions(out)}
    for r in (r for r in doc.get("runs", []) if r.get("kind") == "sum"):
        ident = {"variant": r["variant"], "config": f"{r['scaling']} {r['combine']}",
                 "dtype": "float32", "shape": (r["n_per_rank"], r["gpus"]),
                 "check": "ok" if r.get("ok") else "wrong"}  # fmt: skip
        for m in ("local", "combine", "total"):
            if r.get(f"{m}_ms") is not None:
                out.rows.append(Row(**common, **ident, metric=m, median_ms=r[f"{m}_ms"]))
    return out


def _manifest(path: str, doc: list) -> Document:
    if not all(isinstance(r, dict) and "variant" in r for r in doc):
        raise ValueError("a manifest is a list of launches, each naming its variant")
    return Document(path, "manifest", "", "", "", raw={"launches": doc})


# -- the long-format rows of each family with times (docs/results-format.md) -------------------

VERSION_KEYS = ("python", "torch", "triton", "cuda_runtime", "cuda", "driver")


def versions(doc: Document) -> tuple[tuple[str, str], ...]:
    dev = doc.meta.get("device") or {}
    found = {k: str(dev[k]) for k in VERSION_KEYS if dev.get(k)}
    found.update({k: str(v) for k, v in (doc.raw.get("versions") or {}).items() if k != "device"})
    if doc.schema:
        found["schema"] = doc.schema
    return tuple(sorted(found.items()))


@dataclass(frozen=True)
class Family:
    """One family of result documents: its kind, its schema string (none: known by its shape)
    and its parser, which reads whatever rows the document holds into Document.rows (none: read
    as it is, the Document's raw, for its own tables; no rows)."""

    kind: str
    schema: str
    parser: Callable[[str, dict | list], Document] | None = None
    lists: tuple[str, ...] = ()  # what its documents pool when several are read as one

    def parse(self, path: str, doc: dict | list) -> Document:
        if self.parser:
            return self.parser(path, doc)
        return _head(path, self.kind, doc)  # type: ignore[arg-type]


FAMILIES: tuple[Family, ...] = (
    Family("pytest-benchmark", records.BENCH_SCHEMA, _bench),
    Family("rows", records.ROWS_SCHEMA, _rows),
    Family("distributed", records.DISTRIBUTED_SCHEMA, _distributed, lists=("runs",)),
    Family("profile", records.PROFILE_SCHEMA, lists=("runs", "results")),
    Family("sanitize", records.SANITIZE_SCHEMA, lists=("variants", "runs", "kernels")),
    *(Family(kind, schema) for kind, schema in (
        ("reproducible", records.REPRODUCIBLE_SCHEMA), ("compare", records.COMPARE_SCHEMA),
        ("census", records.CENSUS_SCHEMA))),
    Family("manifest", "", _manifest),
)  # fmt: skip
FAMILY = {f.kind: f for f in FAMILIES}
# pytest-benchmark's JSON is known by its shape (its schema sits in machine_info), a manifest by
# being a list
BY_SCHEMA = {f.schema: f for f in FAMILIES if f.kind != "pytest-benchmark" and f.schema}


def rows(doc: Document) -> list[Row]:
    """The document's timed measurements: its rows with a time ([] for a family without
    times)."""
    return [r for r in doc.rows if r.median_ms is not None]


class WriteFailed(OSError):
    """A result document could not be written (a full disk) once the work was done: the command
    line's exit 1 with this message, whichever runner wrote it."""


def write_document(path: str | Path, doc: dict) -> None:
    """Every JSON document the harness writes, in one form: indented by one, a final newline
    (values JSON cannot hold, such as paths, as their str); missing parent folders are created.
    A failure is WriteFailed, naming the path."""
    try:
        output_path(path).write_text(json.dumps(doc, indent=1, default=str) + "\n")
    except OSError as e:
        raise WriteFailed(f"cannot write {path}: {e.strerror or e}") from None


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
    way. The proof is a write that leaves nothing behind: a temporary file in the nearest folder
    that exists, or zero bytes appended to an existing file, which changes nothing and still
    fails where writing would (a full device, a read-only file system)."""
    p = Path(path)
    where = f"cannot write {path}" + (f" ({option})" if option else "")
    if folder and p.exists() and not p.is_dir():
        raise ReportError(f"{where}: {path} is a file, not a folder")
    if not folder and p.is_dir():
        raise ReportError(f"{where}: it is a folder; give a file name")
    folders = p if folder else p.parent
    existing = next(d for d in (folders, *folders.parents) if os.path.lexists(d))  # a link too
    if not existing.is_dir():
        raise ReportError(f"{where}: {existing} is a file, not a folder")
    try:
        if folder or not p.exists():
            tempfile.TemporaryFile(dir=existing).close()
        else:
            fd = os.open(p, os.O_WRONLY | os.O_APPEND)
            try:
                os.write(fd, b"")
            finally:
                os.close(fd)
    except OSError as e:
        raise ReportError(f"{where}: {e.strerror or e}") from None
    return p
