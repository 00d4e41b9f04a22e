"""The long-format row (Row: one measurement, whatever document it came from), its JSON form
(docs/results-format.md), the one view the ladder's tables join a case's rows into (Result), and
the ONE spelling of every document schema string the harness writes;
harness.report.documents reads every document into rows."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from harness.core import catalogue
from harness.core.catalogue import Variant
from harness.core.timing import Timing

BENCH_SCHEMA = "reduce-ladder/bench/3"  # pytest-benchmark's machine_info; extra_info {"rows"}
PROFILE_SCHEMA = "reduce-ladder/profile/1"  # `reduce-ladder profile --json`: ncu counters
SANITIZE_SCHEMA = "reduce-ladder/sanitize/1"  # `reduce-ladder sanitize --json`: tool verdicts
REPRODUCIBLE_SCHEMA = "reduce-ladder/reproducible/1"  # studies.accuracy: result bits per input
COMPARE_SCHEMA = "reduce-ladder/compare/1"  # `reduce-ladder compare`: rows per device
DISTRIBUTED_SCHEMA = "reduce-ladder/distributed/1"  # studies.distributed: K ranks, NCCL
NO_GPU = "no GPU"  # a row's device where there was none (the CPU path)
# every suite, `run`/`check --json`, the accuracy study: {"rows": [Row]}
ROWS_SCHEMA = "reduce-ladder/rows/1"
CENSUS_SCHEMA = "reduce-ladder/census/1"  # `reduce-ladder inspect --json` (porting.census)


def timing_from(d: Any) -> Timing | None:
    """A Timing from its JSON form (Timing.record()); None when absent."""
    if not isinstance(d, dict) or d.get("median_ms") is None:
        return None
    return Timing(d["median_ms"], d.get("min_ms"), d.get("p10_ms"), d.get("p90_ms"), d.get("reps"))


# ---------------------------------------------------------------------------------------------
# The long-format row: docs/results-format.md says what each field holds.


@dataclass(frozen=True)
class Row:
    device: str
    suite: str
    variant: str
    config: str
    dtype: str
    shape: int | tuple[int, ...]
    metric: str
    median_ms: float | None  # None: a row that records a check and no time
    min_ms: float | None = None
    p10_ms: float | None = None
    p90_ms: float | None = None
    reps: int | None = None
    bytes: int | None = None
    check: str = ""
    versions: tuple[tuple[str, str], ...] = ()
    # not part of a row's identity: what else the producer knew (a check's values, a message)
    info: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def n(self) -> int:
        """The elements reduced: shape, or its first number."""
        return self.shape if isinstance(self.shape, int) else self.shape[0]

    @property
    def gbps(self) -> float | None:
        """Effective bandwidth: bytes over the median time (1 GB = 1e9 B); None where either is
        missing."""
        return self.bytes / self.median_ms / 1e6 if self.bytes and self.median_ms else None

    def to_json(self) -> dict:
        out = {k: v for k, v in asdict(self).items() if k not in ("device", "versions")}
        return {k: v for k, v in out.items() if v not in (None, "", {})}


def row_from_json(d: dict, device: str, versions: tuple[tuple[str, str], ...]) -> Row:
    """A Row from its JSON form in a ROWS document (device and versions from the document)."""
    shape = d["shape"]
    given = {f.name: d[f.name] for f in fields(Row) if f.name in d}
    return Row(**{**given, "device": device, "versions": versions, "suite": d.get("suite", ""),
                  "config": d.get("config", ""), "dtype": d.get("dtype", ""),
                  "median_ms": d.get("median_ms"), "info": dict(d.get("info") or {}),
                  "shape": tuple(shape) if isinstance(shape, list) else int(shape)})  # fmt: skip


def rows_document(rows: list[Row], *, suite: str, device: dict, **head) -> dict:
    """The ROWS document of a suite's rows (harness.report.documents.write_document writes it)."""
    import datetime

    vs = dict(rows[0].versions) if rows else {}
    return {
        "schema": ROWS_SCHEMA,
        "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "suite": suite,
        "device": device,
        "versions": {k: v for k, v in vs.items() if k != "schema"},
        **head,
        "rows": [r.to_json() for r in rows],
    }


