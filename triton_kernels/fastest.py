"""Past the ladder in Triton: one launch, a persistent grid-stride loop, a last-program finish.

Beyond the seeds (issue 8); the counterpart of cuda/fastest, not its tile twin. Changed from the
grid-stride twin (triton/grid-stride-1024):
- programs: from cdiv(n, BLOCK) tiles and at most min(per_sm * SMs, 2048), the SM count read off
  the device (`program_count` below);
- work split: grid-stride over whole tiles. EVEN=True (kept for
  experiments/fastest_ablation/) gives each program one contiguous range instead, as even
  as units of 32 elements allow, so that all programs finish together; it measured slower, so
  EVEN_SHARE is False;
- BLOCK, num_warps, num_stages and per_sm are autotuned (timed with CUDA events, L2 flushed) over
  CONFIGS, once per (device, dtype, size bucket = n.bit_length()) per process: `tuned_config`;
- alignment: Triton vectorizes a load to 16 bytes only when it can prove the pointer 16-byte
  aligned (it specializes pointer arguments on divisibility by 16). The wrapper therefore passes
  the bulk as a separate, aligned view x[head:] (head < 16 bytes' worth of elements, from
  x.data_ptr()), and program 0 adds the head elements through the original pointer. A view at any
  element offset (x[1:], x[3:]) still gets 16-byte loads for its bulk;
- finish in the same launch: each program stores its partial, then takes a ticket with an
  acq_rel atomic_add on a counter; the program holding the last ticket sums the partials in
  program order (volatile loads, FBLOCK lanes at a time, then tl.sum), stores the result and takes
  nprog off the counter (a modular ticket: the kernel says why). A grid of one program
  (ONE_PROGRAM) stores its sum directly.
- determinism: the partials are combined in program order, whichever program finishes last, so
  the result is bit-identical across launches for a given device, n, alignment and configuration.
  The configuration is chosen by timing; a different process may pick another one (another
  addition order) for the same n: `tuned_config` caches per process.
- dtypes: float32, int32 (wraps modulo 2^32, as the golden), float64; float16 / bfloat16 are
  widened on load and accumulated in float32, and the result is stored as float32.

The wrapper below the kernel may import harness.core only.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import triton
import triton.language as tl

from harness.core import dtypes, mappings

if TYPE_CHECKING:
    import torch

MAX_PROGRAMS = 2048  # = the catalogue's max_blocks for triton/fastest
FBLOCK = 1024  # lanes of the final combine (partials per step)
EVEN_SHARE = False  # the EVEN split (see above): measured slower (the ablation)


@dataclass(frozen=True)
class Config:
    block: int  # elements per program per grid-stride step (lanes)
    num_warps: int
    num_stages: int
    per_sm: int  # programs per SM (persistent grid)

    def tiles(self, n_bulk: int) -> int:
        return -(-max(n_bulk, 1) // self.block)

    def cap(self, sms: int) -> int:
        return max(1, min(self.per_sm * sms, MAX_PROGRAMS))

    def label(self) -> str:
        return f"B{self.block}-w{self.num_warps}-s{self.num_stages}-p{self.per_sm}"


# Every candidate keeps BLOCK >= 1024, per_sm >= 2 and BLOCK / (32 * num_warps) <= 32: what the
# catalogue's launch record (threads=1024, per_sm=2) and Launch.chain_length assume.
CONFIGS: tuple[Config, ...] = (
    Config(4096, 8, 1, 4),
    Config(4096, 8, 3, 4),
    Config(2048, 4, 1, 8),
    Config(8192, 8, 1, 2),
    Config(2048, 8, 1, 4),
    Config(1024, 4, 1, 8),
    Config(8192, 16, 2, 2),
)
DEFAULT = CONFIGS[0]

# Why a tuner of its own and not triton.autotune: what this one does.
# - A candidate is a whole launch, grid included: per_sm is no kernel parameter but sets the grid
#   (program_count: min(tiles for its BLOCK, per_sm x SMs)), and the constexpr ONE_PROGRAM (no
#   partials, no ticket) follows from that grid (`launcher` builds each candidate).
# - One choice per (device, dtype, size bucket = n.bit_length()): autotune keys its cache on the
#   exact values of the named arguments and would re-time every new n.
# - Candidates are timed with the timer every result in this project is measured with
#   (harness.core.timing.time_ms: CUDA events, L2 flushed by a read, queued behind a gate, median:
#   `measure_ms`), and the choice is made when a plan is built (harness.launch.single_launch),
#   so no timed call and no CUDA-graph capture ever contains a tuning run.
# - The choices are reported (`chosen`, into the fastest bench's result file), and are skipped
#   with REDUCE_LADDER_TRITON_TUNE=0 (the tests, for speed) or without a GPU (DEFAULT).
_chosen: dict[tuple[str, str, int], Config] = {}


def bucket(n: int) -> int:
    return n.bit_length()


def chosen() -> dict[str, str]:
    """What the autotuner picked in this process (for result files)."""
    return {f"{d}/{t}/2^{b - 1}..": c.label() for (d, t, b), c in _chosen.items()}


def measure_ms(fn: Callable[[], object], n: int) -> float:
    """One candidate's time over n elements: the median of harness.core.timing.time_ms (5
    repetitions from 2^27 elements on, else 20; two warm-up calls)."""
    from harness.core import timing  # torch: only when timing on a GPU

    return timing.time_ms(fn, reps=5 if n >= 2**27 else 20, warmup=2).median_ms


@triton.jit(do_not_specialize=["head", "n_bulk"])
def fastest_kernel(
    x_ptr,  # the input as given (any element alignment): program 0 reads its head here
    xa_ptr,  # x + head: 16-byte aligned, the bulk
    out_ptr,  # one ACC value
    part_ptr,  # >= num_programs ACC slots (workspace)
    count_ptr,  # one int32, 0 at launch and after it
    head,  # elements before the first 16-byte boundary (< 16 / element size)
    n_bulk,  # elements from xa_ptr on
    BLOCK: tl.constexpr,
    FBLOCK: tl.constexpr,
    ACC: tl.constexpr,
    ONE_PROGRAM: tl.constexpr,
    EVEN: tl.constexpr,  # contiguous, balanced ranges (False: grid-stride over tiles)
):
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    lanes = tl.arange(0, BLOCK)
    zero64 = pid.to(tl.int64) * 0
    acc = tl.zeros([BLOCK], dtype=ACC)
    if EVEN:
        # One contiguous range per program, in units of 32 elements (a multiple of 16 bytes for
        # every dtype, so the loads stay 16-byte vectors), as even as whole units allow; the last
        # program also takes the < 32 elements after the last whole unit. Every program ends at
        # about the same time (grid-stride over whole tiles leaves some with one tile more).
        units = n_bulk // 32
        per = units // nprog
        rem = units % nprog
        lo = (zero64 + pid * per + tl.minimum(pid, rem)) * 32
        hi = (zero64 + (pid + 1) * per + tl.minimum(pid + 1, rem)) * 32
        hi = tl.where(pid == nprog - 1, n_bulk, hi)
        n_full = (hi - lo) // BLOCK
        for k in range(0, n_full):  # whole tiles, no mask
            acc += tl.load(xa_ptr + (lo + k * BLOCK + lanes)).to(ACC)
        offs = lo + n_full * BLOCK + lanes
        acc += tl.load(xa_ptr + offs, mask=offs < hi, other=0).to(ACC)
    else:
        num_full = n_bulk // BLOCK
        # Whole tiles, grid-stride, no mask: 16-byte loads when xa_ptr is aligned (it is).
        for t in range(pid, num_full, nprog):
            offs = (zero64 + t) * BLOCK + lanes
            acc += tl.load(xa_ptr + offs).to(ACC)
        # The partial tile (tile num_full, if n_bulk % BLOCK), owned by program num_full % nprog.
        offs = (zero64 + num_full) * BLOCK + lanes
        # (Ownership folded into the limit: one comparison per lane; the interpreter mishandles
        # a lane-wise mask AND-ed with a scalar one.)
        tail_end = tl.where(pid == num_full % nprog, n_bulk, 0)
        acc += tl.load(xa_ptr + offs, mask=offs < tail_end, other=0).to(ACC)
    # The scalar head before the first 16-byte boundary: program 0.
    acc += tl.load(x_ptr + lanes, mask=lanes < tl.where(pid == 0, head, 0), other=0).to(ACC)
    total = tl.sum(acc, axis=0)
    if ONE_PROGRAM:
        tl.store(out_ptr, total)
    else:
        tl.store(part_ptr + pid, total)
        tl.debug_barrier()  # every thread's part of the store is done before the release
        # A modular ticket: the program whose ticket is nprog - 1 (mod nprog) is last, and it
        # subtracts nprog instead of storing 0, so each launch adds 0 in all. A reset store could
        # land between another launch's increments, should two ever share the counter, and
        # leave it off 0 for good (every later "last" program an early one); this cannot.
        ticket = tl.atomic_add(count_ptr, 1, sem="acq_rel")
        if ticket % nprog == nprog - 1:
            facc = tl.zeros([FBLOCK], dtype=ACC)
            for start in range(0, nprog, FBLOCK):
                idx = start + tl.arange(0, FBLOCK)
                facc += tl.load(part_ptr + idx, mask=idx < nprog, other=0, volatile=True)
            tl.store(out_ptr, tl.sum(facc, axis=0))
            tl.atomic_add(count_ptr, -nprog)


# ---------------------------------------------------------------------------------------------
# The wrapper: fastest_kernel's arguments, grid and meta-parameters, the tuned launch.

COUNTER_DTYPE = "int32"  # the ticket counter harness.launch.single_launch allocates


def head_elements(x: torch.Tensor) -> int:
    """Elements before x's first 16-byte boundary (capped at n): program 0 adds them through x."""
    mis = x.data_ptr() % 16
    head = (16 - mis) // x.element_size() if mis else 0
    return min(head, x.numel())


