"""Past the ladder in Triton: one launch, a persistent grid-stride loop, a last-program finish.

Beyond the seeds (issue 8); the counterpart of cuda/fastest, not its tile twin. Changed from the
grid-stride twin (triton/grid-stride-1024):
- programs: from cdiv(n, BLOCK) tiles and at most min(per_sm * SMs, 2048), the SM count read off
  the device (harness.launch.single_launch.grid_size);
- work split: grid-stride over whole tiles. EVEN=True (kept for harness/fastest_ablation.py) gives
  each program one contiguous range instead, as even as units of 32 elements allow, so that all
  programs finish together; it measured slower, so EVEN_SHARE is False;
- BLOCK, num_warps, num_stages and per_sm are autotuned (timed with CUDA events, L2 flushed) over
  CONFIGS, once per (device, dtype, size bucket = n.bit_length()) per process: `choose`;
- alignment: Triton vectorizes a load to 16 bytes only when it can prove the pointer 16-byte
  aligned (it specializes pointer arguments on divisibility by 16). The wrapper therefore passes
  the bulk as a separate, aligned view x[head:] (head < 16 bytes' worth of elements, from
  x.data_ptr()), and program 0 adds the head elements through the original pointer. A view at any
  element offset (x[1:], x[3:]) still gets 16-byte loads for its bulk;
- finish in the same launch: each program stores its partial, then takes a ticket with an
  acq_rel atomic_add on a counter; the program holding the last ticket sums the partials in
  program order (volatile loads, FBLOCK lanes at a time, then tl.sum), stores the result and sets
  the counter back to 0. A grid of one program (ONE_PROGRAM) stores its sum directly.
- determinism: the partials are combined in program order, whichever program finishes last, so
  the result is bit-identical across launches for a given device, n, alignment and configuration.
  The configuration is chosen by timing; a different process may pick another one (another
  addition order) for the same n: `choose` caches per process, and `pin` fixes one.
- dtypes: float32, int32 (wraps modulo 2^32, as the golden), float64; float16 / bfloat16 are
  widened on load and accumulated in float32, and the result is stored as float32.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import triton
import triton.language as tl

MAX_PROGRAMS = 2048  # = the catalogue's max_blocks for triton/fastest
FBLOCK = 1024  # lanes of the final combine (partials per step)
EVEN_SHARE = False  # the EVEN split (see above): measured slower (harness/fastest_ablation.py)


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
# catalogue's launch record (threads=1024, per_sm=2) and passes.chain_length assume.
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

_chosen: dict[tuple[str, str, int], Config] = {}


def tuning_enabled() -> bool:
    """REDUCE_LADDER_TRITON_TUNE=0 skips the timing and uses DEFAULT (tests use it for speed)."""
    return os.environ.get("REDUCE_LADDER_TRITON_TUNE", "1") != "0"


def bucket(n: int) -> int:
    return n.bit_length()


def pin(device: str, dtype: str, n: int, cfg: Config) -> None:
    """Fix the configuration for (device, dtype, n's bucket) in this process."""
    _chosen[(device, dtype, bucket(n))] = cfg


def choose(device: str, dtype: str, n: int, time_config) -> Config:
    """The configuration for this device, dtype and size bucket: the cached choice, or the
    fastest of CONFIGS by time_config(cfg) -> ms (called only when tuning is enabled)."""
    key = (device, dtype, bucket(n))
    if key not in _chosen:
        if not tuning_enabled():
            return DEFAULT
        times = {cfg: time_config(cfg) for cfg in CONFIGS}
        _chosen[key] = min(times, key=times.get)
    return _chosen[key]


def chosen() -> dict[str, str]:
    """What the autotuner picked in this process (for result files)."""
    return {f"{d}/{t}/2^{b - 1}..": c.label() for (d, t, b), c in _chosen.items()}


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
        ticket = tl.atomic_add(count_ptr, 1, sem="acq_rel")
        if ticket == nprog - 1:
            facc = tl.zeros([FBLOCK], dtype=ACC)
            for start in range(0, nprog, FBLOCK):
                idx = start + tl.arange(0, FBLOCK)
                facc += tl.load(part_ptr + idx, mask=idx < nprog, other=0, volatile=True)
            tl.store(out_ptr, tl.sum(facc, axis=0))
            tl.atomic_xchg(count_ptr, 0)
