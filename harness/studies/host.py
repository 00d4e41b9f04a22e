"""Seed 001 end to end: a sum of data that starts in HOST memory, the scalar back on the host.

The trip, as the seed builds it: copy the host data to the device; launch the block reduction (one
partial per 2 x 1024-element tile) again and again over the partials, swapping two partial buffers,
until one value is left; copy that value back. The variants (catalogue family "001") differ in
their block kernel (V0, V1, V4; Triton twins: tl.sum over the same tile) and in how the data
reaches the device (Variant.staging):

  pageable  the data in ordinary (pageable) host memory; one synchronous copy (V0, V1)
  pinned    the data in page-locked memory, one async copy (V2, V4). The pinned buffer is allocated
            and filled OUTSIDE the timed region, as the seed's V2 allocates its host input with
            cudaMallocHost: the timed trip starts from data already in pinned memory.
  streams   pinned, cut into chunks (a multiple of the tile); chunk i is copied with an async copy
            on stream i % S and its first pass is launched on the same stream, so copies of later
            chunks overlap kernels of earlier ones; the partials land where one pass over the
            whole array would put them, and the remaining passes run after all streams (V3).

Nothing here writes the caller's host array: the in-place kernels (V0..V3) work on the device copy.

Timing (METHOD.md): the end-to-end time is the host clock from a synchronized start to the scalar
read on the host (that is what a caller waits for, Python launch cost included); CUDA events on the
stream split it into H2D copy, kernels (all passes) and D2H (the 4-byte result), except for the
pipeline, whose copies and kernels overlap by design (its device total is reported). Warm-up trips
first (kernel compilation stays out); median of the repetitions; no L2 flush (the data arrives
over PCIe, where a user's would). GB/s = bytes of host data reduced / end-to-end time.
"""

from __future__ import annotations

import datetime as _dt
import math
import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from harness.check import verify
from harness.core import catalogue, device, dtypes
from harness.core.catalogue import HOST_TILE, Variant
from harness.core.passes import Pass, cdiv, plan_passes
from harness.report import records

STAGINGS = ("pageable", "pinned", "streams")
THREADS = HOST_TILE.threads
TILE = HOST_TILE.threads * HOST_TILE.tiles  # 2048 elements per block / program
DEFAULT_SIZES = (2**11, 2**14, 2**20, 2**25, 2**30)
DEFAULT_STREAMS = (1, 2, 4, 8)
DEFAULT_CHUNKS = (2**20, 2**22, 2**24)
DEFAULT_SWEEP_SIZES = (2**25, 2**30)
DEFAULT_PIPELINE = (4, 2**22)  # (streams, chunk elements) of V3 in the table
ADVERSARIAL_N = 2**22
FSUM_MAX_N = 2**24  # math.fsum walks Python floats: exact, but slow past this
PEERS = ("torch.sum pageable", "torch.sum pinned")


# ---------------------------------------------------------------------------------------------
# Pure planning (no GPU): passes, chunks, where a chunk's partials go


def host_passes(n: int) -> list[Pass]:
    """The seed's host loop for n elements: ceil(n / 2048) blocks, then again over the partials.
    log_2048(n) launches: 2^11, 2^22, 2^33 elements take 1, 2, 3 (the seed's own count)."""
    return plan_passes(HOST_TILE, n)


def round_chunk(chunk: int) -> int:
    """A chunk is a whole number of tiles, so each chunk's blocks are the single pass's blocks."""
    if chunk < 1:
        raise ValueError(f"chunk must be >= 1 element, got {chunk}")
    return cdiv(chunk, TILE) * TILE


def chunk_ranges(n: int, chunk: int) -> list[tuple[int, int]]:
    """[start, stop) of each chunk of the pipeline (the last one may be short)."""
    c = round_chunk(chunk)
    return [(a, min(n, a + c)) for a in range(0, n, c)]


