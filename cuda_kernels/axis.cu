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
// except in the two-pass split (c2): its first pass writes Acc partials and the second reads them
// (r4 and c3 keep their partials in a workspace of Acc and combine them in their own launch).
// No float atomics (r4's and c3's only atomic is an integer ticket: which block is last varies,
// the order it adds the partials in does not): every output is the sum of the same elements in
// the same order on every run, so the bits never change from run to run.
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

// ---- The vectorized stages (r3, r4, c3): four adjacent elements per load. ----
// A QUAD is four adjacent elements read as one access: 16 bytes for float32 / int32 (LDG.128),
// 8 for the 16-bit floats. A quad is read as one vector only when every quad the kernel touches
// is aligned (the input's address a multiple of the quad's bytes and the contiguous dim a
// multiple of 4: `quads_aligned`); otherwise the same four elements are read one by one. Both
// paths add element e of a quad into accumulator a[e], in the same order, so the bits do not
// depend on the alignment, only on the values and the shape.
constexpr u32 QUAD = 4;
template <u32 BYTES>
struct QuadWord;
template <>
struct QuadWord<16> {
    typedef uint4 type;
};
template <>
struct QuadWord<8> {
    typedef uint2 type;
};
template <typename T>
union QuadBits {
    typename QuadWord<QUAD * sizeof(T)>::type w;
    T e[QUAD];
};
template <typename T>
__device__ __forceinline__ QuadBits<T> load_quad(const T* p) {
    QuadBits<T> q;
    q.w = *reinterpret_cast<const typename QuadWord<QUAD * sizeof(T)>::type*>(p);
    return q;
}
template <typename T>
__device__ __forceinline__ void add_quad(typename AxisAcc<T>::type (&a)[QUAD],
                                         const QuadBits<T>& q) {
#pragma unroll
    for (u32 e = 0; e < QUAD; ++e) a[e] += AxisAcc<T>::in(q.e[e]);
}
// Element by element, the same quad (only its elements below `limit`, the dim's end).
template <typename T>
__device__ __forceinline__ void add_quad_scalar(typename AxisAcc<T>::type (&a)[QUAD], const T* p,
                                                u32 first, u32 limit) {
#pragma unroll
    for (u32 e = 0; e < QUAD; ++e)
        if (first + e < limit) a[e] += AxisAcc<T>::in(p[e]);
}
template <typename T>
__device__ __forceinline__ bool quads_aligned(const T* in, u32 contiguous) {
    return reinterpret_cast<unsigned long long>(in) % (QUAD * sizeof(T)) == 0 &&
           contiguous % QUAD == 0;
}
// A thread's four accumulators in one fixed order: ((a0 + a1) + a2) + a3.
template <typename A>
__device__ __forceinline__ A fold_quad(const A (&a)[QUAD]) {
    return ((a[0] + a[1]) + a[2]) + a[3];
}

// r3 - rows: sub-warp groups, `lanes` lanes per row (1, 2, 4, 8, 16 or 32), a quad per lane.
// The idea: r2's warp per row, with the warp cut into groups of `lanes` lanes sized to the row
// (lanes * 4 >= length where possible: axis_geometry picks it), BLOCK / lanes rows per block;
// lane l reads the quads l, l + lanes, ... of its row as 16-byte loads, then the group folds its
// four accumulators and `lanes` partials with __shfl_down_sync(width = lanes). What changed from
// r2: a row of 4 elements is one lane's one load (r2 kept 28 of 32 lanes idle and read it with 4
// loads), a row of 64 is 16 lanes, and every load is a whole quad. Why: short rows (norms over a
// few features, (2^20, 4)) made r2 issue mostly empty loads; here every lane's load is 16 useful
// bytes and a warp reads 512 consecutive bytes.
template <typename T, u32 BLOCK>
__global__ void axis_r3_subwarp_rows(const T* in, T* out, u32 rows, u32 length, u32 lanes) {
    typedef AxisAcc<T> E;
    typedef typename E::type A;
    const u32 lane = threadIdx.x % lanes;
    const u32 row = blockIdx.x * (BLOCK / lanes) + threadIdx.x / lanes;
    A a[QUAD] = {0, 0, 0, 0};
    if (row < rows) {  // no early return: every lane of the warp takes part in the shuffles
        const T* p = in + row * length;
        const u32 step = lanes * QUAD;
        if (quads_aligned(in, length)) {
#pragma unroll 4
            for (u32 k = lane * QUAD; k < length; k += step) add_quad(a, load_quad(p + k));
        } else {
            for (u32 k = lane * QUAD; k < length; k += step) add_quad_scalar(a, p + k, k, length);
        }
    }
    A acc = fold_quad(a);
    for (u32 s = lanes / 2; s > 0; s >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, s, lanes);
    if (row < rows && lane == 0) out[row] = E::out(acc);
}

