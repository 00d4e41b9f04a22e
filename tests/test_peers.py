"""The peers: catalogue records of their own, how they are checked (on the CPU here: torch.sum
and the copy; CuPy's need a GPU), their byte counts, and the benchmark suite's selection."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from harness.check import verify
from harness.core import catalogue
from harness.launch import peers

ROOT = Path(__file__).resolve().parents[1]


def test_peers_are_catalogue_records():
    got = {v.id: v for v in catalogue.select(backend="peer")}
    assert set(got) == set(peers.PEER_IDS)
    for v in got.values():
        assert v.launch is None and v.stage == "peer" and not v.wrong
        assert {"float32", "int32"} <= set(v.dtypes)
    assert set(got) <= {v.id for v in catalogue.select(dtype="int32")}


def test_torch_sum_of_int32_is_compared_unwrapped():
    x = torch.full((4,), 2**30, dtype=torch.int32)  # exact sum 2^32: wraps to 0 in int32
    r = verify.check_variant(catalogue.get("peer/torch.sum"), x)
    assert r.ok and r.value == 2**32 and r.golden == 2**32 and r.exact_required


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_torch_sum_and_copy_check(dtype):
    x = verify.seed_like_input(70_003, dtype, "cpu")
    for vid in ("peer/torch.sum", "peer/copy"):
        r = verify.check_variant(catalogue.get(vid), x)
        assert r.ok and r.input_unchanged, r


def test_bytes_moved():
    copy, tsum = catalogue.get("peer/copy"), catalogue.get("peer/torch.sum")
    assert peers.bytes_moved(copy, 1000, 4) == 8000
    assert peers.bytes_moved(tsum, 1000, 4) == 4008


def test_benchmark_suite_collects_every_variant_and_peer():
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "benchmarks/",
            "--co",
            "-q",
            "-p",
            "no:cacheprovider",
            "--bench-sizes",
            "10,2^25",
            "-k",
            "sweep",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    # Every non-wrong variant and peer except seed 001's (measured end to end by `host`), in the
    # ladder's dtypes (the fastest variants' half/double dtypes: `bench sweep --dtypes`).
    expected = {
        f"sweep-{d}-{s}-{v.id}"
        for v in catalogue.select()
        if v.family != "001"
        for d in v.dtypes
        if d in ("float32", "int32")
        for s in ("2^10", "2^25")
    }
    got = {
        line.split("[", 1)[1].rstrip("]") for line in out.splitlines() if "::test_reduce[" in line
    }
    assert got == expected, out[-2000:]


def test_bench_sizes_default_and_ranges():
    sys.path.insert(0, str(ROOT))
    from benchmarks.conftest import parse_bench_sizes

    assert parse_bench_sizes(None) is None  # each suite's own defaults
    assert parse_bench_sizes("10-12,2^20+3,1000") == [1000, 2**10, 2**11, 2**12, 2**20 + 3]