def kernel_args(
    x: torch.Tensor, out: torch.Tensor, partials: torch.Tensor, counter: torch.Tensor
) -> tuple:
    """fastest_kernel's runtime arguments over x: x, its aligned bulk x[head:], the output, the
    workspace (partials, counter), head and n_bulk (the last one: what the grid is sized from)."""
    head = head_elements(x)
    return (x, x[head:], out, partials, counter, head, x.numel() - head)


def program_count(cfg: Config, n_bulk: int, sms: int) -> int:
    """The grid for configuration cfg: one program per tile, at most cfg.cap(sms)."""
    return min(cfg.tiles(n_bulk), cfg.cap(sms))


def triton_meta(cfg: Config, dtype: str, programs: int) -> dict:
    """The meta-parameters fastest_kernel is launched with for configuration cfg on a grid of
    `programs`, JSON-ready: ACC (the accumulator, = the output dtype) by its triton.language
    name (`launch` turns it into the dtype)."""
    return dict(
        BLOCK=cfg.block,
        FBLOCK=FBLOCK,
        ACC=dtypes.get(dtype).sum_dtype,
        ONE_PROGRAM=programs == 1,
        EVEN=EVEN_SHARE,
        num_warps=cfg.num_warps,
        num_stages=cfg.num_stages,
    )


