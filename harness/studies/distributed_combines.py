"""One rank of `reduce-ladder distributed` (harness.studies.distributed spawns K of them):
its seeded shard, the local sum, the combines (COMBINES), the back-to-back loops, each case's
record from every rank's measurements (docs/several-gpus.md). Rank 0 writes RESULT_FILE; a rank
that raises writes its one line to ERROR_FILE first. Timed with timing.Clock's marks, every rank
between barriers and a device gate, so that the slowest rank's local sum and combine can be kept.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import statistics
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist

from harness.core import catalogue, timing
from harness.launch.plan import make_plan
from harness.report.distributed_tables import SUM_CHECKS

FAIL_RANK_ENV = "REDUCE_LADDER_DIST_FAIL_RANK"  # test hook: this rank raises after joining
RESULT_FILE = "result.json"
ERROR_FILE = "error-rank{rank}.txt"
RENDEZVOUS_FILE = "rendezvous"
CHUNK = 2**28  # elements per generation / checksum chunk (1 GiB of float32)
WEIGHT_PERIOD = 251  # checksum weights 1..251 by position: a moved element changes the sum
WATCHED_ENV = ("NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST", "NVSHMEM_DISABLE_NVLS")
FLOAT32_EXACT = 2**24  # integers below this are exact in float32, and so are sums staying below
GATE_S = 5e-4  # device-side wait before each timed repetition (outlasts queuing two calls)
GATE_PER_CALL_S = 1e-4  # and per call of a back-to-back loop (a combine queues in < 100 us)


@dataclass(frozen=True)
class Rank:
    """One rank: its index, K, the resolved distributed.Request, its device and clock."""

    rank: int
    k: int
    req: Any
    dev: torch.device
    clock: timing.Clock

    def align(self, gate_s: float) -> None:
        """Every rank here and its device idle; then, on the GPU, the device-side gate."""
        if self.req.on_gpu:
            dist.barrier(device_ids=[self.dev.index])
            torch.cuda.synchronize(self.dev)
            timing.gate_device(gate_s)
        else:
            dist.barrier()

    def everyone(self, mine: Any) -> list:
        """Every rank's `mine`, in rank order (on every rank)."""
        every: list = [None] * self.k
        dist.all_gather_object(every, mine)
        return every


def run_rank(rank: int, k: int, out_dir: str, req: Any) -> None:
    """torch.multiprocessing's entry point. A failure's one line is written BEFORE the process
    group goes (tearing it down fails the other ranks, whose errors must come after: the parent
    names the oldest file); the group is torn down on every path."""
    try:
        records = _measure(rank, k, out_dir, req)
        if rank == 0:
            Path(out_dir, RESULT_FILE).write_text(json.dumps(records))
        dist.barrier()
    except BaseException as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else ""
        Path(out_dir, ERROR_FILE.format(rank=rank)).write_text(f"{type(e).__name__}: {first}")
        raise
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()


def _measure(rank: int, k: int, out_dir: str, req: Any) -> list[dict]:
    """Join the group, then every case of the request; the records (the same on every rank)."""
    warnings.filterwarnings("ignore", message=".*all_gather_into_tensor.*", category=FutureWarning)
    if req.on_gpu:
        torch.cuda.set_device(rank)
        # CUDA variants launch on CuPy's current device (without CuPy only Triton's run)
        with contextlib.suppress(ImportError):
            import cupy

            cupy.cuda.Device(rank).use()
    else:
        torch.set_num_threads(1)  # K ranks share the host's cores
    dev = torch.device("cuda", rank) if req.on_gpu else torch.device("cpu")
    dist.init_process_group(
        req.backend,
        init_method=Path(out_dir, RENDEZVOUS_FILE).as_uri(),
        rank=rank,
        world_size=k,
        timeout=datetime.timedelta(seconds=req.timeout_s),
        **({"device_id": dev} if req.on_gpu else {}),
    )
    if os.environ.get(FAIL_RANK_ENV) == str(rank):
        raise RuntimeError(f"injected failure on rank {rank} ({FAIL_RANK_ENV}={rank})")
    me = Rank(rank, k, req, dev, timing.Clock(req.on_gpu, dev))
    env = {name: os.environ.get(name) for name in (*WATCHED_ENV, "TRITON_INTERPRET")}
    every = dict(env_by_rank=me.everyone(env), device_by_rank=me.everyone(str(dev)))
    records = [{"kind": "env", "gpus": k, **every}]
    for n in req.shard_sizes[k]:
        records += sum_case(me, n)
        torch.cuda.empty_cache()  # the shard's memory back to the device (a no-op on the CPU)
    if req.combine_calls:
        records += [loop(me, "combine_loop", 1, req.combine_calls, c) for c in req.combines]
    if req.sweep and k > 1:  # the all_reduce sweep (nccl-tests style)
        records += [loop(me, "allreduce", n, req.sweep_iters) for n in req.sweep_sizes]
    return records


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
    weights = torch.arange(min(CHUNK, shard.numel()), device=shard.device) % WEIGHT_PERIOD + 1
    weights = weights.to(torch.float32)
    total = weighted = 0.0
    for start in range(0, shard.numel(), CHUNK):
        chunk = shard[start : start + CHUNK]
        total += float(chunk.sum(dtype=torch.float64))
        weighted += float((chunk * weights[: chunk.numel()]).sum(dtype=torch.float64))
    return total, weighted


