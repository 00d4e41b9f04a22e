"""One rank of `reduce-ladder distributed` (harness.studies.distributed starts K of them).

Each rank joins the process group, makes its shard on its own device from a seeded generator,
sums it with a catalogue variant (harness.launch.plan.make_plan), combines the K partials and
times both parts. Rank 0 writes every rank's records to RESULT_FILE in the run's folder; a rank
that raises writes its message to ERROR_FILE first, so the parent can name it in one line.

The data: integers in {-1, 0, 1} stored as float32 (Tensor.random_(-1, 2), in place, chunk by
chunk: no temporary as large as the shard, so 2^34 elements fit one GPU). Every partial sum of
such data stays far below 2^24, so every float32 addition is exact and the float32 result must
equal the float64 golden bit for bit; where a shard's sum reaches 2^24 the record says that
exactness cannot hold (`float32_exact_possible`), and the check fails loudly rather than hiding it.
"""

from __future__ import annotations

import datetime
import json
import os
import warnings
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.distributed as dist

from harness.core import catalogue
from harness.core.timing import gate_device
from harness.launch.plan import make_plan
from harness.studies import distributed_combines as combines

FAIL_RANK_ENV = "REDUCE_LADDER_DIST_FAIL_RANK"  # test hook: this rank raises after joining
RESULT_FILE = "result.json"
ERROR_FILE = "error-rank{rank}.txt"
CHUNK = 2**28  # elements per generation / checksum chunk (1 GiB of float32)
WEIGHT_PERIOD = 251  # checksum weights 1..251 by position: a moved element changes the sum
WATCHED_ENV = ("NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST", "NVSHMEM_DISABLE_NVLS")
FLOAT32_EXACT = 2**24  # integers below this are exact in float32, and so are sums staying below


@dataclass(frozen=True)
class RankConfig:
    """What every rank runs (pickled to each spawned process)."""

    world_size: int
    backend: str  # "nccl" or "gloo"
    on_gpu: bool  # device cuda:rank, else the CPU
    port: int
    timeout_s: float
    variant: str
    shard_sizes: tuple[int, ...]  # elements per rank, one case each
    combines: tuple[str, ...]  # names in combines.COMBINES
    reps: int
    warmup: int
    seed: int
    combine_calls: int  # back-to-back scalar combines timed in one loop (0: none)
    sweep_sizes: tuple[int, ...]  # all_reduce sweep (nccl-tests style); empty: none
    sweep_iters: int
    sweep_warmup: int
    out_dir: str


def run_rank(rank: int, cfg: RankConfig) -> None:
    """torch.multiprocessing's entry point (the process group is torn down on every path)."""
    try:
        _run(rank, cfg)
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()


def _leave_error(rank: int, cfg: RankConfig, e: BaseException) -> None:
    """The failure's one line, written BEFORE the process group goes: tearing it down fails the
    other ranks' collectives, and their errors must come after this one (the parent names the
    oldest file)."""
    first = str(e).strip().splitlines()[0] if str(e).strip() else ""
    Path(cfg.out_dir, ERROR_FILE.format(rank=rank)).write_text(f"{type(e).__name__}: {first}")


def _run(rank: int, cfg: RankConfig) -> None:
    try:
        _work(rank, cfg)
    except BaseException as e:
        _leave_error(rank, cfg, e)
        raise


def _work(rank: int, cfg: RankConfig) -> None:
    warnings.filterwarnings("ignore", message=".*all_gather_into_tensor.*", category=FutureWarning)
    if cfg.on_gpu:
        torch.cuda.set_device(rank)
        _cupy_device(rank)
        dev = torch.device("cuda", rank)
    else:
        torch.set_num_threads(1)  # K ranks share the host's cores
        dev = torch.device("cpu")
    dist.init_process_group(
        cfg.backend,
        init_method=f"tcp://127.0.0.1:{cfg.port}",
        rank=rank,
        world_size=cfg.world_size,
        timeout=datetime.timedelta(seconds=cfg.timeout_s),
        **({"device_id": dev} if cfg.on_gpu else {}),
    )
    if os.environ.get(FAIL_RANK_ENV) == str(rank):
        raise RuntimeError(f"injected failure on rank {rank} ({FAIL_RANK_ENV}={rank})")
    clock = combines.Clock(cfg.on_gpu, dev)
    records = [env_record(cfg, dev)]
    records += [r for n in cfg.shard_sizes for r in _sum_case(rank, cfg, dev, clock, n)]
    if cfg.combine_calls:
        records += [combines.combine_loop(cfg, dev, clock, c) for c in cfg.combines]
    records += [combines.sweep_point(cfg, dev, clock, n) for n in cfg.sweep_sizes]
    gathered: list = [None] * cfg.world_size
    dist.all_gather_object(gathered, records)
    if rank == 0:
        merged = [combines.merge_ranks([g[i] for g in gathered]) for i in range(len(records))]
        Path(cfg.out_dir, RESULT_FILE).write_text(json.dumps(merged))
    dist.barrier()