def chunk_partials(a: int, b: int) -> tuple[int, int]:
    """Where chunk [a, b)'s first-pass partials go in the partial buffer: [a/2048, that + blocks).
    Because a is a multiple of the tile, this is exactly the slice one whole pass would write."""
    if a % TILE:
        raise ValueError(f"chunk start {a} is not a multiple of the tile {TILE}")
    return a // TILE, a // TILE + cdiv(b - a, TILE)


def error_bound(n: int, g: verify.Golden, dtype: str = "float32") -> float:
    """|result - exact| bound of every 001 variant (verify.tolerance: gamma_L * sum|x|, L from the
    passes: per pass 2 + log2(1024) additions on any element's path); 0 when exactness holds."""
    return verify.tolerance(catalogue.get("cuda/001-v1-gmem-sequential"), dtype, n, g)


def emulate(x: np.ndarray, tree: str) -> np.generic:
    """The CUDA kernels' arithmetic in numpy, pass by pass, in x's dtype (float32 rounds after
    every add, int32 wraps): tree "interleaved" is V0's order, "sequential" V1's (= V2, V3, V4:
    V4 adds the same pairs in the same order). Out-of-range elements are padded with 0, which
    equals the kernels' `right < n` skip since v + 0 = v. The GPU results must match it BIT FOR BIT.
    """
    if tree not in ("interleaved", "sequential"):
        raise ValueError(f"unknown tree {tree!r}")
    a = np.asarray(x).reshape(-1)
    while True:
        blocks = cdiv(a.size, TILE)
        t = np.zeros((blocks, TILE), dtype=a.dtype)
        t.reshape(-1)[: a.size] = a
        with np.errstate(over="ignore"):
            if tree == "interleaved":
                stride = 1
                while stride < TILE:
                    t[:, 0 :: 2 * stride] += t[:, stride :: 2 * stride]
                    stride *= 2
            else:
                stride = TILE // 2
                while stride >= 1:
                    t[:, :stride] += t[:, stride : 2 * stride]
                    stride //= 2
        a = t[:, 0].copy()
        if blocks == 1:
            return a[0]


# ---------------------------------------------------------------------------------------------
# Golden for host data: exact


def _slices(n: int, step: int = 2**26) -> Iterable[slice]:
    return (slice(a, min(n, a + step)) for a in range(0, n, step))


def exact_golden(x: torch.Tensor) -> verify.Golden:
    """The EXACT sum of a CPU tensor, as the seed insists (a naive float sum loses small terms).

    Integers: int64 arithmetic (wrapped to int32 for int32 data, as the kernels wrap). Integer-
    valued floats with sum|x| < 2^53: float64 accumulation, exact whatever the order because every
    partial sum is an integer below 2^53. Other floats: math.fsum (exact, correctly rounded), up to
    FSUM_MAX_N elements. Works in slices, so no n-sized temporary is made.
    """
    x = x.reshape(-1)
    n = x.numel()
    if n == 0:
        return verify.Golden(0, 0.0, True, 0.0)
    if not x.dtype.is_floating_point:
        total = sum(int(torch.sum(x[s], dtype=torch.int64)) for s in _slices(n))
        abs_sum = sum(int(torch.sum(x[s].to(torch.int64).abs())) for s in _slices(n))
        value = verify.wrap_int32(total) if x.dtype == torch.int32 else total
        return verify.Golden(value, float(abs_sum), True, 0.0)
    integer_valued = all(
        bool(torch.isfinite(x[s]).all()) and bool((x[s] == torch.round(x[s])).all())
        for s in _slices(n)
    )
    if integer_valued:
        abs_sum = math.fsum(float(torch.sum(x[s].abs(), dtype=torch.float64)) for s in _slices(n))
        if abs_sum < 2**53:
            total = sum(int(torch.sum(x[s], dtype=torch.float64)) for s in _slices(n))
            return verify.Golden(total, abs_sum, True, 0.0)
    if n > FSUM_MAX_N:
        raise ValueError(
            f"an exact golden of {n:,} non-integer floats needs math.fsum, too slow past "
            f"{FSUM_MAX_N:,}: use integer-valued data at this size"
        )
    vals = x.to(torch.float64).tolist()
    return verify.Golden(math.fsum(vals), math.fsum(abs(v) for v in vals), False, 0.0)


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
    """s = 0; for v in x: s += v, in float32 (what a plain CPU loop computes)."""
    s = np.float32(0)
    for part in _slices(x.numel()):
        a = x[part].numpy()
        acc = np.add.accumulate(np.concatenate([[s], a]).astype(np.float32), dtype=np.float32)
        s = acc[-1]
    return float(s)


