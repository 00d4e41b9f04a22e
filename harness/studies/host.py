"""Seed 001 end to end: the host study (the seed's table, the stream sweep, the adversarial input).
Its inputs and exact goldens, the driver and its document; the trip itself: host_plan.py; the
method: docs/studies.md#seed-001-the-host-study.
"""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Callable, Iterable, Sequence

import numpy as np
import torch

from harness.check import exact, verify
from harness.core import catalogue, device, dtypes
from harness.core.catalogue import TORCH_SUM_ID, Variant
from harness.report import records
from harness.studies.host_plan import (
    DEFAULT_PIPELINE,
    HostRunner,
    Staged,
    chunk_ranges,
    h2d_alone,
    kernels_alone,
    peer_trip,
    round_chunk,
    stage,
    time_trips,
)

DEFAULT_SIZES = (2**11, 2**14, 2**20, 2**25, 2**30)
DEFAULT_STREAMS = (1, 2, 4, 8)
DEFAULT_CHUNKS = (2**20, 2**22, 2**24)
DEFAULT_SWEEP_SIZES = (2**25, 2**30)
PEERS = ("torch.sum pageable", "torch.sum pinned")
ADVERSARIAL_N = 2**22
GOLDEN_SLICE = 2**26  # elements per slice of the exact golden's int64 sums


def exact_golden(x: torch.Tensor) -> verify.Golden:
    """The EXACT sum of a CPU tensor, as the seed insists (a naive float sum loses small terms).

    Integers, and floats that are all integers below 2^31: int64 arithmetic over slices (no
    n-sized temporary; wrapped to int32 for int32 data, as the kernels wrap). Other floats: the
    exact sum of their binary values (harness.check.exact), rounded once to float64.
    """
    x = x.reshape(-1)
    total = abs_total = 0
    for start in range(0, x.numel(), GOLDEN_SLICE):
        part = x[start : start + GOLDEN_SLICE]
        if part.is_floating_point() and not bool(
            ((part == torch.round(part)) & (part.abs() < 2**31)).all()
        ):  # not integers (NaN and infinities included)
            value, abs_sum = exact.exact_sum(x), exact.exact_abs_sum(x)
            return verify.Golden(float(value), float(abs_sum), False, 0.0)
        wide = part.to(torch.int64)
        total += int(wide.sum())
        abs_total += int(wide.abs().sum())
    value = verify.wrap_int32(total) if x.dtype == torch.int32 else total
    return verify.Golden(value, float(abs_total), True, 0.0)


def adversarial_input(n: int = ADVERSARIAL_N) -> torch.Tensor:
    """One large value (2^24) then n-1 ones, float32. A naive float32 running sum loses EVERY one:
    2^24 + 1 rounds back to 2^24 (ties to even), so it returns 2^24 against an exact 2^24 + n - 1.
    A tree adds the ones among themselves first and loses at most a few units."""
    if n < 2:
        raise ValueError("the adversarial input needs n >= 2")
    x = torch.ones(n, dtype=torch.float32)
    x[0] = 2.0**24
    return x


def naive_running_sum(x: torch.Tensor) -> float:
    """s = 0; for v in x: s += v, in float32 (what a plain CPU loop computes: accumulate is the
    running sum, in order, each step rounded to float32)."""
    return float(np.add.accumulate(x.numpy(), dtype=np.float32)[-1])


def seed_like_host(n: int, dtype: str = "float32", seed: int = 0) -> torch.Tensor:
    """Integers 0..99 (the seed's rand() % 100) in a pageable CPU tensor; drawn on the GPU when
    there is one (fast at 2^30+), then copied to the host."""
    dev = "cuda" if device.gpu_available() else "cpu"
    g = torch.Generator(device=dev).manual_seed(seed)
    return verify.seed_like_input(n, dtype, dev, g).cpu()


