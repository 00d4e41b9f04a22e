"""Catalogue records, part 2: past the device-resident ladder. Seed 001's host-driven passes, the
fastest pair (one launch per sum), the reproducible pair, the peers (what a user would call
instead) and, kept out of catalogue.VARIANTS, the sanitizer's demonstrations (the seeds' bugs).
Read through harness.core.catalogue.
"""

from __future__ import annotations

from harness.core.mappings import LANES, MAX_CHUNKS, SINGLE_LAUNCH, TILES, Launch
from harness.core.mappings import REPRODUCIBLE as REPRODUCIBLE_MAPPING
from harness.core.variant import MAX_N_64BIT, Variant, cuda_variant, triton_twin

# Seed 001: host-driven passes from HOST memory (docs/studies.md#seed-001-the-host-study), 1024
# threads, 2 x 1024 adjacent elements per block, 64-bit sizes. One Triton twin per host staging:
# V0, V1 and V4 differ only in the block tree Triton's compiler chooses by itself.
HOST_TILE = Launch(threads=1024, mapping=TILES, tiles=2)
HOST_TILE_IN_PLACE = Launch(threads=1024, mapping=TILES, tiles=2, in_place=True)
SEED_001 = {"family": "001", "max_n": MAX_N_64BIT, "dtypes": ("float32", "int32")}

# fmt: off
HOST_CUDA: list[Variant] = [
    cuda_variant("001-v0-gmem-interleaved", stage="V0", **SEED_001, staging="pageable",
        title="interleaved pairs in global memory, in place",
        change="host loop of passes from pageable host memory; left = start + id*2*stride",
        seeds=("001:V0",), twin="001-pageable", launch=HOST_TILE_IN_PLACE,
        source="host_passes.cu", kernel="reduce_001_v0_gmem_interleaved<{T}>"),
    cuda_variant("001-v1-gmem-sequential", stage="V1", **SEED_001, staging="pageable",
        title="sequential (coalesced) addressing in global memory",
        change="left = start + tid, right = left + stride, stride halving (seed's race fixed)",
        seeds=("001:V1",), twin="001-pageable", launch=HOST_TILE_IN_PLACE,
        source="host_passes.cu", kernel="reduce_001_v1_gmem_sequential<{T}>"),
    cuda_variant("001-v2-pinned", stage="V2", **SEED_001, staging="pinned",
        title="pinned (page-locked) host memory",
        change="V1's kernel; the host data sits in pinned memory, so the copy is a direct DMA",
        seeds=("001:V2",), twin="001-pinned", launch=HOST_TILE_IN_PLACE,
        source="host_passes.cu", kernel="reduce_001_v1_gmem_sequential<{T}>"),
    cuda_variant("001-v3-streams", stage="V3", **SEED_001, staging="streams",
        title="multi-stream pipeline (pinned)",
        change="V1's kernel; chunks copied async on several streams, reduced as they arrive",
        seeds=("001:V3",), twin="001-streams", launch=HOST_TILE_IN_PLACE,
        source="host_passes.cu", kernel="reduce_001_v1_gmem_sequential<{T}>"),
    cuda_variant("001-v4-smem", stage="V4", **SEED_001, staging="pinned",
        title="shared memory (pinned, one stream)",
        change="V2 with the tree in shared memory; input read once, never written",
        seeds=("001:V4",), twin="001-pinned", launch=HOST_TILE,
        source="host_passes.cu", kernel="reduce_001_v4_smem<{T}, {B}>"),
]

HOST_TRITON: list[Variant] = [
    triton_twin(f"001-{staging}", cuda=HOST_CUDA, family="001", max_n=MAX_N_64BIT, staging=staging,
        title=f"Triton twin of the seed-001 host loop, {staging} host memory",
        launch=HOST_TILE, kernel="adjacent_tiles_kernel",
        change="same host loop and staging; tl.sum over the same 2 x 1024 tile")
    for staging in ("pageable", "pinned", "streams")
]
# fmt: on