def seed_like_host(n: int, dtype: str = "float32", seed: int = 0) -> torch.Tensor:
    """Integers 0..99 (the seed's rand() % 100) in a pageable CPU tensor; drawn on the GPU when
    there is one (fast at 2^30+), then copied to the host."""
    dev = "cuda" if device.gpu_available() else "cpu"
    g = torch.Generator(device=dev).manual_seed(seed)
    out = torch.empty(n, dtype=dtypes.torch_dtype(dtype))
    step = 2**28
    for a in range(0, n, step):
        b = min(n, a + step)
        part = torch.randint(0, 100, (b - a,), dtype=torch.int32, device=dev, generator=g)
        out[a:b].copy_(part.to(out.dtype))
    return out


# ---------------------------------------------------------------------------------------------
# Device side: buffers shared by the variants at one size, and one runner per variant


@dataclass
class Staged:
    """The host data and the device buffers of one size, shared by every variant (saves time and
    memory at 2^30+). `host` is the caller's array: read, never written."""

    host: torch.Tensor
    dev: torch.Tensor
    parts: tuple[torch.Tensor, torch.Tensor]
    result: torch.Tensor  # one element of pinned host memory: where the scalar lands
    _pinned: torch.Tensor | None = None

    @property
    def n(self) -> int:
        return self.host.numel()

    @property
    def pinned(self) -> torch.Tensor:
        """The data in page-locked memory: allocated and filled once, outside any timed region
        (the caller's array itself when it is already pinned)."""
        if self._pinned is None:
            if self.host.is_pinned():
                self._pinned = self.host
            else:
                self._pinned = torch.empty(self.n, dtype=self.host.dtype, pin_memory=True)
                self._pinned.copy_(self.host)
        return self._pinned

    def poison(self) -> None:
        for p in self.parts:
            dtypes.poison_(p)


def stage(x: torch.Tensor | np.ndarray) -> Staged:
    """Device buffers for host array x (a CPU tensor or a numpy array, any shape: flattened)."""
    if isinstance(x, np.ndarray):
        x = torch.from_numpy(np.ascontiguousarray(x))
    if x.device.type != "cpu":
        raise ValueError(f"seed 001 reduces HOST data; got a tensor on {x.device}")
    dtypes.name_of(x.dtype)  # a clear error for unsupported dtypes
    x = x.reshape(-1)
    if not x.is_contiguous():
        x = x.contiguous()  # a private copy: the caller's view is left as it is
    n = x.numel()
    if n < 1:
        raise ValueError("seed 001 needs n >= 1")
    ps = host_passes(n)
    sizes = (ps[0].blocks, ps[1].blocks if len(ps) > 1 else 1)
    parts = tuple(torch.empty(s, dtype=x.dtype, device="cuda") for s in sizes)
    result = torch.empty(1, dtype=x.dtype, pin_memory=True)
    return Staged(x, torch.empty(n, dtype=x.dtype, device="cuda"), parts, result)


Launcher = Callable[[torch.Tensor, torch.Tensor, int, torch.cuda.Stream], None]


