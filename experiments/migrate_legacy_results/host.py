"""The host study's documents before the host suite: host/1 (the study's own table rows) and
host/2 (result records, the timings in extra; the sweep and the adversarial input beside them),
rewritten as the host suite's rows (harness.studies.host.measure writes them so), and the check
that they say every value of the old document (host_v2: the rows' inverse)."""

from __future__ import annotations

import math
from functools import partial
from typing import Any

from experiments.migrate_legacy_results.legacy_record import ResultRecord, identity
from harness.core import catalogue
from harness.report import records
from harness.report.host_tables import (
    ADVERSARIAL,
    H2D,
    NAIVE,
    ONE_COPY_ID,
    PIPELINE_ID,
    SWEEP,
    parse_config,
)
from harness.report.host_tables import config as host_config
from harness.report.records import Row, rows_document
from harness.studies.host_plan import DEFAULT_PIPELINE
from harness.studies.suites import row_common

_PREFIX = records.ROWS_SCHEMA.split("/")[0]
HOST_V1, HOST_V2 = (f"{_PREFIX}/host/{v}" for v in (1, 2))
_HOST_IDENTITY = ("variant", "backend", "stage", "seeds", "dtype", "n", "status", "message")
_HOST_CHECK = {"value": "value", "golden": "golden", "abs_err": "abs_err", "tolerance": "bound"}
_SPLIT = ("device", "d2h", "h2d", "kernels")  # a trip's event split, in the order it was written


def host_record(row: dict[str, Any], dtype: str | None = None) -> ResultRecord:
    """A host/1 table row (the study's own row) as the host/2 record its reader made of it;
    dtype for rows that do not name theirs."""
    v = catalogue.BY_ID.get(row["variant"])
    ident = identity(v) if v else {"backend": "peer", "stage": "peer", "family": "peer"}
    check, known = {k: row.get(was) for k, was in _HOST_CHECK.items()}, _HOST_CHECK.values()
    return ResultRecord.from_json({
        **ident, **{k: row[k] for k in _HOST_IDENTITY if row.get(k)}, "wrong_demo": False,
        "dtype": row.get("dtype") or dtype or "", "status": row.get("status", "ok"),
        "check": check if "golden" in row or "bound" in row else None,
        "extra": {k: x for k, x in row.items() if k not in {*_HOST_IDENTITY, *known}},
    })  # fmt: skip


def _trip_rows(row, t: dict, nbytes: int | None, check: str, info: dict) -> list[Row]:
    """A timed trip (its e2e_* statistics and event split, as host/2 held them) as the host
    suite's rows: "e2e" (the spread in info), then each split time written."""
    e2e = row(metric="e2e", median_ms=t["e2e_ms"], min_ms=t.get("e2e_min_ms"),
              reps=t.get("reps"), bytes=nbytes, check=check,
              info={**info, "spread_ms": t["e2e_spread_ms"]})  # fmt: skip
    split = (row(metric=m, median_ms=t[f"{m}_ms"], check=check) for m in _SPLIT)
    return [e2e, *(r for r in split if r.median_ms is not None)]


