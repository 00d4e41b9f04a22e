"""One rank of `reduce-ladder distributed` (harness.studies.distributed spawns K of them): its
seeded shard of integers in {-1, 0, 1} as float32 (every partial sum exact below 2^24), the local
sum through a catalogue plan, the two combines (COMBINES: all_reduce; all_gather added in rank
order in float64), their timing (timing.Clock), and the merge of every rank's records;
docs/several-gpus.md says what is measured and why. Rank 0 writes the merged records to
RESULT_FILE; a rank that raises writes its message to ERROR_FILE first, so the parent can name
it in one line. Its timing is not time_ms's on purpose: marks (harness.core.timing.Clock) on every
rank between barriers and a device gate, so the slowest rank's local sum and combine can be kept.
"""

from __future__ import annotations

import datetime
import json
import os
import statistics
import warnings
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.distributed as dist

from harness.core import catalogue, timing
from harness.core.timing import gate_device
from harness.launch.plan import make_plan

FAIL_RANK_ENV = "REDUCE_LADDER_DIST_FAIL_RANK"  # test hook: this rank raises after joining
RESULT_FILE = "result.json"
ERROR_FILE = "error-rank{rank}.txt"
CHUNK = 2**28  # elements per generation / checksum chunk (1 GiB of float32)
WEIGHT_PERIOD = 251  # checksum weights 1..251 by position: a moved element changes the sum
WATCHED_ENV = ("NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST", "NVSHMEM_DISABLE_NVLS")
FLOAT32_EXACT = 2**24  # integers below this are exact in float32, and so are sums staying below
GATE_S = 5e-4  # device-side wait before each timed repetition (outlasts queuing two calls)
GATE_PER_CALL_S = 1e-4  # and per call of a back-to-back loop (a combine queues in < 100 us)


@dataclass(frozen=True)
class RankConfig:
    """What every rank runs (pickled to each spawned process): K, the rendezvous port, the run's
    folder and the resolved Request of harness.studies.distributed."""

    world_size: int
    port: int
    out_dir: str
    req: object

    @property
    def on_gpu(self) -> bool:  # device cuda:rank, else the CPU
        return self.req.on_gpu


def run_rank(rank: int, cfg: RankConfig) -> None:
    """torch.multiprocessing's entry point. A failure's one line is written BEFORE the process
    group goes (tearing it down fails the other ranks, whose errors must come after: the parent
    names the oldest file); the group is torn down on every path."""
    try:
        _work(rank, cfg)
    except BaseException as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else ""
        Path(cfg.out_dir, ERROR_FILE.format(rank=rank)).write_text(f"{type(e).__name__}: {first}")
        raise
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()


def _work(rank: int, cfg: RankConfig) -> None:
    warnings.filterwarnings("ignore", message=".*all_gather_into_tensor.*", category=FutureWarning)
    if cfg.on_gpu:
        torch.cuda.set_device(rank)
        try:  # CUDA variants launch on CuPy's current device: it must be this rank's
            import cupy

            cupy.cuda.Device(rank).use()
        except ImportError:
            pass  # no CuPy: only Triton variants run, and they follow torch's device
        dev = torch.device("cuda", rank)
    else:
        torch.set_num_threads(1)  # K ranks share the host's cores
        dev = torch.device("cpu")
    dist.init_process_group(
        cfg.req.backend,
        init_method=f"tcp://127.0.0.1:{cfg.port}",
        rank=rank,
        world_size=cfg.world_size,
        timeout=datetime.timedelta(seconds=cfg.req.timeout_s),
        **({"device_id": dev} if cfg.on_gpu else {}),
    )
    if os.environ.get(FAIL_RANK_ENV) == str(rank):
        raise RuntimeError(f"injected failure on rank {rank} ({FAIL_RANK_ENV}={rank})")
    clock = timing.Clock(cfg.on_gpu, dev)
    names = (*WATCHED_ENV, "TRITON_INTERPRET")
    env = {"device": str(dev), "env": {k: os.environ.get(k) for k in names}}
    records = [{"kind": "env", "gpus": cfg.world_size, "rank": env}]
    shards = cfg.req.shard_sizes[cfg.world_size]
    records += [r for n in shards for r in _sum_case(rank, cfg, dev, clock, n)]
    if cfg.req.combine_calls:
        records += [combine_loop(cfg, dev, clock, c) for c in cfg.req.combines]
    if cfg.req.sweep and cfg.world_size > 1:  # the all_reduce sweep (nccl-tests style)
        records += [sweep_point(cfg, dev, clock, n) for n in cfg.req.sweep_sizes]
    gathered: list = [None] * cfg.world_size
    dist.all_gather_object(gathered, records)
    if rank == 0:
        merged = [merge_ranks([g[i] for g in gathered]) for i in range(len(records))]
        Path(cfg.out_dir, RESULT_FILE).write_text(json.dumps(merged))
    dist.barrier()


