// cuda/reproducible: a sum whose bits depend only on the input's values and n (issue 18).
//
// Design (the same as triton_kernels/reproducible.py and its numpy model reference_sum, bit for
// bit):
//   - Fixed chunks: C(n) = max(4096, next_pow2(ceil(n / 512))), a function of n only; M =
//     ceil(n / C) <= 512 chunks; chunk c = elements [c*C, min(c*C + C, n)).
//   - Fixed lanes: LANES = 1024 double-double accumulators per chunk. Lane l visits c*C + l +
//     1024*j, j = 0 .. C/1024 - 1, in j order, from (+0.0, +0.0); an element past n is +0.0 and
//     the update is still done (never skipped), so every backend does the same operations. The
//     update (Knuth's TwoSum, float64; two_sum below gets its e by Fast2Sum, the same bits):
//     v = double(x); s = hi + v; bp = s - hi;
//     e = (hi - (s - bp)) + (v - bp); lo = lo + e; hi = s.
//   - Fixed trees: the 1024 lanes by adjacent pairs, level by level (node i = dd_add(node 2i,
//     node 2i+1), 10 levels) -> the chunk's partial (hi, lo) in two float64 arrays. Here thread t
//     owns lanes P*t .. P*t + P-1 (P = 1024 / BLOCK; 4 in the catalogue's BLOCK = 256): the first
//     log2(P) levels in registers, the next 5 through __shfl_xor (offsets 1..16, the lower thread
//     as `a`), the last log2(BLOCK/32) over the warps' values in shared memory.
//   - Final: the block that takes the last ticket gives lane l the partials l + 1024*j in j order
//     (acc = dd_add(acc, P), from (0, 0); a missing partial is (0, 0), added all the same), then
//     the same tree. Result: float32(hi + lo) if hi is finite, else float32(hi) (double input:
//     double). dd_add(a, b): s = a.hi + b.hi; bp = s - a.hi; e = (a.hi - (s - bp)) + (b.hi - bp);
//     e = e + (a.lo + b.lo); hi = s + e; lo = e - (hi - s); (s, 0.0) when s is not finite.
//   - One launch: a persistent grid (any G >= 1: per_sm x SMs by default, at most M); block b
//     takes chunks b, b + G, b + 2G, ...; each block's thread 0 stores its chunks' partials, then
//     takes a ticket (common.cuh's ticket_acq_rel, modular: it wraps the counter back to 0 for the
//     next launch, no reset store); the last block does the final.
// Why the bits depend only on the values and n: C, M, the lane of every element and both trees
// are functions of n; the grid, the SM count, the stream and the run only decide WHICH block sums
// a chunk (and which block finishes), never the operations or their order. A chunk's partial is
// the same whichever block computes it.
// Why this equals Triton bit for bit: both compute the design's values with IEEE binary64
// additions and subtractions, round to nearest even (here spelled __dadd_rn / __dsub_rn, which
// the compiler never contracts or reorders; two_sum's e is TwoSum's by another exact route),
// plus exact widenings and the final round to nearest (both PTX
// cvt without .ftz, so subnormals are kept although CuPy compiles with -ftz=true). No
// multiplication, so no fused multiply-add; no fast-math. The finiteness test reads the exponent
// bits.
// NaN / Inf: a lane that meets an infinity or NaN gets a non-finite hi (lo may be NaN: inf - inf)
// and keeps it; dd_add then carries s = a.hi + b.hi with lo = 0, so the result is what a plain sum
// gives (NaN if any NaN or both infinities, else the infinity), as in the other variants.
// Loads: VEC = true reads P consecutive elements per thread and step as one vector (16 bytes for
// float at P = 4, 8 for the 16-bit types, two 16-byte loads for double): the base pointer must be
// aligned to min(16, P * sizeof(T)) bytes (harness/launch/reproducible_plan.py checks and picks
// VEC = false, the same lanes and order with scalar loads, for a misaligned view such as x[1:]).
// UNROLL steps' loads are issued before the first chained update, so UNROLL * P * sizeof(T)
// bytes per thread are in flight. PREFETCH (template argument; the catalogue's REPRO_PREFETCH is
// on; sm_90 and up): the next whole chunk's first UNROLL steps are loaded before this chunk's
// shuffle / shared-memory tree, so memory stays busy while the tree runs (at C = 4096-8192 it is
// a third to half of a chunk).
// Neither changes an operation or its order: the bits are the same. Indices are 64-bit.
#include "common.cuh"

