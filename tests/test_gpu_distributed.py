"""`reduce-ladder distributed` on several GPUs with NCCL. Skipped, with the reason,
on a machine with fewer than 2 GPUs. Each launch spawns K processes (seconds each), so every
launch checks several things: the sums exact on every rank for both combines, the golden rebuilt
here from the seeds, every rank on its own GPU with NVLink multicast off, the sweep checked."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
import torch

from harness.cli.main import main
from harness.studies import distributed, distributed_combines

pytestmark = pytest.mark.gpu

SEED = 11


@pytest.fixture(scope="module")
def gpus() -> int:
    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if count < 2:
        pytest.skip(f"needs at least 2 GPUs for NCCL across ranks; this machine has {count}")
    return count


def _golden(n: int, k: int) -> float:
    """Every rank's shard rebuilt here, on its own GPU, from seed + rank; summed in float64."""
    total = 0.0
    for rank in range(k):
        shard = distributed_combines.make_shard(n, SEED, rank, torch.device("cuda", rank))
        total += float(shard.sum(dtype=torch.float64))
        del shard
    return total


def _run(tmp_path: Path, argv: list[str]) -> tuple[int, dict]:
    out = tmp_path / "run.json"
    code = main(["distributed", "--seed", str(SEED), "--json", str(out), *argv])
    return code, json.loads(out.read_text()) if out.exists() else {}


def test_nccl_sums_exact_on_every_rank(gpus: int, tmp_path: Path) -> None:
    k = min(gpus, 4)
    sizes = (2**20 + 3, 2**24)
    code, doc = _run(
        tmp_path,
        [
            "--gpus",
            str(k),
            "--sizes",
            *map(str, sizes),
            *["--reps", "3", "--combine-calls", "20"],
            *["--sweep-sizes", "2^10", "2^20"],
        ],
    )
    assert code == 0 and doc["backend"] == "nccl"
    sums = [r for r in doc["runs"] if r["kind"] == "sum"]
    assert {(r["n_per_rank"], r["combine"]) for r in sums} == {
        (n, c) for n in sizes for c in ("all_reduce", "all_gather")
    }
    for r in sums:
        assert r["golden"] == _golden(r["n_per_rank"], k) == r["result"]
        assert r["exact"] and r["ranks_agree"] and r["partials_exact"] and r["shards_unchanged"]
        assert r["local_ms"] > 0 and r["combine_ms"] > 0
    env = next(r for r in doc["runs"] if r["kind"] == "env")
    assert env["device_by_rank"] == [f"cuda:{i}" for i in range(k)]
    for seen in env["env_by_rank"]:
        for name, value in distributed.NVLS_OFF.items():
            assert seen[name] == os.environ.get(name, value)
    sweep = [r for r in doc["runs"] if r["kind"] == "allreduce"]
    assert [r["n"] for r in sweep] == [2**10, 2**20] and all(r["ok"] for r in sweep)
    loops = [r for r in doc["runs"] if r["kind"] == "combine_loop"]
    assert len(loops) == 2 and all(r["ok"] and r["us_per_call"] > 0 for r in loops)


def test_a_ladder_stage_as_the_local_sum(gpus: int, tmp_path: Path) -> None:
    """Any catalogue variant sums the shards: here a multi-pass ladder stage's Triton twin (JIT
    compiled in every rank), under strong scaling (the total split over 2 ranks)."""
    n_total = 2 * (2**20 + 7)
    vid = "triton/tile-256"
    code, doc = _run(
        tmp_path,
        [
            "--gpus",
            "2",
            "--scaling",
            "strong",
            "--sizes",
            str(n_total),
            "--variant",
            vid,
            *["--reps", "2", "--combines", "all_gather", "--combine-calls", "0"],
        ],
    )
    assert code == 0
    (r,) = [r for r in doc["runs"] if r["kind"] == "sum"]
    assert r["variant"] == vid and r["n_per_rank"] == n_total // 2
    assert r["ok"] and r["result"] == _golden(n_total // 2, 2)


def test_a_failing_rank_ends_every_rank(gpus: int, tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv(distributed_combines.FAIL_RANK_ENV, "1")
    start = time.monotonic()
    code, doc = _run(tmp_path, ["--gpus", "2", "--sizes", "2^20", "--timeout", "30"])
    assert code == 1 and doc == {}
    assert time.monotonic() - start < 120  # ended by the launcher, not by a hang
    assert "rank 1 failed: RuntimeError: injected failure on rank 1" in capsys.readouterr().err


def test_more_gpus_than_present_is_refused(gpus: int, capsys) -> None:
    assert main(["distributed", "--gpus", str(gpus + 1), "--sizes", "2^20"]) == 2
    assert f"more GPUs than the {gpus} present" in capsys.readouterr().err
