// Seed 004's integer family: global vs shared memory, one tile or four tiles ("unrolled data
// blocks") per block, static vs dynamic shared memory. Seed 004 runs them on `int`, 16M elements,
// 256 threads, and compares their effective bandwidth.
#include "common.cuh"

// Accumulator semantics (see docs/int32.md): every kernel here adds in T, as the seed does. For
// T = int the sums wrap modulo 2^32 (two's complement), and since addition modulo 2^32 is
// associative and commutative, ANY order of the additions - CUDA's tree, Triton's tl.sum, the
// harness's chain of passes - gives the same bits: the exact sum wrapped into [-2^31, 2^31).
// (Signed overflow is formally undefined in C++; NVRTC/ptxas emit plain 32-bit add.s32, which
// wraps, and the GPU tests check it on data chosen to overflow.)
//
// Fixed from the seed, in every kernel below:
// - reduceGmem and reduceSmem `return` early when idx >= n, BEFORE the block's __syncthreads():
//   a partial last block then has threads that skip barriers the others wait at (undefined
//   behaviour), and the rest of its tree reads past n. Here no thread returns early: out-of-range
//   elements count as 0, the identity (load_or_zero in shared memory; bounded steps in global).
// - The four-block unroll tests `idx + 3*blockDim <= n` (reduceSmemUnroll) or `< n`
//   (reduceGmemUnroll) and skips all four loads when the fourth is out of range, silently
//   dropping a partial tail (and `<= n` reads in[n] when equal). Here each of the four loads is
//   bounds-checked on its own, so any n >= 1 sums exactly.

// In-place tree over one tile in global memory, `valid` = how many of its BLOCK slots lie inside
// [0, n). Seed 004's reduceGmem code (complete unroll, barrier after each step, volatile last
// warp) with one addition: a step only reads slot tid + s when that slot is inside the tile's valid
// part, so a partial last tile neither reads nor writes past n. For a full tile (every block but
// the last) the bound is always true and the code is the seed's.
template <typename T, u32 BLOCK>
__device__ __forceinline__ void gmem_tree_in_place(T* in, u32 tid, u32 valid) {
    if (BLOCK >= 1024) {
        if (tid < 512 && tid + 512 < valid) in[tid] += in[tid + 512];
        __syncthreads();
    }
    if (BLOCK >= 512) {
        if (tid < 256 && tid + 256 < valid) in[tid] += in[tid + 256];
        __syncthreads();
    }
    if (BLOCK >= 256) {
        if (tid < 128 && tid + 128 < valid) in[tid] += in[tid + 128];
        __syncthreads();
    }
    if (BLOCK >= 128) {
        if (tid < 64 && tid + 64 < valid) in[tid] += in[tid + 64];
        __syncthreads();
    }
    if (tid < 32) {
        volatile T* vmem = in;
        if (valid >= 64) {
            // Slots 0..63 all lie in the tile: the seed's unbounded volatile last warp.
            warp_reduce_volatile<T>(vmem, tid);
        } else {
            // Only a last tile shorter than 64 gets here (warp-uniform branch). The same six
            // steps, each bounded to slots inside [0, valid) and to the lanes whose slot still
            // matters (tid < s): a lane then never reads a slot another lane writes in the same
            // step, and __syncwarp() orders the steps, so this path needs no lockstep at all.
#pragma unroll
            for (u32 s = 32; s > 0; s >>= 1) {
                if (tid < s && tid + s < valid) vmem[tid] += vmem[tid + s];
                __syncwarp();
            }
        }
    }
}

// Seed 004's shared-memory body: each thread puts the sum of its TILES elements (tiles
// TILES*b .. TILES*b + TILES-1, each load bounds-checked) in smem[tid], then the complete-unroll
// tree with the volatile last warp (block_reduce_unrolled, 000 v6's helper: the same steps as the
// seed's reduceSmem). Shared by the static and the dynamic shared-memory kernels.
template <typename T, u32 BLOCK, u32 TILES>
__device__ __forceinline__ void smem_tiles_reduce(const T* g_in, T* g_out, u32 n, T* smem) {
    const u32 tid = threadIdx.x;
    const u32 idx = blockIdx.x * BLOCK * TILES + tid;
    T sum = T(0);
#pragma unroll
    for (u32 k = 0; k < TILES; ++k) sum += load_or_zero(g_in, idx + k * BLOCK, n);
    smem[tid] = sum;
    __syncthreads();
    block_reduce_unrolled<T, BLOCK>(smem, tid);
    if (tid == 0) g_out[blockIdx.x] = smem[0];
}

// 004-1 reduceGmem (seed 004) - the baseline: in place in global memory, complete unroll,
// volatile last warp. No shared memory at all: every tree step reads and writes the input array
// (L1/L2 absorb part of it), so the input is destroyed (the harness hands it a scratch copy).
// Fixed: the early `return` before __syncthreads() (see the top of the file); the partial last
// tile is handled by bounded steps instead.
template <typename T, u32 BLOCK>
__global__ void reduce_gmem(T* g_in, T* g_out, u32 n) {
    const u32 tid = threadIdx.x;
    const u32 base = blockIdx.x * BLOCK;
    const u32 valid = n - base < BLOCK ? n - base : BLOCK;  // base < n: the grid is ceil(n/BLOCK)
    T* in = g_in + base;
    gmem_tree_in_place<T, BLOCK>(in, tid, valid);
    if (tid == 0) g_out[blockIdx.x] = in[0];
}

