// Stages 0-2 of the ladder: one tile of BLOCK elements per block, interleaved (tree-shaped) sums.
// Seeds: 000 (reduce_v0..v2) and 002 (Reductions 0, 1 and 2's "official" answer).
#include "common.cuh"

// v0 (000 v0, 002 Reduction 0) - interleaved addressing in global memory, in place.
// Step i: threads whose tid is a multiple of 2i add the element i to their right, straight in the
// input array, so the input is destroyed (the harness hands it a scratch copy). Every other thread
// idles, the branch `tid % (2i)` diverges inside every warp, and each step goes through L1/L2.
// Fixed from the seed: 000 calls __syncthreads() inside the divergent `if` (undefined behaviour);
// the barrier is outside here, as in 002. Added: the bound `g + i < n` (the seeds assume n % BLOCK
// == 0), so a partial last tile sums only real elements.
template <typename T>
__global__ void reduce_v0_gmem_interleaved(T* data, T* out, u32 n) {
    const u32 tid = threadIdx.x;
    const u32 g = blockIdx.x * blockDim.x + tid;
    for (u32 i = 1; i < blockDim.x; i *= 2) {
        if (tid % (2 * i) == 0 && g + i < n) data[g] += data[g + i];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = data[g];
}

// v1 (000 v1, 002 Reduction 1) - the same interleaved tree, in shared memory.
// Changed from v0: the tile is copied once into shared memory and reduced there; the input is no
// longer written. The divergent `tid % (2i)` branch and the idle threads stay. (Seed 000 measured
// this SLOWER than v0 on its GPU: v0's in-place traffic hit L1.)
// Fixed: 000's barrier inside the divergent `if`. Added: out-of-range elements load as 0.
template <typename T, u32 BLOCK>
__global__ void reduce_v1_smem_interleaved(const T* in, T* out, u32 n) {
    __shared__ T smem[BLOCK];
    const u32 tid = threadIdx.x;
    smem[tid] = load_or_zero(in, blockIdx.x * blockDim.x + tid, n);
    __syncthreads();
    for (u32 i = 1; i < blockDim.x; i *= 2) {
        if (tid % (2 * i) == 0) smem[tid] += smem[tid + i];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = smem[0];
}

// v2 (000 v2, 002 Reduction 2 "official") - no divergent branch: strided index.
// Changed from v1: thread t works on slot 2*i*t, so the active threads are the first
// blockDim/(2i) of the block - whole warps idle instead of every other lane, and no modulo.
// The cost moves to shared memory: slots 2*i*t are 2i words apart, so lanes of a warp hit the same
// bank (16 lanes per bank pair at i = 1, worse later) - the bank conflicts v3 removes.
// Seed 000 writes the guard as `tid < blockDim/(2i)`; 002's `index < blockDim` is the same set.
template <typename T, u32 BLOCK>
__global__ void reduce_v2_strided_index(const T* in, T* out, u32 n) {
    __shared__ T smem[BLOCK];
    const u32 tid = threadIdx.x;
    smem[tid] = load_or_zero(in, blockIdx.x * blockDim.x + tid, n);
    __syncthreads();
    for (u32 i = 1; i < blockDim.x; i *= 2) {
        const u32 index = 2 * i * tid;
        if (index < blockDim.x) smem[index] += smem[index + i];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = smem[0];
}