typedef unsigned long long u64;

constexpr u32 REPRO_LANES = 1024;
constexpr u64 REPRO_C_MIN = 4096;
constexpr u64 REPRO_MAX_CHUNKS = 512;  // = harness/core/mappings.py MAX_CHUNKS

// 16-bit storage types (the dtype table's C++ names; the same layout as fastest.cu's): read as
// their bits and widened here, so no CUDA header is needed.
struct rl_half {
    unsigned short bits;
};
struct rl_bfloat16 {
    unsigned short bits;
};

__device__ __forceinline__ double half_bits_to_double(u32 h) {
    double d;
    asm("cvt.f64.f16 %0, %1;" : "=d"(d) : "h"(static_cast<unsigned short>(h)));
    return d;
}
// float32 bits -> double, exactly, subnormals kept. Written as PTX because CuPy compiles every
// kernel with -ftz=true (cupy/cuda/compiler.py appends it), under which a C++ float -> double
// conversion is cvt.ftz.f64.f32 and flushes a subnormal input to zero (measured: the accuracy
// battery's subnormal family summed to 0 on the GPU before this).
__device__ __forceinline__ double f32_bits_to_double(u32 b) {
    double d;
    asm("cvt.f64.f32 %0, %1;" : "=d"(d) : "f"(__uint_as_float(b)));
    return d;
}
__device__ __forceinline__ double bf16_bits_to_double(u32 h) { return f32_bits_to_double(h << 16); }
// The result double -> float32, rounded to nearest, a subnormal result kept (no .ftz: see above).
__device__ __forceinline__ float double_to_f32_rn(double s) {
    float f;
    asm("cvt.rn.f32.f64 %0, %1;" : "=f"(f) : "d"(s));
    return f;
}

// Per element type: its bits (WORDS 32-bit words per element, or two elements per word for the
// 16-bit types), how one element's bits widen to double (exact), and the result type.
template <typename T>
struct Repro;
template <>
struct Repro<float> {
    typedef float Out;
    static __device__ __forceinline__ double widen(const u32* w, u32 k) {
        return f32_bits_to_double(w[k]);
    }
    static __device__ __forceinline__ void bits(const float* p, u32* w, u32 k) {
        w[k] = __float_as_uint(p[0]);
    }
    static __device__ __forceinline__ double one(const float* p) {
        return f32_bits_to_double(__float_as_uint(p[0]));
    }
};
template <>
struct Repro<double> {
    typedef double Out;
    static __device__ __forceinline__ double widen(const u32* w, u32 k) {
        return __hiloint2double(static_cast<int>(w[2 * k + 1]), static_cast<int>(w[2 * k]));
    }
    static __device__ __forceinline__ void bits(const double* p, u32* w, u32 k) {
        const u64 b = static_cast<u64>(__double_as_longlong(p[0]));
        w[2 * k] = static_cast<u32>(b);
        w[2 * k + 1] = static_cast<u32>(b >> 32);
    }
    static __device__ __forceinline__ double one(const double* p) { return p[0]; }
};
template <typename T, double (*W)(u32)>
struct ReproHalf {
    typedef float Out;
    static __device__ __forceinline__ double widen(const u32* w, u32 k) {
        return W(k % 2 ? w[k / 2] >> 16 : w[k / 2] & 0xffffu);
    }
    static __device__ __forceinline__ void bits(const T* p, u32* w, u32 k) {
        const u32 b = p[0].bits;
        w[k / 2] = k % 2 ? (w[k / 2] | (b << 16)) : b;
    }
    static __device__ __forceinline__ double one(const T* p) { return W(p[0].bits); }
};
template <>
struct Repro<rl_half> : ReproHalf<rl_half, half_bits_to_double> {};
template <>
struct Repro<rl_bfloat16> : ReproHalf<rl_bfloat16, bf16_bits_to_double> {};