def host_rows(doc: dict) -> list[Row]:
    """A host/2 document's table, adversarial input and sweep as the host suite's rows
    (harness.studies.host.measure writes them so)."""
    common = row_common("host", doc["device"])
    out: list[Row] = []
    for r in (ResultRecord.from_json(r) for r in doc.get("table") or []):
        x, size = r.extra, 2 if r.dtype in ("bfloat16", "float16") else 4
        pipe = (x["streams"], x["chunk"]) if "streams" in x else DEFAULT_PIPELINE
        cfg = host_config("", *pipe) if pipe != DEFAULT_PIPELINE else ""
        row = partial(Row, **common, variant=r.variant, config=cfg, dtype=r.dtype, shape=r.n)
        if not r.ok and r.status != "wrong":
            out.append(row(metric="check", median_ms=None, check=r.status,
                           info={"message": r.message}))  # fmt: skip
            continue
        check = {k: v for k, v in vars(r.check).items() if v is not None}
        out += _trip_rows(row, x, r.n * size, r.status, {"check": check})
    if adv := doc.get("adversarial"):
        row = partial(Row, **common, config=ADVERSARIAL, dtype="float32", shape=adv["n"],
                      metric="check", median_ms=None)  # fmt: skip
        for a in adv["rows"]:
            got = {"value": a["value"], "golden": adv["exact"], "abs_err": a["abs_err"],
                   "tolerance": a["bound"]}  # fmt: skip
            out.append(row(variant=a["variant"], check="ok" if a["ok"] else "wrong",
                           info={"check": got}))  # fmt: skip
        out.append(row(variant="torch.sum pageable", info={"check": {
            "abs_err": adv["torch_sum_abs_err"]}}))  # fmt: skip
        out.append(row(variant=NAIVE, info={"check": {
            "value": adv["naive_float32_running_sum"], "golden": adv["exact"],
            "abs_err": adv["naive_abs_err"]}}))  # fmt: skip
    dtype = (doc.get("options") or {}).get("dtype", "float32")
    for e in (doc.get("sweep") or {}).get("sizes", []):
        row = partial(Row, **common, dtype=dtype, shape=e["n"])
        b = e["h2d_alone"]
        out += [row(variant=vid, config=SWEEP, metric="h2d", median_ms=b[f"{kind}_ms"],
                    bytes=b["bytes"])
                for vid, kind in zip(H2D, ("pinned", "pageable"), strict=True)]  # fmt: skip
        out.append(row(variant=PIPELINE_ID, config=SWEEP, metric="kernels",
                       median_ms=e["kernels_alone_ms"]))  # fmt: skip
        out += _trip_rows(partial(row, variant=ONE_COPY_ID, config=SWEEP), e["v2_one_copy"],
                          e["bytes"], "", {})  # fmt: skip
        for c in e["configs"]:
            cfg = host_config(SWEEP, c["streams"], c["chunk"])
            out += _trip_rows(partial(row, variant=PIPELINE_ID, config=cfg), c, e["bytes"],
                              "ok" if c["ok"] else "wrong", {})  # fmt: skip
    return out


