"""The launch caches, bounded thread-safe LRUs (PlanCache: the 1-D families'; AxisCache), so that
reduce_sum builds no plan per call; their keys and captures: docs/runtime.md#the-launch-caches."""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import torch

from harness.core import axis_geometry as geom
from harness.core import dtypes
from harness.core.catalogue import Variant
from harness.launch import axis_plan, rebind, rebind_passes
from harness.launch.stream import current_stream_ptr, off_thread

DEFAULT_MAX_ENTRIES = 64  # a workspace is max_blocks accumulators + a counter (<= 16 KiB)
ENV_MAX_ENTRIES = "REDUCE_LADDER_PLAN_CACHE_SIZE"

Key = tuple[str, str, int, int, int, int]


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
    return current_stream_ptr(x.get_device()) if x.is_cuda else 0


def key_of(variant: Variant, dtype: str, x: torch.Tensor, stream_ptr: int) -> Key:
    return (variant.id, dtype, x.numel(), x.data_ptr() % 16, x.get_device(), stream_ptr)


class LRU:
    """At most max_entries entries (default REDUCE_LADDER_PLAN_CACHE_SIZE or 64), the least
    recently used evicted first; one lock for the table and its counters (hits, misses,
    evictions), so that they stay exact across threads."""

    def __init__(self, max_entries: int | None = None) -> None:
        if max_entries is None:
            max_entries = int(os.environ.get(ENV_MAX_ENTRIES, DEFAULT_MAX_ENTRIES))
        if max_entries < 1:
            raise ValueError(f"a plan cache needs max_entries >= 1, got {max_entries}")
        self.max_entries = max_entries
        self._entries: OrderedDict = OrderedDict()
        self._lock = threading.Lock()
        self.hits = self.misses = self.evictions = 0

    def lookup(self, key: Any) -> Any:
        """The entry (a hit, made most recent), or None (nothing counted or built). The lock,
        get and move_to_end cost 0.24 us in CPython 3.12, a bare dict get 0.10 us: the difference
        buys LRU order and exact counters across threads."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
                self.hits += 1
            return entry

    def add(self, key: Any, entry: Any) -> Any:
        """Counts a miss, keeps `entry` (or returns another thread's), evicts past max_entries."""
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

    def cached_keys(self) -> list:  # least recently used first, as cached_launches
        with self._lock:
            return list(self._entries)

    def cached_launches(self) -> list:
        with self._lock:
            return list(self._entries.values())

    def __len__(self) -> int:
        return len(self._entries)


class PlanCache(LRU):
    """The 1-D families' launches; a build lock (two threads missing one key build it once; hits
    never wait on a build). launch_modes: backend -> rebind's launch mode."""

    def __init__(
        self, max_entries: int | None = None, launch_modes: dict[str, str] | None = None
    ) -> None:
        super().__init__(max_entries)
        self.launch_modes = {**rebind.DEFAULT_MODE, **(launch_modes or {})}
        self._build_lock = threading.Lock()

    def get(
        self, variant: Variant, dtype: str, x: torch.Tensor, stream_ptr: int | None = None
    ) -> rebind.BoundLaunch:
        """The launch for x on stream_ptr (default: the current one), built on a miss with its
        workspace ordered after stream_ptr (so pass only the stream whose work it is)."""
        if stream_ptr is None:
            stream_ptr = stream_of(x)
        key = key_of(variant, dtype, x, stream_ptr)
        entry = self.lookup(key)
        if entry is not None:
            return entry
        if x.is_cuda and capturing():
            raise _miss(key, x)
        with self._build_lock:
            entry = self.lookup(key)  # another thread built it meanwhile
            if entry is None:
                family = rebind if variant.launch.mapping.one_launch else rebind_passes
                mode = self.launch_modes[variant.backend]
                entry = self.add(key, family.bind(variant, dtype, x.reshape(-1), stream_ptr, mode))
            return entry

    def for_capture(self, variant: Variant, dtype: str, x: torch.Tensor) -> rebind.BoundLaunch:
        """This stream's entry, else another stream's latest (a hit); else PlanCacheMiss."""
        key = key_of(variant, dtype, x, stream_of(x))
        entry = self.lookup(key)
        if entry is not None:
            return entry
        with self._lock:
            for other in reversed(self._entries):
                if other[:5] == key[:5]:
                    self._entries.move_to_end(other)
                    self.hits += 1
                    return self._entries[other]
        raise _miss(key, x)


def _miss(key: Key, x: torch.Tensor) -> PlanCacheMiss:
    vid, dtype, n, align, _, stream_ptr = key
    return PlanCacheMiss(
        f"no cached plan for {vid} over {n:,} {dtype} elements (alignment class {align}) on "
        f"{x.device}, stream {stream_ptr:#x}, which is capturing a CUDA graph: call it once with "
        "such an input before capturing (on any stream)"
    )


class AxisCache(LRU):
    """The axis family's launches (reduce_sum(x, variant, dim=d))."""

    def get(
        self, v: Variant, x: torch.Tensor, p: geom.Problem, dim: int, stream: int
    ) -> axis_plan.AxisLaunch:
        dtype = dtypes.name_of(x.dtype)
        key = (v.id, dtype, tuple(x.shape), dim, x.get_device(), stream)
        entry = self.lookup(key)
        if entry is None:  # made off the caller's thread, as the 1-D workspaces (stream.off_thread)
            made = off_thread(lambda: axis_plan.bind(v, dtype, p, x.device), x.device, stream)
            entry = self.add(key, made)  # or another thread's
        return entry


def capturing() -> bool:
    """torch.cuda.is_current_stream_capturing() without its Python frame (CUDA builds only)."""
    return torch._C._cuda_isCurrentStreamCapturing()


_default = PlanCache()
_default_axis = AxisCache()


def default() -> PlanCache:  # the process-wide caches reduce_sum and partials use
    return _default


def default_axis() -> AxisCache:
    return _default_axis


def clear() -> None:  # both process-wide caches
    _default.clear()
    _default_axis.clear()


def info() -> CacheInfo:
    return _default.info()