def host_variants(ids: Iterable[str] | None = None) -> list[Variant]:
    vs = catalogue.select(ids, family="001")
    return [v for v in vs if v.backend == "cuda"] + [v for v in vs if v.backend == "triton"]


def _reps_for(n: int, reps: int | None) -> int | None:
    return reps if reps is not None else (3 if n >= 2**28 else None)


def _free() -> None:
    """One size's buffers freed before the next."""
    torch.cuda.synchronize()
    torch.cuda.empty_cache()


def _measure(
    v: Variant | str, s: Staged, g: verify.Golden, pipeline: tuple[int, int], reps: int | None
) -> dict:
    """One row of the table: a variant, or a peer (what a user would write with torch), checked
    against the exact golden, then timed end to end (records.host_record reads it)."""
    dtype, peer = dtypes.name_of(s.host.dtype), isinstance(v, str)
    vid, staging = (v, v.split()[-1]) if peer else (v.id, v.staging)
    row = {"n": s.n, "log2n": math.log2(s.n), "dtype": dtype, "variant": vid, "staging": staging}
    try:
        if peer:
            trip = peer_trip(v, s)
            value = trip()
            if dtype.startswith("int"):  # torch.sum of int32 gives int64: wrap as kernels do
                value = verify.wrap_int32(int(value))
            c = verify.compare(catalogue.get(TORCH_SUM_ID), dtype, s.n, value, g)
        else:
            runner = HostRunner(v, s, streams=pipeline[0], chunk=pipeline[1])
            c, trip = runner.check(g), runner.trip
            if staging == "streams":
                row.update(streams=pipeline[0], chunk=round_chunk(pipeline[1]))
        row.update(value=c.value, golden=c.golden, abs_err=c.abs_err, bound=c.tolerance,
                   status="ok" if c.ok else "wrong")  # fmt: skip
        row.update(time_trips(trip, reps=_reps_for(s.n, reps), split=staging != "streams"))
        row["gbps"] = s.n * s.host.element_size() / row["e2e_ms"] / 1e6
    except Exception as e:  # reported in the row; the study goes on
        row.update(status="error", message=f"{type(e).__name__}: {e}")
    return row


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
        g, s = exact_golden(x), stage(x)
        for v in [*variants, *PEERS]:
            rows.append(_measure(v, s, g, pipeline, reps))
            if progress:
                progress(rows[-1])
        del s, x
        _free()
    return rows


def stream_sweep(
    sizes: Sequence[int],
    streams: Sequence[int] = DEFAULT_STREAMS,
    chunks: Sequence[int] = DEFAULT_CHUNKS,
    dtype: str = "float32",
    *,
    reps: int | None = None,
    progress: Callable[[dict], None] | None = None,
) -> dict:
    """V3's pipeline over (streams x chunk) at each size, beside V2 (one copy, one stream), the
    H2D copy alone (the copy-engine bound) and the kernels alone."""
    v = catalogue.get("cuda/001-v3-streams")
    out: dict = {"variant": v.id, "sizes": []}
    for n in sizes:
        x = seed_like_host(n, dtype, seed=7)
        g, s = exact_golden(x), stage(x)
        r_n = _reps_for(n, reps)
        bound, k_ms = h2d_alone(s), kernels_alone(v, s)
        v2 = HostRunner(catalogue.get("cuda/001-v2-pinned"), s)
        entry = {"n": n, "bytes": bound["bytes"], "h2d_alone": bound, "kernels_alone_ms": k_ms,
                 "v2_one_copy": time_trips(v2.trip, reps=r_n), "configs": []}  # fmt: skip
        for ch in chunks:
            if round_chunk(ch) > n and ch != chunks[0]:
                continue
            for k in streams:
                r = HostRunner(v, s, streams=k, chunk=ch)
                c, t = r.check(g), time_trips(r.trip, reps=r_n, split=False)
                row = {"streams": k, "chunk": round_chunk(ch), "ok": c.ok, **t}
                row["chunks"] = len(chunk_ranges(n, ch))
                row["gbps"] = bound["bytes"] / t["e2e_ms"] / 1e6
                entry["configs"].append(row)
                if progress:
                    progress({"n": n, **row})
        entry["finding"] = sweep_finding(entry)
        out["sizes"].append(entry)
        del s, x
        _free()
    return out


