"""Device timing (the workplace's METHOD.md): CUDA events, not host clocks; warm-up first, so
compilation and module loading stay out; many repetitions and the median; the L2 cache flushed
before each repetition (flush_l2); every repetition queued behind one device-side wait sized from
the host's measured queuing cost (the gate), so the events measure device time, not host gaps.
Why: docs/studies.md#the-timing-method. The one module with a timing loop (test_one_timing_loop).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from functools import cache

import torch

from harness.core import device


@dataclass(frozen=True)
class Timing:
    median_ms: float
    min_ms: float
    p10_ms: float
    p90_ms: float
    reps: int

    def record(self) -> dict:
        return asdict(self)

    @classmethod
    def of(cls, times_ms: Sequence[float]) -> Timing:
        """The statistics of measured times (ms): median, min, p10, p90, how many."""
        xs = list(times_ms)
        return cls(statistics.median(xs), min(xs), _quantile(xs, 0.1), _quantile(xs, 0.9), len(xs))


@cache
def _flush_buffer() -> tuple[torch.Tensor, torch.Tensor]:
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    l2 = getattr(props, "L2_cache_size", 0) or 64 * 2**20
    buf = torch.zeros(max(2 * l2, 128 * 2**20) // 4, dtype=torch.float32, device="cuda")
    return buf, torch.empty((1,), dtype=torch.float32, device="cuda")


def flush_l2() -> None:
    """Evict the L2 cache by READING a buffer twice its size: a write-based flush (`buf.zero_()`)
    leaves dirty lines whose write-back lands in the next timed kernel."""
    buf, out = _flush_buffer()
    torch.sum(buf.view(1, -1), dim=1, out=out)  # a read of every line; no allocation


# The gate (docs/studies.md#the-timing-method): every repetition queued behind one device-side
# wait that outlasts the host's queuing, so the device never waits for the host inside the timed
# region (without it the launch probe timed the same cupy.sum at 2^12 at 4 and 23 us).
GATE_MARGIN = 2.0  # the gate lasts this many times the host's measured queuing time
GATE_MAX_S = 0.5
_SPIN_HZ = 2.2e9  # cycles per second assumed for the spin: at least the clock, so never too short


def gate_device(seconds: float) -> None:
    """Queue a single-thread spin of about `seconds` (at least) on the current stream."""
    torch.cuda._sleep(max(1, int(min(seconds, GATE_MAX_S) * _SPIN_HZ)))


def _quantile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * (len(xs) - 1) + 0.5))]


def time_ms(
    fn: Callable[[], object],
    *,
    setup: Callable[[], object] | None = None,
    reps: int | None = None,
    warmup: int = 3,
    target_ms: float = 300.0,
    flush: bool = True,
    gate: bool = True,
    max_reps: int = 200,
) -> Timing:
    """Median device time of fn() in milliseconds.

    reps=None picks the count so the timed part takes about target_ms (at least 10 repetitions).
    setup() runs before each repetition, outside the timed region (e.g. restoring the input an
    in-place kernel destroys). gate=True queues the repetitions behind a device-side wait that
    outlasts their queuing (see GATE_MARGIN); gate=False only to show what happens without it.
    """
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    if reps is None:  # sized from three calls' device time, back to back
        est = max(serial_ms(fn, reps=1, warmup=0, calls=3)[0], 1e-3)
        reps = int(min(max_reps, max(10, target_ms / est)))
    starts, ends = _events(reps), _events(reps)

    def queue(i: int) -> None:
        if setup is not None:
            setup()
        if flush:
            flush_l2()
        starts[i].record()
        fn()
        ends[i].record()

    if gate:  # the host's cost of queuing one repetition, measured (not timed: a dry run)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        queue(0)
        queue(0)
        per_rep = (time.perf_counter() - t0) / 2
        torch.cuda.synchronize()
        gate_device(GATE_MARGIN * per_rep * reps)
    for i in range(reps):
        queue(i)
    torch.cuda.synchronize()
    return Timing.of([s.elapsed_time(e) for s, e in zip(starts, ends, strict=True)])


def graph_ms(fn: Callable[[], object], *, calls: int = 20, replays: int = 20) -> Timing:
    """Device time per call of fn() replayed from a CUDA graph of `calls` back-to-back calls (no
    L2 flush inside: for the launch-bound tiny sizes). fn must be warm and capture-safe."""
    fn()
    torch.cuda.synchronize()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.stream(stream):
        fn()  # warm the side stream (Triton / CuPy per-stream state) outside the capture
        torch.cuda.synchronize()
        with torch.cuda.graph(graph, stream=stream):
            for _ in range(calls):
                fn()
    torch.cuda.current_stream().wait_stream(stream)
    return Timing.of([ms / calls for ms in serial_ms(graph.replay, reps=replays, warmup=1)])


# Sizes at or below this also get CUDA-graph replay time and host wall time per call: there the
# launch overhead, not the bytes, sets what a Python call costs.
GRAPH_MAX_N = 2**20


def sync_perf_counter() -> float:
    """perf_counter() once the device is idle (pytest-benchmark's --benchmark-timer)."""
    if device.gpu_available():
        torch.cuda.synchronize()
    return time.perf_counter()


def call_ms(fn: Callable[[], object], *, reps: int = 50, warmup: int = 3) -> Timing:
    """Host wall time (ms) of one synchronized call of fn(): what a Python call costs end to end
    (its own loop, not trips': a wrapper's frame would be timed with the call)."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    return Timing.of(times)


def _events(count: int) -> list:
    return [torch.cuda.Event(enable_timing=True) for _ in range(count)]


def serial_ms(
    fn: Callable[[], object], *, reps: int = 5, warmup: int = 1, calls: int = 1
) -> list[float]:
    """Device time (ms) per call of fn() in each of `reps` repetitions of `calls` calls back to
    back, events around each repetition, synchronized after it (no flush, no gate): host-driven
    work (a copy, a chain of launches), graph replays, time_ms's estimate of its reps."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(reps):
        start, end = _events(2)
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        torch.cuda.synchronize()
        out.append(start.elapsed_time(end) / calls)
    return out


def loop_ms(
    fn: Callable[[object], object], args: Sequence[object], *, calls: int, loops: int
) -> Timing:
    """Time per call of fn(arg) called back to back, `calls` calls per loop rotating over args,
    events around the loop: what a caller's loop pays per call. Over `loops` loops."""
    # its own loop, not serial_ms's: a wrapper's frame per call would be timed with every entry
    for x in args[:2]:
        fn(x)
    torch.cuda.synchronize()
    k, times = len(args), []
    for _ in range(loops):
        start, end = _events(2)
        start.record()
        for i in range(calls):
            fn(args[i % k])
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / calls)
    return Timing.of(times)


