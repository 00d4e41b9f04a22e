// The ladder along an axis (family "axis"): sums along one dim of a 2-D / 3-D tensor.
//
// The harness views any contiguous tensor reduced along dim d as (outer, length, inner)
// (harness/core/axis_geometry.py): element (o, r, i) at o*length*inner + r*inner + i, output
// (o, i) at o*inner + i. inner == 1 is a ROW reduction (rows of `length` contiguous elements);
// inner > 1 is a COLUMN reduction (`outer` batches of `inner` columns read with stride `inner`).
//
// Conventions: indices are 32-bit, as in common.cuh; the harness refuses tensors of 2^31 elements
// or more (max_n), so no index below can wrap. Each kernel reads TIN and writes TOUT, and adds in
// Acc<TIN>::type (AxisAcc below): float for float32 and for the 16-bit floats (read as bits,
// converted exactly, the sum rounded once to TOUT on the store), unsigned int for int32 (wraps
// modulo 2^32 by definition: the 1-D ladder's int sums, without signed overflow). TOUT is TIN,
// except in split columns (c2): the first pass writes Acc partials and the second reads them.
// No atomics: every output is the sum of the same elements in the same order on every run, so
// the bits never change from run to run.
// Helpers stay in this file (not common.cuh), so that the 1-D ladder's sources, and the census
// and porting guide compiled from them, do not change with this family.
#include "common.cuh"

// 16-bit storage types (the same names and layout as fastest.cu's: the harness's dtype table
// spells them rl_half / rl_bfloat16), read and written as their bits.
struct rl_half {
    unsigned short bits;
};
struct rl_bfloat16 {
    unsigned short bits;
};

// Per element type: the accumulator, one element into it, and the accumulator stored as the type
// (rounded to nearest even for the 16-bit floats: cvt.rn; bfloat16's needs sm_80).
template <typename T>
struct AxisAcc {
    typedef T type;
    static __device__ __forceinline__ type in(T v) { return v; }
    static __device__ __forceinline__ T out(type a) { return a; }
};
template <>
struct AxisAcc<int> {
    typedef unsigned int type;
    static __device__ __forceinline__ type in(int v) { return static_cast<type>(v); }
    static __device__ __forceinline__ int out(type a) { return static_cast<int>(a); }
};
template <>
struct AxisAcc<rl_half> {
    typedef float type;
    static __device__ __forceinline__ float in(rl_half v) {
        float f;
        asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(v.bits));
        return f;
    }
    static __device__ __forceinline__ rl_half out(float a) {
        rl_half h;
        asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h.bits) : "f"(a));
        return h;
    }
};
template <>
struct AxisAcc<rl_bfloat16> {
    typedef float type;
    static __device__ __forceinline__ float in(rl_bfloat16 v) {
        return __uint_as_float(static_cast<unsigned int>(v.bits) << 16);
    }
    static __device__ __forceinline__ rl_bfloat16 out(float a) {
        rl_bfloat16 h;
        asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h.bits) : "f"(a));
        return h;
    }
};

// r0 - rows: a thread per row, the naive port.
// The idea: the 1-D serial loop moved inside a thread; thread t of block b owns row b*BLOCK + t
// and adds its elements in order. What changed from the 1-D ladder: there is no tree and no
// second pass, every output is one thread's serial sum. Why it is slow: the 32 lanes of a warp
// read addresses `length` elements apart, so every load is its own 32-byte sector (uncoalesced),
// and a tensor with few rows leaves most of the GPU idle.
template <typename T, u32 BLOCK>
__global__ void axis_r0_thread_per_row(const T* in, T* out, u32 rows, u32 length) {
    typedef AxisAcc<T> E;
    const u32 row = blockIdx.x * BLOCK + threadIdx.x;
    if (row >= rows) return;
    const T* p = in + row * length;
    typename E::type acc = 0;
    for (u32 k = 0; k < length; ++k) acc += E::in(p[k]);
    out[row] = E::out(acc);
}

