"""`reduce-ladder distributed` on the CPU: the real launcher with gloo and 2 processes, local sums
through the Triton interpreter at small n (the CI path). Spawning costs seconds, so one
launch checks everything a successful run must show, and one more the failure path; the bad
input is refused before any process starts (launch is replaced by a tripwire there)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
import torch

from harness.cli import run as run_cli
from harness.cli.main import main
from harness.report import distributed_tables
from harness.report.records import DISTRIBUTED_SCHEMA, ROWS_SCHEMA
from harness.studies import distributed, distributed_combines

SIZES = (4101, 65_521)  # neither a multiple of a tile; the second spans several programs
SEED = 7


@pytest.fixture(scope="module")
def gloo_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict]:
    out = tmp_path_factory.mktemp("dist") / "run.json"
    argv = ["distributed", "--cpu", "--backend", "gloo", "--gpus", "2", "--seed", str(SEED)]
    argv += ["--sizes", ",".join(map(str, SIZES)), "--reps", "2", "--warmup", "1"]
    argv += ["--sweep-sizes", "2^10", "--combine-calls", "4", "--json", str(out)]
    code = main(argv)
    return code, json.loads(out.read_text())


def _sums(doc: dict) -> list[dict]:
    return [r for r in doc["runs"] if r["kind"] == "sum"]


@pytest.mark.interpreter  # the gloo CPU path; NCCL: tests/test_gpu_distributed.py
def test_gloo_run_exact_on_every_rank(gloo_run: tuple[int, dict]) -> None:
    code, doc = gloo_run
    assert code == 0
    assert doc["schema"] == DISTRIBUTED_SCHEMA and doc["backend"] == "gloo"
    sums = _sums(doc)
    assert {(r["n_per_rank"], r["combine"]) for r in sums} == {
        (n, c) for n in SIZES for c in ("all_reduce", "all_gather")
    }
    for r in sums:
        # The golden again, here: both ranks' shards rebuilt from their seeds, summed in float64.
        shards = [
            distributed_combines.make_shard(r["n_per_rank"], SEED, k, torch.device("cpu"))
            for k in range(2)
        ]
        assert not torch.equal(shards[0], shards[1])  # seed + rank: different data per rank
        assert set(torch.cat(shards).unique().tolist()) == {-1.0, 0.0, 1.0}
        golden = sum(float(s.sum(dtype=torch.float64)) for s in shards)
        assert r["golden"] == golden and r["result"] == golden
        assert r["exact"] and r["ranks_agree"] and r["partials_exact"] and r["shards_unchanged"]
        assert r["n_total"] == 2 * r["n_per_rank"] and r["gpus"] == 2
        assert len(r["local_ms_by_rank"]) == 2 and r["total_ms"] > 0


@pytest.mark.interpreter  # the gloo CPU path; NCCL: tests/test_gpu_distributed.py
def test_gloo_run_every_rank_saw_multicast_off(gloo_run: tuple[int, dict]) -> None:
    env = next(r for r in gloo_run[1]["runs"] if r["kind"] == "env")
    assert env["device_by_rank"] == ["cpu", "cpu"]
    for seen in env["env_by_rank"]:
        for name, value in distributed.NVLS_OFF.items():
            assert seen[name] == os.environ.get(name, value)
        assert seen["TRITON_INTERPRET"] == "1"


@pytest.mark.interpreter  # the gloo CPU path; NCCL: tests/test_gpu_distributed.py
def test_gloo_run_combine_loop_and_sweep(gloo_run: tuple[int, dict]) -> None:
    runs = gloo_run[1]["runs"]
    loops = [r for r in runs if r["kind"] == "combine_loop"]
    assert {r["combine"] for r in loops} == {"all_reduce", "all_gather"}
    assert all(r["ok"] and len(r["us_per_call_by_rank"]) == 2 for r in loops)
    (point,) = [r for r in runs if r["kind"] == "allreduce"]
    assert point["ok"] and point["bytes"] == 4 * 2**10 and point["us_max"] >= point["us_mean"]


@pytest.mark.interpreter  # the gloo CPU path; NCCL: tests/test_gpu_distributed.py
def test_render_the_gloo_run(gloo_run: tuple[int, dict], tmp_path: Path) -> None:
    src = tmp_path / "run.json"
    src.write_text(json.dumps(gloo_run[1]))
    assert main(["distributed", "--render", str(src), "--out", str(tmp_path)]) == 0
    table = (tmp_path / distributed_tables.TABLE_FILE).read_text()
    assert "all_gather" in table and "busbw" in table


def test_a_failing_rank_ends_all_ranks(monkeypatch, capsys, tmp_path: Path) -> None:
    monkeypatch.setenv(distributed_combines.FAIL_RANK_ENV, "1")
    start = time.monotonic()
    out = tmp_path / "never.json"
    code = main(
        [
            "distributed",
            "--cpu",
            "--gpus",
            "2",
            "--sizes",
            "64",
            "--timeout",
            "20",
            "--json",
            str(out),
        ]
    )
    assert code == 1
    assert time.monotonic() - start < 60  # no hang: rank 0 did not wait out anything
    err = capsys.readouterr().err
    assert "rank 1 failed: RuntimeError: injected failure on rank 1" in err
    assert not out.exists()


# -- bad input: one line, exit 2, no process started --------------------------------------------


@pytest.fixture
def no_launch(monkeypatch) -> None:
    def tripwire(*_a, **_k):
        raise AssertionError("a process was started for bad input")

    monkeypatch.setattr(distributed, "launch", tripwire)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--gpus", "0"], "--gpus must be at least 1"),
        (["--gpus", "two"], "--gpus takes integers"),
        (["--gpus", "2", "--scaling", "strong", "--sizes", "1001"], "does not divide by K=2"),
        (["--gpus", "2", "--variant", "cuda/fastest"], "needs a GPU"),
        (["--gpus", "2", "--variant", "cuda/fastestt"], "did you mean cuda/fastest"),
        (["--gpus", "2", "--variant", "peer/torch.sum"], "is a peer"),
        (["--gpus", "2", "--backend", "nccl"], "--backend nccl needs CUDA GPUs"),
        (["--gpus", "2", "--combines", "tree"], "unknown combine"),
        ([], "--gpus K is needed"),
        (["--render", "x.json"], "--render needs --out"),
    ],
)
def test_bad_input_exits_2_before_any_process(no_launch, capsys, argv, message) -> None:
    assert main(["distributed", "--cpu", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def _pretend_gpus(monkeypatch, count: int, nccl: bool) -> None:
    monkeypatch.setattr(distributed.device, "torch_gpu", lambda: (True, "pretend"))
    monkeypatch.setattr(torch.cuda, "device_count", lambda: count)
    monkeypatch.setattr(torch.distributed, "is_nccl_available", lambda: nccl)


def test_more_gpus_than_present_exits_2(no_launch, monkeypatch, capsys) -> None:
    _pretend_gpus(monkeypatch, 2, nccl=True)
    assert main(["distributed", "--gpus", "1,4", "--sizes", "2^20"]) == 2
    assert "--gpus 4 asks for more GPUs than the 2 present" in capsys.readouterr().err


def test_nccl_missing_exits_2(no_launch, monkeypatch, capsys) -> None:
    _pretend_gpus(monkeypatch, 4, nccl=False)
    assert main(["distributed", "--gpus", "2", "--sizes", "2^20"]) == 2
    assert "NCCL missing" in capsys.readouterr().err


def test_render_refuses_another_schema(tmp_path: Path, capsys) -> None:
    other = tmp_path / "bench.json"
    other.write_text(
        json.dumps({"schema": ROWS_SCHEMA, "suite": "ladder", "device": {}, "rows": []})
    )
    assert main(["distributed", "--render", str(other), "--out", str(tmp_path)]) == 2
    assert f"not a {DISTRIBUTED_SCHEMA} document" in capsys.readouterr().err


def _sum_run(scaling: str, k: int, n_per_rank: int, total_ms: float) -> dict:
    return {
        "kind": "sum",
        "scaling": scaling,
        "gpus": k,
        "n_per_rank": n_per_rank,
        "n_total": k * n_per_rank,
        "variant": "cuda/fastest",
        "combine": "all_reduce",
        "local_ms": 0.9 * total_ms,
        "combine_ms": 0.1 * total_ms,
        "total_ms": total_ms,
        "ok": True,
    }


def test_efficiency_speedup_and_bus_bandwidth_follow_their_definitions() -> None:
    runs = [
        _sum_run("weak", 1, 2**30, 1.0),
        _sum_run("weak", 4, 2**30, 1.25),
        _sum_run("strong", 1, 2**32, 4.0),
        _sum_run("strong", 4, 2**30, 1.25),
        {
            "kind": "allreduce",
            "gpus": 4,
            "n": 2**20,
            "bytes": 2**22,
            "us_mean": 100.0,
            "us_max": 110.0,
            "ok": True,
        },
    ]
    rows = {(s["scaling"], s["gpus"]): s for s in distributed_tables.sum_rows(runs)}
    assert rows["weak", 4]["efficiency"] == 1.0 / 1.25  # t1 / tK
    assert rows["strong", 4]["speedup"] == 4.0 / 1.25  # t1 / tK
    assert rows["strong", 4]["efficiency"] == 4.0 / (4 * 1.25)  # t1 / (K tK)
    assert rows["weak", 4]["agg_gbps"] == 4 * 4 * 2**30 / (1.25 * 1e6)
    (point,) = distributed_tables.sweep_rows(runs)
    assert point["algbw"] == 2**22 / 100e3 and point["busbw"] == point["algbw"] * 2 * 3 / 4


def test_committed_multi_gpu_reports_regenerate(tmp_path: Path) -> None:
    """Every committed results/*-x*/distributed.json renders to its committed distributed.md."""
    root = Path(__file__).resolve().parents[1] / "results"
    docs = sorted(root.glob("*-x*/distributed.json"))
    if not docs:
        pytest.skip("no multi-GPU run committed yet (results/<device>-xK/distributed.json)")
    for doc in docs:
        out = tmp_path / doc.parent.name
        out.mkdir()
        assert main(["distributed", "--render", str(doc), "--out", str(out)]) == 0
        committed = doc.parent / "report" / "distributed.md"
        assert (out / "distributed.md").read_text() == committed.read_text(), doc


# -- the CPU path: sizes it can do, and progress per K ------------------------------------------


def test_readme_gpu_example_is_refused_on_the_cpu_before_any_process(no_launch, capsys) -> None:
    assert main(["distributed", "--cpu", "--gpus", "1,2,4", "--sizes", "2^30"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "2^30 is above the CPU path's limit of 2^16" in err and "--sizes" in err
    assert distributed.CPU_MAX_N == run_cli.INTERPRETED_MAX_N


def test_strong_scaling_checks_the_shard_not_the_total() -> None:
    req = distributed.Request(gpus=(4,), sizes=(2**18,), scaling="strong", cpu=True)
    assert distributed.resolve(req).shard_sizes == {4: (2**16,)}


def test_progress_is_printed_per_k_on_stderr(monkeypatch, capsys) -> None:
    def fake_launch(resolved, k):
        return [{"kind": "env", "env_by_rank": [{}]}] if k == 1 else []

    monkeypatch.setattr(distributed, "launch", fake_launch)
    monkeypatch.setattr(distributed_tables, "markdown", lambda doc: "TABLES")
    assert main(["distributed", "--cpu", "--gpus", "1,2", "--sizes", "1000"]) == 0
    captured = capsys.readouterr()
    assert "K = 1: done in" in captured.err and "(2 of 2)" in captured.err
    assert captured.out.strip() == "TABLES"


@pytest.mark.parametrize(
    "change, message",
    [
        ({"scaling": "Strong"}, "unknown --scaling 'Strong'"),
        ({"backend": "mpi"}, "unknown --backend"),
    ],
)
def test_resolve_refuses_what_the_command_line_would(change, message) -> None:
    """A Python caller's Request has no argparse choices in front of it: resolve checks them."""
    req = distributed.Request(gpus=(1,), cpu=True, **change)
    with pytest.raises(distributed.DistributedUsageError, match=message):
        distributed.resolve(req)
