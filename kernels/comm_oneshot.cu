// One-shot all-reduce over peer memory (comm_bench's implementation "opbench", small messages).
//
// Every rank owns a data region of two halves and a signal area, all mapped by every other rank
// (CUDA IPC). Call number `epoch` (1, 2, ...; the same on every rank) uses half epoch % 2. Block b
// of every rank handles the same slice b of the message, so ranks synchronise per block and
// never across a grid:
//   1. copy my input's slice b into my own half (epoch % 2);
//   2. bar.sync, then thread p stores ready[me][b] = epoch into peer p's signal area with
//      st.release.sys after __threadfence_system (the barrier makes the block's data stores
//      happen-before the release);
//   3. thread p spins on ready[p][b] in MY signal area with ld.acquire.sys until it reaches
//      epoch, then bar.sync: every peer's slice b is visible to the whole block;
//   4. sum slice b of every rank's half (loads that bypass L1: ld.global.cv) in f32, in rank
//      order (every rank gets the same bits), and write it out.
// Why no "done reading" barrier: call epoch + 2 is the next to write the half peers read in call
// epoch, and it starts only after this rank's call epoch + 1 saw ready(epoch + 1) from every peer;
// a peer raises that only in its call epoch + 1, which on its stream starts after its whole call
// epoch, reads included, finished. Flags only grow, so a stale slot never passes a wait, and a
// flag already past the epoch (a faster peer) passes it: its data half is the other one.
// Block counts may differ from call to call: a slot's flag is written by the call that waits
// for it. The signal areas start zeroed.

#include <cuda_bf16.h>
#include <stdint.h>

#define MAX_RANKS 8

#define MAX_BLOCKS 32

struct Peers {
    // Data regions of ranks 0..world, two halves of `half_bytes` each (rank `me`: this process's).
    const char* data[MAX_RANKS];
    // Signal areas of ranks 0..world: ready[MAX_RANKS][MAX_BLOCKS].
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
                        const Peers peers, unsigned long long half_bytes, int me, int world,
                        uint32_t epoch) {
    const unsigned blocks = gridDim.x, b = blockIdx.x, t = threadIdx.x;
    const unsigned long long per = (n + blocks - 1) / blocks;
    const unsigned long long lo = b * per, hi = min(n, lo + per);
    const unsigned long long half = (epoch & 1) * half_bytes;
    // 1. My input into my own half.
    T* own = (T*)(peers.data[me] + half);
    for (unsigned long long i = lo + t; i < hi; i += blockDim.x) own[i] = in[i];
    __syncthreads();
    // 2. Tell every peer my slice is ready.
    if (t < (unsigned)world && (int)t != me)
        store_release(&peers.signal[t][me * MAX_BLOCKS + b], epoch);
    // 3. Wait for every peer's slice.
    if (t < (unsigned)world && (int)t != me)
        wait_at_least(&peers.signal[me][t * MAX_BLOCKS + b], epoch);
    __syncthreads();
    // 4. Sum in rank order.
    for (unsigned long long i = lo + t; i < hi; i += blockDim.x) {
        float s = 0.0f;
        for (int p = 0; p < world; ++p) {
            const T* src = (const T*)(peers.data[p] + half);
            s += to_f32(p == me ? own[i] : __ldcv(src + i));
        }
        from_f32(&out[i], s);
    }
}

extern "C" __global__ void opbench_oneshot_allreduce_f32(const float* in, float* out,
                                                         unsigned long long n, const Peers peers,
                                                         unsigned long long half_bytes, int me,
                                                         int world, uint32_t epoch) {
    oneshot<float>(in, out, n, peers, half_bytes, me, world, epoch);
}

extern "C" __global__ void opbench_oneshot_allreduce_bf16(const __nv_bfloat16* in,
                                                          __nv_bfloat16* out,
                                                          unsigned long long n, const Peers peers,
                                                          unsigned long long half_bytes, int me,
                                                          int world, uint32_t epoch) {
    oneshot<__nv_bfloat16>(in, out, n, peers, half_bytes, me, world, epoch);
}