// The raw bits of P consecutive elements (one thread's lanes in one step).
template <typename T, u32 P>
struct Raw {
    static constexpr u32 BYTES = P * sizeof(T);
    static_assert(BYTES % 4 == 0, "a thread's lanes fill whole 32-bit words");
    u32 w[BYTES / 4];
};

// Load P elements at p: one vector (VEC; p aligned to min(16, BYTES)) or P scalar loads.
template <typename T, u32 P, bool VEC>
__device__ __forceinline__ void load_lanes(const T* __restrict__ p, Raw<T, P>& r) {
    constexpr u32 BYTES = Raw<T, P>::BYTES;
    if constexpr (!VEC) {
#pragma unroll
        for (u32 k = 0; k < P; ++k) Repro<T>::bits(p + k, r.w, k);
    } else if constexpr (BYTES >= 16) {
#pragma unroll
        for (u32 i = 0; i < BYTES / 16; ++i) {
            const uint4 q = __ldg(reinterpret_cast<const uint4*>(p) + i);
            r.w[4 * i] = q.x;
            r.w[4 * i + 1] = q.y;
            r.w[4 * i + 2] = q.z;
            r.w[4 * i + 3] = q.w;
        }
    } else if constexpr (BYTES == 8) {
        const uint2 q = __ldg(reinterpret_cast<const uint2*>(p));
        r.w[0] = q.x;
        r.w[1] = q.y;
    } else {
        r.w[0] = __ldg(reinterpret_cast<const unsigned int*>(p));
    }
}

struct DD {
    double hi, lo;
};

__device__ __forceinline__ bool finite_bits(double s) {
    return (static_cast<u64>(__double_as_longlong(s)) & 0x7ff0000000000000ull) !=
           0x7ff0000000000000ull;
}

// The design's TwoSum update of the lane (hi, lo) by v: s = hi + v, lo += e, hi = s, where e is
// the rounding error of s (s + e == hi + v exactly). e is computed here by Fast2Sum on the
// operands ordered by magnitude (Dekker: for |big| >= |small|, e = small - (s - big) exactly):
// the update is 4 float64 operations and a compare instead of TwoSum's 7, and the float64 pipe
// is what bounds this kernel where the input is narrow (docs/reproducible.md). The bits are
// TwoSum's: the exact error of s is one number, so both give the same e whenever s is finite,
// except that e may be -0.0 where TwoSum's is +0.0, and lo + e is then lo all the same (lo
// starts at +0.0 and a round-to-nearest sum is -0.0 only when both terms are, so lo is never
// -0.0). Where s is not finite, hi is not finite from then on and lo is never read again
// (dd_add carries (s, 0); the final takes hi).
__device__ __forceinline__ void two_sum(DD& a, double v) {
    const double s = __dadd_rn(a.hi, v);
    const bool hi_big = fabs(a.hi) >= fabs(v);
    const double big = hi_big ? a.hi : v, small = hi_big ? v : a.hi;
    const double e = __dsub_rn(small, __dsub_rn(s, big));
    a.lo = __dadd_rn(a.lo, e);
    a.hi = s;
}

