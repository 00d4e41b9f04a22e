"""Seed 001 end to end: the host study (the seed's table, the stream sweep, the adversarial input).

A sum of data that starts in HOST memory, the scalar back on the host, by every seed-001 variant
(pageable, pinned, streams; harness.studies.host_plan runs the trip) beside torch.sum, each result
checked against the exact golden (harness.studies.host_data) and timed end to end
(harness.studies.host_timing). This module drives the study and builds its JSON document
(`reduce-ladder host --json`, results/*/host.json): new_document, table_rows, stream_sweep,
adversarial_rows. The names of the other three modules that callers use are re-exported here.
"""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Callable, Iterable, Sequence

import torch

from harness.check import verify
from harness.core import catalogue, device
from harness.core.catalogue import Variant
from harness.report import records
from harness.studies.host_data import (
    ADVERSARIAL_N,
    FSUM_MAX_N,
    adversarial_input,
    error_bound,
    exact_golden,
    naive_running_sum,
    seed_like_host,
)
from harness.studies.host_plan import (
    DEFAULT_PIPELINE,
    STAGINGS,
    THREADS,
    TILE,
    HostRunner,
    Staged,
    check_host,
    chunk_partials,
    chunk_ranges,
    emulate,
    host_passes,
    reduce_host,
    round_chunk,
    stage,
)
from harness.studies.host_timing import h2d_alone, kernels_alone, peer_trip, time_trips

# The host study's public names, those living in host_plan, host_data and host_timing included.
__all__ = [
    "ADVERSARIAL_N",
    "DEFAULT_CHUNKS",
    "DEFAULT_PIPELINE",
    "DEFAULT_SIZES",
    "DEFAULT_STREAMS",
    "DEFAULT_SWEEP_SIZES",
    "FSUM_MAX_N",
    "PEERS",
    "STAGINGS",
    "THREADS",
    "TILE",
    "HostRunner",
    "Staged",
    "adversarial_input",
    "adversarial_rows",
    "check_host",
    "chunk_partials",
    "chunk_ranges",
    "emulate",
    "error_bound",
    "exact_golden",
    "h2d_alone",
    "host_passes",
    "host_variants",
    "kernels_alone",
    "naive_running_sum",
    "new_document",
    "peer_trip",
    "reduce_host",
    "round_chunk",
    "seed_like_host",
    "stage",
    "stream_sweep",
    "sweep_finding",
    "table_rows",
    "time_trips",
]

DEFAULT_SIZES = (2**11, 2**14, 2**20, 2**25, 2**30)
DEFAULT_STREAMS = (1, 2, 4, 8)
DEFAULT_CHUNKS = (2**20, 2**22, 2**24)
DEFAULT_SWEEP_SIZES = (2**25, 2**30)
PEERS = ("torch.sum pageable", "torch.sum pinned")


def host_variants(ids: Iterable[str] | None = None) -> list[Variant]:
    vs = catalogue.select(ids, family="001")
    return [v for v in vs if v.backend == "cuda"] + [v for v in vs if v.backend == "triton"]


def _reps_for(n: int, reps: int | None) -> int | None:
    if reps is not None:
        return reps
    return 3 if n >= 2**28 else None