# ---------------------------------------------------------------------------------------------
# A case of the ladder's suites (ladder, sweep, seed004, fastest) as its rows: one per time it
# has, or its one "check" row; its message, check values and passes said once, on its first row.

CASE_METRICS = ("first_pass", "total", "graph", "call")


@dataclass(frozen=True)
class Result:
    """One case of a catalogue variant joined from its rows (results()): what the ladder's
    tables and plots ask of it. A view, never written: the rows are the data."""

    v: Variant
    dtype: str
    n: int
    by_metric: dict[str, Row]  # its times by metric, or its one "check" row

    @property
    def variant(self) -> str:
        return self.v.id

    @property
    def info(self) -> dict:
        """The case's info, from whichever of its rows says it."""
        return {k: x for r in self.by_metric.values() for k, x in r.info.items()}

    @property
    def status(self) -> str:
        """The check: "ok", "wrong", "error" or "skipped" (docs/results-format.md)."""
        return next(iter(self.by_metric.values())).check or "ok"

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def message(self) -> str:
        return self.info.get("message") or ""

    @property
    def sums(self) -> dict:
        """The check's value, golden, abs_err and tolerance ({} where it was not checked)."""
        return self.info.get("check") or {}

    @property
    def device(self) -> str | None:
        name = next(iter(self.by_metric.values())).device
        return name if name != NO_GPU else None

    def median(self, metric: str) -> float | None:
        """The metric's median (ms), or None where it was not timed."""
        r = self.by_metric.get(metric)
        return r.median_ms if r else None

    @property
    def ms(self) -> float | None:
        """Device time of the whole reduction (median), or None where it was not timed."""
        return self.median("total")

    @property
    def gbps(self) -> float | None:
        """Effective bandwidth of the whole reduction."""
        r = self.by_metric.get("total")
        return r.gbps if r else None

    @property
    def timed(self) -> bool:
        return "total" in self.by_metric


def results(rows: Iterable[Row]) -> list[Result]:
    """The cases of catalogue variants among rows (config "", a case's metrics): one per
    (variant, dtype, n), in the order first seen (an experiment's design or path, a host peer,
    an accuracy datum: rows alone)."""
    groups: dict[tuple[str, str, int], dict[str, Row]] = {}
    for r in rows:
        if r.metric in (*CASE_METRICS, "check") and not r.config and r.variant in catalogue.BY_ID:
            groups.setdefault((r.variant, r.dtype, r.n), {}).setdefault(r.metric, r)
    return [Result(catalogue.get(vid), d, n, by) for (vid, d, n), by in groups.items()]


# ---------------------------------------------------------------------------------------------
# A result document as the loader (harness.report.documents) reads it


@dataclass
class Document:
    path: str
    kind: str
    schema: str
    device: str  # the device's name
    created: str
    meta: dict = field(default_factory=dict)  # device details, mode, synthetic
    raw: dict = field(default_factory=dict)  # the document as read (its head: options, method...)
    rows: list[Row] = field(default_factory=list)  # every row it holds

    @property
    def label(self) -> str:
        return f"{self.device} ({Path(self.path).name})"

    @property
    def results(self) -> list[Result]:
        """Its cases of the ladder's suites, joined from its rows."""
        return results(self.rows)

    @property
    def timed(self) -> bool:
        return any(r.timed for r in self.results)

    def dtypes(self) -> list[str]:
        return sorted({r.dtype for r in self.results}, key=lambda d: (d != "float32", d))

    def sizes(self, dtype: str | None = None) -> list[int]:
        return sorted({r.n for r in self.results if dtype is None or r.dtype == dtype})