def _cupy_device(rank: int) -> None:
    """CuPy's current device too: the CUDA variants load and launch on CuPy's current device
    (harness.launch.stream switches only for non-default streams), so it must be this rank's."""
    try:
        import cupy
    except ImportError:
        return  # no CuPy: only the Triton variants can run, and they follow torch's device
    cupy.cuda.Device(rank).use()


def env_record(cfg: RankConfig, dev: torch.device) -> dict:
    """What this rank saw: its device and the variables the launcher sets (NVLink multicast off,
    the interpreter on the CPU path)."""
    names = (*WATCHED_ENV, "TRITON_INTERPRET")
    return {
        "kind": "env",
        "gpus": cfg.world_size,
        "rank": {"device": str(dev), "env": {k: os.environ.get(k) for k in names}},
    }


# -- the shard ----------------------------------------------------------------------------------


def make_shard(n: int, seed: int, rank: int, dev: torch.device) -> torch.Tensor:
    """n integers in {-1, 0, 1} as float32 on dev, from the generator seeded seed + rank, made in
    place chunk by chunk (no host copy, no temporary)."""
    gen = torch.Generator(device=dev).manual_seed(seed + rank)
    shard = torch.empty(n, dtype=torch.float32, device=dev)
    for start in range(0, n, CHUNK):
        shard[start : start + CHUNK].random_(-1, 2, generator=gen)
    return shard


def checksum(shard: torch.Tensor) -> tuple[float, float]:
    """(sum, position-weighted sum), both exact in float64 for this data: the sum is the golden,
    and the pair taken before and after the runs shows the shard unchanged."""
    size = min(CHUNK, shard.numel())
    weights = (torch.arange(size, device=shard.device) % WEIGHT_PERIOD + 1).to(torch.float32)
    total = weighted = 0.0
    for start in range(0, shard.numel(), CHUNK):
        chunk = shard[start : start + CHUNK]
        total += float(chunk.sum(dtype=torch.float64))
        weighted += float((chunk * weights[: chunk.numel()]).sum(dtype=torch.float64))
    return total, weighted


# -- one case: a shard size, every combine ------------------------------------------------------


def _sum_case(
    rank: int, cfg: RankConfig, dev: torch.device, clock: combines.Clock, n: int
) -> list[dict]:
    shard = make_shard(n, cfg.seed, rank, dev)
    before = checksum(shard)
    shard_golden = before[0]
    # The golden: every rank's exact shard sum, gathered, added in rank order (exact in float64).
    goldens = combines.all_gather_floats(shard_golden, dev, cfg.world_size)
    golden = 0.0
    for g in goldens:
        golden += g
    exact_possible = max(abs(g) for g in goldens) < FLOAT32_EXACT and abs(golden) < FLOAT32_EXACT
    plan = make_plan(catalogue.get(cfg.variant), shard)
    out = []
    for name in cfg.combines:
        combine = combines.COMBINES[name](dev, cfg.world_size)
        # Untimed check first: poisoned outputs, the partial against this shard's golden.
        plan.restore()
        plan.poison()
        combine.poison()
        partial_t = plan.run(restore=False)
        partial = float(partial_t.reshape(-1)[0])
        first = float(combine(partial_t))
        for _ in range(cfg.warmup):
            combine(plan.run())
        local_ms, combine_ms, results = [], [], []
        for _ in range(cfg.reps):
            plan.restore()
            plan.poison()
            combine.poison()
            combines.align(cfg, dev)
            if cfg.on_gpu:
                gate_device(combines.GATE_S)  # every launch queued before the device reaches it
            t0 = clock.mark()
            partial_t = plan.run(restore=False)
            t1 = clock.mark()
            result_t = combine(partial_t)
            t2 = clock.mark()
            clock.sync()
            local_ms.append(clock.ms(t0, t1))
            combine_ms.append(clock.ms(t1, t2))
            results.append(float(result_t))
        out.append(
            {
                "kind": "sum",
                "gpus": cfg.world_size,
                "n_per_rank": n,
                "n_total": n * cfg.world_size,
                "variant": cfg.variant,
                "combine": name,
                "reps": cfg.reps,
                "golden": golden,
                "float32_exact_possible": exact_possible,
                "rank": {
                    "partial": partial,
                    "shard_golden": shard_golden,
                    "partial_exact": partial == shard_golden,
                    "results": [first, *results],
                    "local_ms": local_ms,
                    "combine_ms": combine_ms,
                },
            }
        )
    del plan
    after = checksum(shard)
    for r in out:
        r["rank"]["shard_unchanged"] = after == before
    del shard
    if cfg.on_gpu:
        torch.cuda.empty_cache()
    return out
