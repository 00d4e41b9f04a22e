"""Seed 001's host loop, planned, run and timed end to end: data in HOST memory, the scalar back
on the host (the stagings and the timing: docs/studies.md#seed-001-the-host-study)."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np
import torch

from harness.check import verify
from harness.core import dtypes, timing
from harness.core.catalogue import HOST_TILE, Variant
from harness.core.mappings import Pass, cdiv, one_pass, plan_passes
from harness.launch import plan
from harness.launch.stream import on_torch_stream

TILE = HOST_TILE.threads * HOST_TILE.tiles  # 2048 elements per block / program
DEFAULT_PIPELINE = (4, 2**22)  # (streams, chunk elements) of V3 in the table
Trip = Callable[[Sequence[torch.cuda.Event] | None], float | int]


def host_passes(n: int) -> list[Pass]:
    """The seed's host loop for n elements: ceil(n / 2048) blocks, then again over the partials.
    log_2048(n) launches: 2^11, 2^22, 2^33 elements take 1, 2, 3 (the seed's own count)."""
    return plan_passes(HOST_TILE, n)


def round_chunk(chunk: int) -> int:
    """A chunk is a whole number of tiles, so each chunk's blocks are the single pass's blocks and
    chunk [a, b)'s partials land at [a / 2048, ...): exactly where one whole pass writes them."""
    if chunk < 1:
        raise ValueError(f"chunk must be >= 1 element, got {chunk}")
    return cdiv(chunk, TILE) * TILE


def chunk_ranges(n: int, chunk: int) -> list[tuple[int, int]]:
    """[start, stop) of each chunk of the pipeline (the last one may be short)."""
    c = round_chunk(chunk)
    return [(a, min(n, a + c)) for a in range(0, n, c)]


@dataclass
class Staged:
    """The host data and the device buffers of one size, shared by every variant (saves time and
    memory at 2^30+). `host` is the caller's array: read, never written; `pinned` the same data
    in page-locked memory, allocated and filled once, outside any timed region."""

    host: torch.Tensor
    pinned: torch.Tensor
    dev: torch.Tensor
    parts: tuple[torch.Tensor, torch.Tensor]
    result: torch.Tensor  # one element of pinned host memory: where the scalar lands

    @property
    def n(self) -> int:
        return self.host.numel()


def stage(x: torch.Tensor | np.ndarray) -> Staged:
    """Device buffers for host array x (a CPU tensor or a numpy array, any shape: flattened)."""
    if isinstance(x, np.ndarray):
        x = torch.from_numpy(np.ascontiguousarray(x))
    if x.device.type != "cpu":
        raise ValueError(f"seed 001 reduces HOST data; got a tensor on {x.device}")
    dtypes.name_of(x.dtype)  # a clear error for unsupported dtypes
    x = x.reshape(-1).contiguous()  # a view, or a private copy: the caller's array is not touched
    if x.numel() < 1:
        raise ValueError("seed 001 needs n >= 1")
    ps = host_passes(x.numel())
    sizes = (ps[0].blocks, ps[1].blocks if len(ps) > 1 else 1)
    parts = tuple(torch.empty(s, dtype=x.dtype, device="cuda") for s in sizes)
    return Staged(x, x if x.is_pinned() else x.pin_memory(), torch.empty_like(x, device="cuda"),
                  parts, torch.empty(1, dtype=x.dtype, pin_memory=True))  # fmt: skip


Launch = Callable[[torch.cuda.Stream], None]


def _pass(v: Variant, dtype: str, inp: torch.Tensor, out: torch.Tensor, n_in: int) -> Launch:
    """One pass of v's block kernel over n_in elements of inp into out (one partial per tile),
    prepared once (harness.launch.plan), launched on the stream it is given."""
    p = one_pass(v.launch, n_in)
    if v.backend != "cuda":
        run, on = partial(plan.triton_pass(v, p), inp, out), torch.cuda.stream
    else:
        kern, blocks, threads, smem, scalars = plan.cuda_pass(v, dtype, p, inp.element_size())
        # Raw pointers as 64-bit scalars: no per-launch DLPack wrapping on the timed path.
        args = (np.uint64(inp.data_ptr()), np.uint64(out.data_ptr()), *scalars)
        run, on = partial(kern, (blocks,), (threads,), args, shared_mem=smem), on_torch_stream

    def launch(stream: torch.cuda.Stream) -> None:
        with on(stream):
            run()

    return launch


def _mark(events: Sequence[torch.cuda.Event] | None, i: int, stream: torch.cuda.Stream) -> None:
    """Record a trip's event i on the stream, when the trip is timed."""
    if events:
        events[i].record(stream)


class HostRunner:
    """One variant bound to one Staged size: everything but the trip itself is prepared here."""

    def __init__(self, v: Variant, s: Staged, *, streams: int = DEFAULT_PIPELINE[0],
                 chunk: int = DEFAULT_PIPELINE[1]):  # fmt: skip
        dtype = dtypes.name_of(s.host.dtype)
        if v.family != "001":
            raise ValueError(f"{v.id} is not a seed-001 variant (family 001)")
        if dtype not in v.dtypes:
            raise ValueError(f"{v.id} supports {', '.join(v.dtypes)}, not {dtype}")
        if streams < 1:
            raise ValueError(f"streams must be >= 1, got {streams}")
        self.variant, self.dtype, self.staged, self.staging = v, dtype, s, v.staging
        passes = host_passes(s.n)
        # every pass, the first from the data on the device, then between the partial buffers
        self.chain = [
            _pass(v, dtype, s.parts[(k - 1) % 2] if k else s.dev, s.parts[k % 2], p.n)
            for k, p in enumerate(passes)
        ]
        self.final = s.parts[(len(passes) - 1) % 2]
        # the pipeline's chunks: device slice, pinned slice, its first pass (partials in place)
        ranges = chunk_ranges(s.n, chunk) if v.staging == "streams" else []
        self.chunks = [(s.dev[a:b], s.pinned[a:b],
                        _pass(v, dtype, s.dev[a:b], s.parts[0][a // TILE :], b - a))
                       for a, b in ranges]  # fmt: skip
        self.pool = [torch.cuda.Stream() for _ in range(streams)] if ranges else []

    def trip(self, events: Sequence[torch.cuda.Event] | None = None) -> float | int:
        """Host data -> device -> passes -> the scalar on the host. events: 4 CUDA events (start,
        after H2D, after the kernels, after D2H); the pipeline skips the second."""
        s, main = self.staged, torch.cuda.current_stream()
        _mark(events, 0, main)
        chain = self.chain
        if self.staging == "streams":
            for st in self.pool:
                st.wait_stream(main)  # the previous trip's passes read the partial buffer
            for i, (dev, src, first_pass) in enumerate(self.chunks):
                st = self.pool[i % len(self.pool)]
                with torch.cuda.stream(st):
                    dev.copy_(src, non_blocking=True)
                first_pass(st)
            for st in self.pool:
                main.wait_stream(st)
            chain = chain[1:]
        else:  # from pageable memory the driver stages the copy, synchronously
            pinned = self.staging == "pinned"
            s.dev.copy_(s.pinned if pinned else s.host, non_blocking=pinned)
            _mark(events, 1, main)
        self.run_passes(main, chain)
        _mark(events, 2, main)
        s.result.copy_(self.final[:1], non_blocking=True)
        _mark(events, 3, main)
        main.synchronize()
        return verify.as_number(s.result[0])

    def check(self, g: verify.Golden) -> verify.CheckResult:
        """One checked trip: poisoned partials, the result against the exact golden."""
        for p in self.staged.parts:
            dtypes.poison_(p)
        return verify.compare(self.variant, self.dtype, self.staged.n, self.trip(), g)

    def run_passes(self, stream: torch.cuda.Stream, chain: Sequence | None = None) -> None:
        """The chain of kernels (every pass by default) over data already on the device."""
        for launch in self.chain if chain is None else chain:
            launch(stream)


def peer_trip(kind: str, s: Staged) -> Trip:
    """What a user would write: x.cuda().sum().item() (pageable), or from pinned memory."""
    pinned = kind.endswith("pinned")
    src = s.pinned if pinned else s.host

    def trip(ev=None):
        main = torch.cuda.current_stream()
        _mark(ev, 0, main)
        d = src.to("cuda", non_blocking=pinned)
        _mark(ev, 1, main)
        r = d.sum()
        _mark(ev, 2, main)
        value = r.item()
        _mark(ev, 3, main)
        return value

    return trip


def time_trips(trip: Trip, *, reps: int | None, split: bool = True) -> tuple[timing.Timing, dict]:
    """The end-to-end Timing (host clock) of a trip and its event split, medians in ms: "device"
    (start to the scalar back), "d2h" and, where the trip records the event after its copy
    (split; not the pipeline), "h2d" and "kernels"."""
    wall, splits = timing.trips(trip, events=4, reps=reps, skipped=() if split else (1,))
    # offsets from the start event: after the copy, after the kernels, after the D2H
    parts = {"device": lambda s: s[2], "d2h": lambda s: s[2] - s[1]}
    if split:
        parts |= {"h2d": lambda s: s[0], "kernels": lambda s: s[1] - s[0]}
    return timing.Timing.of(wall), {k: statistics.median(map(f, splits)) for k, f in parts.items()}


def h2d_alone(s: Staged, pinned: bool, reps: int = 5) -> float:
    """The copy-engine bound: median ms of the H2D copy of all n elements from pinned (or
    pageable) memory, nothing else, timed with events."""
    src = s.pinned if pinned else s.host
    ts = timing.serial_ms(lambda: s.dev.copy_(src, non_blocking=pinned), reps=reps)
    return statistics.median(ts)


def kernels_alone(v: Variant, s: Staged, reps: int = 5) -> float:
    """Median ms of v's passes on data already on the device (the chain, no transfer)."""
    r, main = HostRunner(v, s), torch.cuda.current_stream()
    return statistics.median(timing.serial_ms(lambda: r.run_passes(main), reps=reps))
