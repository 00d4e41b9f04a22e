// Stages 7-8 of the ladder: a fixed number of blocks, many elements per thread, then warp shuffles.
// Seeds: 000 (v7 "block_num", v8 "shuffle", whose code it names reduce7) and 002 (Reductions 7, 8).
#include "common.cuh"

// Each thread's serial sum over its share of the input, in a fixed order (k = 0, 1, ...), so a
// Triton program that gives lane t the same elements adds them in the same order.
//   MAP_CHUNKED: block b owns [b*BLOCK*per_thread, (b+1)*BLOCK*per_thread), reads it tile by tile.
//   MAP_STRIDED: grid-stride, element b*BLOCK + t + i*gridDim*BLOCK (per_thread is not needed).
// The seeds make the per-thread count a template parameter (NUM_PER_THREAD, NUMSPERTHREAD), which
// fits one n only; any n needs a run-time count and a bound, added here.
template <typename T, u32 BLOCK, int MAPPING>
__device__ __forceinline__ T thread_serial_sum(const T* in, u32 n, u32 per_thread) {
    T acc = T(0);
    if (MAPPING == MAP_CHUNKED) {
        const u32 base = blockIdx.x * BLOCK * per_thread + threadIdx.x;
        for (u32 k = 0; k < per_thread; ++k) acc += load_or_zero(in, base + k * BLOCK, n);
    } else {
        for (u32 i = blockIdx.x * BLOCK + threadIdx.x; i < n; i += gridDim.x * BLOCK) acc += in[i];
    }
    return acc;
}

// v7 (000 v7, 002 Reduction 7) - a fixed grid (1024 blocks), many elements per thread.
// Changed from v6: the grid no longer grows with n; each thread first sums n / (1024*BLOCK)
// elements serially, so the tree, the barriers and the partial store are paid once per 1024
// blocks instead of once per two tiles. The block tree is v6's complete unroll.
// ACC_IN_SMEM = true is 002 Reduction 7 as written: it accumulates straight into its volatile
// shared slot (a shared load and store per element) with the grid-stride mapping. 000 v7 shows no
// code; its text (1024 blocks, elements per thread) and its v8 code (named reduce7) give the chunked
// mapping, accumulated in a register (ACC_IN_SMEM = false).
template <typename T, u32 BLOCK, int MAPPING, bool ACC_IN_SMEM>
__global__ void reduce_v7_fixed_blocks(const T* in, T* out, u32 n, u32 per_thread) {
    static_assert(!ACC_IN_SMEM || MAPPING == MAP_STRIDED, "002's shared accumulation is strided");
    __shared__ T smem[BLOCK];
    const u32 tid = threadIdx.x;
    if (ACC_IN_SMEM) {
        volatile T* vsmem = smem;
        vsmem[tid] = T(0);
        for (u32 i = blockIdx.x * BLOCK + tid; i < n; i += gridDim.x * BLOCK) vsmem[tid] += in[i];
    } else {
        smem[tid] = thread_serial_sum<T, BLOCK, MAPPING>(in, n, per_thread);
    }
    __syncthreads();
    block_reduce_unrolled<T, BLOCK>(smem, tid);
    if (tid == 0) out[blockIdx.x] = smem[0];
}

// v8 (000 v8, 002 Reduction 8) - warp shuffles instead of the shared-memory tree.
// Changed from v7: the block's values stay in registers; each warp folds its 32 values with
// __shfl_down_sync, lane 0 of each warp writes one slot of a 32-slot array, and warp 0 folds those.
// One barrier per block instead of one per tree step; no bank conflicts; 128 bytes of shared
// memory. MAP_CHUNKED is 000's indexing, MAP_STRIDED 002's.
// Dropped from 000: its __syncthreads() right after the load loop (nothing is shared yet).
// 000 guards each shuffle with `if (blockDim.x >= ...)`; BLOCK is a multiple of 32 here, so all
// five steps always run, as in 002.
template <typename T, u32 BLOCK, int MAPPING>
__global__ void reduce_v8_shuffle(const T* in, T* out, u32 n, u32 per_thread) {
    static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "BLOCK must be whole warps");
    __shared__ T warp_sums[32];
    const u32 tid = threadIdx.x;
    const u32 lane = tid % 32;
    const u32 warp = tid / 32;
    T sum = thread_serial_sum<T, BLOCK, MAPPING>(in, n, per_thread);
    sum = warp_reduce_shfl(sum);
    if (lane == 0) warp_sums[warp] = sum;
    __syncthreads();
    if (warp == 0) {
        sum = lane < BLOCK / 32 ? warp_sums[lane] : T(0);
        sum = warp_reduce_shfl(sum);
    }
    if (tid == 0) out[blockIdx.x] = sum;
}
