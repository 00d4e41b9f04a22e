// Seed 001: the host-driven multi-pass reduction of data that starts in HOST memory.
//
// The host copies the data to the device, then launches a block reduction again and again over the
// partials (swapping input and output buffers) until one value is left, and copies that scalar
// back (harness/studies/host_plan.py is the host side). Every kernel here reduces one tile of 2 * blockDim
// elements (1024 threads, 2048 elements) to one partial: block b covers [b*2048, (b+1)*2048),
// clipped to n by the seed's `right < n` bound, so any n >= 1 works.
//
// Versions (the seed's table is cumulative; which kernel each version launches):
//   V0  reduce_001_v0_gmem_interleaved   pageable host memory
//   V1  reduce_001_v1_gmem_sequential    pageable host memory
//   V2  reduce_001_v1_gmem_sequential    + pinned host memory (V2 = V1 + pinned, as in the seed)
//   V3  reduce_001_v1_gmem_sequential    + pinned + several streams (chunks copied and reduced as
//                                          they arrive; the partials are combined at the end)
//   V4  reduce_001_v4_smem               + pinned, one stream (the seed's V4 times near V2, not
//                                          near V3's small-size overhead: it builds on V2)
//
// Fixed from the seed: sizes and offsets are 64-bit (`unsigned long long`). The seed's interface
// is int32 and overflows past 2^31 elements, as its own notes warn; here n and block_start are
// 64-bit, so a pass over 2^31+ elements (a grid of ~1M blocks, fine in x) indexes correctly.
// The in-place kernels (V0..V3) destroy their input, which the seed calls "not good": the input
// they see is always a device copy (the H2D copy of the host data, or a partial buffer), so the
// caller's host data is never touched.
#include "common.cuh"

typedef unsigned long long u64;

// V0 (001:V0) - interleaved pairs in global memory, in place.
// Idea: at step k (stride 2^k) thread id adds input[left + stride] into input[left], with
// left = block_start + id * 2 * stride; the first `threads` threads work, threads halving each
// step, a barrier after each step. After log2(2048) = 11 steps input[block_start] holds the tile's
// sum, which thread 0 writes to output[blockIdx.x].
// Changed from: the start of seed 001.
// Fixed: 64-bit n and offsets (the seed's int32 overflows past 2^31); the barrier is outside the
// `if`, reached by every thread.
template <typename T>
__global__ void reduce_001_v0_gmem_interleaved(T* input, T* output, u64 n) {
    const u64 id = threadIdx.x;
    const u64 block_start = (u64)blockIdx.x * (2ull * blockDim.x);
    u64 threads = blockDim.x;
    for (u64 stride = 1; threads > 0; stride *= 2, threads /= 2) {
        const u64 left = block_start + id * (stride * 2);
        const u64 right = left + stride;
        if (id < threads && right < n) input[left] += input[right];
        __syncthreads();
    }
    if (id == 0) output[blockIdx.x] = input[block_start];
}

// V1 (001:V1, also launched by V2 and V3) - sequential ("coalesced") addressing in global memory,
// in place: the seed's corrected reduce_yh.
// Idea: at stride s (blockDim, blockDim/2, ..., 1) thread tid < s adds input[block_start + tid + s]
// into input[block_start + tid]: consecutive threads touch consecutive words (coalesced), and the
// live data packs into the front of the tile instead of spreading out as in V0.
// Changed from V0: left = block_start + tid, right = left + stride, the stride HALVES each step.
// Fixed: the seed's first V1 attempt (`input[block_start + tid] = input[left] + input[right]` with
// left = block_start + 2*tid) had a read/write race: in one step thread t reads slots 2t and
// 2t+1 while threads 2t and 2t+1 write them (slots written, [0, threads), overlap slots read,
// [0, 2*threads), with no barrier between), the "different threads read and write the same
// location in one loop" the seed names as the cause of its mismatch. Here a step reads [s, 2s) and [0, s) and writes only
// [0, s): thread tid alone touches slot tid, so no two threads meet within a step. 64-bit sizes.
template <typename T>
__global__ void reduce_001_v1_gmem_sequential(T* input, T* output, u64 n) {
    const u64 tid = threadIdx.x;
    const u64 block_start = (u64)blockIdx.x * (2ull * blockDim.x);
    u64 threads = blockDim.x;
    for (u64 stride = blockDim.x; threads > 0; threads /= 2, stride /= 2) {
        const u64 left = block_start + tid;
        const u64 right = left + stride;
        if (tid < threads && right < n) input[left] += input[right];
        __syncthreads();
    }
    if (tid == 0) output[blockIdx.x] = input[block_start];
}

// V4 (001:V4) - shared memory.
// Idea: each thread loads its two elements of the tile (tid and tid + blockDim) and adds them
// while loading (V1's first step), then the same sequential tree runs in shared memory; global
// memory is read once and written once per block.
// Changed from V1/V2: the tree works in shared memory, not in place in global memory, so the
// input is no longer written (the kernel takes it const). The additions and their order are
// V1's exactly (out-of-range elements read as 0, and x + 0 = x), so V4's sums equal V1's bit for
// bit. Host side as V2: pinned memory, one stream.
// Fixed: the seed's V4 first read results from `input` (empty in a shared-memory version: "input
// has no result") and overran shared memory with too large a block; here the block is the
// compile-time BLOCK (1024), the array is BLOCK elements, and the result comes from smem[0].
template <typename T, u32 BLOCK>
__global__ void reduce_001_v4_smem(const T* input, T* output, u64 n) {
    __shared__ T smem[BLOCK];
    const u32 tid = threadIdx.x;
    const u64 i = (u64)blockIdx.x * (2ull * BLOCK) + tid;
    smem[tid] = (i < n ? input[i] : T(0)) + (i + BLOCK < n ? input[i + BLOCK] : T(0));
    __syncthreads();
    for (u32 s = BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s) smem[tid] += smem[tid + s];
        __syncthreads();
    }
    if (tid == 0) output[blockIdx.x] = smem[0];
}