// The BLOCK threads' values folded into thread 0's: five shuffles per warp, then warp 0 folds the
// BLOCK / 32 warp sums with log2(BLOCK / 32) more (a fixed tree: the same order every run).
template <typename A, u32 BLOCK>
__device__ __forceinline__ A block_fold(A acc) {
    __shared__ A warps[BLOCK / 32];
    acc = warp_reduce_shfl(acc);
    if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = acc;
    __syncthreads();
    if (threadIdx.x < 32) {
        acc = threadIdx.x < BLOCK / 32 ? warps[threadIdx.x] : A(0);
#pragma unroll
        for (u32 s = BLOCK / 64; s > 0; s >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, s);
    }
    return acc;
}

// r4 - rows: each row split over gridDim.y blocks, the splits combined in the same launch.
// The idea: block (o, k) reads elements [k*chunk, min(length, (k+1)*chunk)) of row o (chunk a
// multiple of BLOCK * 4), thread t the quads t, t + BLOCK, ... of it, UNROLL quads loaded before
// any is added; the block folds (block_fold). With gridDim.y == 1 it writes the output directly:
// r1 with 16-byte loads. With S = gridDim.y > 1 thread 0 writes partial (o, k) of an (outer, S)
// buffer and takes a ticket on row o's counter; the block holding the row's last ticket adds the
// row's S partials (thread t the partials t, t + BLOCK, ..., then block_fold): a fixed order
// whichever block is last, no atomics on the values. What changed from r1: a row is no longer one
// block's (r1 gave (8, 2^24) eight blocks on a GPU of 132 SMs), and every thread has UNROLL
// 16-byte loads in flight instead of one 4-byte load. Why: few long rows are limited by how many
// bytes are in flight, and only more blocks and wider loads put more there. The combine in the
// same launch (c3's ticket) replaced a second launch of r3 over the partials, a few microseconds
// that decided the shapes where torch is at the read limit ((1024, 2^18) along dim 1).
template <typename T, u32 BLOCK>
__global__ void axis_r4_split_rows(const T* in, T* out, typename AxisAcc<T>::type* partials,
                                   u32* counters, u32 length, u32 chunk) {
    typedef AxisAcc<T> E;
    typedef typename E::type A;
    constexpr u32 UNROLL = 4;
    __shared__ bool is_last;
    const u32 begin = blockIdx.y * chunk;
    const u32 end = min(length, begin + chunk);
    const T* p = in + blockIdx.x * length;
    A a[QUAD] = {0, 0, 0, 0};
    if (quads_aligned(in, length)) {
        const u32 nq = end > begin ? (end - begin) / QUAD : 0;  // whole quads: begin, end % 4 == 0
        const T* b = p + begin;
        u32 q = threadIdx.x;
        for (; q + (UNROLL - 1) * BLOCK < nq; q += UNROLL * BLOCK) {
            QuadBits<T> v[UNROLL];
#pragma unroll
            for (u32 u = 0; u < UNROLL; ++u) v[u] = load_quad(b + QUAD * (q + u * BLOCK));
#pragma unroll
            for (u32 u = 0; u < UNROLL; ++u) add_quad(a, v[u]);
        }
        for (; q < nq; q += BLOCK) add_quad(a, load_quad(b + QUAD * q));
    } else {
        for (u32 k = begin + QUAD * threadIdx.x; k < end; k += QUAD * BLOCK)
            add_quad_scalar(a, p + k, k, end);
    }
    const A acc = block_fold<A, BLOCK>(fold_quad(a));
    if (gridDim.y == 1) {
        if (threadIdx.x == 0) out[blockIdx.x] = E::out(acc);
        return;
    }
    // S splits: thread 0 stores this block's partial, then takes the row's ticket (its release
    // covers its own store); only the row's last block goes on.
    const u32 splits = gridDim.y;
    A* part = partials + blockIdx.x * splits;
    if (threadIdx.x == 0) {
        part[blockIdx.y] = acc;
        is_last = ticket_acq_rel(counters + blockIdx.x, splits) == splits - 1;
    }
    __syncthreads();  // carries the acquire to the block's other threads
    if (!is_last) return;
    A c = 0;
    for (u32 k = threadIdx.x; k < splits; k += BLOCK) c += __ldcg(part + k);  // from L2
    c = block_fold<A, BLOCK>(c);
    if (threadIdx.x == 0) out[blockIdx.x] = E::out(c);
}

