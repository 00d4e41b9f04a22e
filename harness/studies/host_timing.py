"""Timing seed 001's trips: end to end on the host clock, split by CUDA events.

Timing (METHOD.md): the end-to-end time is the host clock from a synchronized start to the scalar
read on the host (that is what a caller waits for, Python launch cost included); CUDA events on the
stream split it into H2D copy, kernels (all passes) and D2H (the 4-byte result), except for the
pipeline, whose copies and kernels overlap by design (its device total is reported). Warm-up trips
first (kernel compilation stays out); median of the repetitions; no L2 flush (the data arrives
over PCIe, where a user's would). GB/s = bytes of host data reduced / end-to-end time.
Beside the trips: what a user would write with torch (peer_trip), the H2D copy alone (the
copy-engine bound) and the kernels alone.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence

import torch

from harness.core import timing
from harness.core.catalogue import Variant
from harness.studies.host_plan import HostRunner, Staged


def time_trips(
    trip: Callable[[Sequence[torch.cuda.Event] | None], object],
    *,
    reps: int | None,
    split: bool = True,
    warmup: int = 2,
    target_ms: float = 150.0,
    max_reps: int = 50,
) -> dict:
    """Median end-to-end milliseconds (host clock) and the event split of a trip (split=False:
    the trip records no event after its copy, e.g. the pipeline). The loop is
    harness.core.timing.trips."""
    wall, splits = timing.trips(
        trip, events=4, reps=reps, warmup=warmup, target_ms=target_ms, max_reps=max_reps,
        skipped=() if split else (1,),  # the pipeline records no event after its copy
    )  # fmt: skip
    e2e = timing.Timing.of(wall)
    out = {
        "reps": e2e.reps,
        "e2e_ms": e2e.median_ms,
        "e2e_min_ms": e2e.min_ms,
        "e2e_spread_ms": e2e.p90_ms - e2e.p10_ms,  # p10-p90
        # offsets from the start event: after the copy, after the kernels, after the D2H
        "device_ms": statistics.median(s[2] for s in splits),
        "d2h_ms": statistics.median(s[2] - s[1] for s in splits),
        "h2d_ms": statistics.median(s[0] for s in splits) if split else None,
        "kernels_ms": statistics.median(s[1] - s[0] for s in splits) if split else None,
    }
    if out["h2d_ms"] is not None:
        out["h2d_share"] = out["h2d_ms"] / e2e.median_ms
        out["kernels_share"] = out["kernels_ms"] / e2e.median_ms
    return out


def peer_trip(kind: str, s: Staged) -> Callable[[Sequence[torch.cuda.Event] | None], float]:
    """What a user would write: x.cuda().sum().item() (pageable), or from pinned memory."""
    pinned = kind.endswith("pinned")
    src = s.pinned if pinned else s.host

    def trip(ev=None):
        main = torch.cuda.current_stream()
        if ev:
            ev[0].record(main)
        d = src.to("cuda", non_blocking=pinned)
        if ev:
            ev[1].record(main)
        r = d.sum()
        if ev:
            ev[2].record(main)
        value = r.item()
        if ev:
            ev[3].record(main)
        return value

    return trip


def h2d_alone(s: Staged, reps: int = 5) -> dict:
    """The copy-engine bound: the pinned (and pageable) H2D copy of all n elements, nothing else,
    timed with events; GB/s = bytes / time."""
    nbytes = s.n * s.host.element_size()
    out = {"bytes": nbytes}
    for kind, src, nb in (("pinned", s.pinned, True), ("pageable", s.host, False)):
        ts = timing.serial_ms(lambda src=src, nb=nb: s.dev.copy_(src, non_blocking=nb), reps=reps)
        ms = statistics.median(ts)
        out[f"{kind}_ms"], out[f"{kind}_gbps"] = ms, nbytes / ms / 1e6
    return out


def kernels_alone(v: Variant, s: Staged, reps: int = 5) -> float:
    """Median ms of v's passes on data already on the device (the chain, no transfer)."""
    r = HostRunner(v, s)
    main = torch.cuda.current_stream()
    return statistics.median(timing.serial_ms(lambda: r.run_passes(main), reps=reps))