def table_rows(
    sizes: Sequence[int],
    dtype: str = "float32",
    *,
    variants: Sequence[Variant] | None = None,
    reps: int | None = None,
    pipeline: tuple[int, int] = DEFAULT_PIPELINE,
    progress: Callable[[dict], None] | None = None,
) -> list[dict]:
    """One row per (size, variant or peer): checked against the exact golden, then timed."""
    variants = list(variants) if variants is not None else host_variants()
    rows = []
    for n in sizes:
        x = seed_like_host(n, dtype, seed=n % 1000)
        g = exact_golden(x)
        s = stage(x)
        nbytes = n * x.element_size()
        r_n = _reps_for(n, reps)
        for v in variants:
            row = {"n": n, "log2n": math.log2(n), "dtype": dtype, "variant": v.id}
            row.update(backend=v.backend, stage=v.stage, seeds=list(v.seeds), staging=v.staging)
            try:
                st, ch = pipeline
                c = check_host(v, s, g, streams=st, chunk=ch)
                row.update(value=c.value, golden=c.golden, abs_err=c.abs_err, bound=c.tolerance)
                row["status"] = "ok" if c.ok else "wrong"
                if v.staging == "streams":
                    row.update(streams=st, chunk=round_chunk(ch))
                runner_ = HostRunner(v, s, streams=st, chunk=ch)
                row.update(time_trips(runner_.trip, reps=r_n, split=v.staging != "streams"))
                row["gbps"] = nbytes / row["e2e_ms"] / 1e6
            except Exception as e:  # reported in the row; the study goes on
                row.update(status="error", message=f"{type(e).__name__}: {e}")
            rows.append(row)
            if progress:
                progress(row)
        for kind in PEERS:
            row = {"n": n, "log2n": math.log2(n), "dtype": dtype, "variant": kind}
            row.update(backend="peer", stage="peer", seeds=[], staging=kind.split()[-1])
            trip = peer_trip(kind, s)
            value = trip()
            if dtype.startswith("int"):  # torch.sum of int32 gives int64: wrap as the kernels do
                value = verify.wrap_int32(int(value))
            err = float(abs(value - g.value))
            any_order = verify.gamma(n, verify.UNIT_ROUNDOFF.get(dtype, 0.0)) * g.abs_sum
            tol = 0.0 if dtype.startswith("int") else any_order
            row.update(value=value, golden=g.value, abs_err=err, bound=tol)
            row["status"] = "ok" if err <= tol else "wrong"
            row.update(time_trips(trip, reps=r_n))
            row["gbps"] = nbytes / row["e2e_ms"] / 1e6
            rows.append(row)
            if progress:
                progress(row)
        del s, x
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
    return rows


def stream_sweep(
    sizes: Sequence[int],
    streams: Sequence[int] = DEFAULT_STREAMS,
    chunks: Sequence[int] = DEFAULT_CHUNKS,
    dtype: str = "float32",
    *,
    reps: int | None = None,
    variant: str = "cuda/001-v3-streams",
    progress: Callable[[dict], None] | None = None,
) -> dict:
    """V3's pipeline over (streams x chunk) at each size, beside V2 (one copy, one stream), the
    H2D copy alone (the copy-engine bound) and the kernels alone."""
    v = catalogue.get(variant)
    out: dict = {"variant": variant, "sizes": []}
    for n in sizes:
        x = seed_like_host(n, dtype, seed=7)
        g = exact_golden(x)
        s = stage(x)
        r_n = _reps_for(n, reps)
        bound = h2d_alone(s)
        k_ms = kernels_alone(v, s)
        v2 = HostRunner(catalogue.get("cuda/001-v2-pinned"), s)
        entry = {
            "n": n,
            "bytes": bound["bytes"],
            "h2d_alone": bound,
            "kernels_alone_ms": k_ms,
            "ideal_overlap_ms": max(bound["pinned_ms"], k_ms),
            "v2_one_copy": time_trips(v2.trip, reps=r_n),
            "configs": [],
        }
        for ch in chunks:
            if round_chunk(ch) > n and ch != chunks[0]:
                continue
            for k in streams:
                c = check_host(v, s, g, streams=k, chunk=ch)
                trip = HostRunner(v, s, streams=k, chunk=ch).trip
                t = time_trips(trip, reps=r_n, split=False)
                row = {"streams": k, "chunk": round_chunk(ch), "ok": c.ok, **t}
                row["chunks"] = len(chunk_ranges(n, ch))
                row["gbps"] = bound["bytes"] / t["e2e_ms"] / 1e6
                entry["configs"].append(row)
                if progress:
                    progress({"n": n, **row})
        entry["finding"] = sweep_finding(entry)
        out["sizes"].append(entry)
        del s, x
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
    return out