// r1 - rows: a block per row with a shared-memory tree.
// The idea: the 1-D ladder's stage 3 (sequential addressing) applied to each row: block b owns
// row b, thread t adds elements t, t + BLOCK, ... in a register, then the block folds its BLOCK
// partials in shared memory. What changed from r0: a warp now reads 32 consecutive elements of
// one row (coalesced), and one row is spread over BLOCK threads. Why: the memory traffic is what
// a row sum costs; r0 wasted most of every sector it fetched.
template <typename T, u32 BLOCK>
__global__ void axis_r1_block_per_row(const T* in, T* out, u32 rows, u32 length) {
    typedef AxisAcc<T> E;
    __shared__ typename E::type smem[BLOCK];
    const u32 tid = threadIdx.x;
    const T* p = in + blockIdx.x * length;
    typename E::type acc = 0;
    for (u32 k = tid; k < length; k += BLOCK) acc += E::in(p[k]);
    smem[tid] = acc;
    __syncthreads();
#pragma unroll
    for (u32 s = BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s) smem[tid] += smem[tid + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = E::out(smem[0]);
}

// r2 - rows: a warp per row with shuffles, BLOCK / 32 rows per block.
// The idea: the 1-D ladder's stage 8 (warp shuffles) for rows: warp w of block b owns row
// b*(BLOCK/32) + w; lane l adds elements l, l + 32, ..., and five __shfl_down_sync steps fold the
// warp. What changed from r1: no shared memory and no barrier; one row per warp instead of per
// block. Why: rows of a few hundred elements (norms, softmax) left most of r1's 256 threads with
// nothing to add and paid eight barriers per row.
template <typename T, u32 BLOCK>
__global__ void axis_r2_warp_per_row(const T* in, T* out, u32 rows, u32 length) {
    static_assert(BLOCK % 32 == 0, "BLOCK must be whole warps");
    const u32 lane = threadIdx.x % 32;
    const u32 row = blockIdx.x * (BLOCK / 32) + threadIdx.x / 32;
    if (row >= rows) return;  // the whole warp leaves together: the shuffles see full warps
    typedef AxisAcc<T> E;
    const T* p = in + row * length;
    typename E::type acc = 0;
    for (u32 k = lane; k < length; k += 32) acc += E::in(p[k]);
    acc = warp_reduce_shfl(acc);
    if (lane == 0) out[row] = E::out(acc);
}

// c0 - columns: a thread per column (coalesced across columns).
// The idea: the naive port again, now along a column: thread j owns output j = (o, i) and adds
// element (o, r, i) for r = 0, 1, ... in order. What changed from the row stages: the reduced dim
// is strided, so the coalescing comes from the other dim for free: the 32 lanes of a warp read 32
// adjacent columns of one row, 128 consecutive bytes. Why it is not enough: one thread per
// column, so a tensor with few columns (tall-skinny) runs few threads, each down a long chain.
// Also the second pass of c2 (over the split partials, viewed as (outer, splits, inner)).
// TIN: the input's type, or (second pass) its accumulator's; TOUT: the input's type.
template <typename TIN, typename TOUT, u32 BLOCK>
__global__ void axis_c0_thread_per_column(const TIN* in, TOUT* out, u32 outer, u32 length,
                                          u32 inner) {
    typedef AxisAcc<TIN> E;
    const u32 j = blockIdx.x * BLOCK + threadIdx.x;
    if (j >= outer * inner) return;
    const u32 o = j / inner;
    const u32 i = j - o * inner;
    const TIN* p = in + o * length * inner + i;
    typename E::type acc = 0;
    for (u32 r = 0; r < length; ++r) acc += E::in(p[r * inner]);
    out[j] = AxisAcc<TOUT>::out(acc);
}

// c1 - columns: 2-D tiles, a block per 32-column strip, row groups combined in shared memory.
// The idea: block (o, s) covers the strip of columns 32s .. 32s+31 of batch o with BLOCK / 32
// row groups; thread (g, l) adds rows g, g + G, ... (G = BLOCK / 32) of column 32s + l, then the
// G partials of each column are folded in shared memory (a tree over g). What changed from c0:
// G threads per column instead of one, each down a G-times shorter chain; a warp still reads 128
// consecutive bytes of one row. Why: c0 needs outer*inner threads to fill the GPU; c1 runs G
// times more for the same shape.
// c2 - the same kernel with the reduced dim split across blockIdx.y: block (o, s, k) adds rows
// [k*chunk, min(length, (k+1)*chunk)) and writes its strip's partial to out at
// (o, k, i) of an (outer, gridDim.y, inner) buffer; c0's kernel then adds each column's
// gridDim.y partials in split order (a deterministic second pass instead of float atomics).
// With gridDim.y == 1 and chunk == length this is c1, writing out (o, i) directly.
// TOUT: the input's type (c1), or its accumulator's (c2's first pass: the partials).
template <typename TIN, typename TOUT, u32 BLOCK>
__global__ void axis_c1_column_tiles(const TIN* in, TOUT* out, u32 outer, u32 length, u32 inner,
                                     u32 chunk) {
    typedef AxisAcc<TIN> E;
    constexpr u32 G = BLOCK / 32;
    static_assert(BLOCK % 32 == 0 && (G & (G - 1)) == 0, "BLOCK: a power-of-two number of warps");
    __shared__ typename E::type smem[G][32];
    const u32 lane = threadIdx.x % 32;
    const u32 group = threadIdx.x / 32;
    const u32 strips = (inner + 31) / 32;
    const u32 o = blockIdx.x / strips;
    const u32 i = (blockIdx.x - o * strips) * 32 + lane;
    const u32 begin = blockIdx.y * chunk;
    const u32 end = min(length, begin + chunk);
    typename E::type acc = 0;
    if (i < inner) {
        const TIN* p = in + o * length * inner + i;
        for (u32 r = begin + group; r < end; r += G) acc += E::in(p[r * inner]);
    }
    smem[group][lane] = acc;
    __syncthreads();
#pragma unroll
    for (u32 s = G / 2; s > 0; s >>= 1) {
        if (group < s) smem[group][lane] += smem[group + s][lane];
        __syncthreads();
    }
    if (group == 0 && i < inner) {
        out[(o * gridDim.y + blockIdx.y) * inner + i] = AxisAcc<TOUT>::out(smem[0][lane]);
    }
}
