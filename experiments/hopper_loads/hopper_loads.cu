// Hopper's memory paths, tried on the fastest sum (issue 14): what is left at large n is a few
// percent of memory bandwidth, and Hopper offers three ways to read a stream that stage 8's
// __ldg does not use. Each kernel below is cuda/fastest (cuda_kernels/fastest.cu: persistent
// grid from the SM count, grid-stride tiles, acq_rel last-block finish) with ONE thing changed,
// and experiment.py beside this file times them beside cuda/fastest, CUB and torch.sum in one
// run. Not in the catalogue: the experiment reports what each buys, measured, and the catalogue
// keeps what measured fastest. float32 only, and only the experiment's inputs: 16-byte-aligned, n a
// multiple of 4 (the host side checks both before a launch), so there is no head or tail code.
//
//   reduce_hinted<LOAD>: the same 16-byte loads with a cache qualifier (load16 below):
//     LOAD_NO_L1       ld.global.nc.L1::no_allocate: the stream is read once, so it should
//                      not evict anything from L1 (the partials and the ticket live there);
//     LOAD_EVICT_FIRST + an L2::evict_first cache policy (createpolicy): lines leave L2 first,
//                      so the few lines that are read twice (the partials) stay;
//     LOAD_PREFETCH    + .L2::256B: each miss asks DRAM for the 256-byte sector group around it,
//                      i.e. the next line comes with this one (fewer, larger DRAM requests).
//   reduce_bulk: the tensor memory accelerator's 1-D bulk copy (cp.async.bulk, no tensor map
//     needed for 1-D) moves whole TILE_BYTES tiles from global into a STAGES-deep ring in shared
//     memory; one thread issues each copy and an mbarrier counts its bytes in; every thread then
//     adds its floats from shared memory. The loads leave the register file and the LSU: a warp
//     no longer waits on its own loads, only on the barrier of the oldest tile in flight.
#include "fastest.cu"

enum : u32 {
    LOAD_LDG = 0,  // __ldg: ld.global.nc.v4 (cuda/fastest)
    LOAD_NO_L1 = 1,
    LOAD_EVICT_FIRST = 2,
    LOAD_PREFETCH = 3,
};

template <u32 LOAD>
__device__ __forceinline__ uint4 load16(const uint4* p) {
    uint4 v;
    if constexpr (LOAD == LOAD_LDG) {
        v = __ldg(p);
    } else if constexpr (LOAD == LOAD_NO_L1) {
        asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
            : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
            : "l"(p));
    } else if constexpr (LOAD == LOAD_EVICT_FIRST) {
        // Hopper takes an L2 eviction priority on a 16-byte load only as a cache policy
        // (.L2::evict_first as a bare qualifier needs a 32-byte load, sm_100).
        u64 policy;
        asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
        asm("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
            : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
            : "l"(p), "l"(policy));
    } else {
        asm("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
            : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
            : "l"(p));
    }
    return v;
}

// The partials of the grid in block order, then out[0] (the last block only); shared by both
// kernels below: cuda/fastest's finish, written once here.
template <u32 BLOCK>
__device__ __forceinline__ void finish_sum(float s, float* out, float* partials, u32* counter) {
    if (gridDim.x == 1) {
        if (threadIdx.x == 0) out[0] = s;
        return;
    }
    __shared__ bool is_last;
    if (!last_block_done<float, FAST_ACQ_REL>(s, partials, counter, is_last)) return;
    float t = 0.0f;
    for (u32 b = threadIdx.x; b < gridDim.x; b += BLOCK) t += __ldcg(partials + b);
    t = block_sum_shfl<float, BLOCK>(t);
    if (threadIdx.x == 0) out[0] = t;  // the modular ticket left the counter at 0
}

