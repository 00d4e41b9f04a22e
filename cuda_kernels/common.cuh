// Shared helpers for the reduction ladder.
//
// Every .cu file of the ladder includes this header. The files are compiled by NVRTC (through CuPy
// on a GPU machine, through the NVRTC wheel on a machine without one), so nothing here needs the
// CUDA runtime headers: only builtins (__syncthreads, __syncwarp, __shfl_down_sync).
//
// Conventions shared by all kernels:
// - T is the element type (float, int). Accumulation happens in T, as in the seeds: float sums round,
//   int sums wrap modulo 2^32 (the harness's golden does the same).
// - Indices are 32-bit `unsigned int`, as in the seeds. The harness refuses n >= 2^31 for these
//   kernels (catalogue field max_n), so no index expression below can wrap.
// - A block's tile may run past n (the seeds assume n divisible by the tile). Out-of-range elements
//   read as T(0), the identity, so a partial tile sums exactly what lies inside [0, n).
#pragma once

typedef unsigned int u32;

// How a block that reads two tiles ("first add during load", stage 4 onward) pairs them.
//   PAIR_ADJACENT: tiles 2b and 2b+1, i.e. in[2*b*B + t] and in[2*b*B + B + t]  (seed 000 v4..v6,
//                  seed 002's third plan of Reduction 4).
//   PAIR_SPLIT:    tile b of the first half and tile b of the second half, i.e. in[b*B + t] and
//                  in[b*B + t + gridDim*B]  (the intent of seed 002's plans A and B, and of its
//                  Reductions 5 and 6, which copy plan A's indexing).
// (constexpr ints rather than macros so they can appear in NVRTC name expressions.)
constexpr int PAIR_ADJACENT = 0;
constexpr int PAIR_SPLIT = 1;

// How a fixed number of blocks walks an input larger than the grid (stages 7 and 8).
//   MAP_CHUNKED: block b owns the contiguous chunk [b*B*K, (b+1)*B*K); thread t reads
//                chunk_start + k*B + t for k < K (seed 000's reduce7/v8 indexing).
//   MAP_STRIDED: thread t of block b reads b*B + t + i*G*B (grid-stride; seed 002's Reductions 7, 8).
constexpr int MAP_CHUNKED = 0;
constexpr int MAP_STRIDED = 1;

template <typename T>
__device__ __forceinline__ T load_or_zero(const T* in, u32 i, u32 n) {
    return i < n ? in[i] : T(0);
}

// Stage 4's first add during load: each thread sums its element of the block's two tiles.
template <typename T, int PAIRING>
__device__ __forceinline__ T load_pair(const T* in, u32 n) {
    u32 a, b;
    if (PAIRING == PAIR_ADJACENT) {
        a = 2u * blockIdx.x * blockDim.x + threadIdx.x;
        b = a + blockDim.x;
    } else {
        a = blockIdx.x * blockDim.x + threadIdx.x;
        b = a + gridDim.x * blockDim.x;
    }
    return load_or_zero(in, a, n) + load_or_zero(in, b, n);
}

// The seeds' last-warp unroll (000 v5 `warpReduce`, 002 Reduction 5, 004): the first warp folds
// smem[0..63] into smem[0] with no barrier. `volatile` forces every read and write to go to shared
// memory, so lanes see each other's stores. That relies on the warp running in lockstep, which
// Volta's independent thread scheduling no longer guarantees: see warp_reduce_syncwarp for the
// sound form. Needs a block of at least 64 threads (it reads smem[tid + 32]).
template <typename T>
__device__ __forceinline__ void warp_reduce_volatile(volatile T* smem, u32 tid) {
    smem[tid] += smem[tid + 32];
    smem[tid] += smem[tid + 16];
    smem[tid] += smem[tid + 8];
    smem[tid] += smem[tid + 4];
    smem[tid] += smem[tid + 2];
    smem[tid] += smem[tid + 1];
}