// c3's helpers. Rows r, r + groups, ... below `end` of a quad of columns from p (row stride
// `inner`) into a[] (UNROLL rows loaded before any is added). L2: the partials, which other
// blocks wrote, read with __ldcg (from L2: L1 is not coherent); otherwise plain loads.
template <typename W, bool L2>
__device__ __forceinline__ W column_load(const W* p) {
    if constexpr (L2) {
        return __ldcg(p);
    } else {
        return *p;
    }
}
template <typename T, bool L2>
__device__ __forceinline__ QuadBits<T> column_quad(const T* p) {
    typedef typename QuadWord<QUAD * sizeof(T)>::type W;
    QuadBits<T> q;
    q.w = column_load<W, L2>(reinterpret_cast<const W*>(p));
    return q;
}
template <typename T, bool L2>
__device__ __forceinline__ void column_rows(typename AxisAcc<T>::type (&a)[QUAD], const T* p,
                                            u32 inner, u32 r, u32 end, u32 groups, bool aligned,
                                            u32 i) {
    constexpr u32 UNROLL = 8;
    if (aligned) {
        for (; r + (UNROLL - 1) * groups < end; r += UNROLL * groups) {
            QuadBits<T> v[UNROLL];
#pragma unroll
            for (u32 u = 0; u < UNROLL; ++u) {
                v[u] = column_quad<T, L2>(p + (r + u * groups) * inner);
            }
#pragma unroll
            for (u32 u = 0; u < UNROLL; ++u) add_quad(a, v[u]);
        }
        for (; r < end; r += groups) add_quad(a, column_quad<T, L2>(p + r * inner));
    } else {
        for (; r < end; r += groups) {
            const T* q = p + r * inner;
#pragma unroll
            for (u32 e = 0; e < QUAD; ++e)
                if (i + e < inner) a[e] += AxisAcc<T>::in(column_load<T, L2>(q + e));
        }
    }
}
// The block's `groups` row groups folded into group 0's a[] (a tree in shared memory, 4 arrays
// of BLOCK, one per quad element: conflict-free); `groups` is the same for the whole block, so
// the barriers are reached by all.
template <typename A, u32 BLOCK>
__device__ __forceinline__ void fold_groups(A (&a)[QUAD], A (&smem)[QUAD][BLOCK], u32 lanes) {
    const u32 groups = BLOCK / lanes;
    if (groups == 1) return;
#pragma unroll
    for (u32 e = 0; e < QUAD; ++e) smem[e][threadIdx.x] = a[e];
    __syncthreads();
    for (u32 s = groups / 2; s > 0; s >>= 1) {
        if (threadIdx.x / lanes < s) {
#pragma unroll
            for (u32 e = 0; e < QUAD; ++e) smem[e][threadIdx.x] += smem[e][threadIdx.x + s * lanes];
        }
        __syncthreads();
    }
#pragma unroll
    for (u32 e = 0; e < QUAD; ++e) a[e] = smem[e][threadIdx.x];
}
// A quad's sums stored at q (the elements below `inner` only), as TOUT.
template <typename TOUT, typename A>
__device__ __forceinline__ void store_quad(TOUT* q, const A (&a)[QUAD], u32 i, u32 inner) {
#pragma unroll
    for (u32 e = 0; e < QUAD; ++e)
        if (i + e < inner) q[e] = AxisAcc<TOUT>::out(a[e]);
}