// a + b in double-double (a the lower index); non-finite s is carried as (s, 0).
__device__ __forceinline__ DD dd_add(DD a, DD b) {
    const double s = __dadd_rn(a.hi, b.hi);
    const double bp = __dsub_rn(s, a.hi);
    double e = __dadd_rn(__dsub_rn(a.hi, __dsub_rn(s, bp)), __dsub_rn(b.hi, bp));
    e = __dadd_rn(e, __dadd_rn(a.lo, b.lo));
    const double hi = __dadd_rn(s, e);
    const double lo = __dsub_rn(e, __dsub_rn(hi, s));
    if (!finite_bits(s)) return DD{s, 0.0};
    return DD{hi, lo};
}

// The lane tree over the block's 1024 lanes (P per thread), in two parts so that the chunk loop
// can issue its prefetch between them, when q's registers are free: thread_tree, this thread's P
// lanes in registers; block_tree, the threads' nodes (valid in thread 0). `sm`: BLOCK/32 slots,
// not read by thread 0 of an earlier call still in flight (the caller alternates two).
template <u32 P>
__device__ __forceinline__ DD thread_tree(DD* q) {
#pragma unroll
    for (u32 w = 1; w < P; w *= 2) {
#pragma unroll
        for (u32 k = 0; k < P; k += 2 * w) q[k] = dd_add(q[k], q[k + w]);
    }
    return q[0];
}

template <u32 BLOCK>
__device__ __forceinline__ DD block_tree(DD d, DD* sm) {
    constexpr u32 WARPS = BLOCK / 32;
    const u32 lane = threadIdx.x % 32, warp = threadIdx.x / 32;
#pragma unroll
    for (u32 off = 1; off < 32; off *= 2) {
        const DD o{__shfl_xor_sync(0xffffffffu, d.hi, off), __shfl_xor_sync(0xffffffffu, d.lo, off)};
        d = (lane & off) ? dd_add(o, d) : dd_add(d, o);
    }
    if (lane == 0) sm[warp] = d;
    __syncthreads();
    if (threadIdx.x == 0) {
        DD s[WARPS];
#pragma unroll
        for (u32 i = 0; i < WARPS; ++i) s[i] = sm[i];
#pragma unroll
        for (u32 w = 1; w < WARPS; w *= 2) {
#pragma unroll
            for (u32 k = 0; k < WARPS; k += 2 * w) s[k] = dd_add(s[k], s[k + w]);
        }
        d = s[0];
    }
    return d;
}

// The first UNROLL steps of a whole chunk (only those below steps: steps >= 4 is a power of two,
// so at UNROLL = 8 a 4-step chunk has 4): issued apart from their use, so that the caller can
// have them in flight during the previous chunk's lane tree (PREFETCH).
template <typename T, u32 P, u32 UNROLL, bool VEC>
__device__ __forceinline__ void load_first(const T* __restrict__ p, u64 steps, Raw<T, P>* r) {
#pragma unroll
    for (u32 u = 0; u < UNROLL; ++u) {
        if (u < 4 || u < steps) load_lanes<T, P, VEC>(p + u * REPRO_LANES, r[u]);
    }
}

// One whole chunk (every element < n): this thread's P lanes from p = in + chunk start + P*tid,
// steps of 1024 elements; `first` holds steps 0 .. min(UNROLL, steps) - 1 (load_first), then
// UNROLL steps' loads at a time before their chained updates. Always in step order.
template <typename T, u32 P, u32 UNROLL, bool VEC>
__device__ __forceinline__ void chunk_whole(const T* __restrict__ p, u64 steps, DD* q,
                                            const Raw<T, P>* first) {
#pragma unroll
    for (u32 u = 0; u < UNROLL; ++u) {
        if (u < 4 || u < steps) {
#pragma unroll
            for (u32 k = 0; k < P; ++k) two_sum(q[k], Repro<T>::widen(first[u].w, k));
        }
    }
    u64 j = steps < UNROLL ? steps : UNROLL;
    for (; j + UNROLL <= steps; j += UNROLL) {
        Raw<T, P> r[UNROLL];
#pragma unroll
        for (u32 u = 0; u < UNROLL; ++u) load_lanes<T, P, VEC>(p + (j + u) * REPRO_LANES, r[u]);
#pragma unroll
        for (u32 u = 0; u < UNROLL; ++u) {
#pragma unroll
            for (u32 k = 0; k < P; ++k) two_sum(q[k], Repro<T>::widen(r[u].w, k));
        }
    }
    for (; j < steps; ++j) {  // never for power-of-two UNROLL (steps is one too); kept general
        Raw<T, P> r;
        load_lanes<T, P, VEC>(p + j * REPRO_LANES, r);
#pragma unroll
        for (u32 k = 0; k < P; ++k) two_sum(q[k], Repro<T>::widen(r.w, k));
    }
}