def trips(
    trip: Callable[[Sequence | None], object],
    *,
    events: int,
    reps: int | None,
    skipped: Sequence[int] = (),
) -> tuple[list[float], list[list[float | None]]]:
    """A host trip timed end to end: (host wall ms per repetition, synchronized start to return;
    per repetition the ms from the first of the `events` events trip(ev) records to each other,
    None for `skipped`: an unrecorded event is never queried, since the failed
    cudaEventElapsedTime would leave its error for the next launch to raise). trip(None) is the
    untimed form, run twice first to warm up; reps=None picks about 150 ms worth (5..50)."""
    for _ in range(2):
        trip(None)
    if reps is None:
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        trip(None)
        est = max((time.perf_counter() - t0) * 1e3, 1e-3)
        reps = int(min(50, max(5, 150.0 / est)))
    walls, splits = [], []
    for _ in range(reps):
        ev = _events(events)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        trip(ev)
        walls.append((time.perf_counter() - t0) * 1e3)
        torch.cuda.synchronize()
        splits.append([None if i in skipped else ev[0].elapsed_time(e)
                       for i, e in enumerate(ev[1:], 1)])  # fmt: skip
    return walls, splits


def small_size_timings(fn: Callable[[], object], n: int) -> dict:
    """n <= GRAPH_MAX_N: {"graph": graph_ms, "call": call_ms} (a capture failure reported, not
    raised); {} otherwise."""
    if n > GRAPH_MAX_N:
        return {}
    out: dict = {"call": call_ms(fn).record()}
    try:
        out["graph"] = graph_ms(fn).record()
    except Exception as e:  # e.g. a library call that is not capture-safe
        torch.cuda.synchronize()
        out["graph_error"] = f"{type(e).__name__}: {e}"
    return out


class Clock:
    """Marks around a region run once per rank (the several-GPU sum): CUDA events on the GPU,
    perf_counter on its CPU path (gloo and the interpreter finish before the call returns)."""

    def __init__(self, on_gpu: bool, dev: torch.device) -> None:
        self.on_gpu, self.dev = on_gpu, dev

    def mark(self):
        if not self.on_gpu:
            return time.perf_counter()
        (event := torch.cuda.Event(enable_timing=True)).record()
        return event

    def ms(self, start, end) -> float:
        if not self.on_gpu:
            return (end - start) * 1e3
        torch.cuda.synchronize(self.dev)
        return start.elapsed_time(end)