// c3 - columns: vectorized along the output, a strip of lanes * 4 columns per block, the row
// splits combined in the same launch.
// The idea: c1's 2-D tile with each thread owning a quad of 4 adjacent columns instead of one:
// block (b, k) covers the strip of `lanes` * 4 columns b % strips of batch b / strips, with
// G = BLOCK / lanes row groups; thread (g, l) adds rows g, g + G, ... of its quad's columns (8
// rows loaded before any is added), as 16-byte loads; the G row groups are folded in shared
// memory. `lanes` is chosen from the shape (axis_vector): 256 lanes and one row group for wide
// outputs over few rows (each thread walks its quad down all rows, no fold), 32 lanes and 8 row
// groups (a warp reads 512 consecutive bytes of a row) otherwise, fewer lanes for narrow batches
// (inner = 8: two lanes per row, a warp reads 16 whole rows).
// The reduced dim may be split across gridDim.y = S blocks (rows [k*chunk, (k+1)*chunk)), and
// then the combine is in this launch, as ATen's Reduce.cuh and fastest.cu do it: each block
// writes its split's quad sums to partials (o, k, i) of an (outer, S, inner) workspace (in the
// accumulator's type), takes a ticket on its strip's counter (counters[blockIdx.x], one per
// strip), and the block that draws the last one adds the strip's S partials, thread (g, l) the
// splits g, g + G, ... and then the same fold: a fixed order whichever block is last, so the bits
// are the same on every run (no float atomics; the ticket leaves the counter at 0).
// What changed from c1 / c2: 16 useful bytes per load instead of 4, a tile shaped to the output's
// width, and no second launch. Why: a very wide output over few rows ((8, 2^24) along dim 0)
// gave c1 one 4-byte load per thread per row and a fold per 1 KB; and a small column sum split
// over blocks ((2048, 80) along dim 0, 8 splits) spent 4.0 us in a second launch adding 8 x 80
// partials beside its 8.7 us split pass (H100), where torch.sum's one kernel took 10.5 us.
template <typename T, u32 BLOCK>
__global__ void axis_c3_vector_columns(const T* in, T* out, typename AxisAcc<T>::type* partials,
                                       u32* counters, u32 outer, u32 length, u32 inner,
                                       u32 chunk, u32 lanes) {
    typedef typename AxisAcc<T>::type A;
    __shared__ A smem[QUAD][BLOCK];
    __shared__ bool is_last;
    const u32 width = lanes * QUAD;
    const u32 strips = (inner + width - 1) / width;
    const u32 o = blockIdx.x / strips;
    const u32 i = (blockIdx.x - o * strips) * width + (threadIdx.x % lanes) * QUAD;
    const u32 group = threadIdx.x / lanes;
    const u32 begin = blockIdx.y * chunk;
    const u32 end = min(length, begin + chunk);
    const bool mine = group == 0 && i < inner;  // a thread that stores its quad's sums
    A a[QUAD] = {0, 0, 0, 0};
    if (i < inner) {
        const T* p = in + o * length * inner + i;
        column_rows<T, false>(a, p, inner, begin + group, end, BLOCK / lanes,
                              quads_aligned(in, inner), i);
    }
    fold_groups<A, BLOCK>(a, smem, lanes);
    if (gridDim.y == 1) {
        if (mine) store_quad(out + o * inner + i, a, i, inner);
        return;
    }
    // S splits: this block's partial, then its strip's ticket; only the last block goes on.
    const u32 splits = gridDim.y;
    A* part = partials + o * splits * inner + i;
    if (mine) store_quad(part + blockIdx.y * inner, a, i, inner);
    __syncthreads();  // every partial of the block stored before thread 0 releases them
    if (threadIdx.x == 0) is_last = ticket_acq_rel(counters + blockIdx.x, splits) == splits - 1;
    __syncthreads();  // carries the acquire to the block's other threads
    if (!is_last) return;
    A c[QUAD] = {0, 0, 0, 0};
    if (i < inner) {
        column_rows<A, true>(c, part, inner, group, splits, BLOCK / lanes,
                             quads_aligned(partials, inner), i);
    }
    fold_groups<A, BLOCK>(c, smem, lanes);
    if (mine) store_quad(out + o * inner + i, c, i, inner);
}