def launch(args: tuple, programs: int, meta: dict) -> Callable[[], None]:
    """A launch of fastest_kernel with kernel_args' `args` on a grid of `programs`, with `meta`
    in triton_meta's form."""
    meta = {**meta, "ACC": getattr(tl, meta["ACC"])}
    return lambda: fastest_kernel[(programs,)](*args, **meta)


ForConfig = Callable[[Config], tuple[Callable[[], None], int]]


def launcher(dtype: str, args: tuple, sms: int) -> ForConfig:
    """cfg -> (the launch of fastest_kernel over `args` with cfg, its grid)."""

    def for_config(cfg: Config) -> tuple[Callable[[], None], int]:
        g = program_count(cfg, args[-1], sms)
        return launch(args, g, triton_meta(cfg, dtype, g)), g

    return for_config


def tuned_launch(
    dtype: str, x: torch.Tensor, out: torch.Tensor, partials: torch.Tensor, counter: torch.Tensor
) -> tuple[Callable[[], None], int]:
    """The launch triton/fastest runs over x, and its grid."""
    for_config = launcher(dtype, kernel_args(x, out, partials, counter), mappings.sm_count())
    return for_config(tuned_config(dtype, x, for_config))


def tuned_config(dtype: str, x: torch.Tensor, for_config: ForConfig) -> Config:
    """The configuration triton/fastest runs over x with: the cached choice for this device, dtype
    and size bucket, else the fastest of CONFIGS, each timed through for_config (a `launcher`) by
    measure_ms; DEFAULT when interpreted, or untuned (REDUCE_LADDER_TRITON_TUNE=0). Also what
    harness.launch.rebind builds its cached launches from, so both paths agree."""
    if x.device.type != "cuda":
        return DEFAULT
    import torch

    n = x.numel()
    key = (torch.cuda.get_device_name(x.device), dtype, bucket(n))
    if key not in _chosen:
        if os.environ.get("REDUCE_LADDER_TRITON_TUNE", "1") == "0":
            return DEFAULT
        times = {cfg: measure_ms(for_config(cfg)[0], n) for cfg in CONFIGS}
        _chosen[key] = min(times, key=times.get)
    return _chosen[key]


def triton_census_spec(dtype: str) -> dict:
    """What `reduce-ladder inspect` compiles for triton/fastest and `dtype`: fastest_kernel's
    arguments as kernel_args passes them, with DEFAULT's meta-parameters (no tuning) on a grid of
    more than one program (the general path: partials, ticket, last-program combine).

    args: parameter -> (element dtype, 16-byte aligned) for pointers, "int32" for the scalars
    (what Triton types a Python int below 2^31 as; 2^31+ elements compile a variant with 64-bit
    scalars). x is the input as given, at any alignment, so it is not declared aligned; torch
    allocations and x[head:] are. The census checks that every runtime parameter is named here.
    """
    acc = dtypes.get(dtype).sum_dtype
    return {
        "kernel": "fastest_kernel",
        "args": {
            "x_ptr": (dtype, False),
            "xa_ptr": (dtype, True),
            "out_ptr": (acc, True),
            "part_ptr": (acc, True),
            "count_ptr": (COUNTER_DTYPE, True),
            "head": "int32",
            "n_bulk": "int32",
        },
        "meta": triton_meta(DEFAULT, dtype, programs=2),
    }
