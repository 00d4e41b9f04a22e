"""Each stage's lesson held to the hardware's counters (Nsight Compute), as facts with margins.

Skipped, with the reason, without a GPU, without ncu, or when the counters cannot be read. ncu
replays every kernel once per metric pass, so a handful of variants is profiled once per module
(one ncu process per dtype / size) and every test reads that. With REDUCE_LADDER_PROFILE_JSON set
to a profile document (benchmarks/gpu_profile.sh writes one), the tests read it instead.

The counters are compared between stages, not to absolutes: e.g. the shared-load bank-conflict
counter is not zero even for conflict-free code (a first look on an H100 at 2^24 float32: 61,075
for v1, 4,715,257 for v2, 43,427 for v3, 8,281 for the tile-256 twin).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest

from harness.core import catalogue
from harness.report import profile_tables
from harness.studies import gpu_tools
from harness.studies import profile as profile_study

pytestmark = pytest.mark.gpu

N = 2**24
N_BIG = 2**28
FLOAT32 = [
    "cuda/v0-gmem-interleaved",
    "cuda/v1-smem-interleaved",
    "cuda/v2-strided-index",
    "cuda/v3-sequential",
    "cuda/v6-unroll-256",
    "cuda/v8-shuffle-chunked",
    "triton/tile-256",
    "peer/cupy.sum-cub",
]
INT32_004 = ["cuda/004-smem", "cuda/004-smem-unroll4"]
FASTEST = ["cuda/fastest", "triton/fastest"]


@pytest.fixture(scope="module")
def doc() -> dict:
    path = os.environ.get("REDUCE_LADDER_PROFILE_JSON")
    if path:
        return json.loads(Path(path).read_text())
    raw = Path(tempfile.mkdtemp(prefix="profile-raw-"))
    runs = [(FLOAT32, N, "float32"), (INT32_004, N, "int32"), (FASTEST, N_BIG, "float32")]
    try:
        docs = [
            profile_study.profile([catalogue.get(i) for i in ids], [n], dtype, raw)
            for ids, n, dtype in runs
        ]
    except gpu_tools.ToolUnavailable as e:
        pytest.skip(f"Nsight Compute cannot profile here: {e}")
    return profile_study.merge(docs)


def total(doc: dict, vid: str, n: int = N, dtype: str = "float32") -> dict:
    r = profile_study.find(doc, vid, n, dtype)
    assert r is not None, f"{vid} at n = {n} {dtype} is not in the profile"
    return r["total"]["metrics"] | r["total"]["derived"]


def first_kernel(doc: dict, vid: str, n: int = N, dtype: str = "int32") -> dict:
    r = profile_study.find(doc, vid, n, dtype)
    assert r is not None and r["kernels"], f"{vid} at n = {n} {dtype} is not in the profile"
    return r["kernels"][0]["metrics"]


def test_every_kernel_was_attributed_by_its_nvtx_range(doc):
    for run in doc["runs"]:
        assert run["nvtx_check"] == "agrees", run
    for r in doc["results"]:
        assert r["kernels"], f"{r['variant']}: ncu profiled none of its kernels"
        assert r["check"]["ok"] is not False, f"{r['variant']}: wrong sum in the warm-up"


def test_v2_strided_index_has_about_100x_the_bank_conflicts_of_v3(doc):
    v2 = total(doc, "cuda/v2-strided-index")["shared_ld_bank_conflicts"]
    v3 = total(doc, "cuda/v3-sequential")["shared_ld_bank_conflicts"]
    assert v2 >= 30 * v3, (v2, v3)


def test_v0_in_place_stores_many_times_the_sectors_of_v1(doc):
    v0 = total(doc, "cuda/v0-gmem-interleaved")["gst_sectors"]
    v1 = total(doc, "cuda/v1-smem-interleaved")["gst_sectors"]
    assert v0 >= 10 * v1, (v0, v1)


def test_v1_divergence_shows_in_warp_instructions_not_in_threads_per_instruction(doc):
    """Seed 000 reads v2's gain as more working threads per warp (27.46). On Hopper the counters
    show it differently (first measured on an H200, 2^24 float32): v1's `tid % 2i` keeps every warp
    issuing the tree's instructions for its few working lanes, so v1 executes about twice v2's warp
    instructions (134.7M vs 71.6M) and about twice its thread instructions; averaged over the whole
    kernel (loads, loop and barriers included) threads per instruction is LOWER for v2 (19.8) than
    for v1 (23.5); why was not profiled further. The lesson is held to the instruction counts; the
    per-instruction average is stated, not asserted."""
    v1 = total(doc, "cuda/v1-smem-interleaved")
    v2 = total(doc, "cuda/v2-strided-index")
    assert v1["inst_executed"] >= 1.5 * v2["inst_executed"], (
        v1["inst_executed"],
        v2["inst_executed"],
    )
    assert v1["threads_pred_on"] >= 1.5 * v2["threads_pred_on"]


def test_shuffle_stage_executes_far_fewer_shared_instructions_than_complete_unroll(doc):
    def shared(vid: str) -> float:
        t = total(doc, vid)
        return t["shared_ld_inst"] + t["shared_st_inst"]

    assert 10 * shared("cuda/v8-shuffle-chunked") <= shared("cuda/v6-unroll-256")


def test_seed004_smem_stores_one_sector_per_block_unroll_a_quarter(doc):
    expected = profile_tables.seed004_expected(N)
    for vid in INT32_004:
        k = first_kernel(doc, vid)
        assert (k["gld_sectors"], k["gst_sectors"]) == expected[vid], vid
    # the same facts as the issue states them: blocks = n / 256, and a quarter of that
    assert first_kernel(doc, "cuda/004-smem")["gst_sectors"] == N // 256
    assert first_kernel(doc, "cuda/004-smem-unroll4")["gst_sectors"] == N // 256 // 4


def test_triton_twin_reads_what_its_cuda_stage_reads_without_v2s_conflicts(doc):
    twin = total(doc, "triton/tile-256")
    v3 = total(doc, "cuda/v3-sequential")
    assert abs(twin["dram_read_bytes"] - v3["dram_read_bytes"]) <= 0.1 * v3["dram_read_bytes"]
    v2 = total(doc, "cuda/v2-strided-index")
    assert 30 * twin["shared_ld_bank_conflicts"] <= v2["shared_ld_bank_conflicts"]


def test_library_kernels_are_profiled_too(doc):
    cub = total(doc, "peer/cupy.sum-cub")
    assert cub["dram_read_bytes"] >= 0.9 * N * 4  # CUB reads the input once, like the ladder


@pytest.mark.parametrize("vid", FASTEST)
def test_fastest_pair_reaches_90_percent_of_dram_peak_at_2_28(doc, vid):
    assert total(doc, vid, N_BIG)["dram_throughput_pct"] >= 90.0
