"""The fixed decomposition of the reproducible family (issue 18), a function of n only: chunk size
C(n), chunk count M(n), lanes per chunk. The CUDA kernel (cuda_kernels/reproducible.cu) computes
the same on the device; the Triton kernel and its numpy model (triton_kernels/reproducible.py) and
the tile mapping (harness.core.mappings.REPRODUCIBLE) read it here. Changing any constant changes
every reproducible result's bits.
"""

from __future__ import annotations

LANES = 1024  # double-double accumulators per chunk (every dtype)
C_MIN = 4096  # smallest chunk, elements
# Most chunks (partials) for any n: long chunks amortize each chunk's lane tree, and 512 still give
# every SM several blocks (8192 measured slower: docs/reproducible.md, "The lane trees").
MAX_CHUNKS = 512
TREE_LEVELS = 10  # log2(LANES): levels of each adjacent-pair lane tree


def next_pow2(k: int) -> int:
    return 1 if k <= 1 else 1 << (k - 1).bit_length()


def chunk_size(n: int) -> int:
    """C(n) = max(C_MIN, next_pow2(ceil(n / MAX_CHUNKS))): elements per chunk, a power of two."""
    return max(C_MIN, next_pow2(-(-n // MAX_CHUNKS)))


def chunk_count(n: int) -> int:
    """M(n) = ceil(n / C(n)) <= MAX_CHUNKS (0 for n = 0)."""
    return -(-n // chunk_size(n))


def lane_steps(n: int) -> int:
    """Elements each lane adds per chunk: C(n) / LANES (a power of two >= 4)."""
    return chunk_size(n) // LANES


def dd_chain_length(n: int) -> int:
    """m(n): the most double-double additions one element passes through: C/LANES lane updates,
    the lane tree, M/LANES updates of the chunk sums (M = ceil(n / C)), their tree."""
    return lane_steps(n) + TREE_LEVELS + -(-chunk_count(n) // LANES) + TREE_LEVELS
