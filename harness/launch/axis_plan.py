"""The axis family (a sum along one dim, harness.core.records_axis): its checks, kernels, cached
launch and plan (docs/runtime.md#axis-sums)."""

from __future__ import annotations

import operator
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch

from harness.compile import cuda_loader
from harness.core import axis_geometry as geom
from harness.core import axis_vector as vec
from harness.core import catalogue, dtypes
from harness.core.catalogue import Variant
from harness.core.records_axis import ONE_LAUNCH_SPLITS, TRITON_KERNELS, name_expression
from harness.launch.errors import no_room
from harness.launch.stream import COUNTER_DTYPE, INTERPRETER, cupy_view, on_torch_stream

NDIMS = (2, 3)


def is_axis(variant: object) -> bool:
    if isinstance(variant, str):
        return variant in catalogue.AXIS_BY_ID
    return isinstance(variant, Variant) and variant.id in catalogue.AXIS_BY_ID


def resolve(variant: str | Variant, dim: object) -> Variant:
    """The axis record for `variant`, or the error saying why a sum along `dim` cannot use it."""
    if not is_axis(variant):
        vid = variant if isinstance(variant, str) else getattr(variant, "id", variant)
        if dim is not None and isinstance(vid, str) and vid in catalogue.BY_ID:
            raise ValueError(
                f"{vid} sums every element (a 1-D variant) and takes no dim; sums along a dim "
                f"use the axis family: {', '.join(catalogue.AXIS_BY_ID)}"
            )
        return catalogue.get_axis(str(vid))  # raises: unknown, with the close axis ids
    v = catalogue.AXIS_BY_ID[variant if isinstance(variant, str) else variant.id]
    if dim is None:
        raise ValueError(
            f"{v.id} sums along one dim: pass dim= (e.g. reduce_sum(x, {v.id!r}, dim=-1)); "
            "the sum of every element is the 1-D ladder's (reduce_sum(x, 'cuda/fastest'))"
        )
    return v


def normalize_dim(dim: object, ndim: int) -> int:
    """dim as an index in [0, ndim) (negative dims count from the end, as torch's)."""
    try:
        d = operator.index(dim)
    except TypeError:
        raise TypeError(f"dim must be an int, got {type(dim).__name__}") from None
    if not -ndim <= d < ndim:
        raise IndexError(
            f"dim {d} is out of range for a {ndim}-D tensor (expected {-ndim} .. {ndim - 1})"
        )
    return d % ndim


def check(v: Variant, shape: tuple[int, ...], dim: object, itemsize: int = 4) -> geom.Problem:
    """The problem x.shape (of `itemsize`-byte elements) reduced along dim is, or a clear error
    (module docstring)."""
    if len(shape) not in NDIMS:
        raise ValueError(
            f"{v.id} takes a 2-D or 3-D tensor, got {len(shape)}-D {tuple(shape)}; the sum of a "
            "1-D tensor is the 1-D ladder's (reduce_sum without dim), and a tensor of more dims "
            "can be viewed as 3-D around its reduced dim first"
        )
    p = geom.problem(tuple(int(s) for s in shape), normalize_dim(dim, len(shape)), itemsize)
    mapping = v.launch.mapping
    if not mapping.takes(p):
        kind = "rows (the reduced dim innermost)" if p.rows else "columns (a strided dim)"
        takers = [a.id for a in catalogue.AXIS_VARIANTS if a.launch.mapping.takes(p)]
        raise ValueError(
            f"{v.id} reduces {mapping.along}; dim {dim} of shape {tuple(shape)} reduces {kind}: "
            f"use one of {', '.join(takers)}"
        )
    if p.numel > v.max_n:
        raise ValueError(
            f"{v.id} indexes with 32 bits: at most {v.max_n:,} elements, this tensor has "
            f"{p.numel:,}"
        )
    return p


Kernel = Callable[[torch.Tensor, torch.Tensor], None]
# A pass's own workspace (a launch that combines its splits itself): its partials and counters.
Workspace = tuple[torch.Tensor, torch.Tensor]