def _launcher(v: Variant, dtype: str) -> Launcher:
    """launch(inp, out, n_in, stream): one pass of v's block kernel, 1024 threads, 2048-element
    tiles, ceil(n_in / 2048) blocks."""
    if v.backend == "cuda":
        from harness.compile import cuda_loader
        from harness.launch.stream import on_torch_stream

        kern = cuda_loader.kernel(v, dtype)

        def launch_cuda(inp, out, n_in, stream):
            # Raw pointers as 64-bit scalars: no per-launch DLPack wrapping on the timed path.
            args = (np.uint64(inp.data_ptr()), np.uint64(out.data_ptr()), np.uint64(n_in))
            with on_torch_stream(stream):
                kern((cdiv(n_in, TILE),), (THREADS,), args)

        return launch_cuda

    from triton_kernels import tiles

    fn = getattr(tiles, v.kernel)

    def launch_triton(inp, out, n_in, stream):
        with torch.cuda.stream(stream):
            fn[(cdiv(n_in, TILE),)](
                inp, out, n_in, BLOCK=THREADS, TILES=HOST_TILE.tiles, num_warps=THREADS // 32
            )

    return launch_triton


_STREAM_POOL: list[torch.cuda.Stream] = []


def _streams(k: int) -> list[torch.cuda.Stream]:
    while len(_STREAM_POOL) < k:
        _STREAM_POOL.append(torch.cuda.Stream())
    return _STREAM_POOL[:k]


@dataclass
class HostRunner:
    """One variant bound to one Staged size: everything but the trip itself is prepared here."""

    variant: Variant
    staged: Staged
    streams: int = DEFAULT_PIPELINE[0]
    chunk: int = DEFAULT_PIPELINE[1]
    passes: list[Pass] = field(init=False)
    dtype: str = field(init=False)

    def __post_init__(self) -> None:
        v = self.variant
        if v.family != "001":
            raise ValueError(f"{v.id} is not a seed-001 variant (family 001)")
        self.dtype = dtypes.name_of(self.staged.host.dtype)
        if self.dtype not in v.dtypes:
            raise ValueError(f"{v.id} supports {', '.join(v.dtypes)}, not {self.dtype}")
        if self.streams < 1:
            raise ValueError(f"streams must be >= 1, got {self.streams}")
        self.passes = host_passes(self.staged.n)
        self._launch = _launcher(v, self.dtype)
        s = self.staged
        self._rest = [
            (s.parts[(k - 1) % 2], s.parts[k % 2], p.n) for k, p in enumerate(self.passes) if k
        ]
        self._final = s.parts[(len(self.passes) - 1) % 2]
        if v.staging == "streams":
            src = s.pinned
            self._chunks = []
            for a, b in chunk_ranges(s.n, self.chunk):
                lo, _ = chunk_partials(a, b)
                self._chunks.append((s.dev[a:b], src[a:b], s.parts[0][lo:], b - a))
            self._pool = _streams(self.streams)
        elif v.staging == "pinned":
            _ = s.pinned  # allocated and filled now, outside every timed region

    def trip(self, events: Sequence[torch.cuda.Event] | None = None) -> float | int:
        """Host data -> device -> passes -> the scalar on the host. events: 4 CUDA events (start,
        after H2D, after the kernels, after D2H); the pipeline skips the second."""
        s = self.staged
        main = torch.cuda.current_stream()
        if events:
            events[0].record(main)
        if self.variant.staging == "streams":
            self._pipeline(main)
        else:
            if self.variant.staging == "pageable":
                s.dev.copy_(s.host)  # from pageable memory: the driver stages it, synchronously
            else:
                s.dev.copy_(s.pinned, non_blocking=True)
            if events:
                events[1].record(main)
            self._launch(s.dev, s.parts[0], s.n, main)
        for inp, out, n_in in self._rest:
            self._launch(inp, out, n_in, main)
        if events:
            events[2].record(main)
        s.result.copy_(self._final[:1], non_blocking=True)
        if events:
            events[3].record(main)
        main.synchronize()
        return verify.as_number(s.result[0])

    def _pipeline(self, main: torch.cuda.Stream) -> None:
        pool = self._pool
        for st in pool:
            st.wait_stream(main)  # the previous trip's passes read the partial buffer
        for i, (dev, src, out, n_in) in enumerate(self._chunks):
            st = pool[i % len(pool)]
            with torch.cuda.stream(st):
                dev.copy_(src, non_blocking=True)
            self._launch(dev, out, n_in, st)
        for st in pool:
            main.wait_stream(st)


