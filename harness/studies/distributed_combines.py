"""The cross-rank parts of `reduce-ladder distributed`: the two combines, the clock, the scalar
combine loop, the all_reduce sweep, and the merge of every rank's record into one.

Combines (COMBINES), each given the rank's partial (a 1-element tensor) and returning the sum:
- all_reduce: NCCL's (or gloo's) all_reduce(SUM) of the partial, in place. The order in which
  the K partials are added is the library's (ring, tree, ...), so for general data the last bits
  may depend on it; for this study's integer data every order gives the same exact sum.
- all_gather: all_gather of the K partials, then added in rank order on every rank, in float64:
  every rank adds the same K values in the same order, so all hold the same bits whatever
  algorithm the library picks, and float64 (53 bits) holds the sum of K float32 partials with
  at most one rounding, at the final cast back to float32, for any spread of exponents up to 29
  bits; for the integer data here it is exact.

Timing (Clock): CUDA events on the GPU, perf_counter on the CPU path. Before each repetition the
ranks align: a barrier, then the device drained, then (on the GPU) a short device-side gate so
the local sum and the combine are queued before the device reaches them.
"""

from __future__ import annotations

import statistics
import time

import torch
import torch.distributed as dist

from harness.core.timing import gate_device

GATE_S = 5e-4  # device-side wait before each timed repetition (outlasts queuing two calls)
GATE_PER_CALL_S = 1e-4  # and per call of a back-to-back loop (a combine queues in < 100 us)


class Clock:
    """CUDA events around device work on the GPU; the host's perf_counter on the CPU path (gloo
    collectives and interpreted kernels there finish before the call returns)."""

    def __init__(self, on_gpu: bool, dev: torch.device) -> None:
        self.on_gpu = on_gpu
        self.dev = dev

    def mark(self) -> object:
        if not self.on_gpu:
            return time.perf_counter()
        event = torch.cuda.Event(enable_timing=True)
        event.record()
        return event

    def sync(self) -> None:
        if self.on_gpu:
            torch.cuda.synchronize(self.dev)

    def ms(self, start: object, end: object) -> float:
        if self.on_gpu:
            return start.elapsed_time(end)  # type: ignore[attr-defined]
        return (end - start) * 1e3  # type: ignore[operator]


def align(cfg, dev: torch.device) -> None:
    """Every rank here, and its device idle, before a timed repetition starts."""
    if cfg.on_gpu:
        dist.barrier(device_ids=[dev.index])
        torch.cuda.synchronize(dev)
    else:
        dist.barrier()


class AllReduce:
    """all_reduce(SUM) of the partial, in place: its buffer (the plan's output, poisoned by the
    plan before each local sum) holds the sum after."""

    def __init__(self, dev: torch.device, world_size: int) -> None:
        pass

    def poison(self) -> None:
        """Nothing of its own: the result lands in the plan's output, poisoned with it."""

    def __call__(self, partial: torch.Tensor) -> torch.Tensor:
        value = partial.reshape(-1)[:1]
        dist.all_reduce(value, op=dist.ReduceOp.SUM)
        return value[0]


class AllGatherRankOrder:
    """all_gather of the K partials into a poisoned buffer, added in rank order in float64."""

    def __init__(self, dev: torch.device, world_size: int) -> None:
        self.gathered = torch.empty(world_size, dtype=torch.float32, device=dev)

    def poison(self) -> None:
        self.gathered.fill_(float("nan"))

    def __call__(self, partial: torch.Tensor) -> torch.Tensor:
        dist.all_gather_into_tensor(self.gathered, partial.reshape(-1)[:1])
        as64 = self.gathered.to(torch.float64)
        total = as64[0]
        for k in range(1, as64.numel()):
            total = total + as64[k]  # rank order, one addition at a time
        return total.to(torch.float32)


COMBINES = {"all_reduce": AllReduce, "all_gather": AllGatherRankOrder}


def all_gather_floats(value: float, dev: torch.device, world_size: int) -> list[float]:
    """One float64 from every rank, in rank order."""
    mine = torch.tensor([value], dtype=torch.float64, device=dev)
    every = torch.empty(world_size, dtype=torch.float64, device=dev)
    dist.all_gather_into_tensor(every, mine)
    return every.tolist()


