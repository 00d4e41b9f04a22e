"""The result record as it was (ResultRecord: one measurement of one variant or peer at one dtype
and size, its JSON form the bench/2 and accuracy/1 documents' items), kept here for this
migration's old readers and writers: the harness writes rows only, and its loader
(harness.report.documents) reads a record's JSON into rows itself."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from harness.core import catalogue
from harness.core.catalogue import Variant
from harness.core.timing import Timing
from harness.report.records import NO_GPU, ROWS_SCHEMA, Row, timing_from

# pytest-benchmark's extra_info: a record + "schema" (records.py spells the current names only)
BENCH_V2 = ROWS_SCHEMA.replace("rows/1", "bench/2")


@dataclass(frozen=True)
class Check:
    """The sum against its golden (harness.check.verify.CheckResult, without the identity)."""

    value: float | int | None
    golden: float | int | None
    abs_err: float | None
    tolerance: float | None  # the error bound; 0 means the result must be exact
    exact_required: bool | None = None
    input_unchanged: bool | None = None


def median(t: Timing | None) -> float | None:
    """A timing's median (ms), or None where it was not timed."""
    return t.median_ms if t else None


TIMING_FIELDS = ("first_pass", "total", "graph", "call")


@dataclass(frozen=True, kw_only=True)
class ResultRecord:
    # identity
    variant: str
    backend: str
    stage: str = ""
    family: str = ""
    seeds: tuple[str, ...] = ()
    twin: str | None = None
    wrong_demo: bool = False
    dtype: str
    n: int
    # outcome
    status: str = "ok"
    message: str = ""
    check: Check | None = None
    # timings, work, where
    first_pass: Timing | None = None
    total: Timing | None = None
    graph: Timing | None = None
    call: Timing | None = None
    passes: int | None = None
    blocks_first_pass: int | None = None
    bytes_first_pass: int | None = None
    bytes_total: int | None = None
    device: str | None = None
    extra: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def ms(self) -> float | None:
        """Device time of the whole reduction (median), or None where it was not timed."""
        return self.total.median_ms if self.total else None

    @property
    def gbps_total(self) -> float | None:
        return _gbps(self.bytes_total, self.total)

    @property
    def gbps_first_pass(self) -> float | None:
        return _gbps(self.bytes_first_pass, self.first_pass)

    @property
    def timed(self) -> bool:
        return self.total is not None

    def to_json(self) -> dict:
        """The JSON form (docs/results-format.md): what was not measured left out, "ok" beside
        status and the GB/s beside the bytes for readers' convenience."""
        out: dict[str, Any] = {}
        for k, v in (asdict(self) | {"seeds": list(self.seeds)}).items():
            if v is not None and (k != "extra" or v):
                out[k] = {c: x for c, x in v.items() if x is not None} if k == "check" else v
            if k == "status":
                out["ok"] = self.ok
            if k == "bytes_total":
                gbps = {"gbps_first_pass": self.gbps_first_pass, "gbps_total": self.gbps_total}
                out |= {k: g for k, g in gbps.items() if g is not None}
        return out

    @classmethod
    def from_json(cls, d: dict) -> ResultRecord:
        """A record from its JSON form. KeyError when the identity is missing."""
        check = d.get("check")
        plain = ("twin", "status", "passes", "blocks_first_pass", "bytes_first_pass", "bytes_total")
        device = d.get("device")
        return cls(
            **{k: d[k] for k in plain if k in d}, variant=d["variant"], dtype=d["dtype"],
            backend=d.get("backend") or d["variant"].split("/")[0], n=int(d["n"]),
            stage=str(d.get("stage") or ""), family=d.get("family") or "",
            seeds=tuple(d.get("seeds") or ()), wrong_demo=bool(d.get("wrong_demo")),
            message=d.get("message") or "", extra=dict(d.get("extra") or {}),
            check=check_from(check) if isinstance(check, dict) else None,
            **{k: timing_from(d.get(k)) for k in TIMING_FIELDS},
            device=device if isinstance(device, str) else None,
        )  # fmt: skip


def _gbps(nbytes: int | None, t: Timing | None) -> float | None:
    return nbytes / t.median_ms / 1e6 if nbytes and t and t.median_ms else None


def identity(v: Variant) -> dict[str, Any]:
    """A record's identity fields from the catalogue record (so no producer spells them)."""
    return {"variant": v.id, "backend": v.backend, "stage": v.stage, "family": v.family,
            "seeds": tuple(v.seeds), "twin": v.twin, "wrong_demo": v.wrong}  # fmt: skip


def for_variant(v: Variant, dtype: str, n: int, **measured: Any) -> ResultRecord:
    """A record whose identity comes from the catalogue record."""
    return ResultRecord(**identity(v), dtype=dtype, n=n, **measured)


def check_from(result: Any) -> Check:
    """The Check of a harness.check.verify.CheckResult (duck-typed: no import of the check
    layer's torch code at load time), or of its JSON form."""
    get = result.get if isinstance(result, dict) else lambda k: getattr(result, k)
    return Check(**{f.name: get(f.name) for f in fields(Check)})


def record_rows(r: ResultRecord, **common) -> list[Row]:
    """A record as rows: one per timing it has (first_pass, total, graph, call), or one "check"
    row (median None) when it has none; common: device, suite, versions."""
    ident = {"variant": r.variant, "config": "", "dtype": r.dtype, "shape": r.n, "check": r.status}
    info = {k: v for k, v in r.to_json().items() if k in _RECORD_INFO}
    out = []
    for name in TIMING_FIELDS:
        t = getattr(r, name)
        if t is None:
            continue
        nbytes = r.bytes_first_pass if name == "first_pass" else r.bytes_total
        first = {"info": info} if not out else {}  # said once, on the record's first row
        out.append(Row(**common, **ident, metric=name, **asdict(t), bytes=nbytes, **first))
    return out or [Row(**common, **ident, metric="check", median_ms=None, info=info)]


_RECORD_INFO = ("message", "check", "passes", "blocks_first_pass", "extra")


def records_from_rows(rows: list[Row]) -> list[ResultRecord]:
    """The records of a catalogue variant's rows whose metrics are a record's (record_rows'
    inverse): one per (variant, dtype, n), in the order first seen, its identity the catalogue's
    (an experiment's design or path, a host study's peer: rows only)."""
    groups: dict[tuple, list[Row]] = {}
    for r in rows:
        if (
            r.metric in (*TIMING_FIELDS, "check")
            and r.config == ""
            and r.variant in catalogue.BY_ID
        ):
            groups.setdefault((r.variant, r.dtype, r.n), []).append(r)
    out = []
    for (vid, dtype, n), rs in groups.items():
        timed = {r.metric: r for r in rs if r.metric in TIMING_FIELDS}
        rec = ResultRecord.from_json({
            **rs[0].info, "variant": vid, "dtype": dtype, "n": n, "status": rs[0].check or "ok",
            **{metric: asdict(r) for metric, r in timed.items()},
            "bytes_first_pass": timed["first_pass"].bytes if "first_pass" in timed else None,
            "bytes_total": next((r.bytes for m, r in timed.items() if m != "first_pass"), None),
            "device": rs[0].device if rs[0].device != NO_GPU else None,
        })  # fmt: skip
        out.append(replace(rec, **identity(catalogue.get(vid))))
    return out