def sweep_finding(entry: dict) -> str:
    """The sentence the report prints for one size, from the measured numbers only."""
    n = entry["n"]
    cfgs = entry["configs"]
    h2d = entry["h2d_alone"]
    lines = [
        f"n = 2^{math.log2(n):g}: H2D copy alone (pinned) {h2d['pinned_ms']:.3f} ms = "
        f"{h2d['pinned_gbps']:.1f} GB/s (pageable {h2d['pageable_gbps']:.1f} GB/s); kernels alone "
        f"{entry['kernels_alone_ms']:.3f} ms; V2 (one copy, one stream) "
        f"{entry['v2_one_copy']['e2e_ms']:.3f} ms."
    ]
    wins = []
    for ch in sorted({c["chunk"] for c in cfgs}):
        one = next((c for c in cfgs if c["chunk"] == ch and c["streams"] == 1), None)
        if one is None:
            continue
        best = min((c for c in cfgs if c["chunk"] == ch), key=lambda c: c["e2e_ms"])
        gain = one["e2e_ms"] - best["e2e_ms"]
        noise = max(one["e2e_spread_ms"], best["e2e_spread_ms"])
        if best["streams"] > 1 and gain > noise:
            wins.append((gain / one["e2e_ms"], ch, best, one))
    if wins:
        frac, ch, best, one = max(wins, key=lambda w: w[0])
        lines.append(
            f"Streams beat one stream: chunk {ch:,} elements, {best['streams']} streams "
            f"{best['e2e_ms']:.3f} ms vs 1 stream {one['e2e_ms']:.3f} ms ({100 * frac:.1f}% "
            f"faster, above the {max(one['e2e_spread_ms'], best['e2e_spread_ms']):.3f} ms "
            "p10-p90 spread)."
        )
    else:
        lines.append(
            "No stream count beat one stream (same chunk) by more than the p10-p90 spread."
        )
    best_all = min(cfgs, key=lambda c: c["e2e_ms"]) if cfgs else None
    if best_all:
        lines.append(
            f"Best pipeline: {best_all['streams']} streams x {best_all['chunk']:,}-element "
            f"chunks, {best_all['e2e_ms']:.3f} ms = {best_all['gbps']:.1f} GB/s, "
            f"{100 * h2d['pinned_ms'] / best_all['e2e_ms']:.0f}% of the copy-engine bound "
            f"({h2d['pinned_ms']:.3f} ms); vs V2 "
            f"{entry['v2_one_copy']['e2e_ms'] / best_all['e2e_ms']:.2f}x."
        )
    return " ".join(lines)


def adversarial_rows(n: int = ADVERSARIAL_N, variants: Sequence[Variant] | None = None) -> dict:
    """Every variant on adversarial_input(n): its error against its bound, and a naive float32
    running sum's error (which the tree must beat)."""
    variants = list(variants) if variants is not None else host_variants()
    x = adversarial_input(n)
    g = exact_golden(x)
    s = stage(x)
    naive = naive_running_sum(x)
    rows = []
    for v in variants:
        c = check_host(v, s, g)
        rows.append(
            {
                "variant": v.id,
                "value": c.value,
                "abs_err": c.abs_err,
                "bound": c.tolerance,
                "ok": c.ok,
            }
        )
    peer = float(s.host.to("cuda").sum().item())
    return {
        "n": n,
        "input": "x[0] = 2^24, x[1:] = 1.0 (float32)",
        "exact": g.value,
        "naive_float32_running_sum": naive,
        "naive_abs_err": abs(naive - g.value),
        "torch_sum_abs_err": abs(peer - g.value),
        "rows": rows,
    }


def new_document() -> dict:
    """The study's document; its "table" holds result records (study_records.host_record)."""
    return {
        "schema": records.HOST_SCHEMA,
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "device": device.device_info(),
        "method": {
            "units": "e2e_ms: milliseconds from host memory to the scalar on the host (host "
            "clock, median); gbps: bytes of host data reduced / e2e time (1 GB = 1e9 B)",
            "pinned": "pinned host buffers are allocated and filled outside the timed region "
            "(the seed's V2 allocates its input with cudaMallocHost)",
            "split": "h2d_ms, kernels_ms, d2h_ms: CUDA events on the stream (medians); the "
            "pipeline (V3, triton/001-streams) overlaps copies and kernels: device_ms only",
            "data": "integers 0..99 (the seed's rand() % 100); golden exact (int64 / float64 of "
            "integers), float results within gamma_L * sum|x|",
        },
    }