def sweep_finding(entry: dict) -> str:
    """The sentences the report prints under one size's sweep table (whose caption gives the
    pinned copy-engine bound, the kernels alone and V2), from the measured numbers only."""
    cfgs, h2d, v2_ms = entry["configs"], entry["h2d_alone"], entry["v2_one_copy"]["e2e_ms"]
    lines = [f"n = 2^{math.log2(entry['n']):g}: H2D copy alone from pageable memory "
             f"{h2d['pageable_gbps']:.1f} GB/s."]  # fmt: skip
    wins = []
    for ch in sorted({c["chunk"] for c in cfgs}):
        one = next((c for c in cfgs if c["chunk"] == ch and c["streams"] == 1), None)
        if one is None:
            continue
        best = min((c for c in cfgs if c["chunk"] == ch), key=lambda c: c["e2e_ms"])
        noise = max(one["e2e_spread_ms"], best["e2e_spread_ms"])
        if best["streams"] > 1 and one["e2e_ms"] - best["e2e_ms"] > noise:
            wins.append(((one["e2e_ms"] - best["e2e_ms"]) / one["e2e_ms"], ch, best, one, noise))
    if wins:
        frac, ch, best, one, noise = max(wins, key=lambda w: w[0])
        lines.append(
            f"Streams beat one stream: chunk {ch:,} elements, {best['streams']} streams "
            f"{best['e2e_ms']:.3f} ms vs 1 stream {one['e2e_ms']:.3f} ms ({100 * frac:.1f}% "
            f"faster, above the {noise:.3f} ms p10-p90 spread)."
        )
    else:
        lines.append("No stream count beat one stream (same chunk) by more than the p10-p90 "
                     "spread.")  # fmt: skip
    if cfgs:
        b = min(cfgs, key=lambda c: c["e2e_ms"])
        lines.append(
            f"Best pipeline: {b['streams']} streams x {b['chunk']:,}-element chunks, "
            f"{b['e2e_ms']:.3f} ms = {b['gbps']:.1f} GB/s, "
            f"{100 * h2d['pinned_ms'] / b['e2e_ms']:.0f}% of the copy-engine bound "
            f"({h2d['pinned_ms']:.3f} ms); vs V2 {v2_ms / b['e2e_ms']:.2f}x."
        )
    return " ".join(lines)


def adversarial_rows(variants: Sequence[Variant]) -> dict:
    """Every variant on adversarial_input(): its error against its bound, and a naive float32
    running sum's error (which the tree must beat)."""
    x = adversarial_input()
    g, s = exact_golden(x), stage(x)
    naive = naive_running_sum(x)
    rows = []
    for v in variants:
        c = HostRunner(v, s).check(g)
        rows.append({"variant": v.id, "value": c.value, "abs_err": c.abs_err,
                     "bound": c.tolerance, "ok": c.ok})  # fmt: skip
    return {
        "n": ADVERSARIAL_N,
        "input": "x[0] = 2^24, x[1:] = 1.0 (float32)",
        "exact": g.value,
        "naive_float32_running_sum": naive,
        "naive_abs_err": abs(naive - g.value),
        "torch_sum_abs_err": abs(float(s.host.to("cuda").sum().item()) - g.value),
        "rows": rows,
    }


def new_document() -> dict:
    """The study's document; its "table" holds result records (records.host_record)."""
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
            "data": "integers 0..99 (the seed's rand() % 100); golden exact (int64 sums of the "
            "integers), float results within gamma_L * sum|x|",
        },
    }
