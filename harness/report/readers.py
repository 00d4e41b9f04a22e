"""The row shapes beyond a record's or a row's own JSON: what the host study's producer turns its
rows into (records), and every timed family's measurements as long-format rows (records.Row), read
by the one loader (harness.report.documents: FAMILIES).

- the host study (seed 001, `reduce-ladder host`): one row per (n, variant or peer), measured end
  to end from host memory. Its timings are not the device timings of the record (host clock,
  median, min and p10-p90 spread; the event split of the trip), so they travel in `extra`:
  e2e_ms, e2e_min_ms, e2e_spread_ms, reps, device_ms, h2d_ms, kernels_ms, d2h_ms, h2d_share,
  kernels_share, gbps (bytes of host data / e2e time), staging, streams, chunk, log2n. Its peers
  ("torch.sum pageable", "torch.sum pinned") are not catalogue ids. The check's bound is the
  row's "bound".

Rows: each timed family's `*_rows(doc)` (FAMILIES names it), the fields as records.Row says;
a family without times (profile, sanitize, reproducible, compare, census, manifest) gives none.
"""

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
    [a Row of the timing t (a Timing or its JSON form)], or [] where there is none."""
    common = {"device": doc.device, "suite": doc.kind, "versions": versions(doc)}

    def timed(t: Timing | dict | None, **fields: Any) -> list[Row]:
        t = timing_from(t) if isinstance(t, dict) else t
        return [] if t is None else [Row(**common, **fields, **asdict(t))]

    return timed


def _timing(median_ms: float | None, min_ms: float | None = None, reps: int | None = None):
    """A Timing of the statistics a document kept (None where it kept no median)."""
    return None if median_ms is None else Timing(median_ms, min_ms, None, None, reps)  # type: ignore[arg-type]


def _ms(us: float | None) -> float | None:
    return None if us is None else us / 1e3


def record_rows_of(doc: Document) -> Iterator[Row]:
    timed = _maker(doc)
    common = {"device": doc.device, "suite": doc.kind, "versions": versions(doc)}
    for r in doc.records:
        yield from (row for row in record_rows(r, **common) if row.median_ms is not None)
        if "e2e_ms" in r.extra:  # the host study: from host memory, per staging
            t = _timing(r.extra["e2e_ms"], r.extra.get("e2e_min_ms"), r.extra.get("reps"))
            yield from timed(t, variant=r.variant, config=r.extra.get("staging", ""),
                             dtype=r.dtype, shape=r.n, metric="e2e", check=r.status)  # fmt: skip


def rounds_rows(doc: Document) -> Iterator[Row]:
    """fastest-ablation/1, hopper-loads/1: per n, per design or path, a timing per round."""
    timed = _maker(doc)
    dtype = doc.raw.get("dtype", "")
    for row in doc.raw.get("rows", []):
        for what, rounds in (row.get("times") or {}).items():
            check = (row.get("verdicts") or {}).get(what, "")
            for rnd, t in rounds.items():
                yield from timed(t, variant=what, config="", dtype=dtype, shape=row["n"],
                                 metric=rnd, check=check)  # fmt: skip


def small_n_rows(doc: Document) -> Iterator[Row]:
    timed = _maker(doc)
    for row in doc.raw.get("rows", []):
        agrees = row.get("sum_agrees") or {}
        for path, us in (row.get("us") or {}).items():
            check = "" if path not in agrees else ("ok" if agrees[path] else "wrong")
            yield from timed(_timing(_ms(us)), variant=path, config="", dtype=row["dtype"],
                             shape=row["n"], metric="total", check=check)  # fmt: skip


def repro_sweep_rows(doc: Document) -> Iterator[Row]:
    timed = _maker(doc)
    for row in doc.raw.get("rows", []):
        ident = {"config": row["shape"], "dtype": row["dtype"], "shape": row["n"]}
        ident["metric"] = "total"
        check = "ok" if row.get("same_bits") else "wrong"
        yield from timed(
            _timing(row.get("median_ms")), variant=row["variant"], **ident, check=check
        )
        for peer, ms in (row.get("peers_ms") or {}).items():
            yield from timed(_timing(ms), variant=peer, **ident)


def call_profile_rows(doc: Document) -> Iterator[Row]:
    timed = _maker(doc)
    raw = doc.raw
    ident = {"config": raw.get("variant", ""), "dtype": raw["dtype"], "shape": raw["n"]}
    for entry, us in (raw.get("per_call_us") or {}).items():
        yield from timed(_timing(_ms(us)), variant=entry, **ident, metric="call")


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
        if r.get("kind") != "sum":
            continue
        ident = {"variant": r["variant"], "config": f"{r['scaling']} {r['combine']}"}
        ident |= {"dtype": "float32", "shape": (r["n_per_rank"], r["gpus"])}
        check = "ok" if r.get("ok") else "wrong"
        for metric in ("local", "combine", "total"):
            yield from timed(_timing(r.get(f"{metric}_ms")), **ident, metric=metric, check=check)
