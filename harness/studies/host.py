"""Seed 001 end to end: the host study (the seed's table, the stream sweep, the adversarial input)
as the suite "host" of harness.studies.suites: its cases, their inputs and exact goldens, and how
one case is measured into rows (docs/results-format.md); the trip itself: host_plan.py; the page:
harness.report.host_tables; the method: docs/studies.md#seed-001-the-host-study.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import partial

import numpy as np
import torch

from harness.check import exact, verify
from harness.core import catalogue, device
from harness.core.catalogue import TORCH_SUM_ID, Variant
from harness.report.host_tables import (
    ADVERSARIAL,
    H2D,
    NAIVE,
    ONE_COPY_ID,
    PIPELINE_ID,
    SWEEP,
    config,
    parse_config,
)
from harness.report.records import Row
from harness.studies import session
from harness.studies.host_plan import (
    DEFAULT_PIPELINE,
    HostRunner,
    Staged,
    Trip,
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
METHOD = {  # the document's "method" (`reduce-ladder host --json`)
    "units": "e2e: milliseconds from host memory to the scalar on the host (host clock, median; "
    "its p10-p90 spread in info.spread_ms); GB/s: bytes of host data reduced / e2e time "
    "(1 GB = 1e9 B)",
    "pinned": "pinned host buffers are allocated and filled outside the timed region "
    "(the seed's V2 allocates its input with cudaMallocHost)",
    "split": "h2d, kernels, d2h, device: CUDA events on the stream (medians); the pipeline (V3, "
    "triton/001-streams) overlaps copies and kernels: device and d2h only",
    "data": "integers 0..99 (the seed's rand() % 100); golden exact (int64 sums of the "
    "integers), float results within gamma_L * sum|x|",
}


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


def subjects() -> list[str]:
    """The table's variants and peers (the host suite's defaults)."""
    return [*(v.id for v in host_variants()), *PEERS]


def supports(vid: str, dtype: str, n: int) -> bool:
    """A seed-001 variant at its dtypes; the peers (and the sweep's and the adversarial input's
    references) at any."""
    v = catalogue.BY_ID.get(vid)
    return v is None or (v.family == "001" and dtype in v.dtypes and n <= v.max_n)


def cases(variants: Sequence[Variant], sizes: Sequence[int] = DEFAULT_SIZES,
          dtype: str = "float32", pipeline: tuple[int, int] = DEFAULT_PIPELINE,
          adversarial: bool = True, sweep_sizes: Sequence[int] = DEFAULT_SWEEP_SIZES,
          streams: Sequence[int] = DEFAULT_STREAMS,
          chunks: Sequence[int] = DEFAULT_CHUNKS) -> list[tuple[str, str, int, str]]:  # fmt: skip
    """(variant, dtype, n, config) of the study's parts, each part's inputs together (no sizes or
    no sweep sizes: that part left out). The seed's table: every variant and peer per size (the
    pipeline's streams and chunk in the config of the variants that run it, where not the
    default). Every variant, x.cuda().sum() and a naive
    float32 running sum on adversarial_input(). With V3 among the variants, its pipeline over
    (streams x chunk) at each sweep size (a chunk larger than n once), beside the H2D copy alone
    (the copy-engine bound), V3's kernels alone and V2 (one copy, one stream)."""
    ids = [v.id for v in variants]
    pipe = config("", pipeline[0], round_chunk(pipeline[1])) if pipeline != DEFAULT_PIPELINE else ""
    piped = {v.id for v in variants if v.staging == "streams"}
    out = [(vid, dtype, n, pipe if vid in piped else "") for n in sizes for vid in [*ids, *PEERS]]
    if adversarial:
        out += [(vid, "float32", ADVERSARIAL_N, ADVERSARIAL) for vid in [*ids, PEERS[0], NAIVE]]
    for n in sweep_sizes if PIPELINE_ID in ids else ():
        out += [(vid, dtype, n, SWEEP) for vid in (*H2D, PIPELINE_ID, ONE_COPY_ID)]
        out += [(PIPELINE_ID, dtype, n, config(SWEEP, k, round_chunk(ch))) for ch in chunks
                if round_chunk(ch) <= n or ch == chunks[0] for k in streams]  # fmt: skip
    return out