def make_shard(n: int, seed: int, rank: int, dev: torch.device) -> torch.Tensor:
    """n integers in {-1, 0, 1} as float32 on dev, from the generator seeded seed + rank, made in
    place chunk by chunk (no host copy, no temporary)."""
    gen = torch.Generator(device=dev).manual_seed(seed + rank)
    shard = torch.empty(n, dtype=torch.float32, device=dev)
    for start in range(0, n, CHUNK):
        shard[start : start + CHUNK].random_(-1, 2, generator=gen)
    return shard


def checksum(shard: torch.Tensor) -> tuple[float, float]:
    """(sum, position-weighted sum), exact in float64 for this data: the sum is the golden, and
    the pair taken before and after the runs shows the shard unchanged."""
    weights = (torch.arange(min(CHUNK, shard.numel()), device=shard.device) % WEIGHT_PERIOD + 1).to(
        torch.float32
    )
    total = weighted = 0.0
    for start in range(0, shard.numel(), CHUNK):
        chunk = shard[start : start + CHUNK]
        total += float(chunk.sum(dtype=torch.float64))
        weighted += float((chunk * weights[: chunk.numel()]).sum(dtype=torch.float64))
    return total, weighted


def align(cfg: RankConfig, dev: torch.device, gate_s: float = 0.0) -> None:
    """Every rank here and its device idle; then, on the GPU, the device-side gate."""
    if cfg.on_gpu:
        dist.barrier(device_ids=[dev.index])
        torch.cuda.synchronize(dev)
        if gate_s:
            gate_device(gate_s)
    else:
        dist.barrier()


def all_reduce(partial: torch.Tensor, gathered: torch.Tensor) -> torch.Tensor:
    """all_reduce(SUM) of the partial in place (the plan's output, poisoned with it)."""
    value = partial.reshape(-1)[:1]
    dist.all_reduce(value, op=dist.ReduceOp.SUM)
    return value[0]


def all_gather(partial: torch.Tensor, gathered: torch.Tensor) -> torch.Tensor:
    """all_gather of the K partials into `gathered` (poisoned), added in rank order in float64."""
    dist.all_gather_into_tensor(gathered, partial.reshape(-1)[:1])
    as64 = gathered.to(torch.float64)
    total = as64[0]
    for k in range(1, as64.numel()):
        total = total + as64[k]  # rank order, one addition at a time
    return total.to(torch.float32)


COMBINES = {"all_reduce": all_reduce, "all_gather": all_gather}


def _sum_case(
    rank: int, cfg: RankConfig, dev: torch.device, clock: timing.Clock, n: int
) -> list[dict]:
    req, k = cfg.req, cfg.world_size
    shard = make_shard(n, req.seed, rank, dev)
    before = checksum(shard)
    # The golden: every rank's exact shard sum, gathered, added in rank order (exact in float64).
    every = torch.empty(cfg.world_size, dtype=torch.float64, device=dev)
    dist.all_gather_into_tensor(every, torch.tensor([before[0]], dtype=torch.float64, device=dev))
    goldens = every.tolist()
    golden = 0.0
    for g in goldens:
        golden += g
    exact_possible = max(map(abs, [*goldens, golden])) < FLOAT32_EXACT
    plan = make_plan(catalogue.get(req.variant), shard)
    gathered = torch.empty(cfg.world_size, dtype=torch.float32, device=dev)
    out = []
    for name in req.combines:
        combine = COMBINES[name]
        # Untimed check first: poisoned outputs, the partial against this shard's golden.
        plan.restore()
        plan.poison()
        gathered.fill_(float("nan"))
        partial_t = plan.run(restore=False)
        partial = float(partial_t.reshape(-1)[0])
        results = [float(combine(partial_t, gathered))]
        for _ in range(req.warmup):
            combine(plan.run(), gathered)
        local_ms, combine_ms = [], []
        for _ in range(req.reps):
            plan.restore()
            plan.poison()
            gathered.fill_(float("nan"))
            align(cfg, dev, GATE_S)  # every launch queued before the device reaches the gate
            t0 = clock.mark()
            partial_t = plan.run(restore=False)
            t1 = clock.mark()
            result_t = combine(partial_t, gathered)
            t2 = clock.mark()
            local_ms.append(clock.ms(t0, t1))
            combine_ms.append(clock.ms(t1, t2))
            results.append(float(result_t))
        mine = dict(partial=partial, shard_golden=before[0], partial_exact=partial == before[0])
        mine.update(results=results, local_ms=local_ms, combine_ms=combine_ms)
        case = dict(kind="sum", gpus=k, n_per_rank=n, n_total=n * k, variant=req.variant)
        case.update(combine=name, reps=req.reps, golden=golden)
        out.append({**case, "float32_exact_possible": exact_possible, "rank": mine})
    del plan
    unchanged = checksum(shard) == before
    for r in out:
        r["rank"]["shard_unchanged"] = unchanged
    del shard
    if cfg.on_gpu:
        torch.cuda.empty_cache()
    return out