// The sound form of the same unroll (the fix seed 002 names): every step reads, waits for the
// whole warp with __syncwarp(), writes, and waits again, so no lane reads a slot another lane is
// still writing. Same additions in the same order as warp_reduce_volatile.
template <typename T>
__device__ __forceinline__ void warp_reduce_syncwarp(T* smem, u32 tid) {
    T v = smem[tid];
#pragma unroll
    for (u32 offset = 32; offset > 0; offset >>= 1) {
        v += smem[tid + offset];
        __syncwarp();
        smem[tid] = v;
        __syncwarp();
    }
}

// Warp shuffle reduction (000 v8, 002 Reduction 8): lane 0 ends with the sum of the warp's 32
// values, carried in registers; __shfl_down_sync synchronizes the warp itself.
template <typename T>
__device__ __forceinline__ T warp_reduce_shfl(T sum) {
    sum += __shfl_down_sync(0xffffffffu, sum, 16);
    sum += __shfl_down_sync(0xffffffffu, sum, 8);
    sum += __shfl_down_sync(0xffffffffu, sum, 4);
    sum += __shfl_down_sync(0xffffffffu, sum, 2);
    sum += __shfl_down_sync(0xffffffffu, sum, 1);
    return sum;
}

// Complete unroll of the shared-memory tree for a compile-time block size (000 v6, 002 Reduction
// 6, 004's kernels): one barrier after every step down to 64 slots, then the volatile last warp.
// Seed 000 v6 stops at 512 threads; the 1024 step is added so BLOCK = 1024 is correct. Seed 002's
// templated `add` omits the barrier between its 512 and 256 steps (a race for BLOCK >= 512); every
// step here ends with one.
template <typename T, u32 BLOCK>
__device__ __forceinline__ void block_reduce_unrolled(volatile T* smem, u32 tid) {
    if (BLOCK >= 1024) {
        if (tid < 512) smem[tid] += smem[tid + 512];
        __syncthreads();
    }
    if (BLOCK >= 512) {
        if (tid < 256) smem[tid] += smem[tid + 256];
        __syncthreads();
    }
    if (BLOCK >= 256) {
        if (tid < 128) smem[tid] += smem[tid + 128];
        __syncthreads();
    }
    if (BLOCK >= 128) {
        if (tid < 64) smem[tid] += smem[tid + 64];
        __syncthreads();
    }
    if (tid < 32) warp_reduce_volatile<T>(smem, tid);
}

// Last-block-done ticket (cuda/reproducible and cuda/fastest's FAST_ACQ_REL): thread 0 of each
// block calls it once, after its block's last store to the workspace. Release: that thread's
// earlier stores are visible before the ticket is; acquire: the block that takes the last ticket
// sees every store released before it (a __syncthreads() after it carries that to the block's
// other threads). Returns the ticket, 0 .. G - 1 (MEMBAR.ALL.GPU + ATOMG in SASS), G the blocks
// that share the counter: the grid's x by default, or what the caller says (axis c3: a strip's
// blocks, the grid's y).
// Modular: atom.inc wraps at G - 1 (old >= G - 1 ? 0 : old + 1), so the block that draws
// G - 1 leaves the counter at 0 itself and no block ever stores to it. Why not a reset store:
// should two launches ever share one counter, a plain `*counter = 0` can land between the other
// launch's increments and leave it at k != 0, after which every launch's "last" block would be an
// early one, silently, for good. With the wrap, each launch adds exactly G modulo G, so the
// counter is back at 0 once the launches that shared it are done: an incident cannot outlive them.
__device__ __forceinline__ u32 ticket_acq_rel(u32* counter, u32 blocks) {
    u32 ticket;
    asm volatile("atom.acq_rel.gpu.global.inc.u32 %0, [%1], %2;"
                 : "=r"(ticket)
                 : "l"(counter), "r"(blocks - 1u)
                 : "memory");
    return ticket;
}
__device__ __forceinline__ u32 ticket_acq_rel(u32* counter) {
    return ticket_acq_rel(counter, gridDim.x);
}
