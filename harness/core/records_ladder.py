"""Catalogue records, part 1: the device-resident ladder of seeds 000 / 002 (stages 0-8), seed
004's own rungs, and their Triton tile twins. Read through harness.core.catalogue.

Each record is final where it is written: keyword fields, a group's defaults in one dict
(LADDER, WRONG_DEMO, SEED_004). A CUDA kernel expression's {B} is the block size, filled in from
launch.threads (Variant.name_expression).
"""

from __future__ import annotations

from harness.core.mappings import CHUNKED, GRID_STRIDE, SPLIT_PAIR, TILES, Launch
from harness.core.variant import Variant, cuda_variant, triton_twin

T256 = Launch(threads=256, mapping=TILES)
PAIR_ADJ = {b: Launch(threads=b, mapping=TILES, tiles=2) for b in (128, 256, 512, 1024)}
PAIR_SPLIT = {b: Launch(threads=b, mapping=SPLIT_PAIR, tiles=2) for b in (128, 256)}
STRIDED_1024 = Launch(threads=256, mapping=GRID_STRIDE, max_blocks=1024)
CHUNKED_1024 = Launch(threads=256, mapping=CHUNKED, max_blocks=1024)
QUAD_ADJ_256 = Launch(threads=256, mapping=TILES, tiles=4)

# int32 on every non-wrong ladder stage (issue 4): the kernels are templates on T, int sums wrap
# modulo 2^32 as the seeds' do (docs/int32.md). The wrong demonstrations stay float32 only.
LADDER = {"family": "ladder", "dtypes": ("float32", "int32")}
WRONG_DEMO = {"family": "ladder", "dtypes": ("float32",), "wrong": True}
# Seed 004 (issue 4): int, 256 threads; one tile or four adjacent tiles per block, in global or
# shared memory, static or dynamic shared memory. The seed's kernels are int-only; so are these.
SEED_004 = {"family": "004", "dtypes": ("int32",)}

