"""One sum across K GPUs on NCCL (docs/several-gpus.md), the parent side: resolve() makes every
check before any process starts (DistributedUsageError, exit 2), launch() spawns K ranks
(distributed_combines.run_rank) and names a failing one (RankFailure, exit 1), study() runs every K.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import torch
import torch.distributed as dist

from harness.core import catalogue, device
from harness.core.sizes import size_label
from harness.report.records import DISTRIBUTED_SCHEMA
from harness.studies import distributed_combines as rank_side
from harness.studies.distributed_combines import COMBINES

SCALINGS = ("weak", "strong")
BACKENDS = ("nccl", "gloo")
DEFAULT_GPU_SIZE = 2**30
DEFAULT_CPU_SIZE = 2**12 + 5  # small (the interpreter), and not a multiple of any tile
# The largest shard the CPU path sums: the interpreter's limit, as for `run` / `check` on the CPU
# (harness.cli.run.INTERPRETED_MAX_N); a 2^30 shard would run for hours at gigabytes a rank.
CPU_MAX_N = 2**16
DEFAULT_GPU_VARIANT = "cuda/fastest"
DEFAULT_CPU_VARIANT = "triton/fastest"
SWEEP_SIZES = tuple(2**k for k in range(10, 29))  # nccl-tests-style sweep, 2^10..2^28 float32
NVLS_OFF = dict(zip(rank_side.WATCHED_ENV, ("0", "1", "1"), strict=True))
MEMORY_HEADROOM = 4 * 2**30  # checksum chunks, the plan's buffers, NCCL's own, the context
KEPT = ("combine_calls", "sweep_iters", "sweep_warmup", "timeout_s", "warmup")
METHOD = (
    "Per repetition: barrier, device drained, a short device-side gate, then CUDA events (the "
    "CPU path: perf_counter) around the local sum and around the combine on every rank; kept: "
    "the times of the rank whose local sum took longest (the others wait for it, so its combine "
    "is the collective alone), medians over repetitions. combine_loop and allreduce: nccl-tests' "
    "method (warm-up, then calls back to back between two events, per call; the slowest rank, "
    "and for allreduce us_mean the mean over ranks)."
)


class DistributedUsageError(ValueError):
    """Bad input, found before any process starts (the CLI exits 2)."""


class RankFailure(RuntimeError):
    """A rank raised or died; the message names the rank and its error (the CLI exits 1)."""


@dataclass(frozen=True)
class Request:
    """What the command line asks for; resolve() checks it and fills in the defaults, where it
    runs (on_gpu, backend) and each K's shard sizes."""

    gpus: tuple[int, ...]
    sizes: tuple[int, ...] | None = None
    scaling: str = "weak"
    variant: str | None = None
    combines: tuple[str, ...] = tuple(COMBINES)
    reps: int = 10
    warmup: int = 2
    seed: int = 0
    backend: str | None = None
    cpu: bool = False
    timeout_s: float = 60.0
    sweep: bool = False
    sweep_sizes: tuple[int, ...] = SWEEP_SIZES
    sweep_iters: int = 20
    sweep_warmup: int = 5
    combine_calls: int = 100
    on_gpu: bool = False
    shard_sizes: dict[int, tuple[int, ...]] = field(default_factory=dict)


def _refuse(cond: object, message: str) -> None:
    if cond:
        raise DistributedUsageError(message)