// The last chunk when it runs past n: element by element, +0.0 past n (the update still done).
template <typename T, u32 P>
__device__ __forceinline__ void chunk_tail(const T* __restrict__ in, u64 first, u64 steps, u64 n,
                                           DD* q) {
    for (u64 j = 0; j < steps; ++j) {
#pragma unroll
        for (u32 k = 0; k < P; ++k) {
            const u64 i = first + j * REPRO_LANES + k;
            two_sum(q[k], i < n ? Repro<T>::one(in + i) : 0.0);
        }
    }
}

// reproducible - one launch for any n >= 1 (see the top of this file).
// in: n elements of T (aligned to min(16, P * sizeof(T)) bytes when VEC). out: one Out.
// phi, plo: >= M(n) doubles each (workspace, never read before written). counter: one u32, 0 at
// launch and left 0 after it.
// Launch bounds: 4 blocks of 256 per SM (64 registers) where a thread's loads in flight are at most
// 16 elements (P x UNROLL) of at most 4 bytes, else half as many: with PREFETCH those loads stay
// live through the lane tree, and float64's 8-byte elements then spilled at 64 registers. No
// instantiation spills (tests/test_nvrtc.py, tests/test_reproducible.py).
template <typename T, u32 BLOCK, u32 UNROLL>
struct ReproBounds {
    static constexpr bool SMALL = REPRO_LANES / BLOCK * UNROLL <= 16 && sizeof(T) <= 4;
    static constexpr u32 MIN_BLOCKS = (SMALL ? 1024 : 512) / BLOCK;
};

// The catalogue's UNROLL (its name expression names this constant; the sweep,
// experiments/reproducible_sweep/, instantiates others).
constexpr u32 REPRO_UNROLL = 4;
// The catalogue's PREFETCH (named the same way): the next chunk's first steps in flight during
// this chunk's lane tree.
constexpr bool REPRO_PREFETCH = true;

// PREFETCH (the next chunk's first steps in flight during this chunk's lane tree) is compiled in
// for sm_90 and up (H100 / H200, where it is measured); below, NVRTC for sm_80 spilled 32 bytes
// at the 64-register bound with the prefetched words live through the tree. Read in the body,
// not in a template argument, so that the instantiation's name is the same for every arch.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
constexpr bool REPRO_PREFETCH_ARCH = false;
#else
constexpr bool REPRO_PREFETCH_ARCH = true;
#endif