# fmt: off
LADDER_CUDA: list[Variant] = [
    cuda_variant("v0-gmem-interleaved", stage="0", **LADDER,
        title="interleaved addressing in global memory, in place",
        change="baseline: tid % 2i threads add in place in global memory",
        seeds=("000:v0", "002:R0"), twin="tile-256",
        launch=Launch(threads=256, mapping=TILES, in_place=True),
        source="interleaved.cu", kernel="reduce_v0_gmem_interleaved<{T}>"),
    cuda_variant("v1-smem-interleaved", stage="1", **LADDER,
        title="interleaved addressing in shared memory",
        change="tile copied to shared memory; input no longer written",
        seeds=("000:v1", "002:R1"), twin="tile-256", launch=T256,
        source="interleaved.cu", kernel="reduce_v1_smem_interleaved<{T}, {B}>"),
    cuda_variant("v2-strided-index", stage="2", **LADDER,
        title="strided index: no divergent branch",
        change="thread t works on slot 2*i*t: active threads are a contiguous prefix",
        seeds=("000:v2", "002:R2-official"), twin="tile-256", launch=T256,
        source="interleaved.cu", kernel="reduce_v2_strided_index<{T}, {B}>"),
    cuda_variant("v3-sequential", stage="3", **LADDER,
        title="sequential addressing: no bank conflicts",
        change="slot tid + s: a warp's accesses hit 32 different banks",
        seeds=("000:v3", "002:R2-mine", "002:R3"), twin="tile-256", launch=T256,
        source="sequential.cu", kernel="reduce_v3_sequential<{T}, {B}>"),
    cuda_variant("v4-adjacent-256", stage="4", **LADDER,
        title="first add during load, half the blocks (adjacent tiles)",
        change="each thread adds two elements while loading; 256 threads, n/512 blocks",
        seeds=("000:v4a",), twin="pair-adjacent-256", launch=PAIR_ADJ[256],
        source="sequential.cu", kernel="reduce_v4_first_add<{T}, {B}, PAIR_ADJACENT>"),
    cuda_variant("v4-adjacent-128", stage="4", **LADDER,
        title="first add during load, half the threads (adjacent tiles)",
        change="each thread adds two elements while loading; 128 threads, n/256 blocks",
        seeds=("000:v4b", "002:R4-C"), twin="pair-adjacent-128", launch=PAIR_ADJ[128],
        source="sequential.cu", kernel="reduce_v4_first_add<{T}, {B}, PAIR_ADJACENT>"),
    cuda_variant("v4-split-256", stage="4", **LADDER,
        title="first add during load, half the blocks (split halves)",
        change="plan A: 256 threads read tile b and tile b + grid (seed's offset bug fixed)",
        seeds=("002:R4-A",), twin="pair-split-256", launch=PAIR_SPLIT[256],
        source="sequential.cu", kernel="reduce_v4_first_add<{T}, {B}, PAIR_SPLIT>"),
    cuda_variant("v4-split-128", stage="4", **LADDER,
        title="first add during load, half the threads (split halves)",
        change="plan B: 128 threads read tile b and tile b + grid (seed's offset bug fixed)",
        seeds=("002:R4-B",), twin="pair-split-128", launch=PAIR_SPLIT[128],
        source="sequential.cu", kernel="reduce_v4_first_add<{T}, {B}, PAIR_SPLIT>"),
    cuda_variant("v5-volatile", stage="5", **LADDER,
        title="unroll the last warp (volatile shared memory)",
        change="last six steps without __syncthreads(), warp-synchronous through volatile",
        seeds=("000:v5",), twin="pair-adjacent-256", launch=PAIR_ADJ[256],
        source="warp_unroll.cu", kernel="reduce_v5_warp_volatile<{T}, {B}, PAIR_ADJACENT>"),
    cuda_variant("v5-volatile-split", stage="5", **LADDER,
        title="unroll the last warp, split halves (002's indexing)",
        change="as v5-volatile, with 002 Reduction 5's plan-A pairing",
        seeds=("002:R5",), twin="pair-split-256", launch=PAIR_SPLIT[256],
        source="warp_unroll.cu", kernel="reduce_v5_warp_volatile<{T}, {B}, PAIR_SPLIT>"),
    cuda_variant("v5-syncwarp", stage="5", **LADDER,
        title="unroll the last warp, made sound with __syncwarp()",
        change="volatile lockstep replaced by read / __syncwarp / write / __syncwarp",
        twin="pair-adjacent-256", launch=PAIR_ADJ[256],
        source="warp_unroll.cu", kernel="reduce_v5_warp_syncwarp<{T}, {B}, PAIR_ADJACENT>",
        notes="The sound fix seed 002 names for Reduction 5 (no seed code of its own)."),
    cuda_variant("v5-wrong-nosync", stage="5", **WRONG_DEMO,
        title="WRONG demo: last barriers dropped, no volatile",
        change="002's first wrong Reduction 5: stale-register race in the last warp",
        seeds=("002:R5-wrong1",), twin="pair-split-256", launch=PAIR_SPLIT[256],
        source="warp_unroll.cu", kernel="reduce_v5_wrong_nosync<{T}, {B}>"),
    cuda_variant("v5-wrong-novolatile", stage="5", **WRONG_DEMO,
        title="WRONG demo: unrolled last warp without volatile",
        change="002's second wrong Reduction 5: stale-register race in the last warp",
        seeds=("002:R5-wrong2",), twin="pair-split-256", launch=PAIR_SPLIT[256],
        source="warp_unroll.cu", kernel="reduce_v5_wrong_novolatile<{T}, {B}>"),
    *(
        cuda_variant(f"v6-unroll-{b}", stage="6", **LADDER,
            title=f"complete unroll, block size {b} (template)",
            change="the tree loop unrolled on a compile-time block size",
            seeds=("000:v6",), twin=f"pair-adjacent-{b}", launch=PAIR_ADJ[b],
            source="warp_unroll.cu", kernel="reduce_v6_complete_unroll<{T}, {B}, PAIR_ADJACENT>")
        for b in (128, 256, 512, 1024)
    ),
    cuda_variant("v6-unroll-split-256", stage="6", **LADDER,
        title="complete unroll, split halves (002's indexing)",
        change="as v6-unroll-256, with 002 Reduction 6's plan-A pairing",
        seeds=("002:R6", "002:R6-official"), twin="pair-split-256", launch=PAIR_SPLIT[256],
        source="warp_unroll.cu", kernel="reduce_v6_complete_unroll<{T}, {B}, PAIR_SPLIT>"),
    cuda_variant("v7-fixed-chunked", stage="7", **LADDER,
        title="1024 blocks, many elements per thread (chunked)",
        change="grid fixed at 1024 blocks; each thread sums a chunk serially in a register",
        seeds=("000:v7",), twin="chunked-1024", launch=CHUNKED_1024,
        source="many_per_thread.cu",
        kernel="reduce_v7_fixed_blocks<{T}, {B}, MAP_CHUNKED, false>"),
    cuda_variant("v7-fixed-strided", stage="7", **LADDER,
        title="1024 blocks, many elements per thread (grid-stride)",
        change="grid fixed at 1024 blocks; grid-stride loop into the volatile shared slot (002 R7)",
        seeds=("002:R7",), twin="grid-stride-1024", launch=STRIDED_1024,
        source="many_per_thread.cu",
        kernel="reduce_v7_fixed_blocks<{T}, {B}, MAP_STRIDED, true>"),
    cuda_variant("v8-shuffle-chunked", stage="8", **LADDER,
        title="warp shuffle (chunked)",
        change="__shfl_down_sync in registers; one 32-slot array and one barrier per block",
        seeds=("000:v8",), twin="chunked-1024", launch=CHUNKED_1024,
        source="many_per_thread.cu", kernel="reduce_v8_shuffle<{T}, {B}, MAP_CHUNKED>"),
    cuda_variant("v8-shuffle-strided", stage="8", **LADDER,
        title="warp shuffle (grid-stride)",
        change="__shfl_down_sync in registers; one 32-slot array and one barrier per block",
        seeds=("002:R8",), twin="grid-stride-1024", launch=STRIDED_1024,
        source="many_per_thread.cu", kernel="reduce_v8_shuffle<{T}, {B}, MAP_STRIDED>"),
]