def reduce_host(
    x: torch.Tensor | np.ndarray | Staged,
    variant: str | Variant,
    *,
    streams: int = DEFAULT_PIPELINE[0],
    chunk: int = DEFAULT_PIPELINE[1],
) -> float | int:
    """Sum of host array x by a seed-001 variant, as a Python number (x is never modified)."""
    v = catalogue.get(variant) if isinstance(variant, str) else variant
    s = x if isinstance(x, Staged) else stage(x)
    return HostRunner(v, s, streams=streams, chunk=chunk).trip()


def check_host(
    v: Variant, s: Staged, g: verify.Golden, *, streams: int = 4, chunk: int = 2**22
) -> verify.CheckResult:
    """One checked trip: poisoned partials, the result against the exact golden and its bound."""
    s.poison()
    value = HostRunner(v, s, streams=streams, chunk=chunk).trip()
    return verify.compare(v, dtypes.name_of(s.host.dtype), s.n, value, g)


# ---------------------------------------------------------------------------------------------
# Timing


def _median(xs: list[float]) -> float | None:
    return statistics.median(xs) if xs else None


def _spread(xs: list[float]) -> float:
    xs = sorted(xs)
    if len(xs) < 2:
        return 0.0
    return xs[int(0.9 * (len(xs) - 1) + 0.5)] - xs[int(0.1 * (len(xs) - 1) + 0.5)]


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
    the trip records no event after its copy, e.g. the pipeline)."""
    for _ in range(warmup):
        trip(None)
    if reps is None:
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        trip(None)
        est = max((time.perf_counter() - t0) * 1e3, 1e-3)
        reps = int(min(max_reps, max(5, target_ms / est)))
    wall, h2d, kern, d2h, dev_total = [], [], [], [], []
    for _ in range(reps):
        ev = [torch.cuda.Event(enable_timing=True) for _ in range(4)]
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        trip(ev)
        wall.append((time.perf_counter() - t0) * 1e3)
        torch.cuda.synchronize()
        dev_total.append(ev[0].elapsed_time(ev[3]))
        d2h.append(ev[2].elapsed_time(ev[3]))
        if split:
            h2d.append(ev[0].elapsed_time(ev[1]))
            kern.append(ev[1].elapsed_time(ev[2]))
    e2e = statistics.median(wall)
    out = {
        "reps": reps,
        "e2e_ms": e2e,
        "e2e_min_ms": min(wall),
        "e2e_spread_ms": _spread(wall),
        "device_ms": statistics.median(dev_total),
        "d2h_ms": statistics.median(d2h),
        "h2d_ms": _median(h2d),
        "kernels_ms": _median(kern),
    }
    if out["h2d_ms"] is not None:
        out["h2d_share"] = out["h2d_ms"] / e2e
        out["kernels_share"] = out["kernels_ms"] / e2e
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
        s.dev.copy_(src, non_blocking=nb)
        torch.cuda.synchronize()
        ts = []
        for _ in range(reps):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            s.dev.copy_(src, non_blocking=nb)
            b.record()
            torch.cuda.synchronize()
            ts.append(a.elapsed_time(b))
        ms = statistics.median(ts)
        out[f"{kind}_ms"], out[f"{kind}_gbps"] = ms, nbytes / ms / 1e6
    return out


def kernels_alone(v: Variant, s: Staged, reps: int = 5) -> float:
    """Median ms of v's passes on data already on the device (the chain, no transfer)."""
    r = HostRunner(v, s)
    main = torch.cuda.current_stream()
    ts = []
    for i in range(reps + 1):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        r._launch(s.dev, s.parts[0], s.n, main)
        for inp, out, n_in in r._rest:
            r._launch(inp, out, n_in, main)
        b.record()
        torch.cuda.synchronize()
        if i:  # the first one warms up
            ts.append(a.elapsed_time(b))
    return statistics.median(ts)


# ---------------------------------------------------------------------------------------------
# The study: the seed's table, the stream sweep, the adversarial input


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
