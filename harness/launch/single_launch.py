"""Plans for the "single-launch" mapping (family "fastest"): one launch turns n elements into one.

The Plan owns a workspace: one partial per block (accumulator type) and a 32-bit counter, zeroed
once here. The kernel leaves the counter at 0 after every launch (the last block resets it), so
repeated launches, timing loops and CUDA-graph replays need no memset. Two launches of one Plan
must not run concurrently on different streams (they would share the counter); one stream, as the
harness uses, orders them.

Output dtype: the accumulator's. float16 / bfloat16 inputs accumulate in float32 and the sum is
returned as float32 (not rounded to 16 bits); float32, int32 and float64 return their own type.
The grid comes from passes.single_launch_cap (SM count of the device, read once per process).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from harness.core import dtypes
from harness.core import passes as _passes
from harness.core.catalogue import Variant
from harness.launch.errors import DeviceMemoryError
from harness.launch.stream import on_torch_stream

COUNTER_DTYPE = torch.int32  # the last-block ticket counter


def out_dtype(dtype: str) -> torch.dtype:
    return dtypes.get(dtype).sum_torch


def head_elements(x: torch.Tensor) -> int:
    """Elements before x's first 16-byte boundary (capped at n)."""
    mis = x.data_ptr() % 16
    head = (16 - mis) // x.element_size() if mis else 0
    return min(head, x.numel())


# How many blocks (programs) a persistent grid gets for `tiles` tiles when at most `cap` fit:
# "capped": min(tiles, cap), so the last grid-stride round may hold only a few blocks, which then
# read their extra tile alone; "balanced": the same number of rounds, cdiv(tiles, cap), with the
# fewest blocks that still cover the tiles, so every round but the last is full and the last one
# nearly so. harness.studies.fastest_ablation measures both.
GRID_POLICIES = ("capped", "balanced")
GRID_POLICY = "capped"


def grid_size(tiles: int, cap: int, policy: str | None = None) -> int:
    policy = policy or GRID_POLICY
    if policy not in GRID_POLICIES:
        raise ValueError(f"grid policy {policy!r}; known: {', '.join(GRID_POLICIES)}")
    tiles, cap = max(tiles, 1), max(cap, 1)
    if policy == "capped" or tiles <= cap:
        return min(tiles, cap)
    return _passes.cdiv(tiles, _passes.cdiv(tiles, cap))


def cuda_grid(
    variant: Variant,
    dtype: str,
    n: int,
    *,
    threads: int | None = None,
    unroll: int | None = None,
    per_sm: int | None = None,
    policy: str | None = None,
) -> int:
    """Blocks cuda/fastest launches: grid_size(vector tiles, min(per_sm * SMs, max_blocks)).
    The keywords override the catalogue's launch (the ablation's other instantiations)."""
    from harness.core.catalogue import FASTEST_UNROLL

    launch = variant.launch
    vec = dtypes.get(dtype).per_16_bytes
    tile = (threads or launch.threads) * (unroll or FASTEST_UNROLL[dtype]) * vec
    cap = min(launch.max_blocks, (per_sm or launch.per_sm) * _passes.sm_count())
    return grid_size(_passes.cdiv(n, tile), cap, policy)


@dataclass
class SingleLaunchPlan:
    """One launch returns the sum (the ReductionPlan protocol of harness.launch.plan). workspace:
    [partials, counter], zeroed once at make_plan."""

    variant: Variant
    dtype: str
    x: torch.Tensor
    outs: list[torch.Tensor]
    workspace: list[torch.Tensor]
    launches: list[Callable[[], None]] = field(default_factory=list)

    @property
    def n(self) -> int:
        return self.x.numel()

    @property
    def launch_count(self) -> int:
        return 1

    @property
    def first_blocks(self) -> int:
        # The value the launch leaves (what the ladder's "blocks of the first pass" counted for
        # this family until now); the grid itself is the device's.
        return 1

    def restore(self) -> None:
        """Nothing to restore: the input is never written."""

    def run(self, first_pass_only: bool = False, restore: bool = True) -> torch.Tensor:
        self.launches[0]()
        return self.outs[0]

    def poison(self) -> None:
        for o in self.outs:
            dtypes.poison_(o)

    def bytes_moved(self, first_pass_only: bool = False) -> int:
        """The input read once and the one value written."""
        return (self.n + 1) * self.x.element_size()


def make_plan(variant: Variant, dtype: str, x: torch.Tensor) -> SingleLaunchPlan:
    cap = variant.launch.max_blocks  # >= any grid either backend launches (Triton's autotuner
    # may pick more programs per SM than the launch record's per_sm, never more than this)
    try:
        out = torch.empty(1, dtype=out_dtype(dtype), device=x.device)
        partials = torch.empty(cap, dtype=out_dtype(dtype), device=x.device)
        counter = torch.zeros(1, dtype=COUNTER_DTYPE, device=x.device)
    except torch.cuda.OutOfMemoryError as e:
        raise DeviceMemoryError(
            f"{variant.id} could not allocate its {cap}-slot workspace ({str(e).splitlines()[0]})"
        ) from None
    plan = SingleLaunchPlan(variant, dtype, x, [out], [partials, counter])
    make = _cuda_launch if variant.backend == "cuda" else _triton_launch
    plan.launches = [make(variant, dtype, x, out, partials, counter)]
    return plan