def _timed_loop(cfg: RankConfig, dev: torch.device, clock: timing.Clock, calls: int, call) -> float:
    """us per call of `calls` calls back to back between two marks (nccl-tests' way)."""
    align(cfg, dev, GATE_S + GATE_PER_CALL_S * calls)
    start = clock.mark()
    for _ in range(calls):
        call()
    return clock.ms(start, clock.mark()) * 1e3 / calls


def combine_loop(cfg: RankConfig, dev: torch.device, clock: timing.Clock, name: str) -> dict:
    """`combine_calls` combines of a 1-element partial back to back: one call's cost without a
    local sum in front."""
    calls, k = cfg.req.combine_calls, cfg.world_size
    combine, gathered = COMBINES[name], torch.full((k,), float("nan"), device=dev)
    partial = torch.full((1,), dist.get_rank() + 1.0, dtype=torch.float32, device=dev)
    ok = float(combine(partial, gathered)) == k * (k + 1) / 2
    for _ in range(cfg.req.sweep_warmup):
        partial.zero_()
        combine(partial, gathered)
    partial.zero_()  # all_reduce in place: zeros stay zeros over the loop
    us = _timed_loop(cfg, dev, clock, calls, lambda: combine(partial, gathered))
    rec = {"us_per_call": us, "correct": ok}
    return {"kind": "combine_loop", "gpus": k, "combine": name, "calls": calls, "rank": rec}


def sweep_point(cfg: RankConfig, dev: torch.device, clock: timing.Clock, n: int) -> dict:
    """all_reduce(SUM) of n float32 in place, `sweep_iters` calls back to back after
    `sweep_warmup` (nccl-tests' method); first checked once on rank-valued data."""
    k, iters = cfg.world_size, cfg.req.sweep_iters
    buf = torch.full((n,), dist.get_rank() + 1.0, dtype=torch.float32, device=dev)
    dist.all_reduce(buf)
    ok = float(buf.min()) == k * (k + 1) / 2 == float(buf.max())
    buf.zero_()
    for _ in range(cfg.req.sweep_warmup):
        dist.all_reduce(buf)
    us = _timed_loop(cfg, dev, clock, iters, lambda: dist.all_reduce(buf))
    rec = {"us": us, "correct": ok}
    return {"kind": "allreduce", "gpus": k, "n": n, "bytes": 4 * n, "iters": iters, "rank": rec}


def merge_ranks(per_rank: list[dict]) -> dict:
    """One record from the K ranks' records of the same case (rank order)."""
    merged = {k: v for k, v in per_rank[0].items() if k != "rank"}
    ranks = [r["rank"] for r in per_rank]
    kind = merged["kind"]
    if kind == "env":
        merged.update(
            env_by_rank=[r["env"] for r in ranks], device_by_rank=[r["device"] for r in ranks]
        )
    elif kind == "sum":
        merged.update(_merge_sum(merged, ranks))
    elif kind == "combine_loop":
        us = [r["us_per_call"] for r in ranks]
        merged.update(us_per_call=max(us), us_per_call_by_rank=us)
    else:  # allreduce sweep point
        us = [r["us"] for r in ranks]
        merged.update(us_mean=statistics.fmean(us), us_max=max(us), us_by_rank=us)
    if kind in ("combine_loop", "allreduce"):
        merged["ok"] = all(r["correct"] for r in ranks)
    return merged


def _merge_sum(merged: dict, ranks: list[dict]) -> dict:
    """Per repetition, the slowest rank is the one whose local sum took longest: its local time
    is the critical path, and since the others wait for it, its combine is the collective alone.
    The medians over repetitions of that rank's local, combine and total are reported."""
    slowest = [max(ranks, key=lambda r: r["local_ms"][i]) for i in range(len(ranks[0]["local_ms"]))]
    local = [r["local_ms"][i] for i, r in enumerate(slowest)]
    comb = [r["combine_ms"][i] for i, r in enumerate(slowest)]
    total = [a + b for a, b in zip(local, comb, strict=True)]
    results = [r["results"] for r in ranks]
    out = {
        "local_ms": statistics.median(local),
        "combine_ms": statistics.median(comb),
        "total_ms": statistics.median(total),
        "total_ms_min": min(total),
        "local_ms_by_rank": [statistics.median(r["local_ms"]) for r in ranks],
        "combine_ms_by_rank": [statistics.median(r["combine_ms"]) for r in ranks],
        "result": results[0][0],
        "ranks_agree": all(res == results[0] for res in results),
        "exact": merged["float32_exact_possible"]
        and all(x == merged["golden"] for res in results for x in res),
        "partials_exact": all(r["partial_exact"] for r in ranks),
        "shards_unchanged": all(r["shard_unchanged"] for r in ranks),
    }
    out["ok"] = all(out[k] for k in ("ranks_agree", "exact", "partials_exact", "shards_unchanged"))
    return out