def combine_loop(cfg, dev: torch.device, clock: Clock, name: str) -> dict:
    """`cfg.combine_calls` combines of a 1-element partial back to back between two events: the
    cost of one call without a local sum in front (nccl-tests' way: a loop over the call)."""
    rank = dist.get_rank()
    combine = COMBINES[name](dev, cfg.world_size)
    partial = torch.zeros(1, dtype=torch.float32, device=dev)
    combine.poison()
    partial.fill_(rank + 1.0)
    ok = float(combine(partial)) == cfg.world_size * (cfg.world_size + 1) / 2
    for _ in range(cfg.sweep_warmup):
        partial.zero_()
        combine(partial)
    partial.zero_()  # all_reduce in place: zeros stay zeros over the loop
    align(cfg, dev)
    if cfg.on_gpu:
        gate_device(GATE_S + GATE_PER_CALL_S * cfg.combine_calls)
    start = clock.mark()
    for _ in range(cfg.combine_calls):
        combine(partial)
    end = clock.mark()
    clock.sync()
    return {
        "kind": "combine_loop",
        "gpus": cfg.world_size,
        "combine": name,
        "calls": cfg.combine_calls,
        "rank": {"us_per_call": clock.ms(start, end) * 1e3 / cfg.combine_calls, "correct": ok},
    }


def sweep_point(cfg, dev: torch.device, clock: Clock, n: int) -> dict:
    """all_reduce(SUM) of n float32 in place, `sweep_iters` calls back to back between events
    after `sweep_warmup` (nccl-tests' method); first checked once on rank-valued data."""
    rank, k = dist.get_rank(), cfg.world_size
    buf = torch.full((n,), rank + 1.0, dtype=torch.float32, device=dev)
    dist.all_reduce(buf)
    expected = k * (k + 1) / 2
    ok = float(buf.min()) == expected and float(buf.max()) == expected
    buf.zero_()
    for _ in range(cfg.sweep_warmup):
        dist.all_reduce(buf)
    align(cfg, dev)
    if cfg.on_gpu:
        gate_device(GATE_S + GATE_PER_CALL_S * cfg.sweep_iters)
    start = clock.mark()
    for _ in range(cfg.sweep_iters):
        dist.all_reduce(buf)
    end = clock.mark()
    clock.sync()
    del buf
    return {
        "kind": "allreduce",
        "gpus": k,
        "n": n,
        "bytes": 4 * n,
        "iters": cfg.sweep_iters,
        "rank": {"us": clock.ms(start, end) * 1e3 / cfg.sweep_iters, "correct": ok},
    }


# -- every rank's record into one ---------------------------------------------------------------


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
        merged["ok"] = all(r["correct"] for r in ranks)
    else:  # allreduce sweep point
        us = [r["us"] for r in ranks]
        merged.update(us_mean=statistics.fmean(us), us_max=max(us), us_by_rank=us)
        merged["ok"] = all(r["correct"] for r in ranks)
    return merged


def _merge_sum(merged: dict, ranks: list[dict]) -> dict:
    """Per repetition, the slowest rank is the one whose local sum took longest: its local time
    is the critical path, and since the others are waiting for it, its combine is the collective
    alone. The medians over repetitions of that rank's local, combine and total are reported."""
    reps = len(ranks[0]["local_ms"])
    local, comb = [], []
    for i in range(reps):
        slowest = max(range(len(ranks)), key=lambda r: ranks[r]["local_ms"][i])
        local.append(ranks[slowest]["local_ms"][i])
        comb.append(ranks[slowest]["combine_ms"][i])
    total = [a + b for a, b in zip(local, comb, strict=True)]
    results = [r["results"] for r in ranks]
    agree = all(res == results[0] for res in results)
    exact = merged["float32_exact_possible"] and all(
        x == merged["golden"] for res in results for x in res
    )
    partials_exact = all(r["partial_exact"] for r in ranks)
    unchanged = all(r["shard_unchanged"] for r in ranks)
    return {
        "local_ms": statistics.median(local),
        "combine_ms": statistics.median(comb),
        "total_ms": statistics.median(total),
        "total_ms_min": min(total),
        "local_ms_by_rank": [statistics.median(r["local_ms"]) for r in ranks],
        "combine_ms_by_rank": [statistics.median(r["combine_ms"]) for r in ranks],
        "result": results[0][0],
        "ranks_agree": agree,
        "exact": exact,
        "partials_exact": partials_exact,
        "shards_unchanged": unchanged,
        "ok": agree and exact and partials_exact and unchanged,
    }