# Past the ladder (issue 8): the fastest sum per backend, counterparts, not tile twins. Triton's
# launch gives the smallest BLOCK / per_sm its autotuner may pick (what the error bound needs).
# FASTEST_STEP: the most elements a lane adds per grid-stride step over all dtypes (launch.tiles,
# the error bound's): 4 x 8 halves = 8 x 4 floats = 32 (8 x 2 doubles = 16).
FASTEST_DTYPES = ("float32", "int32", "float16", "bfloat16", "float64")
FASTEST_STEP = 32
FASTEST = {"stage": "fastest", "family": "fastest", "dtypes": FASTEST_DTYPES, "max_n": MAX_N_64BIT}
# fmt: off
FASTEST_CUDA = Variant(id="cuda/fastest", backend="cuda", **FASTEST,
    title="one launch: 16-byte loads, SM-sized persistent grid, last-block finish",
    change="past stage 8: LDG.E.128 x8 (x4 for 16-bit types) in flight per thread, grid from "
    "the SM count, deterministic last-block-done combine instead of a second pass",
    launch=Launch(threads=256, mapping=SINGLE_LAUNCH, tiles=FASTEST_STEP, max_blocks=2048,
                  per_sm=4),
    source="fastest.cu", kernel="reduce_fastest<{T}, {B}, {U}, FAST_ACQ_REL>",
    counterpart="triton/fastest",
    notes="Deterministic for a given device (SM count), n and alignment. float16/bfloat16 "
    "accumulate in float32 and return float32; int32 wraps modulo 2^32.")
FASTEST_TRITON = Variant(id="triton/fastest", backend="triton", **FASTEST,
    title="one launch: autotuned persistent grid-stride, last-program finish",
    change="programs from the SM count, BLOCK / num_warps / num_stages / programs per SM "
    "autotuned per device, dtype and size bucket; atomic-ticket last-program combine",
    launch=Launch(threads=1024, mapping=SINGLE_LAUNCH, tiles=1, max_blocks=2048, per_sm=2),
    source="fastest.py", kernel="fastest_kernel", counterpart="cuda/fastest",
    notes="Deterministic for a given device, n and chosen configuration (cached per process "
    "and size bucket). float16/bfloat16 accumulate in float32 and return float32.")
# fmt: on

# Family "reproducible" (issue 18): a sum whose bits depend only on the input's values and n, on
# every GPU, with any grid. The two records are counterparts, not tile twins (a twin promises the
# same per-block partials): the unit of work is a chunk, whichever block or program takes it, and
# the promise is stronger: the same result bits (tests/test_gpu_reproducible.py), equal to the
# numpy model triton_kernels.reproducible.reference_sum. float64 returns float64 (NOTES).
REPRODUCIBLE_DTYPES = ("float32", "float16", "bfloat16", "float64")
# cuda/reproducible's template <T, BLOCK, UNROLL, VEC, PREFETCH>: UNROLL and PREFETCH are
# constants of the .cu file; VEC false is the misaligned view's (harness.launch.reproducible_plan).
CUDA_UNROLL = "REPRO_UNROLL"
CUDA_PREFETCH = "REPRO_PREFETCH"
REPRODUCIBLE_NOTES = (
    "Bits depend only on the input's values and n: not on the GPU, the grid, the stream or the "
    "run; cuda/reproducible equals triton/reproducible bit for bit. float16/bfloat16 return "
    "float32; float64 returns float64 (faithful only further from cancellation: its lanes carry "
    "twice the result's precision, not four times)."
)
# stage "repro": short, so the stage column of `reduce-ladder list` does not fold
REPRO = {"stage": "repro", "family": "reproducible", "dtypes": REPRODUCIBLE_DTYPES,
         "max_n": MAX_N_64BIT, "notes": REPRODUCIBLE_NOTES}  # fmt: skip
# fmt: off
REPRODUCIBLE: list[Variant] = [
    Variant(id="cuda/reproducible", backend="cuda", **REPRO,
        title="reproducible: fixed chunks, double-double lanes, fixed trees, one launch",
        change=f"{LANES} TwoSum lanes per chunk of C(n) elements (a function of n only), "
        "adjacent-pair trees in registers, shuffles and shared memory; a free persistent grid and "
        "a last-block final over the chunk partials",
        launch=Launch(threads=256, mapping=REPRODUCIBLE_MAPPING, max_blocks=MAX_CHUNKS, per_sm=4),
        source="reproducible.cu", counterpart="triton/reproducible",
        kernel=f"reduce_reproducible<{{T}}, {{B}}, {CUDA_UNROLL}, true, {CUDA_PREFETCH}>"),
    Variant(id="triton/reproducible", backend="triton", **REPRO,
        title="reproducible: fixed chunks, double-double lanes, fixed trees, two launches",
        change=f"the same chunks, {LANES} lanes per program, tl.reshape + tl.split pair trees; a "
        "persistent grid over the chunks, then one program over the partials",
        launch=Launch(threads=LANES, mapping=REPRODUCIBLE_MAPPING, max_blocks=MAX_CHUNKS,
                      per_sm=4),
        source="reproducible.py", kernel="reproducible_chunks_kernel",
        counterpart="cuda/reproducible"),
]
# fmt: on