# Each pass kind's size arguments (after its pointers), the CUDA kernel's (as uint32) and Triton's.
CUDA_SIZES = {"r0": "outer length", "r1": "outer length", "r2": "outer length",
              "c0": "outer length inner", "tiles": "outer length inner chunk",
              "r3": "outer length lanes", "r4": "length chunk",
              "c3": "outer length inner chunk lanes"}  # fmt: skip
TRITON_SIZES = {"r0": "outer length", "r1": "length", "r2": "outer length",
                "c0": "outer length inner", "tiles": "length inner chunk", "r3": "outer length",
                "r4": "length chunk", "c3": "length inner chunk"}  # fmt: skip


def own_workspace(ps: geom.AxisPass) -> tuple[int, int]:
    """(partial slots, ticket counters) of a pass that combines its splits in its own launch: r4
    or c3 over S > 1 splits, its (outer, S, inner) partials and a counter per row (r4) or strip
    (c3), the grid's x; (0, 0) for every other pass."""
    if ps.kind in ONE_LAUNCH_SPLITS and ps.grid[1] > 1:
        return ps.outer * ps.grid[1] * ps.inner, ps.grid[0]
    return 0, 0


def cuda_kernel(
    v: Variant, ps: geom.AxisPass, src: str, dst: str, work: Workspace | None = None
) -> Kernel:
    """Pass `ps` of CUDA variant v reading dtype `src` and writing `dst` (r4, c3: with their
    workspace when split), as a function of the two flat tensors, launched on torch's current
    stream."""
    # every expression is in the catalogue's list for axis.cu: one module, compiled once
    kern = cuda_loader.module(v.source).get_function(name_expression(ps.kind, src, dst))
    tail = tuple(np.uint32(getattr(ps, size)) for size in CUDA_SIZES[ps.kind].split())
    block = (v.launch.threads,)
    own_split = ps.kind in ONE_LAUNCH_SPLITS  # takes (partials, counters): unsplit, unused
    with on_torch_stream():  # CuPy's views on torch's stream: no sync between the two
        own = tuple(map(cupy_view, work)) if work else ()

    def go(x: torch.Tensor, out: torch.Tensor) -> None:
        with on_torch_stream():
            y = cupy_view(out)
            head = (cupy_view(x), y, *(own or (y, y))) if own_split else (cupy_view(x), y)
            kern(ps.grid, block, (*head, *tail))

    return go