def all_reduce(partial: torch.Tensor, gathered: torch.Tensor) -> torch.Tensor:
    """all_reduce(SUM) of the partial in place (the plan's output, poisoned with it)."""
    value = partial.reshape(-1)[:1]
    dist.all_reduce(value, op=dist.ReduceOp.SUM)
    return value[0]


def all_gather(partial: torch.Tensor, gathered: torch.Tensor) -> torch.Tensor:
    """all_gather of the K partials into `gathered` (poisoned), added in rank order in float64."""
    dist.all_gather_into_tensor(gathered, partial.reshape(-1)[:1])
    as64 = gathered.to(torch.float64)
    return sum(as64[1:], as64[0]).to(torch.float32)  # rank order, one addition at a time


COMBINES = {"all_reduce": all_reduce, "all_gather": all_gather}


def sum_case(me: Rank, n: int) -> list[dict]:
    shard = make_shard(n, me.req.seed, me.rank, me.dev)
    before = checksum(shard)
    goldens = me.everyone(before[0])  # every rank's exact shard sum, added in rank order
    golden = sum(goldens)
    exact_possible = max(map(abs, [*goldens, golden])) < FLOAT32_EXACT
    case = dict(kind="sum", gpus=me.k, n_per_rank=n, n_total=n * me.k, variant=me.req.variant)
    plan = make_plan(catalogue.get(me.req.variant), shard)
    case |= dict(reps=me.req.reps, golden=golden, float32_exact_possible=exact_possible)
    return [
        merge_sum(case | {"combine": name}, me.everyone(timed_sum(me, plan, name, before)))
        for name in me.req.combines
    ]


def timed_sum(me: Rank, plan: Any, name: str, before: tuple[float, float]) -> dict:
    """An untimed check, warm-up, then per repetition (outputs poisoned, every rank aligned) the
    marks around the local sum and around the combine: this rank's results, times and checks
    (the partial against the shard's exact sum, the shard's checksum against `before`)."""
    combine, gathered = COMBINES[name], torch.empty(me.k, dtype=torch.float32, device=me.dev)

    def fresh() -> None:  # the input as it was, every output poisoned
        plan.restore()
        plan.poison()
        gathered.fill_(float("nan"))

    fresh()
    partial = plan.run(restore=False)
    mine = {"partial_exact": float(partial.reshape(-1)[0]) == before[0]}
    mine |= {"results": [float(combine(partial, gathered))], "local_ms": [], "combine_ms": []}
    for _ in range(me.req.warmup):
        combine(plan.run(), gathered)
    for _ in range(me.req.reps):
        fresh()
        me.align(GATE_S)  # every launch queued before the device reaches the gate
        t0 = me.clock.mark()
        partial = plan.run(restore=False)
        t1 = me.clock.mark()
        result = combine(partial, gathered)
        t2 = me.clock.mark()
        mine["local_ms"].append(me.clock.ms(t0, t1))
        mine["combine_ms"].append(me.clock.ms(t1, t2))
        mine["results"].append(float(result))
    return mine | {"shard_unchanged": checksum(plan.x) == before}  # the plan's input: the shard


def loop(me: Rank, kind: str, n: int, calls: int, combine: str = "all_reduce") -> dict:
    """nccl-tests' method: a check on rank-valued data, warm-up, then `calls` calls back to back
    between two marks, us per call. kind "combine_loop": the combine of a 1-element partial (one
    call's cost without a local sum in front); "allreduce": all_reduce(SUM) of n float32 in place
    (a sweep point)."""
    buf = torch.full((n,), me.rank + 1.0, dtype=torch.float32, device=me.dev)
    gathered = torch.full((me.k,), float("nan"), device=me.dev)

    def call() -> torch.Tensor:
        if kind == "combine_loop":
            return COMBINES[combine](buf, gathered)
        dist.all_reduce(buf)
        return buf

    got = call()
    ok = float(got.min()) == me.k * (me.k + 1) / 2 == float(got.max())
    buf.zero_()  # all_reduce in place: zeros stay zeros over the loop
    for _ in range(me.req.sweep_warmup):
        call()
    me.align(GATE_S + GATE_PER_CALL_S * calls)
    start = me.clock.mark()
    for _ in range(calls):
        call()
    us = me.clock.ms(start, me.clock.mark()) * 1e3 / calls
    every = me.everyone((us, ok))
    us_all, head = [e[0] for e in every], {"kind": kind, "gpus": me.k}
    if kind == "combine_loop":
        what = {"combine": combine, "calls": calls, "us_per_call": max(us_all)}
        what["us_per_call_by_rank"] = us_all
    else:
        what = {"n": n, "bytes": 4 * n, "iters": calls, "us_mean": statistics.fmean(us_all)}
        what |= {"us_max": max(us_all), "us_by_rank": us_all}
    return head | what | {"ok": all(e[1] for e in every)}


def merge_sum(case: dict, ranks: list[dict]) -> dict:
    """The record of a sum case from every rank's timed_sum. Per repetition, the slowest rank is
    the one whose local sum took longest: its local time is the critical path, and since the
    others wait for it, its combine is the collective alone. The medians over repetitions of
    that rank's local, combine and total are reported."""
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
        "exact": case["float32_exact_possible"]
        and all(x == case["golden"] for res in results for x in res),
        "partials_exact": all(r["partial_exact"] for r in ranks),
        "shards_unchanged": all(r["shard_unchanged"] for r in ranks),
    }
    return case | out | {"ok": all(out[k] for k in SUM_CHECKS.values())}