def _cuda_launch(
    variant, dtype, x, out, partials, counter, kern=None, **shape
) -> Callable[[], None]:
    """A launch of cuda/fastest's kernel over x, on torch's current stream; or of `kern`, another
    instantiation of it, with `shape` (cuda_grid's keywords) saying its threads / unroll / per_sm /
    grid policy (the ablation)."""
    import cupy
    import numpy as np

    from harness.compile import cuda_loader

    kern = kern or cuda_loader.kernel(variant, dtype)
    n = x.numel()
    grid = (cuda_grid(variant, dtype, n, **shape),)
    block = (shape.get("threads") or variant.launch.threads,)
    # 16-bit inputs go to CuPy as raw uint16 (the kernel reads bits); CuPy passes pointers only.
    xv = x.view(torch.int16) if x.element_size() == 2 else x
    args = (
        cupy.from_dlpack(xv),
        cupy.from_dlpack(out),
        cupy.from_dlpack(partials),
        cupy.from_dlpack(counter),
        np.uint64(n),
    )

    def go() -> None:
        with on_torch_stream():
            kern(grid, block, args)

    return go


def cuda_launch_with(plan, kern, **shape) -> Callable[[], None]:
    """A launch of `kern` (an instantiation of reduce_fastest with the given threads / unroll,
    grid from per_sm / policy) on `plan`'s input and workspace."""
    partials, counter = plan.workspace
    x, out = plan.x, plan.outs[0]
    return _cuda_launch(plan.variant, plan.dtype, x, out, partials, counter, kern, **shape)


def triton_meta(cfg, dtype: str, programs: int, even: bool | None = None) -> dict:
    """The meta-parameters _triton_launch passes fastest_kernel for configuration `cfg` and a grid
    of `programs`. ACC (the accumulator, = the output dtype) as its triton.language name; the
    launcher turns it into the dtype. even=None: fastest.EVEN_SHARE (the ablation passes False)."""
    from triton_kernels import fastest

    return dict(
        BLOCK=cfg.block,
        FBLOCK=fastest.FBLOCK,
        ACC=dtypes.name_of(out_dtype(dtype)),
        ONE_PROGRAM=programs == 1,
        EVEN=fastest.EVEN_SHARE if even is None else even,
        num_warps=cfg.num_warps,
        num_stages=cfg.num_stages,
    )


def triton_census_spec(dtype: str) -> dict:
    """What `reduce-ladder inspect` compiles for triton/fastest and `dtype`: the arguments of
    fastest_kernel as _triton_launch passes them, and the meta-parameters of the configuration
    used without tuning (fastest.DEFAULT, the first autotune candidate) on a grid of more than one
    program (the general path: partials, ticket, last-program combine).

    args: parameter -> (element dtype, 16-byte aligned) for pointers (the tensors make_plan
    allocates: x and its aligned bulk view in the input dtype, out and partials in out_dtype, the
    counter int32), or "int32" for the scalars head and n_bulk (what Triton types a Python int
    below 2^31 as; an input of 2^31+ elements compiles a variant with 64-bit scalars). x is the
    input as given, at any alignment, so it is not declared 16-byte aligned; torch allocations
    and x[head:] are. The census checks that every non-constexpr parameter is named here.
    """
    from triton_kernels import fastest

    acc = dtypes.name_of(out_dtype(dtype))
    return {
        "kernel": "fastest_kernel",
        "args": {
            "x_ptr": (dtype, False),
            "xa_ptr": (dtype, True),
            "out_ptr": (acc, True),
            "part_ptr": (acc, True),
            "count_ptr": (dtypes.name_of(COUNTER_DTYPE), True),
            "head": "int32",
            "n_bulk": "int32",
        },
        "meta": triton_meta(fastest.DEFAULT, dtype, programs=2),
    }


def triton_launcher(
    dtype, x, out, partials, counter, even: bool | None = None, policy: str | None = None
):
    """launcher(cfg) -> a launch of fastest_kernel over x with configuration cfg; `even` and the
    grid `policy` default to the module's choices (the ablation sets them)."""
    import triton.language as tl

    from triton_kernels import fastest

    n = x.numel()
    head = head_elements(x)
    xa = x[head:]
    n_bulk = n - head
    sms = _passes.sm_count()

    def launcher(cfg: fastest.Config) -> Callable[[], None]:
        g = grid_size(cfg.tiles(n_bulk), cfg.cap(sms), policy)
        grid = (g,)
        meta = triton_meta(cfg, dtype, g, even)
        meta["ACC"] = getattr(tl, meta["ACC"])
        return lambda: fastest.fastest_kernel[grid](
            x, xa, out, partials, counter, head, n_bulk, **meta
        )

    return launcher


def triton_launcher_for(plan, even: bool | None = None, policy: str | None = None):
    """triton_launcher on `plan`'s input and workspace."""
    partials, counter = plan.workspace
    return triton_launcher(plan.dtype, plan.x, plan.outs[0], partials, counter, even, policy)


def _triton_launch(variant, dtype, x, out, partials, counter) -> Callable[[], None]:
    from triton_kernels import fastest

    launcher = triton_launcher(dtype, x, out, partials, counter)
    n = x.numel()
    if x.device.type == "cuda":
        from harness.core import timing

        def time_config(cfg: fastest.Config) -> float:
            fn = launcher(cfg)
            reps = 5 if n >= 2**27 else 20
            return timing.time_ms(fn, reps=reps, warmup=2).median_ms

        name = torch.cuda.get_device_name(x.device)
        cfg = fastest.choose(name, dtype, n, time_config)
    else:
        cfg = fastest.DEFAULT
    return launcher(cfg)
