"""A bounded, thread-safe cache of every 1-D family's launches, so that reduce_sum does not build a
plan (workspace allocations, a memset, the grid, kernel lookups) on every call: the single-launch
family's (harness.launch.rebind.BoundLaunch) and the multi-pass ladder's and the reproducible
pair's (harness.launch.rebind_passes.PassesLaunch), one table, one lock, one set of counters.

Key: (variant id, dtype, n, x.data_ptr() % 16, device index, stream pointer).
- n and dtype fix the grid, the integer widths and Triton's configuration bucket;
- data_ptr % 16 is the alignment class: it fixes the kernels' head (elements before the first
  16-byte boundary) and Triton's pointer specialization;
- the device owns the workspace;
- the stream: each stream gets its own workspace, so its own ticket counter. The kernel leaves the
  counter at 0 after every launch, but two launches in flight at once on two streams sharing one
  counter would take each other's tickets (two multi-pass chains would write one set of
  partials); with the stream in the key they never share one.
  (A stream destroyed while its last launch is still running and a new stream created at the same
  address would share one: the same caveat as any per-stream cache keyed by the handle.)

Rebinding: the key holds no data pointer. A cached entry takes the input and output tensors per
call and passes their pointers to the kernel, so any tensor of
the same n, dtype and alignment class hits, whether new or reused, and the cache holds no
reference to any caller's tensor (it cannot keep a large input alive). The other design, a key
with the data pointer, would make every freshly allocated input miss (or, with the caching
allocator handing back a freed block, hit by accident of addresses) and would have to keep each
input alive to keep its plan valid. A hit allocates nothing but the caller's result tensor
(harness.launch.api), which is what torch.sum allocates too.

The other families' entries (rebind_passes) keep the same key and interface: the multi-pass chain's
partials (and an in-place first pass's scratch copy of the input) and the reproducible pair's chunk
partials and counter are their workspace, made once; their kernels take x and out per call.

Capture: a captured call does not use the entry's workspace (a graph bakes addresses in, so every
graph captured from one entry would share its counter: harness.launch.workspace). `for_capture`
finds the entry of the same (variant, dtype, n, alignment class, device) built on ANY stream (its
kernel, grid and configuration do not depend on the stream), and the call launches it on the
capturing stream with a workspace of the graph's own (the entries' in_capture). Nothing of the
entry is referenced by the graph but the kernel, which the compile caches keep, so eviction and
clear() may free every entry. A miss while the current stream is capturing raises PlanCacheMiss
before anything is enqueued (building would allocate, memset and may time Triton's candidates),
saying to call once before capturing (the warm-up every capture does anyway); the caller's
capture stays valid.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

import torch

from harness.core.catalogue import Variant
from harness.launch import rebind, rebind_passes
from harness.launch.stream import current_stream_ptr

DEFAULT_MAX_ENTRIES = 64  # a workspace is max_blocks accumulators + a counter (<= 16 KiB)
ENV_MAX_ENTRIES = "REDUCE_LADDER_PLAN_CACHE_SIZE"

Key = tuple[str, str, int, int, int, int]
Entry = rebind.BoundLaunch | rebind_passes.PassesLaunch


class PlanCacheMiss(RuntimeError):
    """A miss inside a CUDA-graph capture (building a plan would memset and may time kernels)."""


@dataclass(frozen=True)
class CacheInfo:
    hits: int
    misses: int
    evictions: int
    size: int
    max_entries: int


def stream_of(x: torch.Tensor) -> int:
    """The stream key for x: torch's current stream on x's device (0 for CPU tensors)."""
    return current_stream_ptr(x.get_device()) if x.is_cuda else 0


def key_of(variant: Variant, dtype: str, x: torch.Tensor, stream_ptr: int) -> Key:
    return (variant.id, dtype, x.numel(), x.data_ptr() % 16, x.get_device(), stream_ptr)


K = TypeVar("K", bound=Hashable)
E = TypeVar("E")


class LRU(Generic[K, E]):
    """The table both launch caches keep (this one and harness.launch.axis_cache): at most
    max_entries entries, the least recently used evicted first, one lock for the table and its
    counters (hits, misses, evictions) so that they stay exact across threads."""

    def __init__(self, max_entries: int | None = None) -> None:
        if max_entries is None:
            max_entries = int(os.environ.get(ENV_MAX_ENTRIES, DEFAULT_MAX_ENTRIES))
        if max_entries < 1:
            raise ValueError(f"a plan cache needs max_entries >= 1, got {max_entries}")
        self.max_entries = max_entries
        self._entries: OrderedDict[K, E] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = self.misses = self.evictions = 0

    def lookup(self, key: K) -> E | None:
        """The entry (counted as a hit, made most recent), or None (nothing counted)."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
                self.hits += 1
            return entry

    def first(self, match: Callable[[K], bool]) -> E | None:
        """The most recent entry whose key matches (counted as a hit), or None."""
        with self._lock:
            for key in reversed(self._entries):
                if match(key):
                    self._entries.move_to_end(key)
                    self.hits += 1
                    return self._entries[key]
        return None

    def add(self, key: K, entry: E) -> E:
        """Counts a miss and keeps `entry` under key (or the one another thread added first, which
        is returned), evicting past max_entries."""
        with self._lock:
            self.misses += 1
            entry = self._entries.setdefault(key, entry)
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
                self.evictions += 1
            return entry

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.hits = self.misses = self.evictions = 0

    def info(self) -> CacheInfo:
        with self._lock:
            return CacheInfo(
                self.hits, self.misses, self.evictions, len(self._entries), self.max_entries
            )

    def keys(self) -> list[K]:
        with self._lock:
            return list(self._entries)

    def values(self) -> list[E]:
        with self._lock:
            return list(self._entries.values())

    def __len__(self) -> int:
        return len(self._entries)


