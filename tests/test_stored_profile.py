"""The stored profile documents hold each stage's lesson against the hardware's counters (Nsight
Compute), as facts with margins.

These tests read committed JSON only, every results/<device>/profile.json (one per GPU it was
measured on), and with REDUCE_LADDER_PROFILE_JSON set to a profile document (benchmarks/
gpu_profile.sh writes one), that document too. Nothing is profiled here and no GPU is needed, so
they run in CI. tests/test_gpu_profile.py measures a document live under ncu and checks these
same facts on it.

The counters are compared between stages, not to absolutes: e.g. the shared-load bank-conflict
counter is not zero even for conflict-free code (a first look on an H100 at 2^24 float32: 61,075
for v1, 4,715,257 for v2, 43,427 for v3, 8,281 for the tile-256 twin).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.report import profile_tables

ROOT = Path(__file__).resolve().parent.parent
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


def stored_documents() -> list[Path]:
    """The committed profile documents, then the one REDUCE_LADDER_PROFILE_JSON names (if any)."""
    paths = sorted(ROOT.glob("results/*/profile.json"))
    extra = os.environ.get("REDUCE_LADDER_PROFILE_JSON")
    return paths + ([Path(extra)] if extra else [])


def _doc_id(path: Path) -> str:
    return path.parent.name if path.is_relative_to(ROOT / "results") else str(path)


def test_stored_profile_documents_are_committed():
    assert sorted(ROOT.glob("results/*/profile.json")), "no results/<device>/profile.json committed"


@pytest.fixture(scope="module", params=stored_documents(), ids=_doc_id)
def doc(request) -> dict:
    return json.loads(request.param.read_text())


def total(doc: dict, vid: str, n: int = N, dtype: str = "float32") -> dict:
    r = profile_tables.find(doc, vid, n, dtype)
    assert r is not None, f"{vid} at n = {n} {dtype} is not in the profile"
    return r["total"]["metrics"] | r["total"]["derived"]


def first_kernel(doc: dict, vid: str, n: int = N, dtype: str = "int32") -> dict:
    r = profile_tables.find(doc, vid, n, dtype)
    assert r is not None and r["kernels"], f"{vid} at n = {n} {dtype} is not in the profile"
    return r["kernels"][0]["metrics"]


def test_stored_profile_attributes_every_kernel_by_its_nvtx_range(doc):
    for run in doc["runs"]:
        assert run["nvtx_check"] == "agrees", run
    for r in doc["results"]:
        assert r["kernels"], f"{r['variant']}: ncu profiled none of its kernels"
        assert r["check"]["ok"] is not False, f"{r['variant']}: wrong sum in the warm-up"


def test_stored_profile_v2_strided_index_has_about_100x_the_bank_conflicts_of_v3(doc):
    v2 = total(doc, "cuda/v2-strided-index")["shared_ld_bank_conflicts"]
    v3 = total(doc, "cuda/v3-sequential")["shared_ld_bank_conflicts"]
    assert v2 >= 30 * v3, (v2, v3)


def test_stored_profile_v0_in_place_stores_many_times_the_sectors_of_v1(doc):
    v0 = total(doc, "cuda/v0-gmem-interleaved")["gst_sectors"]
    v1 = total(doc, "cuda/v1-smem-interleaved")["gst_sectors"]
    assert v0 >= 10 * v1, (v0, v1)


def test_stored_profile_v1_divergence_shows_in_warp_instructions_not_threads_per_instruction(doc):
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


def test_stored_profile_shuffle_stage_executes_far_fewer_shared_instructions_than_unroll(doc):
    def shared(vid: str) -> float:
        t = total(doc, vid)
        return t["shared_ld_inst"] + t["shared_st_inst"]

    assert 10 * shared("cuda/v8-shuffle-chunked") <= shared("cuda/v6-unroll-256")


def test_stored_profile_seed004_smem_stores_one_sector_per_block_unroll_a_quarter(doc):
    expected = profile_tables.seed004_expected(N)
    for vid in INT32_004:
        k = first_kernel(doc, vid)
        assert (k["gld_sectors"], k["gst_sectors"]) == expected[vid], vid
    # the same facts as the issue states them: blocks = n / 256, and a quarter of that
    assert first_kernel(doc, "cuda/004-smem")["gst_sectors"] == N // 256
    assert first_kernel(doc, "cuda/004-smem-unroll4")["gst_sectors"] == N // 256 // 4


def test_stored_profile_triton_twin_reads_what_its_cuda_stage_reads_without_v2s_conflicts(doc):
    twin = total(doc, "triton/tile-256")
    v3 = total(doc, "cuda/v3-sequential")
    assert abs(twin["dram_read_bytes"] - v3["dram_read_bytes"]) <= 0.1 * v3["dram_read_bytes"]
    v2 = total(doc, "cuda/v2-strided-index")
    assert 30 * twin["shared_ld_bank_conflicts"] <= v2["shared_ld_bank_conflicts"]


def test_stored_profile_has_the_library_kernels_too(doc):
    cub = total(doc, "peer/cupy.sum-cub")
    assert cub["dram_read_bytes"] >= 0.9 * N * 4  # CUB reads the input once, like the ladder


def test_stored_profile_fastest_pair_reaches_90_percent_of_dram_peak_at_2_28(doc):
    for vid in FASTEST:
        assert total(doc, vid, N_BIG)["dram_throughput_pct"] >= 90.0, vid


# Every fact above, for tests/test_gpu_profile.py to check on a document it measures live.
FACTS: dict[str, Callable[[dict], None]] = {
    name.removeprefix("test_stored_profile_"): f
    for name, f in list(globals().items())
    if name.startswith("test_stored_profile_") and not name.endswith("_documents_are_committed")
}


def test_stored_profile_results_rebuild_from_the_committed_raw_exports():
    """Every committed profile document's results (the ladder's and the axis family's) come back
    from its raw folder (the driver's manifest, ncu's plain and NVTX-renamed CSV exports) through
    the study's own attribution."""
    from harness.studies import profile as profile_study

    for path in sorted(ROOT.glob("results/*/profile*.json")):
        doc, raw = json.loads(path.read_text()), path.with_name(f"{path.stem}-raw")
        rebuilt = []
        for run in doc["runs"]:
            stem = run["raw_csv"].removesuffix(".csv")
            rows, renamed = (profile_study.parse_csv((raw / f"{stem}{s}").read_text())
                             for s in (".csv", ".nvtx.csv"))  # fmt: skip
            manifest = json.loads((raw / f"{stem}.manifest.json").read_text())
            attributed, check = profile_study.attribute(rows, manifest, renamed)
            assert check == run["nvtx_check"] == "agrees", stem
            rebuilt += [profile_study.variant_record(a) for a in attributed]
        # the same to 12 digits (the weighted means' last bit follows the order of additions)
        assert _rounded(json.loads(json.dumps(rebuilt))) == _rounded(doc["results"]), path


def _rounded(x):
    if isinstance(x, float):
        return float(f"{x:.12g}")
    if isinstance(x, dict):
        return {k: _rounded(v) for k, v in x.items()}
    return [_rounded(v) for v in x] if isinstance(x, list) else x