SEED_004_CUDA: list[Variant] = [
    cuda_variant("004-gmem", stage="004-1", **SEED_004,
        title="004 baseline: in place in global memory",
        change="in-place complete-unroll tree in global memory, volatile last warp",
        seeds=("004:reduceGmem",), twin="tile-256",
        launch=Launch(threads=256, mapping=TILES, in_place=True),
        source="unroll_blocks.cu", kernel="reduce_gmem<{T}, {B}>"),
    cuda_variant("004-smem", stage="004-2", **SEED_004,
        title="the same tree in static shared memory",
        change="tile loaded once into __shared__ smem[256]; input no longer written",
        seeds=("004:reduceSmem",), twin="tile-256", launch=T256,
        source="unroll_blocks.cu", kernel="reduce_smem<{T}, {B}>"),
    cuda_variant("004-gmem-unroll4", stage="004-3", **SEED_004,
        title="4 data blocks per block, in place in global memory",
        change="each thread folds its elements of tiles 1..3 into tile 0; grid 4x smaller",
        seeds=("004:reduceGmemUnroll",), twin="quad-adjacent-256",
        launch=Launch(threads=256, mapping=TILES, tiles=4, in_place=True),
        source="unroll_blocks.cu", kernel="reduce_gmem_unroll4<{T}, {B}>"),
    cuda_variant("004-smem-unroll4", stage="004-4", **SEED_004,
        title="4 data blocks per block, into shared memory",
        change="each thread sums 4 tiles' elements in a register, then the shared-memory tree",
        seeds=("004:reduceSmemUnroll",), twin="quad-adjacent-256", launch=QUAD_ADJ_256,
        source="unroll_blocks.cu", kernel="reduce_smem_unroll4<{T}, {B}>"),
    cuda_variant("004-smem-dyn", stage="004-5", **SEED_004,
        title="reduceSmem with dynamic shared memory",
        change="extern __shared__ array sized at launch (256 * sizeof(T))",
        seeds=("004:reduceSmemDyn",), twin="tile-256",
        launch=Launch(threads=256, mapping=TILES, dynamic_smem=True),
        source="unroll_blocks.cu", kernel="reduce_smem_dyn<{T}, {B}>"),
    cuda_variant("004-smem-unroll4-dyn", stage="004-6", **SEED_004,
        title="reduceSmemUnroll with dynamic shared memory",
        change="extern __shared__ array sized at launch (256 * sizeof(T))",
        seeds=("004:reduceSmemUnrollDyn",), twin="quad-adjacent-256",
        launch=Launch(threads=256, mapping=TILES, tiles=4, dynamic_smem=True),
        source="unroll_blocks.cu", kernel="reduce_smem_unroll4_dyn<{T}, {B}>"),
]

# The Triton twins of both groups (tile-256 twins ladder stages and seed-004 rungs alike).
_CUDA = [*LADDER_CUDA, *SEED_004_CUDA]
_SUM_AFTER_LOAD = "two tiles added lane-wise on load, then tl.sum"

LADDER_TRITON: list[Variant] = [
    triton_twin("tile-256", cuda=_CUDA, title="one tile of 256 per program", launch=T256,
        kernel="adjacent_tiles_kernel",
        change="tl.sum over the same tile(s); the compiler chooses the tree"),
    *(
        triton_twin(f"pair-adjacent-{b}", cuda=_CUDA,
            title=f"two adjacent tiles of {b} per program", launch=PAIR_ADJ[b],
            kernel="adjacent_tiles_kernel", change=_SUM_AFTER_LOAD)
        for b in (128, 256, 512, 1024)
    ),
    *(
        triton_twin(f"pair-split-{b}", cuda=_CUDA, title=f"tile p + tile p+grid of {b} per program",
            launch=PAIR_SPLIT[b], kernel="split_pair_kernel", change=_SUM_AFTER_LOAD)
        for b in (128, 256)
    ),
    triton_twin("chunked-1024", cuda=_CUDA, title="1024 programs, contiguous chunk each",
        launch=CHUNKED_1024, kernel="chunked_kernel",
        change="per-lane accumulator over the chunk, then tl.sum"),
    triton_twin("grid-stride-1024", cuda=_CUDA, title="1024 programs, grid-stride loop",
        launch=STRIDED_1024, kernel="grid_stride_kernel",
        change="per-lane accumulator over a grid-stride loop, then tl.sum"),
]

SEED_004_TRITON: list[Variant] = [
    triton_twin("quad-adjacent-256", cuda=_CUDA, family="004",
        title="four adjacent tiles of 256 per program", launch=QUAD_ADJ_256,
        kernel="adjacent_tiles_kernel",
        change="four tiles added lane-wise on load, then tl.sum"),
]
# fmt: on
