"""Catalogue records of the sanitizer demonstrations: the seeds' kernels as written, bugs included
(cuda_kernels/seed_bugs.cu says, per kernel, the seed, the bug and the tool that flags it).

wrong=True, their own family, and kept OUT of catalogue.VARIANTS on purpose: nothing that lists,
checks, times, benchmarks or censuses the catalogue can reach them (000's kernel has no bounds
check and reads past n on a partial tile). Only `reduce-ladder sanitize` runs them.
"""

from __future__ import annotations

from harness.core.mappings import TILES, Launch
from harness.core.variant import Variant

FAMILY = "sanitizer-demo"
SOURCE = "seed_bugs.cu"
DEMO = {"family": FAMILY, "source": SOURCE, "twin": "triton/tile-256", "wrong": True}

# fmt: off
DEMO_VARIANTS: list[Variant] = [
    Variant(id="cuda/demo-000-v1-sync-in-if", backend="cuda", stage="1", **DEMO,
        dtypes=("float32",),
        title="DEMO (seed 000 v1 as written): __syncthreads() inside the divergent if",
        change="seed 000's reduce_v1_shared_mem unchanged: the barrier sits inside "
        "`if (tid % (i * 2) == 0)`, so only some threads of a warp reach it",
        launch=Launch(threads=256, mapping=TILES), kernel="seed000_reduce1_sync_in_if<{T}, {B}>",
        notes="Meant for compute-sanitizer synccheck (divergent barrier); on an H200 no tool "
        "flags it (tests/test_gpu_sanitize.py). Seed "
        "000_63f2b61950f09972.txt; no bounds check, so it is run on whole tiles, first pass only."),
    Variant(id="cuda/demo-004-gmem-early-return", backend="cuda", stage="004-1", **DEMO,
        dtypes=("int32",),
        title="DEMO (seed 004 reduceGmem as written): early return before __syncthreads()",
        change="seed 004's reduceGmem unchanged: `if (idx >= n) return;` before the barriers; in "
        "a partial last tile the remaining threads read in[tid + 128], ... past n",
        launch=Launch(threads=256, mapping=TILES, in_place=True),
        kernel="seed004_reduce_gmem_early_return<{T}, {B}>",
        notes="Flagged by compute-sanitizer memcheck (global reads past the allocation) on a "
        "partial last tile. Seed 004_53302091cfe0f7dc.txt; first pass only."),
]
# fmt: on

BY_ID: dict[str, Variant] = {v.id: v for v in DEMO_VARIANTS}