def resolve(req: Request) -> Request:
    """Every check, before any process starts; DistributedUsageError with one line otherwise."""
    bad = sorted({k for k in req.gpus if k < 1})
    _refuse(not req.gpus or bad, f"--gpus must be at least 1 (got {bad or 'none'})")
    _refuse(req.scaling not in SCALINGS, f"unknown --scaling {req.scaling!r}; valid: weak, strong")
    unknown = [c for c in req.combines if c not in COMBINES]
    _refuse(unknown or not req.combines, f"unknown combine {unknown}; valid: {', '.join(COMBINES)}")
    _refuse(
        req.backend not in (None, *BACKENDS),
        f"unknown --backend {req.backend!r}; valid: nccl, gloo",
    )
    _refuse(not dist.is_available(), "this PyTorch build has no torch.distributed")
    gpu, why = device.torch_gpu()
    on_gpu = not req.cpu and req.backend != "gloo" and gpu
    why = "--cpu was given" if req.cpu else why
    _refuse(req.backend == "gloo" and not req.cpu, "--backend gloo is the CPU path: add --cpu")
    _refuse(req.backend == "nccl" and not on_gpu, f"--backend nccl needs CUDA GPUs ({why})")
    _refuse(
        on_gpu and not dist.is_nccl_available(),
        "NCCL missing: this PyTorch build has no NCCL backend "
        "(torch.distributed.is_nccl_available() is False)",
    )
    present = torch.cuda.device_count() if on_gpu else 0
    too_many = f"--gpus {max(req.gpus)} asks for more GPUs than the {present} present"
    _refuse(on_gpu and max(req.gpus) > present, too_many)
    # --sweep alone measures the collectives only; otherwise a sum at the default size.
    default = () if req.sweep else ((DEFAULT_GPU_SIZE if on_gpu else DEFAULT_CPU_SIZE),)
    sizes = tuple(req.sizes or default)
    strong = req.scaling == "strong"
    for k in req.gpus:
        odd = ", ".join(size_label(n) for n in sizes if strong and n % k)
        _refuse(
            odd,
            f"strong scaling splits each size evenly over K ranks: {odd} does not divide by K={k}",
        )
    shard_sizes = {k: tuple(n // k if strong else n for n in sizes) for k in req.gpus}
    largest = max(max(s, default=0) for s in shard_sizes.values())
    where = "--cpu was given" if req.cpu else "no CUDA GPU"
    _refuse(
        not on_gpu and largest > CPU_MAX_N,
        f"a shard of {size_label(largest)} is above the CPU path's limit of 2^16 ({where}: gloo "
        "and Triton's interpreter); give --sizes up to 2^16, e.g. --sizes 4096",
    )
    variant = req.variant or (DEFAULT_GPU_VARIANT if on_gpu else DEFAULT_CPU_VARIANT)
    v = catalogue.BY_ID.get(variant)
    _refuse(v is None, f"unknown variant {variant!r} (reduce-ladder list)")
    _refuse(v.launch is None, f"{variant} is a peer (a library call), not a catalogue variant")
    _refuse("float32" not in v.dtypes, f"{variant} does not sum float32 (it supports {v.dtypes})")
    _refuse(
        not on_gpu and v.backend != "triton",
        f"{variant} needs a GPU; the CPU path runs Triton variants under its interpreter "
        f"(e.g. {DEFAULT_CPU_VARIANT})",
    )
    _refuse(
        largest > v.max_n,
        f"{variant} sums at most {v.max_n:,} elements per call; a shard of "
        f"{size_label(largest)} needs a 64-bit variant such as {DEFAULT_GPU_VARIANT}",
    )
    need = 4 * largest + MEMORY_HEADROOM
    for rank in range(max(req.gpus) if on_gpu else 0):
        has = torch.cuda.get_device_properties(rank).total_memory
        _refuse(
            need > has,
            f"a shard of {size_label(largest)} float32 on GPU {rank} needs {need / 2**30:.0f} "
            f"GiB with headroom; it has {has / 2**30:.0f} GiB",
        )
    backend = "nccl" if on_gpu else "gloo"
    return replace(
        req, on_gpu=on_gpu, backend=backend, variant=variant, sizes=sizes, shard_sizes=shard_sizes
    )


def launch(req: Request, k: int) -> list[dict]:
    """K ranks, every case; the merged records (rank 0's file). RankFailure if a rank fails."""
    import torch.multiprocessing as mp
    from torch.multiprocessing.spawn import ProcessException

    with tempfile.TemporaryDirectory(prefix="reduce-ladder-dist-") as tmp:
        # NVLink multicast off (the CPU path: the interpreter) where the caller left them unset,
        # in os.environ while the children start (spawn copies it), then as it was
        wanted = {**NVLS_OFF, **({} if req.on_gpu else {"TRITON_INTERPRET": "1"})}
        updates = {k: v for k, v in wanted.items() if k not in os.environ}
        os.environ.update(updates)
        try:
            args = (k, tmp, req)
            ctx = mp.start_processes(rank_side.run_rank, args, k, join=False, start_method="spawn")
        finally:
            for name in updates:
                os.environ.pop(name, None)
        try:
            while not ctx.join():
                pass
        except ProcessException as e:
            raise RankFailure(failure_message(e, Path(tmp))) from None
        records = json.loads(Path(tmp, rank_side.RESULT_FILE).read_text())
    return [{**r, "scaling": req.scaling} for r in records]


def failure_message(e: Exception, folder: Path) -> str:
    """'rank 1 failed: RuntimeError: ...': the first rank to fail (its error file is the oldest:
    the others' errors, if any, follow from it), else what torch.multiprocessing saw."""
    files = sorted(folder.glob("error-rank*.txt"), key=lambda p: p.stat().st_mtime_ns)
    if files:
        rank = files[0].stem.removeprefix("error-rank")
        more = f" ({len(files) - 1} other rank(s) failed after it)" if len(files) > 1 else ""
        return f"rank {rank} failed: {files[0].read_text().strip()}{more}"
    last = str(e).strip().splitlines()[-1] if str(e).strip() else type(e).__name__
    return f"rank {getattr(e, 'error_index', '?')} failed: {last}"


def study(req: Request, progress: Callable[[int, float], None] = lambda k, s: None) -> dict:
    """Every K of a resolved request in turn (progress(K, seconds) after each); the document."""
    runs = []
    for k in req.gpus:
        start = time.perf_counter()
        runs += launch(req, k)
        progress(k, time.perf_counter() - start)
    info = device.device_info()
    if req.on_gpu:
        info["gpus_present"] = torch.cuda.device_count()
        info["gpu_names"] = [torch.cuda.get_device_name(i) for i in range(info["gpus_present"])]
        with contextlib.suppress(Exception):
            info["nccl"] = ".".join(str(x) for x in torch.cuda.nccl.version())
    doc = dict(schema=DISTRIBUTED_SCHEMA, device=info, backend=req.backend, on_gpu=req.on_gpu)
    doc |= dict(variant=req.variant, scaling=req.scaling, gpus=list(req.gpus))
    doc |= dict(sizes=list(req.sizes), seed=req.seed, reps=req.reps)
    doc["child_env"] = next(r["env_by_rank"][0] for r in runs if r["kind"] == "env")
    return doc | dict(method=METHOD, config={k: getattr(req, k) for k in KEPT}, runs=runs)