# Peers: what a user would call instead (harness.launch.peers). Their ids are defined here only.
TORCH_SUM_ID = "peer/torch.sum"
CUB_ID = "peer/cupy.sum-cub"
NOCUB_ID = "peer/cupy.sum-nocub"
COPY_ID = "peer/copy"
# What PyTorch's compiler writes for the same sum (issue 15): torch.compile of `lambda t: t.sum()`.
COMPILE_ID = "peer/torch.compile"
COMPILE_DYNAMIC_ID = "peer/torch.compile-dynamic"
COMPILE_COOP_ID = "peer/torch.compile-coop"
# NVIDIA's CUB from Python (cuda-cccl, extra `.[cccl]`): one peer per determinism level 1.2.1
# builds (its C library refuses GPU_TO_GPU for reduce: "gpu-to-gpu determinism is not supported").
CCCL_ID = "peer/cuda.compute"
CCCL_NONDET_ID = "peer/cuda.compute-nondeterministic"
# The dynamic peer's first call's size: Inductor picks its split from it, then reuses the kernel.
DYNAMIC_FIRST_N = 2**10


def _peer(id: str, title: str, change: str, **fields) -> Variant:
    return Variant(id=id, backend="peer", stage="peer", title=title, change=change,
                   dtypes=("float32", "int32"), family="peer", **fields)  # fmt: skip


# fmt: off
PEERS: list[Variant] = [
    _peer(TORCH_SUM_ID, "torch.sum",
          "PyTorch's own reduction (int32 input: accumulates and returns int64)"),
    _peer(CUB_ID, "cupy.sum, CUB on",
          "cupy.sum(x, dtype=x.dtype) through cub::DeviceReduce (routine accelerator)"),
    _peer(NOCUB_ID, "cupy.sum, CUB off",
          "cupy.sum(x, dtype=x.dtype) through CuPy's own reduction kernel"),
    _peer(COPY_ID, "device-to-device copy",
          "not a sum: copy bandwidth, bytes read plus written (2 n itemsize)"),
    _peer(COMPILE_ID, "torch.compile, static shapes",
          "torch.compile(lambda t: t.sum(), dynamic=False): Inductor's Triton, compiled "
          "and warmed once per size outside the timing (int32 input: returns int64)",
          by_default=False),
    _peer(COMPILE_DYNAMIC_ID, "torch.compile, dynamic shapes",
          f"torch.compile(..., dynamic=True), first called at n = {DYNAMIC_FIRST_N}, then "
          "reused at n without a recompile: the reduction split is chosen at compile time",
          by_default=False),
    _peer(COMPILE_COOP_ID, "torch.compile, cooperative reduction",
          "static torch.compile with torch._inductor.config.triton.cooperative_reductions "
          "= True for this compile only: one kernel, programs combine through a grid barrier",
          notes="Skipped with its reason where the installed torch has no such config.",
          by_default=False),
    _peer(CCCL_ID, "cuda.compute reduce_into, run-to-run deterministic",
          "cuda.compute.reduce_into(OpKind.PLUS, h_init 0), the default determinism "
          "(RUN_TO_RUN): cub::DeviceReduce from Python; temp storage queried and made once",
          notes="Optional extra: pip install -e '.[cccl]'. Skipped with its reason where "
          "cuda.compute is not importable. int32 accumulates in int32 (wraps modulo 2^32)."),
    _peer(CCCL_NONDET_ID, "cuda.compute reduce_into, not guaranteed deterministic",
          "the same call with determinism=NOT_GUARANTEED: block sums added with atomics "
          "into the output (CUB zeroes it first), one kernel instead of two",
          notes="Optional extra: pip install -e '.[cccl]'. float32 sums may differ run to run "
          "within the error bound; int32 is exact (wraps modulo 2^32)."),
]
# fmt: on
COMPILE_IDS = (COMPILE_ID, COMPILE_DYNAMIC_ID, COMPILE_COOP_ID)
CCCL_IDS = (CCCL_ID, CCCL_NONDET_ID)

# The sanitizer's demonstrations: the seeds' kernels as written, bugs included (seed_bugs.cu says,
# per kernel, the seed, the bug and the tool that flags it). wrong=True, a family of their own,
# kept OUT of catalogue.VARIANTS: nothing that lists, checks, times, benchmarks or censuses the
# catalogue reaches them (seed 000's kernel has no bounds check). Only `sanitize` runs them.
DEMO_FAMILY = "sanitizer-demo"
DEMO = {"family": DEMO_FAMILY, "source": "seed_bugs.cu", "twin": "triton/tile-256", "wrong": True}
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
DEMO_BY_ID: dict[str, Variant] = {v.id: v for v in DEMO_VARIANTS}
