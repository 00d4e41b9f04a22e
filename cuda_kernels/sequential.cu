// Stages 3-4 of the ladder: sequential addressing, then the first add during load.
// Seeds: 000 (reduce_v3, reduce_v4_a/b) and 002 (Reduction 2 "mine", Reduction 3, Reduction 4's
// three plans).
#include "common.cuh"

// v3 (000 v3, 002 Reduction 2 "mine" = Reduction 3) - sequential addressing, no bank conflicts.
// Changed from v2: at step s the first s threads add slot tid + s to slot tid. Consecutive lanes
// touch consecutive words, so a warp's 32 accesses fall in 32 different banks, and the active
// threads are still a contiguous prefix (no divergence inside a warp until s < 32).
// Fixed: 000 calls __syncthreads() inside `if (tid < ...)` (undefined behaviour); 000 also derives
// the stride with a division per step, 002 with a shift, as here. Added: out-of-range loads give 0.
template <typename T, u32 BLOCK>
__global__ void reduce_v3_sequential(const T* in, T* out, u32 n) {
    __shared__ T smem[BLOCK];
    const u32 tid = threadIdx.x;
    smem[tid] = load_or_zero(in, blockIdx.x * blockDim.x + tid, n);
    __syncthreads();
    for (u32 s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) smem[tid] += smem[tid + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = smem[0];
}

// v4 (000 v4a/v4b, 002 Reduction 4 plans A, B and the third) - first add during load.
// Changed from v3: half the threads of v3 idled from the first step; now every thread adds two
// elements while loading, so a block covers two tiles and the grid (plan A, 000 v4a: 256 threads)
// or the block (plan B, 000 v4b: 128 threads) shrinks by half. PAIRING picks which two tiles:
//   PAIR_ADJACENT: tiles 2b and 2b+1 (000 v4a/v4b; 002's third plan, 128 threads).
//   PAIR_SPLIT:    tile b and tile b + gridDim (002 plans A and B, as intended).
// Seed 002 bugs, fixed here and noted: plan A/B write `tidx2 = tidx1 + gridDim.x`, an offset of
// gridDim ELEMENTS, not gridDim tiles: the elements of the first half past gridDim are read twice
// and those of the second half past gridDim are never read (its CPU check repeats the same
// offset, so it passes). Plan B's `N/ThreadsPerBlock*2` with
// ThreadsPerBlock defined as `256/2` expands to N/256/2*2 = N/256: right only by accident of macro
// expansion; read as meant (N/128*2) it launches 4x the blocks needed. The grid here is always
// ceil(n / (2*BLOCK)). Fixed from 000: barrier inside the divergent `if`.
template <typename T, u32 BLOCK, int PAIRING>
__global__ void reduce_v4_first_add(const T* in, T* out, u32 n) {
    __shared__ T smem[BLOCK];
    const u32 tid = threadIdx.x;
    smem[tid] = load_pair<T, PAIRING>(in, n);
    __syncthreads();
    for (u32 s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) smem[tid] += smem[tid + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = smem[0];
}