// cuda/fastest's loop with load16<LOAD> in place of __ldg. n % 4 == 0, `in` 16-byte aligned.
template <u32 LOAD, u32 BLOCK, u32 UNROLL>
__global__ void __launch_bounds__(BLOCK, 1024 / BLOCK)
    reduce_hinted(const float* __restrict__ in, float* __restrict__ out, float* partials,
                  u32* counter, u64 n) {
    const uint4* __restrict__ vin = reinterpret_cast<const uint4*>(in);
    const u64 nvec = n / 4;
    const u64 stride = static_cast<u64>(gridDim.x) * (BLOCK * UNROLL);
    u64 i = static_cast<u64>(blockIdx.x) * (BLOCK * UNROLL) + threadIdx.x;
    float a[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (; i + (UNROLL - 1) * BLOCK < nvec; i += stride) {
        uint4 v[UNROLL];
#pragma unroll
        for (u32 u = 0; u < UNROLL; ++u) v[u] = load16<LOAD>(vin + i + u * BLOCK);
#pragma unroll
        for (u32 u = 0; u < UNROLL; ++u) Elem<float>::add_vec(a, v[u]);
    }
    {
        uint4 v[UNROLL];
#pragma unroll
        for (u32 u = 0; u < UNROLL; ++u) {
            if (i + u * BLOCK < nvec) v[u] = load16<LOAD>(vin + i + u * BLOCK);
        }
#pragma unroll
        for (u32 u = 0; u < UNROLL; ++u) {
            if (i + u * BLOCK < nvec) Elem<float>::add_vec(a, v[u]);
        }
    }
    const float s = block_sum_shfl<float, BLOCK>((a[0] + a[2]) + (a[1] + a[3]));
    finish_sum<BLOCK>(s, out, partials, counter);
}

__device__ __forceinline__ u32 smem_addr(const void* p) {
    return static_cast<u32>(__cvta_generic_to_shared(p));
}

// Wait until the mbarrier at `bar` has completed the phase with this parity.
__device__ __forceinline__ void mbar_wait(u32 bar, u32 parity) {
    asm volatile(
        "{\n .reg .pred p;\n"
        "WAIT_%=:\n mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
        " @!p bra WAIT_%=;\n}\n" ::"r"(bar),
        "r"(parity)
        : "memory");
}

// One thread: expect `bytes` on the barrier, then copy them global -> shared with the bulk copy.
__device__ __forceinline__ void bulk_load(u32 dst, const void* src, u32 bytes, u32 bar) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
                 : "memory");
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::
            "r"(dst),
        "l"(src), "r"(bytes), "r"(bar)
        : "memory");
}

// Tiles of TILE_BYTES, grid-stride over blocks as cuda/fastest's tiles; tile k of this block goes
// to stage k % STAGES. Thread 0 keeps STAGES tiles in flight: after every thread has added tile k
// (the __syncthreads below), it refills that stage with tile k + STAGES. The last tile may be
// short (any multiple of 16 bytes). n % 4 == 0, `in` 16-byte aligned.
template <u32 BLOCK, u32 STAGES, u32 TILE_BYTES>
__global__ void __launch_bounds__(BLOCK, 1) reduce_bulk(const float* __restrict__ in,
                                                        float* __restrict__ out, float* partials,
                                                        u32* counter, u64 n) {
    static_assert(TILE_BYTES % (16 * BLOCK) == 0, "a tile is whole 16-byte vectors per thread");
    constexpr u32 TILE = TILE_BYTES / 4;  // floats per tile
    __shared__ alignas(128) float ring[STAGES][TILE];
    __shared__ alignas(8) unsigned long long full[STAGES];
    const u32 tid = threadIdx.x;
    const u64 tiles = (n + TILE - 1) / TILE;
    const u64 first = blockIdx.x, step = gridDim.x;
    const u64 mine = first < tiles ? (tiles - first + step - 1) / step : 0;  // this block's tiles

    auto issue = [&](u64 k) {  // this block's k-th tile into stage k % STAGES
        const u64 t = first + k * step, start = t * TILE;
        const u64 count = n - start < TILE ? n - start : TILE;
        bulk_load(smem_addr(ring[k % STAGES]), in + start, static_cast<u32>(count * 4),
                  smem_addr(&full[k % STAGES]));
    };
    if (tid == 0) {
        for (u32 s = 0; s < STAGES; ++s) {
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(&full[s])));
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        for (u64 k = 0; k < mine && k < STAGES; ++k) issue(k);
    }
    __syncthreads();

    float a[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (u64 k = 0; k < mine; ++k) {
        const u32 stage = static_cast<u32>(k % STAGES);
        mbar_wait(smem_addr(&full[stage]), static_cast<u32>((k / STAGES) & 1));
        const u64 start = (first + k * step) * TILE;
        const u32 count = static_cast<u32>(n - start < TILE ? n - start : TILE);
        const uint4* v = reinterpret_cast<const uint4*>(ring[stage]);
#pragma unroll
        for (u32 j = tid; j < TILE / 4; j += BLOCK) {
            if (4 * j < count) Elem<float>::add_vec(a, v[j]);
        }
        __syncthreads();  // every thread is done with this stage before it is refilled
        if (tid == 0 && k + STAGES < mine) {
            // The generic-proxy reads above must be ordered before the async-proxy write.
            asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
            issue(k + STAGES);
        }
    }
    const float s = block_sum_shfl<float, BLOCK>((a[0] + a[2]) + (a[1] + a[3]));
    finish_sum<BLOCK>(s, out, partials, counter);
}
