"""The shapes beyond a record's or a row's own JSON (docs/results-format.md): the host study's rows
as records (host_record, for its producer), and each timed family's measurements as long-format
rows (`*_rows(doc)`, named by harness.report.documents' FAMILIES)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict
from typing import Any

from harness.core import catalogue
from harness.core.timing import Timing
from harness.report.records import (
    Check,
    Document,
    ResultRecord,
    Row,
    identity,
    record_rows,
    timing_from,
)

# -- records ----------------------------------------------------------------------------------

_HOST_IDENTITY = {"variant", "backend", "stage", "seeds", "dtype", "n", "status", "message"}
_HOST_CHECK = {"value", "golden", "abs_err", "bound"}


def host_record(row: dict[str, Any], dtype: str | None = None) -> ResultRecord:
    """A host-study row (harness.studies.host.table_rows) as a record; dtype for rows that do not
    name theirs."""
    v = catalogue.BY_ID.get(row["variant"])
    ident = identity(v) if v else {"variant": row["variant"], "backend": "peer", "stage": "peer",
                                   "family": "peer"}  # fmt: skip
    check = None
    if "golden" in row or "bound" in row:
        check = Check(row.get("value"), row.get("golden"), row.get("abs_err"), row.get("bound"))
    return ResultRecord(
        **{**ident, "backend": row.get("backend") or ident["backend"], "wrong_demo": False,
           "stage": str(row.get("stage") or ident["stage"]),
           "seeds": tuple(row.get("seeds") or ident.get("seeds", ()))},
        dtype=row.get("dtype") or dtype or "", n=int(row["n"]), status=row.get("status", "ok"),
        message=row.get("message") or "", check=check,
        extra={k: x for k, x in row.items() if k not in _HOST_IDENTITY | _HOST_CHECK},
    )  # fmt: skip


# -- rows -------------------------------------------------------------------------------------


VERSION_KEYS = ("python", "torch", "triton", "cuda_runtime", "cuda", "driver")


def versions(doc: Document) -> tuple[tuple[str, str], ...]:
    dev = doc.meta.get("device") or {}
    found = {k: str(dev[k]) for k in VERSION_KEYS if dev.get(k)}
    found.update({k: str(v) for k, v in (doc.raw.get("versions") or {}).items() if k != "device"})
    if doc.schema:
        found["schema"] = doc.schema
    return tuple(sorted(found.items()))


def _maker(doc: Document):
    """Rows of one document (its device, suite and versions said once): timed(t, **fields) is
    [a Row of the timing t: a Timing, its JSON form, or a median alone, in ms], or [] where there
    is none."""
    common = {"device": doc.device, "suite": doc.kind, "versions": versions(doc)}

    def timed(t: Timing | dict | float | None, **fields: Any) -> list[Row]:
        if isinstance(t, int | float):
            t = Timing(t, None, None, None, None)  # type: ignore[arg-type]
        t = timing_from(t) if isinstance(t, dict) else t
        return [] if t is None else [Row(**common, **fields, **asdict(t))]

    return timed


def _ms(us: float | None) -> float | None:
    return None if us is None else us / 1e3


def record_rows_of(doc: Document) -> Iterator[Row]:
    timed = _maker(doc)
    common = {"device": doc.device, "suite": doc.kind, "versions": versions(doc)}
    for r in doc.records:
        yield from (row for row in record_rows(r, **common) if row.median_ms is not None)
        if "e2e_ms" in r.extra:  # the host study: from host memory, per staging
            x = r.extra
            t = {"median_ms": x["e2e_ms"], "min_ms": x.get("e2e_min_ms"), "reps": x.get("reps")}
            yield from timed(t, variant=r.variant, config=x.get("staging", ""), dtype=r.dtype,
                             shape=r.n, metric="e2e", check=r.status)  # fmt: skip


def rounds_rows(doc: Document) -> Iterator[Row]:
    """fastest-ablation/1, hopper-loads/1: per n, per design or path, a timing per round."""
    timed = _maker(doc)
    for row in doc.raw.get("rows", []):
        for what, rounds in (row.get("times") or {}).items():
            check = (row.get("verdicts") or {}).get(what, "")
            for rnd, t in rounds.items():
                yield from timed(t, variant=what, config="", dtype=doc.raw.get("dtype", ""),
                                 shape=row["n"], metric=rnd, check=check)  # fmt: skip


def small_n_rows(doc: Document) -> Iterator[Row]:
    timed = _maker(doc)
    for row in doc.raw.get("rows", []):
        agrees = row.get("sum_agrees") or {}
        for path, us in (row.get("us") or {}).items():
            check = "" if path not in agrees else ("ok" if agrees[path] else "wrong")
            yield from timed(_ms(us), variant=path, config="", dtype=row["dtype"],
                             shape=row["n"], metric="total", check=check)  # fmt: skip


def repro_sweep_rows(doc: Document) -> Iterator[Row]:
    timed = _maker(doc)
    for row in doc.raw.get("rows", []):
        ident = {
            "config": row["shape"],
            "dtype": row["dtype"],
            "shape": row["n"],
            "metric": "total",
        }
        check = "ok" if row.get("same_bits") else "wrong"
        yield from timed(row.get("median_ms"), variant=row["variant"], **ident, check=check)
        for peer, ms in (row.get("peers_ms") or {}).items():
            yield from timed(ms, variant=peer, **ident)


def call_profile_rows(doc: Document) -> Iterator[Row]:
    timed, raw = _maker(doc), doc.raw
    ident = {"config": raw.get("variant", ""), "dtype": raw["dtype"], "shape": raw["n"]}
    for entry, us in (raw.get("per_call_us") or {}).items():
        yield from timed(_ms(us), variant=entry, **ident, metric="call")


def inductor_rows(doc: Document) -> Iterator[Row]:
    timed = _maker(doc)
    for mode in doc.raw.get("modes", []):
        for c in mode.get("calls", []):
            yield from timed(c.get("timing"), variant="torch.compile", config=mode["mode"],
                             dtype=doc.raw.get("dtype", ""), shape=c["n"], metric="call",
                             check="ok" if c.get("ok") else "wrong")  # fmt: skip


def distributed_rows(doc: Document) -> Iterator[Row]:
    timed = _maker(doc)
    for r in doc.raw.get("runs", []):
        if r.get("kind") == "sum":
            ident = {"variant": r["variant"], "config": f"{r['scaling']} {r['combine']}",
                     "dtype": "float32", "shape": (r["n_per_rank"], r["gpus"]),
                     "check": "ok" if r.get("ok") else "wrong"}  # fmt: skip
            for metric in ("local", "combine", "total"):
                yield from timed(r.get(f"{metric}_ms"), **ident, metric=metric)