// 004-2 reduceSmem (seed 004) - the same tree in static shared memory.
// Changed from reduceGmem: the tile is loaded once into `__shared__ T smem[BLOCK]` and reduced
// there; global memory sees one read per element and one write per block (the seed's ncu: 6.5M ->
// 2.1M load sectors, 3.2M -> 65K store sectors), and the input is no longer written.
// Fixed: the early `return` before __syncthreads(); out-of-range elements load as 0.
template <typename T, u32 BLOCK>
__global__ void reduce_smem(const T* g_in, T* g_out, u32 n) {
    __shared__ T smem[BLOCK];
    smem_tiles_reduce<T, BLOCK, 1>(g_in, g_out, n, smem);
}

// 004-3 reduceGmemUnroll (seed 004) - each block first folds 4 data blocks, in global memory.
// Changed from reduceGmem: a block covers 4 adjacent tiles; thread t adds the elements of tiles
// 1..3 in a register and adds that into its element of tile 0 (g_in[idx] += sum), so the grid
// shrinks 4x (16384 blocks at 16M), 4 independent loads are in flight per thread, and the in-place
// tree then runs over tile 0 only. Still in place (the harness hands it a scratch copy).
// Fixed: the seed folds only when `idx + 3*blockDim < n`, dropping a partial tail; here each of
// the 4 loads is bounds-checked (absent elements are 0) and the tree is bounded as in reduceGmem.
template <typename T, u32 BLOCK>
__global__ void reduce_gmem_unroll4(T* g_in, T* g_out, u32 n) {
    const u32 tid = threadIdx.x;
    const u32 base = blockIdx.x * BLOCK * 4;
    const u32 idx = base + tid;
    if (idx < n) {
        T sum = T(0);
        sum += load_or_zero(g_in, idx + BLOCK, n);
        sum += load_or_zero(g_in, idx + 2 * BLOCK, n);
        sum += load_or_zero(g_in, idx + 3 * BLOCK, n);
        g_in[idx] += sum;
    }
    __syncthreads();
    const u32 valid = n - base < BLOCK ? n - base : BLOCK;  // valid part of tile 0
    T* in = g_in + base;
    gmem_tree_in_place<T, BLOCK>(in, tid, valid);
    if (tid == 0) g_out[blockIdx.x] = in[0];
}

// 004-4 reduceSmemUnroll (seed 004) - 4 data blocks per block, into shared memory.
// Changed from reduceSmem: thread t sums its element of 4 adjacent tiles in a register
// (tmp_sum, 4 loads in flight) and stores that into smem[tid]; grid 4x smaller, partial stores
// 4x fewer (the seed's ncu: 65K -> 16K store sectors). Changed from reduceGmemUnroll: the tree
// runs in shared memory and the input is not written.
// Fixed: the seed's `idx + 3*blockDim <= n` guard (all four loads or none); each load is checked.
template <typename T, u32 BLOCK>
__global__ void reduce_smem_unroll4(const T* g_in, T* g_out, u32 n) {
    __shared__ T smem[BLOCK];
    smem_tiles_reduce<T, BLOCK, 4>(g_in, g_out, n, smem);
}

// Dynamic shared memory: `extern __shared__`, its size given at launch (BLOCK * sizeof(T); the
// harness passes shared_mem for Launch(dynamic_smem=True)). Declared as raw bytes and cast, because
// a templated `extern __shared__ T smem[]` would declare one symbol with a different type in every
// instantiation (NVRTC rejects that).
#define DYNAMIC_SMEM(T, name)                               \
    extern __shared__ __align__(16) unsigned char raw_smem[]; \
    T* name = reinterpret_cast<T*>(raw_smem)

// 004-5 reduceSmemDyn (seed 004) - reduceSmem with dynamically sized shared memory.
// Changed from reduceSmem: only the declaration of smem; the seed sees no speed difference.
template <typename T, u32 BLOCK>
__global__ void reduce_smem_dyn(const T* g_in, T* g_out, u32 n) {
    DYNAMIC_SMEM(T, smem);
    smem_tiles_reduce<T, BLOCK, 1>(g_in, g_out, n, smem);
}

// 004-6 reduceSmemUnrollDyn (seed 004) - reduceSmemUnroll with dynamically sized shared memory.
// Changed from reduceSmemUnroll: only the declaration of smem.
template <typename T, u32 BLOCK>
__global__ void reduce_smem_unroll4_dyn(const T* g_in, T* g_out, u32 n) {
    DYNAMIC_SMEM(T, smem);
    smem_tiles_reduce<T, BLOCK, 4>(g_in, g_out, n, smem);
}
