"""The long-format row (records.Row): one timed measurement, whatever document it came from.
Every suite writes them (a ROWS document: records.rows_document); every older family of result
documents that holds timings is read into them here (`rows(doc)`, one function per family in
ROWS); a table is a pivot of rows (harness.report.markdown.grid), as a suite's table is
(harness.report.tables.suite_table).

    Row(device="NVIDIA H200", suite="cli", variant="cuda/v3-sequential", config="",
        dtype="float32", shape=16777216, metric="total",
        median_ms=0.0516, min_ms=0.0508, p10_ms=0.0511, p90_ms=0.0523, reps=200,
        bytes=67635204, check="ok",
        versions=(("cuda_runtime", "13.0"), ("schema", records.RUN_SCHEMA), ...))

- suite: the suite's name (harness.studies.suites) in a ROWS document; for an older document its
  family (documents.FAMILIES' kind: "cli", "fastest-bench", "callable"...).
- variant: a catalogue id (a variant or a peer), or what the study names its subject by (a
  callable entry, an ablation's design, a memory path); config: what else tells two rows of one
  variant apart ("" for most: a host row's staging, a sweep's launch shape, a combine).
- shape: n, or a tuple where one number is not enough (the distributed study: (n per GPU, K)).
- metric: which time ("first_pass", "total", "graph", "call" as in the record; "e2e" from host
  memory; "round1"/"round2" of an experiment; "local"/"combine" of a distributed sum). Times in
  milliseconds, whatever unit the document wrote them in; a statistic the document did not keep
  is None.
- bytes: bytes read plus written for the time (the record's bytes_first_pass or bytes_total),
  None where the document does not say.
- check: "ok", "wrong", "error", "skipped" (the record's status), or "" where the family checks
  nothing per time.
- versions: the software and the schema the row was measured under, as sorted (key, value)
  pairs.

Families without times (profile, sanitize, reproducible, compare, census, manifest) give no
rows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness.core.timing import Timing
from harness.report.documents import Document
from harness.report.records import ResultRecord, Row, record_rows, timing_from

VERSION_KEYS = ("python", "torch", "triton", "cuda_runtime", "cuda", "driver")


def versions(doc: Document) -> tuple[tuple[str, str], ...]:
    dev = doc.meta.get("device") or {}
    found = {k: str(dev[k]) for k in VERSION_KEYS if dev.get(k)}
    found.update({k: str(v) for k, v in (doc.raw.get("versions") or {}).items() if k != "device"})
    if doc.schema:
        found["schema"] = doc.schema
    return tuple(sorted(found.items()))


class _Maker:
    """Rows of one document: its device, suite and versions said once."""

    def __init__(self, doc: Document):
        self.doc = doc
        self.common = {"device": doc.device, "suite": doc.kind, "versions": versions(doc)}

    def timed(self, t: Timing | dict | None, **fields: Any) -> list[Row]:
        t = timing_from(t) if isinstance(t, dict) else t
        if t is None:
            return []
        stats = {"min_ms": t.min_ms, "p10_ms": t.p10_ms, "p90_ms": t.p90_ms, "reps": t.reps}
        return [Row(**self.common, **fields, median_ms=t.median_ms, **stats)]

    def median(self, ms: float | None, **fields: Any) -> list[Row]:
        return [] if ms is None else [Row(**self.common, **fields, median_ms=ms)]


def _record_rows(doc: Document) -> list[Row]:
    m = _Maker(doc)
    out = []
    for r in doc.records:
        out += [row for row in record_rows(r, **m.common) if row.median_ms is not None]
        if "e2e_ms" in r.extra:  # the host study: from host memory, per staging
            ident = {"variant": r.variant, "dtype": r.dtype, "shape": r.n, "check": r.status}
            out += _e2e(m, r, ident)
    return out


def _e2e(m: _Maker, r: ResultRecord, ident: dict) -> list[Row]:
    t = _timing(r.extra["e2e_ms"], r.extra.get("e2e_min_ms"), r.extra.get("reps"))
    return m.timed(t, **ident, config=r.extra.get("staging", ""), metric="e2e")


def _callable_rows(doc: Document) -> list[Row]:
    m = _Maker(doc)
    out = []
    for r in doc.raw.get("results", []):
        if r.get("us_per_call") is None:
            continue
        t = _timing(r["us_per_call"] / 1e3, _ms(r.get("min_us")))
        ident = {"variant": r["entry"], "config": "", "dtype": r["dtype"], "shape": r["n"]}
        out += m.timed(t, **ident, metric="call", bytes=r.get("touched_bytes"))
    return out


def _timing(median_ms: float, min_ms: float | None, reps: int | None = None) -> Timing:
    return Timing(median_ms, min_ms, None, None, reps)  # type: ignore[arg-type]


def _ms(us: float | None) -> float | None:
    return None if us is None else us / 1e3


def _rounds_rows(doc: Document) -> list[Row]:
    """fastest-ablation/1, hopper-loads/1: per n, per design or path, a timing per round."""
    m = _Maker(doc)
    dtype = doc.raw.get("dtype", "")
    out = []
    for row in doc.raw.get("rows", []):
        for what, rounds in (row.get("times") or {}).items():
            check = (row.get("verdicts") or {}).get(what, "")
            for rnd, t in rounds.items():
                ident = {"variant": what, "config": "", "dtype": dtype, "shape": row["n"]}
                out += m.timed(t, **ident, metric=rnd, check=check)
    return out


def _small_n_rows(doc: Document) -> list[Row]:
    m = _Maker(doc)
    out = []
    for row in doc.raw.get("rows", []):
        agrees = row.get("sum_agrees") or {}
        for path, us in (row.get("us") or {}).items():
            check = "" if path not in agrees else ("ok" if agrees[path] else "wrong")
            ident = {"variant": path, "config": "", "dtype": row["dtype"], "shape": row["n"]}
            out += m.median(_ms(us), **ident, metric="total", check=check)
    return out


def _repro_sweep_rows(doc: Document) -> list[Row]:
    m = _Maker(doc)
    out = []
    for row in doc.raw.get("rows", []):
        check = "ok" if row.get("same_bits") else "wrong"
        ident = {"dtype": row["dtype"], "shape": row["n"], "metric": "total"}
        out += m.median(row.get("median_ms"), variant=row["variant"], config=row["shape"],
                        **ident, check=check)  # fmt: skip
        for peer, ms in (row.get("peers_ms") or {}).items():
            out += m.median(ms, variant=peer, config=row["shape"], **ident)
    return out


def _call_profile_rows(doc: Document) -> list[Row]:
    m = _Maker(doc)
    raw = doc.raw
    ident = {"config": raw.get("variant", ""), "dtype": raw["dtype"], "shape": raw["n"]}
    return [
        row
        for entry, us in (raw.get("per_call_us") or {}).items()
        for row in m.median(_ms(us), variant=entry, **ident, metric="call")
    ]


def _inductor_rows(doc: Document) -> list[Row]:
    m = _Maker(doc)
    out = []
    for mode in doc.raw.get("modes", []):
        for c in mode.get("calls", []):
            check = "ok" if c.get("ok") else "wrong"
            ident = {"variant": "torch.compile", "config": mode["mode"], "shape": c["n"]}
            out += m.timed(c.get("timing"), **ident, dtype=doc.raw.get("dtype", ""),
                           metric="call", check=check)  # fmt: skip
    return out


def _distributed_rows(doc: Document) -> list[Row]:
    m = _Maker(doc)
    out = []
    for r in doc.raw.get("runs", []):
        if r.get("kind") != "sum":
            continue
        ident = {"variant": r["variant"], "config": f"{r['scaling']} {r['combine']}"}
        ident |= {"dtype": "float32", "shape": (r["n_per_rank"], r["gpus"])}
        check = "ok" if r.get("ok") else "wrong"
        for metric in ("local", "combine", "total"):
            out += m.median(r.get(f"{metric}_ms"), **ident, metric=metric, check=check)
    return out


# family (documents.FAMILIES' kind) -> its rows; families without times are absent
ROWS: dict[str, Callable[[Document], list[Row]]] = {
    "cli": _record_rows,
    "pytest-benchmark": _record_rows,
    "fastest-bench": _record_rows,
    "host": _record_rows,
    "accuracy": _record_rows,
    "callable": _callable_rows,
    "fastest-ablation": _rounds_rows,
    "hopper-loads": _rounds_rows,
    "small-n": _small_n_rows,
    "repro-sweep": _repro_sweep_rows,
    "call-profile": _call_profile_rows,
    "inductor-code": _inductor_rows,
    "distributed": _distributed_rows,
    "rows": lambda doc: [r for r in doc.rows if r.median_ms is not None],  # as written
}


def rows(doc: Document) -> list[Row]:
    """The document's timed measurements as long-format rows ([] for a family without times)."""
    make = ROWS.get(doc.kind)
    return make(doc) if make else []
