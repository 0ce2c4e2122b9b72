// One-shot all-reduce over peer memory (comm_bench's implementation "opbench", small messages).
//
// Every rank owns one data buffer and one signal area, both mapped by every other rank (CUDA
// IPC). Block b of every rank handles the same slice b of the message, so the ranks synchronise
// per block and never across a grid:
//   1. wait until every peer finished reading my slice b of the previous call
//      (done[p][b] >= epoch - 1, written by peer p into MY signal area);
//   2. copy my input's slice b into my own data buffer;
//   3. bar.sync, then thread p stores ready[me][b] = epoch into peer p's signal area with
//      st.release.sys (the barrier makes the block's data stores happen-before the release);
//   4. thread p spins on ready[p][b] in MY signal area with ld.acquire.sys until it reaches
//      epoch, then bar.sync: every peer's slice b is visible to the whole block;
//   5. sum slice b of every rank's buffer (loads that bypass L1: ld.global.cv) in f32, write out;
//   6. bar.sync, then thread p stores done[me][b] = epoch into peer p's signal area (release:
//      my reads of its buffer happen before it may overwrite it in its next call's step 2).
// The epoch (1, 2, ...) is the call's number, the same on every rank, so flags are never reset;
// the signal areas start zeroed. Slices are whole blocks of the element count.

#include <cuda_bf16.h>
#include <stdint.h>

#define MAX_RANKS 8

struct Peers {
    // Data buffers of ranks 0..world (rank `me` is this process's own).
    const void* data[MAX_RANKS];
    // Signal areas of ranks 0..world: ready[MAX_RANKS][blocks] then done[MAX_RANKS][blocks].
    uint32_t* signal[MAX_RANKS];
};

__device__ __forceinline__ void store_release(uint32_t* p, uint32_t v) {
    // The fence orders the block's stores (made visible to this thread by the barrier before
    // the call) system-wide before the flag, whatever the release's cumulativity covers.
    __threadfence_system();
    asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

__device__ __forceinline__ uint32_t load_acquire(const uint32_t* p) {
    uint32_t v;
    asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ void wait_at_least(const uint32_t* p, uint32_t epoch) {
    while ((int32_t)(load_acquire(p) - epoch) < 0) {
    }
}

__device__ __forceinline__ float to_f32(float v) { return v; }
__device__ __forceinline__ float to_f32(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ void from_f32(float* o, float v) { *o = v; }
__device__ __forceinline__ void from_f32(__nv_bfloat16* o, float v) { *o = __float2bfloat16(v); }

template <typename T>
__device__ void oneshot(const T* __restrict__ in, T* __restrict__ out, unsigned long long n,
                        const Peers peers, int me, int world, uint32_t epoch) {
    const unsigned blocks = gridDim.x, b = blockIdx.x, t = threadIdx.x;
    const unsigned long long per = (n + blocks - 1) / blocks;
    const unsigned long long lo = b * per, hi = min(n, lo + per);
    uint32_t* mine = peers.signal[me];
    uint32_t* ready = mine;                       // ready[p * blocks + b], written by peer p
    uint32_t* done = mine + MAX_RANKS * blocks;   // done[p * blocks + b], written by peer p
    // 1. Peers are done with my slice of the previous call.
    if (t < (unsigned)world && (int)t != me) wait_at_least(&done[t * blocks + b], epoch - 1);
    __syncthreads();
    // 2. My input into my own buffer.
    T* own = (T*)peers.data[me];
    for (unsigned long long i = lo + t; i < hi; i += blockDim.x) own[i] = in[i];
    __syncthreads();
    // 3. Tell every peer my slice is ready.
    if (t < (unsigned)world && (int)t != me) store_release(&peers.signal[t][me * blocks + b], epoch);
    // 4. Wait for every peer's slice.
    if (t < (unsigned)world && (int)t != me) wait_at_least(&ready[t * blocks + b], epoch);
    __syncthreads();
    // 5. Sum in rank order.
    for (unsigned long long i = lo + t; i < hi; i += blockDim.x) {
        float s = 0.0f;
        for (int p = 0; p < world; ++p) {
            const T* src = (const T*)peers.data[p];
            s += to_f32(p == me ? own[i] : __ldcv(src + i));
        }
        from_f32(&out[i], s);
    }
    __syncthreads();
    // 6. Tell every peer I am done reading its slice.
    if (t < (unsigned)world && (int)t != me)
        store_release(&peers.signal[t][MAX_RANKS * blocks + me * blocks + b], epoch);
}

extern "C" __global__ void opbench_oneshot_allreduce_f32(const float* in, float* out,
                                                         unsigned long long n, const Peers peers,
                                                         int me, int world, uint32_t epoch) {
    oneshot<float>(in, out, n, peers, me, world, epoch);
}

extern "C" __global__ void opbench_oneshot_allreduce_bf16(const __nv_bfloat16* in,
                                                          __nv_bfloat16* out,
                                                          unsigned long long n, const Peers peers,
                                                          int me, int world, uint32_t epoch) {
    oneshot<__nv_bfloat16>(in, out, n, peers, me, world, epoch);
}