def triton_kernel(v: Variant, ps: geom.AxisPass, src: str, work: Workspace | None = None) -> Kernel:
    """Pass `ps` of Triton variant v reading dtype `src` (r4, c3: with their workspace when
    split), as a function of the two tensors."""
    from triton_kernels import axis as tk

    kern = getattr(tk, TRITON_KERNELS[ps.kind])
    warps, t, lanes = v.launch.num_warps, v.launch.threads, max(ps.lanes, 1)
    acc = {"ACC": tk.ACC[dtypes.get(src).sum_dtype]}
    # the contiguous dim a multiple of a quad: the row (r3, r4), the columns (c3)
    even = {"EVEN": (ps.inner if ps.kind == "c3" else ps.length) % vec.QUAD == 0}
    split = {**even, "SPLIT": work is not None}
    meta = {"r0": {"BLOCK": t}, "r1": {"BLOCK": t}, "c0": {"BLOCK": t},
            "r2": {"ROWS": t // geom.WARP, "WIDTH": geom.WARP},
            "tiles": {"GROUPS": t // geom.STRIP, "WIDTH": geom.STRIP},
            "r3": {"ROWS": t // lanes, "WIDTH": vec.QUAD * lanes, **even},
            "r4": {"TILE": vec.ROW_TILE, **split},
            "c3": {"GROUPS": t // lanes, "UNROLL": vec.COLUMN_UNROLL, "WIDTH": vec.QUAD * lanes,
                   **split}}[ps.kind]  # fmt: skip
    args = tuple(getattr(ps, size) for size in TRITON_SIZES[ps.kind].split())

    def go(x: torch.Tensor, out: torch.Tensor) -> None:
        own = (work or (out, out)) if ps.kind in ONE_LAUNCH_SPLITS else ()  # unsplit: unused
        if x.is_cuda:
            kern[ps.grid](x, out, *own, *args, **meta, **acc, num_warps=warps)
            return
        with INTERPRETER:  # Triton's interpreter: its counters zeroed first (stream.INTERPRETER)
            if work:
                work[1].zero_()
            kern[ps.grid](x, out, *own, *args, **meta, **acc, num_warps=warps)

    return go


@dataclass
class AxisLaunch:
    """Every pass of one axis sum: its kernels, the partials between them and the workspace of a
    pass that combines its own splits (r4, c3: partials and a ticket counter per row or strip,
    left at 0 by every launch); given the contiguous x and out per call (what
    harness.launch.plan_cache.AxisCache keeps); its lock: docs/runtime.md#axis-sums."""

    kernels: list[Kernel]
    partials: list[torch.Tensor]
    workspace: Workspace | None = None
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def __call__(self, x: torch.Tensor, out: torch.Tensor) -> None:
        srcs = [x.reshape(-1), *self.partials]
        dsts = [*self.partials, out.view(-1)]
        with self.lock:
            for k, src, dst in zip(self.kernels, srcs, dsts, strict=True):
                k(src, dst)


def bind(v: Variant, dtype: str, p: geom.Problem, device) -> AxisLaunch:
    """v's kernels over problem p, its partials (in the accumulator's dtype, dtypes: sum_dtype)
    and workspace on `device` (DeviceMemoryError when they cannot be allocated), the counters
    zeroed here, once (docs/runtime.md#axis-sums)."""
    passes = v.launch.mapping.passes(p)
    acc = dtypes.get(dtype)
    slots, tickets = max(map(own_workspace, passes))  # at most one pass has one: r4 or c3, alone
    sizes = [ps.outer * ps.grid[1] * ps.inner for ps in passes[:-1]]
    with no_room(f"{v.id} could not allocate its partials"):
        partials = [torch.empty(n, dtype=acc.sum_torch, device=device) for n in sizes]
        work = None
        if tickets:
            counters = torch.zeros(tickets, dtype=COUNTER_DTYPE, device=device)
            work = (torch.empty(slots, dtype=acc.sum_torch, device=device), counters)
    ks: list[Kernel] = []  # each a function of its source and destination (x, partials, out)
    for i, ps in enumerate(passes):
        src = dtype if i == 0 else acc.sum_dtype
        dst = dtype if i == len(passes) - 1 else acc.sum_dtype
        w = work if own_workspace(ps)[1] else None
        cuda = v.backend == "cuda"
        ks.append(cuda_kernel(v, ps, src, dst, w) if cuda else triton_kernel(v, ps, src, w))
    return AxisLaunch(ks, partials, work)


@dataclass
class AxisPlan:
    """An AxisLaunch bound to one input and its output ((outer * inner,), the input's dtype)."""

    variant: Variant
    x: torch.Tensor
    problem: geom.Problem
    out: torch.Tensor
    launch: AxisLaunch

    def poison(self) -> None:
        """NaN / the int sentinel into the output and every partial (an unwritten value fails);
        the counters keep their zeros."""
        work = self.launch.workspace
        for t in (self.out, *self.launch.partials, *(work[:1] if work else ())):
            dtypes.poison_(t)

    def run(self) -> torch.Tensor:
        self.launch(self.x, self.out)
        return self.out.view(self.problem.out_shape)


def make_plan(v: Variant, x: torch.Tensor, p: geom.Problem) -> AxisPlan:
    """`v` over the contiguous x (check(v, x.shape, dim) gave p; at least one output, length >= 1).
    Raises DeviceMemoryError when the output or the partials cannot be allocated."""
    launch = bind(v, dtypes.name_of(x.dtype), p, x.device)
    with no_room(f"{v.id} could not allocate its output"):
        out = torch.empty(p.outputs, dtype=x.dtype, device=x.device)
    return AxisPlan(v, x, p, out, launch)
