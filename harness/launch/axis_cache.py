"""A bounded, thread-safe cache of the axis family's launches (reduce_sum(x, variant, dim=d)),
so that a call does not look its kernels up, build its launch closures and allocate its
partials every time.

Key: (variant id, dtype, shape, dim, device index, stream pointer). The shape and dim fix the
passes, their grids and the partials' sizes (harness.core.axis_geometry); the device owns the
partials; the stream: each stream gets its own partials, so that two calls in flight at once on
two streams never write one buffer (calls on one stream run in its order). The key holds no data
pointer: an entry (AxisLaunch) takes the input and the output per call, and the cache keeps no
reference to a caller's tensor. A hit allocates nothing but the caller's output (what torch.sum
allocates too).

Capture: inside a CUDA-graph capture reduce_sum does not use the cache (a graph bakes the
partials' address in, and graphs replayed at once would share them): it builds a plan whose
partials the graph's allocator owns (harness.launch.axis_plan.make_plan). Entries are evicted
least recently used past max_entries (REDUCE_LADDER_PLAN_CACHE_SIZE, as the 1-D cache's).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from harness.core import axis_geometry as geom
from harness.core import dtypes
from harness.core.catalogue import Variant
from harness.launch import axis_plan
from harness.launch.plan_cache import LRU

Key = tuple[str, str, tuple[int, ...], int, int, int]


@dataclass
class AxisLaunch:
    """One cached sum along a dim: its kernels and its partials, given x and out per call."""

    kernels: list[axis_plan.Kernel]
    partials: list[torch.Tensor]

    def __call__(self, x: torch.Tensor, out: torch.Tensor) -> None:
        """Every pass, from the contiguous x into out (flat views; out: the input's dtype)."""
        srcs = [x.reshape(-1), *self.partials]
        dsts = [*self.partials, out.view(-1)]
        for k, src, dst in zip(self.kernels, srcs, dsts, strict=True):
            k(src, dst)


class AxisCache:
    """The axis family's launches in the plan cache's LRU table (harness.launch.plan_cache.LRU)."""

    def __init__(self, max_entries: int | None = None) -> None:
        self._table: LRU[Key, AxisLaunch] = LRU(max_entries)
        self.max_entries = self._table.max_entries

    def __len__(self) -> int:
        return len(self._table)

    @property
    def hits(self) -> int:
        return self._table.hits

    @property
    def misses(self) -> int:
        return self._table.misses

    def get(
        self, v: Variant, x: torch.Tensor, p: geom.Problem, dim: int, stream: int
    ) -> AxisLaunch:
        """The entry for v over x's dtype, shape and dim on x's device and `stream`, built on a
        miss (DeviceMemoryError when its partials cannot be allocated)."""
        dtype = dtypes.name_of(x.dtype)
        key = (v.id, dtype, tuple(x.shape), dim, x.get_device(), stream)
        entry = self._table.lookup(key)
        if entry is None:
            kernels, sizes = axis_plan.kernels(v, dtype, p)
            entry = AxisLaunch(kernels, axis_plan.partial_buffers(v, dtype, sizes, x.device))
            entry = self._table.add(key, entry)  # another thread's, if it won
        return entry

    def clear(self) -> None:
        self._table.clear()


_default = AxisCache()


def default() -> AxisCache:
    """The process-wide cache reduce_sum uses for sums along a dim."""
    return _default