class PlanCache:
    """An LRU of Entry by Key, at most max_entries; one lock for builds besides the
    table's (two threads missing the same key build it once; hits never wait on a build).
    launch_modes: backend -> the single-launch family's launch mode (rebind.LAUNCH_MODES), default
    rebind's."""

    def __init__(
        self, max_entries: int | None = None, launch_modes: dict[str, str] | None = None
    ) -> None:
        self._table: LRU[Key, Entry] = LRU(max_entries)
        self.max_entries = self._table.max_entries
        self.launch_modes = {**rebind.DEFAULT_MODE, **(launch_modes or {})}
        self._build_lock = threading.Lock()

    def get(
        self, variant: Variant, dtype: str, x: torch.Tensor, stream_ptr: int | None = None
    ) -> Entry:
        """The launch for x (flat or not, contiguous) on stream_ptr (default: the current
        stream), built on a miss. A miss allocates the workspace ordered after stream_ptr, so
        pass another stream_ptr only for that stream's work (tests use it to name streams)."""
        if stream_ptr is None:
            stream_ptr = stream_of(x)
        key = key_of(variant, dtype, x, stream_ptr)
        entry = self.lookup(key)
        if entry is None:
            return self._build(key, variant, dtype, x, stream_ptr)
        return entry

    def lookup(self, key: Key) -> Entry | None:
        """The entry for a key the caller computed (harness.launch.api's hot path), counted as a
        hit and made most recent; None on a miss (nothing is built: the caller takes its checked
        path, which calls get). The lock, the get and the move_to_end take about 0.24 us
        together in CPython 3.12, a bare dict get 0.10 us (timeit on the shared CPU build
        machine): the 0.14 us buys LRU order and exact counters across threads."""
        return self._table.lookup(key)

    def for_capture(self, variant: Variant, dtype: str, x: torch.Tensor) -> Entry:
        """The entry a call captured on the current stream launches (module docstring): this
        stream's if there is one, else the most recent one of another stream; PlanCacheMiss if
        none was ever built (nothing is enqueued)."""
        stream_ptr = stream_of(x)
        key = key_of(variant, dtype, x, stream_ptr)
        entry = self.lookup(key)
        if entry is not None:
            return entry
        entry = self._table.first(lambda other: other[:5] == key[:5])
        if entry is not None:
            return entry
        raise PlanCacheMiss(
            f"no cached plan for {variant.id} over {x.numel():,} {dtype} elements "
            f"(alignment class {key[3]}) on {x.device}, and the current stream is capturing a "
            "CUDA graph: call it once with such an input before capturing (any stream)"
        )

    def _build(
        self, key: Key, variant: Variant, dtype: str, x: torch.Tensor, stream_ptr: int
    ) -> Entry:
        if x.is_cuda and capturing():
            raise PlanCacheMiss(
                f"no cached plan for {variant.id} over {x.numel():,} {dtype} elements "
                f"(alignment class {key[3]}) on stream {stream_ptr:#x}, and this stream is "
                "capturing a CUDA graph: call it once before capturing"
            )
        with self._build_lock:
            entry = self._table.lookup(key)  # another thread built it meanwhile
            if entry is not None:
                return entry
            flat = x.reshape(-1)
            if variant.launch.mapping.one_launch:
                mode = self.launch_modes[variant.backend]
                entry = rebind.bind(variant, dtype, flat, stream_ptr, mode)
            else:
                entry = rebind_passes.bind(variant, dtype, flat, stream_ptr)
            return self._table.add(key, entry)

    def clear(self) -> None:
        """Drop every entry (their workspaces are freed with them) and zero the counters."""
        self._table.clear()

    def info(self) -> CacheInfo:
        return self._table.info()

    def cached_keys(self) -> list[Key]:
        """The cached keys, least recently used first."""
        return self._table.keys()

    def cached_launches(self) -> list[Entry]:
        """The cached launches, least recently used first."""
        return self._table.values()


def capturing() -> bool:
    """Whether torch's current stream is capturing a CUDA graph (one driver query): the C call
    torch.cuda.is_current_stream_capturing() makes, without its Python frame (CUDA tensors only:
    a torch built without CUDA lacks it)."""
    return torch._C._cuda_isCurrentStreamCapturing()


_default = PlanCache()


def default() -> PlanCache:
    """The process-wide cache reduce_sum and partials use."""
    return _default


def clear() -> None:
    _default.clear()


def info() -> CacheInfo:
    return _default.info()
