// The seeds' kernels exactly as written where they carry a bug a tool catches: LABELLED
// DEMONSTRATIONS for `reduce-ladder sanitize`. Never in a default run, never in the timed ladder
// (their catalogue records, harness/core/demo_records.py, are wrong=True, family
// "sanitizer-demo"); the sanitize study runs them only when named or with --include-wrong, and only
// their first pass (the seeds launch one kernel over whole tiles).
//
// 1. seed 000 (000_63f2b61950f09972.txt), reduce_v1_shared_mem: __syncthreads() INSIDE the
//    divergent `if (tid % (i * 2) == 0)`. Only some threads of a warp reach the barrier, so the
//    barrier is divergent (undefined behaviour; the ladder's v1 moves it out of the `if`).
//    The tool meant for it is compute-sanitizer --tool synccheck; MEASURED on an H200 (sm_90):
//    none of memcheck, racecheck, synccheck, initcheck reports it and the sum is right, so the
//    fix rests on the programming guide, not on a tool (tests/test_gpu_sanitize.py holds this).
//    Run at n = a whole number of 256-element tiles: the seed has no bounds check, and the only
//    bug shown should be the barrier.
// 2. seed 004 (004_53302091cfe0f7dc.txt), reduceGmem: `if (idx >= n) return;` BEFORE the block's
//    __syncthreads(). In a partial last tile the threads past n leave, and the ones that stay still
//    read `in[tid + 128]`, `in[tid + 64]`, ... past n (the early return guards only the thread's
//    own element). Tool: compute-sanitizer --tool memcheck ("Invalid __global__ read", with the
//    harness's allocation exactly n elements: PYTORCH_NO_CUDA_MEMORY_CACHING=1); measured on an
//    H200: memcheck reports it, synccheck does not. Run at n with a partial last tile (2^12 + 3).
//    The ladder's 004-gmem (unroll_blocks.cu) is the fixed form.
//
// Changed from the seeds, only so the harness can launch them like every ladder kernel: the
// element type is the template parameter T (000 wrote float, 004 int; a template also means
// nothing is compiled until a record instantiates it), the signature is (in, out, n) (000's
// kernel had no n; it is unused there), THREAD_PER_BLOCK / DIM are the template's BLOCK. Every
// statement of the bodies is the seeds'.

#include "common.cuh"

// seed 000, reduce_v1_shared_mem ("reduce1"), as written.
template <typename T, u32 BLOCK>
__global__ void seed000_reduce1_sync_in_if(T* d_input, T* d_output, u32 n) {
    __shared__ T shared_mem[BLOCK];
    unsigned int tid = threadIdx.x;
    unsigned int global_tid = blockIdx.x * blockDim.x + tid;

    shared_mem[tid] = d_input[global_tid];
    __syncthreads();

    for (unsigned int i = 1; i < blockDim.x; i *= 2) {
        if (tid % (i * 2) == 0) {
            shared_mem[tid] += shared_mem[tid + i];
            __syncthreads();  // THE BUG: a barrier only the threads inside the `if` reach
        }
    }

    if (tid == 0) {
        d_output[blockIdx.x] = shared_mem[tid];
    }
}

// seed 004, reduceGmem, as written (DIM = BLOCK = 256 in the seed's runs).
template <typename T, u32 BLOCK>
__global__ void seed004_reduce_gmem_early_return(T* g_in, T* g_out, u32 const n) {
    unsigned int tid = threadIdx.x;
    unsigned int idx = blockDim.x * blockIdx.x + threadIdx.x;
    if (idx >= n) return;  // THE BUG: before the barriers; the partner reads below go past n
    // convert global data pointer to the local pointer of this block
    T* in = g_in + blockDim.x * blockIdx.x;

    // in-place reduction and complete unroll
    if (blockDim.x >= 1024 && tid < 512) in[tid] += in[tid + 512];
    __syncthreads();

    if (blockDim.x >= 512 && tid < 256) in[tid] += in[tid + 256];
    __syncthreads();

    if (blockDim.x >= 256 && tid < 128) in[tid] += in[tid + 128];
    __syncthreads();

    if (blockDim.x >= 128 && tid < 64) in[tid] += in[tid + 64];
    __syncthreads();

    // unrolling warp
    if (tid < 32) {
        volatile T* vmem = in;
        vmem[tid] += vmem[tid + 32];
        vmem[tid] += vmem[tid + 16];
        vmem[tid] += vmem[tid + 8];
        vmem[tid] += vmem[tid + 4];
        vmem[tid] += vmem[tid + 2];
        vmem[tid] += vmem[tid + 1];
    }

    // write result for this block to global memory
    if (tid == 0) g_out[blockIdx.x] = in[0];
}