template <typename T, u32 BLOCK, u32 UNROLL, bool VEC, bool PREFETCH_ASKED>
__global__ void __launch_bounds__(BLOCK, ReproBounds<T, BLOCK, UNROLL>::MIN_BLOCKS)
    reduce_reproducible(const T* __restrict__ in, typename Repro<T>::Out* __restrict__ out,
                        double* phi, double* plo, u32* counter, u64 n) {
    static_assert(BLOCK >= 64 && BLOCK <= REPRO_LANES && REPRO_LANES % BLOCK == 0,
                  "BLOCK: a power of two in 64..1024");
    constexpr u32 P = REPRO_LANES / BLOCK;  // lanes per thread
    constexpr bool PREFETCH = PREFETCH_ASKED && REPRO_PREFETCH_ARCH;
    const u32 tid = threadIdx.x;

    // The geometry, from n only: C = 2^logc, M chunks, the first `whole` of them inside [0, n).
    const u64 per = (n + REPRO_MAX_CHUNKS - 1) / REPRO_MAX_CHUNKS;
    u32 logc = 12;
    while ((1ull << logc) < per) ++logc;
    static_assert(REPRO_C_MIN == 1ull << 12, "C_MIN is 2^12");
    const u64 chunk = 1ull << logc, steps = chunk / REPRO_LANES;
    const u64 chunks = (n + chunk - 1) >> logc, whole = n >> logc;

    __shared__ DD sm[2][BLOCK / 32];
    __shared__ bool is_last;
    u32 buf = 0;
    const T* __restrict__ mine = in + P * tid;  // this thread's lanes in chunk 0
    Raw<T, P> first[UNROLL];                      // the next whole chunk's first steps
    if (PREFETCH && blockIdx.x < whole)
        load_first<T, P, UNROLL, VEC>(mine + (u64{blockIdx.x} << logc), steps, first);
    for (u64 c = blockIdx.x; c < chunks; c += gridDim.x) {
        DD q[P];
#pragma unroll
        for (u32 k = 0; k < P; ++k) q[k] = DD{0.0, 0.0};
        if (c < whole) {
            if (!PREFETCH) load_first<T, P, UNROLL, VEC>(mine + (c << logc), steps, first);
            chunk_whole<T, P, UNROLL, VEC>(mine + (c << logc), steps, q, first);
        } else {
            chunk_tail<T, P>(in, c * chunk + P * tid, steps, n, q);
        }
        const DD mine_node = thread_tree<P>(q);
        // PREFETCH: the next chunk's first UNROLL steps go out now (q's registers are free), so
        // that they arrive while the rest of this chunk's lane tree (the shuffles, the barrier,
        // thread 0's levels) runs: at C = 4096-8192 (n = 2^20-2^23) the tree is a third to half
        // of a chunk's time.
        const u64 next = c + gridDim.x;
        if (PREFETCH && next < whole)
            load_first<T, P, UNROLL, VEC>(mine + (next << logc), steps, first);
        const DD d = block_tree<BLOCK>(mine_node, sm[buf]);
        if (tid == 0) {
            phi[c] = d.hi;
            plo[c] = d.lo;
        }
        buf ^= 1u;
    }

    // Last-block-done: thread 0 stored every partial of this block; the ticket releases them.
    if (tid == 0) is_last = ticket_acq_rel(counter) == gridDim.x - 1;
    __syncthreads();
    if (!is_last) return;

    // The final over the M partials (L2 loads: __ldcg bypasses L1, which is not coherent).
    DD acc[P];
#pragma unroll
    for (u32 k = 0; k < P; ++k) acc[k] = DD{0.0, 0.0};
    for (u64 j = 0; j * REPRO_LANES < chunks; ++j) {
#pragma unroll
        for (u32 k = 0; k < P; ++k) {
            const u64 i = j * REPRO_LANES + P * tid + k;
            const DD b = i < chunks ? DD{__ldcg(phi + i), __ldcg(plo + i)} : DD{0.0, 0.0};
            acc[k] = dd_add(acc[k], b);
        }
    }
    const DD d = block_tree<BLOCK>(thread_tree<P>(acc), sm[buf]);
    if (tid == 0) {
        const double s = finite_bits(d.hi) ? __dadd_rn(d.hi, d.lo) : d.hi;
        if constexpr (sizeof(typename Repro<T>::Out) == 8) {
            out[0] = s;
        } else {
            out[0] = double_to_f32_rn(s);
        }
        // (no reset: the modular ticket left the counter at 0 for the next launch)
    }
}