# -- one case measured -----------------------------------------------------------------------------


def _input(dtype: str, n: int, part: str) -> tuple[torch.Tensor, verify.Golden, Staged]:
    """The case's host data (the adversarial input; else the seed's data, seeded by the size for
    the table, 7 for the sweep), its exact golden and its staged buffers, kept while consecutive
    cases share them (session.kept)."""

    def make():
        x = adversarial_input(n) if part == ADVERSARIAL else seed_like_host(
            n, dtype, seed=7 if part == SWEEP else n % 1000)  # fmt: skip
        return x, exact_golden(x), stage(x)

    return session.kept(("host", dtype, n, part), make)


def _checked(
    vid: str, dtype: str, s: Staged, g: verify.Golden, pipe: dict
) -> tuple[Trip, verify.CheckResult]:
    """A variant's trip (its pipeline's streams and chunk in pipe), or a peer's (what a user
    would write with torch), and its result checked against the exact golden."""
    v = catalogue.BY_ID.get(vid)
    if v is not None:
        runner = HostRunner(v, s, **pipe)
        return runner.trip, runner.check(g)
    trip = peer_trip(vid, s)
    value = trip()
    if dtype.startswith("int"):  # torch.sum of int32 gives int64: wrap as kernels do
        value = verify.wrap_int32(int(value))
    return trip, verify.compare(catalogue.get(TORCH_SUM_ID), dtype, s.n, value, g)


def trip(vid: str, dtype: str, n: int, cfg: str = "") -> Trip:
    """The case's trip from host memory, its input staged (what pytest-benchmark times)."""
    part, pipe = parse_config(cfg)
    _, g, s = _input(dtype, n, part)
    return _checked(vid, dtype, s, g, pipe)[0]


def measure(vid: str, dtype: str, n: int, cfg: str, common: dict, reps: int | None = None,
            timed: bool = True) -> list[Row]:  # fmt: skip
    """One case's rows: the copy alone ("h2d"), V3's kernels alone ("kernels"), the naive sum's
    value ("check"); else a variant or a peer checked against the exact golden, then (not on the
    adversarial input) timed end to end ("e2e"), with the event split ("h2d", "kernels", "d2h",
    "device"). A wrong sum is a row's check (an exception: the runner's row, check "error")."""
    part, pipe = parse_config(cfg)
    row = partial(Row, **common, variant=vid, config=cfg, dtype=dtype, shape=n)
    v = catalogue.BY_ID.get(vid)
    x, g, s = _input(dtype, n, part)
    nbytes = n * s.host.element_size()
    if vid in H2D:
        return [row(metric="h2d", median_ms=h2d_alone(s, vid == H2D[0]), bytes=nbytes)]
    if vid == NAIVE:
        value = naive_running_sum(x)
        got = {"value": value, "golden": g.value, "abs_err": abs(value - g.value)}
        return [row(metric="check", median_ms=None, info={"check": got})]
    if part == SWEEP and v and v.staging == "streams" and not pipe:
        return [row(metric="kernels", median_ms=kernels_alone(v, s))]
    trip, c = _checked(vid, dtype, s, g, pipe)
    check = "ok" if c.ok else "wrong"
    info = {"check": {k: getattr(c, k) for k in ("value", "golden", "abs_err", "tolerance")}}
    if part == ADVERSARIAL or not timed:
        return [row(metric="check", median_ms=None, check=check, info=info)]
    split = (v.staging if v else vid.split()[-1]) != "streams"
    reps = reps if reps is not None else (3 if n >= 2**28 else None)  # None: about 150 ms worth
    e2e, times = time_trips(trip, reps=reps, split=split)
    info["spread_ms"] = e2e.p90_ms - e2e.p10_ms
    return [row(metric="e2e", median_ms=e2e.median_ms, min_ms=e2e.min_ms, reps=e2e.reps,
                bytes=nbytes, check=check, info=info),
            *(row(metric=m, median_ms=ms, check=check) for m, ms in times.items())]  # fmt: skip
