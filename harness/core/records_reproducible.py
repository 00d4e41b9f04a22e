"""Catalogue records, part 3: family "reproducible" (issue 18), a sum whose bits depend only on
the input's values and n, on every GPU, with any grid. Read through harness.core.catalogue.

The two records are counterparts, not tile twins (a twin promises the same per-block partials):
the unit of work is a chunk, whichever block or program takes it, and the promise is stronger:
the same result bits (tests/test_gpu_reproducible.py), equal to the numpy model
triton_kernels.reproducible.reference_sum.
"""

from __future__ import annotations

from harness.core.mappings import REPRODUCIBLE as REPRODUCIBLE_MAPPING
from harness.core.mappings import Launch
from harness.core.repro_geometry import LANES, MAX_CHUNKS
from harness.core.variant import MAX_N_64BIT, Variant

FAMILY = "reproducible"
# float64 returns float64, with its own limit (NOTES).
REPRODUCIBLE_DTYPES = ("float32", "float16", "bfloat16", "float64")
# cuda/reproducible's template <T, BLOCK, UNROLL, VEC, PREFETCH>: UNROLL and PREFETCH are
# constants of the .cu file; VEC false is the misaligned view's (harness.launch.reproducible_plan).
CUDA_UNROLL = "REPRO_UNROLL"
CUDA_PREFETCH = "REPRO_PREFETCH"
CUDA_KERNEL = "reduce_reproducible<{T}, {B}, " + CUDA_UNROLL + ", true, " + CUDA_PREFETCH + ">"
NOTES = (
    "Bits depend only on the input's values and n: not on the GPU, the grid, the stream or the "
    "run; cuda/reproducible equals triton/reproducible bit for bit. float16/bfloat16 return "
    "float32; float64 returns float64 (faithful only further from cancellation: its lanes carry "
    "twice the result's precision, not four times)."
)
# stage "repro": short, so the stage column of `reduce-ladder list` does not fold
COMMON = dict(
    stage="repro", family=FAMILY, dtypes=REPRODUCIBLE_DTYPES, max_n=MAX_N_64BIT, notes=NOTES
)

# fmt: off
REPRODUCIBLE_CUDA = Variant(id="cuda/reproducible", backend="cuda", **COMMON,
    title="reproducible: fixed chunks, double-double lanes, fixed trees, one launch",
    change=f"{LANES} TwoSum lanes per chunk of C(n) elements (a function of n only), "
    "adjacent-pair trees in registers, shuffles and shared memory; a free persistent grid and a "
    "last-block final over the chunk partials",
    launch=Launch(threads=256, mapping=REPRODUCIBLE_MAPPING, max_blocks=MAX_CHUNKS, per_sm=4),
    source="reproducible.cu", kernel=CUDA_KERNEL, counterpart="triton/reproducible")
REPRODUCIBLE_TRITON = Variant(id="triton/reproducible", backend="triton", **COMMON,
    title="reproducible: fixed chunks, double-double lanes, fixed trees, two launches",
    change=f"the same chunks, {LANES} lanes per program, tl.reshape + tl.split pair trees; a "
    "persistent grid over the chunks, then one program over the partials",
    launch=Launch(threads=LANES, mapping=REPRODUCIBLE_MAPPING, max_blocks=MAX_CHUNKS, per_sm=4),
    source="reproducible.py", kernel="reproducible_chunks_kernel", counterpart="cuda/reproducible")
# fmt: on
REPRODUCIBLE: list[Variant] = [REPRODUCIBLE_CUDA, REPRODUCIBLE_TRITON]