def host_v2(rows: list[Row], head: dict) -> dict:
    """host_rows' inverse: the host/2 document the rows say, its derived fields (log2 n, GB/s,
    shares, chunk counts, the staging, the ideal overlap) recomputed as the study computed them,
    but the finding sentences (the report writes them from the rows now)."""
    by: dict[tuple, dict[str, Row]] = {}
    for r in rows:
        by.setdefault((r.variant, r.config, r.n), {})[r.metric] = r

    def trip(rs: dict[str, Row]) -> dict:
        e2e = rs["e2e"]
        t = {"reps": e2e.reps, "e2e_ms": e2e.median_ms, "e2e_min_ms": e2e.min_ms,
             "e2e_spread_ms": e2e.info["spread_ms"]}  # fmt: skip
        t |= {f"{m}_ms": rs[m].median_ms if m in rs else None for m in _SPLIT}
        if "h2d" in rs:
            t |= {f"{m}_share": t[f"{m}_ms"] / t["e2e_ms"] for m in ("h2d", "kernels")}
        return t

    out = {k: v for k, v in head.items() if k not in ("schema", "suite", "versions", "rows")}
    out |= {"schema": HOST_V2, "table": []}
    for (vid, cfg, n), rs in by.items():
        if cfg.startswith((SWEEP, ADVERSARIAL)):
            continue
        r, c = rs.get("e2e") or rs["check"], (rs.get("e2e") or rs["check"]).info.get("check", {})
        v = catalogue.BY_ID.get(vid)
        ident = {"log2n": math.log2(n), "staging": v.staging if v else vid.split()[-1]}
        if ident["staging"] == "streams":
            ident |= parse_config(cfg)[1] or dict(
                zip(("streams", "chunk"), DEFAULT_PIPELINE, strict=True)
            )
        x = {**ident, **trip(rs), "gbps": r.bytes / r.median_ms / 1e6} if "e2e" in rs else ident
        said = {"value": c.get("value"), "golden": c.get("golden"), "abs_err": c.get("abs_err"),
                "bound": c.get("tolerance"), "message": r.info.get("message")}  # fmt: skip
        row = {**x, "n": n, "variant": vid, "status": r.check or "ok"}
        rec = host_record(row | {k: v for k, v in said.items() if v is not None}, r.dtype)
        out["table"].append(rec.to_json())
    adv = [r for r in rows if r.config == ADVERSARIAL]
    if adv:
        naive = next(r.info["check"] for r in adv if r.variant == NAIVE)
        torch_sum = next(r.info["check"] for r in adv if r.variant == "torch.sum pageable")
        out["adversarial"] = {
            "n": adv[0].n, "input": "x[0] = 2^24, x[1:] = 1.0 (float32)", "exact": naive["golden"],
            "naive_float32_running_sum": naive["value"], "naive_abs_err": naive["abs_err"],
            "torch_sum_abs_err": torch_sum["abs_err"],
            "rows": [{"variant": r.variant, "value": r.info["check"]["value"],
                      "abs_err": r.info["check"]["abs_err"], "bound": r.info["check"]["tolerance"],
                      "ok": r.check == "ok"} for r in adv if r.check],
        }  # fmt: skip
    sizes = []
    for n in dict.fromkeys(r.n for r in rows if r.config == SWEEP):
        pinned, pageable = (by[vid, SWEEP, n]["h2d"] for vid in H2D)
        nbytes = pinned.bytes
        b = {"bytes": nbytes}
        for kind, r in (("pinned", pinned), ("pageable", pageable)):
            b |= {f"{kind}_ms": r.median_ms, f"{kind}_gbps": nbytes / r.median_ms / 1e6}
        configs = []
        for (_, cfg, m), rs in by.items():
            if m == n and cfg.startswith(SWEEP + " "):
                pipe, t = parse_config(cfg)[1], trip(rs)
                configs.append({**pipe, "ok": rs["e2e"].check == "ok", **t,
                                "chunks": -(-n // pipe["chunk"]),
                                "gbps": nbytes / t["e2e_ms"] / 1e6})  # fmt: skip
        sizes.append({"n": n, "bytes": nbytes, "h2d_alone": b,
                      "kernels_alone_ms": by[PIPELINE_ID, SWEEP, n]["kernels"].median_ms,
                      "ideal_overlap_ms": pinned.median_ms,
                      "v2_one_copy": trip(by[ONE_COPY_ID, SWEEP, n]),
                      "configs": configs})  # fmt: skip
    if sizes:
        out["sweep"] = {"variant": PIPELINE_ID, "sizes": sizes}
    return out


def as_host_v2(doc: dict) -> dict:
    """A host/1 or /2 document in the host/2 form (a host/1 table row as its reader read it), but
    the sweep's finding sentences (the report writes them from the rows now)."""
    dtype = (doc.get("options") or {}).get("dtype")
    table = doc.get("table") or []
    if doc["schema"] == HOST_V1:
        table = [host_record(r, dtype).to_json() for r in table]
    out = {**doc, "schema": HOST_V2, "table": table}
    if isinstance(sweep := doc.get("sweep"), dict):
        out["sweep"] = {**sweep, "sizes": [{k: v for k, v in e.items() if k != "finding"}
                                           for e in sweep["sizes"]]}  # fmt: skip
    return out


def host(doc: dict) -> tuple[dict, list[ResultRecord], list[Row]]:
    """host/1, host/2 -> the host suite's ROWS document (method and options kept in the head).
    The host suite holds no records: main checks the rows read back against the old document
    (host_v2 of them equals as_host_v2 of it)."""
    rows = host_rows(as_host_v2(doc))
    head = {k: v for k, v in doc.items() if k in ("method", "options")}
    new = rows_document(rows, suite="host", device=doc["device"], **head)
    new["created"] = doc["created"]  # when it was measured
    return new, [], [r for r in rows if r.median_ms is not None]
