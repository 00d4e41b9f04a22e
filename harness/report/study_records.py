"""Records from the two studies' own row shapes, for their producers and for reading the committed
files written before the record existed:

- the host study (seed 001, `reduce-ladder host`): one row per (n, variant or peer), measured end
  to end from host memory. Its timings are not the device timings of the record (host clock,
  median, min and p10-p90 spread; the event split of the trip), so they travel in `extra`:
  e2e_ms, e2e_min_ms, e2e_spread_ms, reps, device_ms, h2d_ms, kernels_ms, d2h_ms, h2d_share,
  kernels_share, gbps (bytes of host data / e2e time), staging, streams, chunk, log2n. Its peers
  ("torch.sum pageable", "torch.sum pinned") are not catalogue ids. The check's bound is the
  row's "bound".
- the fastest bench (fastest-bench/1): one row per (dtype, n) holding cuda/fastest,
  triton/fastest, torch.sum, cupy.sum-cub and the copy side by side. Each becomes a record of its
  catalogue id; `extra` keeps bytes_read (n itemsize: the bench's bandwidth counts bytes read,
  the copy's 2 n itemsize) and a graph capture's error.
"""

from __future__ import annotations

from typing import Any

from harness.core import catalogue
from harness.core.catalogue import COPY_ID, CUB_ID, TORCH_SUM_ID
from harness.report.records import Check, ResultRecord, for_variant, timing_from

_HOST_IDENTITY = {"variant", "backend", "stage", "seeds", "dtype", "n", "status", "message"}
_HOST_CHECK = {"value", "golden", "abs_err", "bound"}


def host_record(row: dict[str, Any], dtype: str | None = None) -> ResultRecord:
    """A host-study row (harness.studies.host.table_rows) as a record; dtype for rows that do not
    name theirs."""
    vid = row["variant"]
    v = catalogue.BY_ID.get(vid)
    check = None
    if "golden" in row or "bound" in row:
        check = Check(
            value=row.get("value"),
            golden=row.get("golden"),
            abs_err=row.get("abs_err"),
            tolerance=row.get("bound"),
        )
    return ResultRecord(
        variant=vid,
        backend=row.get("backend") or (v.backend if v else "peer"),
        stage=str(row.get("stage") or (v.stage if v else "peer")),
        family=v.family if v else "peer",
        seeds=tuple(row.get("seeds") or (v.seeds if v else ())),
        twin=v.twin if v else None,
        dtype=row.get("dtype") or dtype or "",
        n=int(row["n"]),
        status=row.get("status", "ok"),
        message=row.get("message") or "",
        check=check,
        extra={k: x for k, x in row.items() if k not in _HOST_IDENTITY | _HOST_CHECK},
    )


# fastest-bench/1 row keys, in order (cuda/ and triton/ reproducible with --variants), and the
# catalogue ids of those that are not one
FASTEST_BENCH_KEYS = ("cuda/fastest", "triton/fastest", "cuda/reproducible", "triton/reproducible",
                      "torch.sum", "cupy.sum-cub", "copy")  # fmt: skip
FASTEST_BENCH_IDS = {"torch.sum": TORCH_SUM_ID, "cupy.sum-cub": CUB_ID, "copy": COPY_ID}


def fastest_bench_records(row: dict[str, Any], device: str | None = None) -> list[ResultRecord]:
    """The records of one fastest-bench/1 row (one dtype and n), in FASTEST_BENCH_KEYS order;
    a key the row lacks (a peer that cannot take the dtype) is left out."""
    out = []
    for key in FASTEST_BENCH_KEYS:
        timed = row.get(key)
        checked = f"{key}:ok" in row
        if timed is None and not checked:
            continue
        timed = timed if isinstance(timed, dict) else {}
        graph = row.get(f"{key}:graph") or {}
        status, message = "ok", ""
        if checked and not row[f"{key}:ok"]:
            # The bench times a variant whose check ran (and failed); one that raised has no time.
            message = row.get(f"{key}:message", "")
            status = "wrong" if timed.get("median_ms") is not None else "error"
        if "error" in timed:
            status, message = "error", message or timed["error"]
        extra: dict[str, Any] = {"bytes_read": row.get("bytes_read")}
        if "error" in graph:
            extra["graph_error"] = graph["error"]
        out.append(
            for_variant(
                catalogue.get(FASTEST_BENCH_IDS.get(key, key)),
                row["dtype"],
                int(row["n"]),
                status=status,
                message=message,
                total=timing_from(timed),
                graph=timing_from(graph),
                device=device,
                extra=extra,
            )
        )
    return out
