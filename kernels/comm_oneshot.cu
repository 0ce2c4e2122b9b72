// One-shot all-reduce over peer memory (comm_bench's implementation "opbench", small messages).
//
// Every rank owns a data region of two halves and a signal area, all mapped by every other rank
// (CUDA IPC). Call number `epoch` (1, 2, ...; the same on every rank) uses half epoch % 2. Block b
// of every rank handles the same slice b of the message, so ranks synchronise per block and
// never across a grid:
//   1. copy my input's slice b into my own half (epoch % 2), 16 bytes per load and store;
//   2. bar.sync, then thread p stores ready[me][b] = epoch into peer p's signal area with
//      st.release.sys (the barrier makes the block's data stores happen-before the release,
//      and a release is cumulative);
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
    // Release at system scope is cumulative: the block's data stores, ordered before this
    // thread by the bar.sync before the call, are visible to a peer that acquires the flag.
    // (No __threadfence_system: a full fence.sc.sys costs microseconds and adds nothing here;
    // vLLM's custom all-reduce signals the same way.)
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

// 16 bytes of T: 4 f32 or 8 bf16, loaded and stored as one uint4.
template <typename T> struct Pack;
template <> struct Pack<float> {
    static constexpr int N = 4;
    __device__ static void add(float* acc, uint4 v) {
        acc[0] += __uint_as_float(v.x); acc[1] += __uint_as_float(v.y);
        acc[2] += __uint_as_float(v.z); acc[3] += __uint_as_float(v.w);
    }
    __device__ static uint4 pack(const float* acc) {
        return make_uint4(__float_as_uint(acc[0]), __float_as_uint(acc[1]),
                          __float_as_uint(acc[2]), __float_as_uint(acc[3]));
    }
};
template <> struct Pack<__nv_bfloat16> {
    static constexpr int N = 8;
    __device__ static void add(float* acc, uint4 v) {
        const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            // bf16 is the top half of an f32: widening is a shift.
            acc[2 * k] += __uint_as_float(w[k] << 16);
            acc[2 * k + 1] += __uint_as_float(w[k] & 0xffff0000u);
        }
    }
    __device__ static uint4 pack(const float* acc) {
        uint32_t w[4];
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            const __nv_bfloat162 h = __floats2bfloat162_rn(acc[2 * k], acc[2 * k + 1]);
            w[k] = *reinterpret_cast<const uint32_t*>(&h);
        }
        return make_uint4(w[0], w[1], w[2], w[3]);
    }
};

__device__ __forceinline__ float to_f32(float v) { return v; }
__device__ __forceinline__ float to_f32(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ void from_f32(float* o, float v) { *o = v; }
__device__ __forceinline__ void from_f32(__nv_bfloat16* o, float v) { *o = __float2bfloat16(v); }

// The block's slice [lo, hi) of units (16-byte packs, or single elements when the message is
// not a whole number of packs), the same slice on every rank.
__device__ __forceinline__ void slice(unsigned long long units, unsigned long long* lo,
                                      unsigned long long* hi) {
    const unsigned long long per = (units + gridDim.x - 1) / gridDim.x;
    *lo = min(units, blockIdx.x * per);
    *hi = min(units, *lo + per);
}

template <typename T>
__device__ void oneshot(const T* __restrict__ in, T* __restrict__ out, unsigned long long n,
                        const Peers peers, unsigned long long half_bytes, int me, int world,
                        uint32_t epoch) {
    const unsigned b = blockIdx.x, t = threadIdx.x;
    const unsigned long long half = (epoch & 1) * half_bytes;
    // Whole 16-byte packs when n is a multiple of the pack (every buffer is 256-byte aligned);
    // single elements otherwise (messages under 16 bytes, odd counts).
    const bool packed = n % Pack<T>::N == 0;
    const unsigned long long units = packed ? n / Pack<T>::N : n;
    unsigned long long lo, hi;
    slice(units, &lo, &hi);
    // 1. My input's slice into my own half.
    if (packed) {
        uint4* own = (uint4*)(peers.data[me] + half);
        const uint4* src = (const uint4*)in;
        for (unsigned long long i = lo + t; i < hi; i += blockDim.x) own[i] = src[i];
    } else {
        T* own = (T*)(peers.data[me] + half);
        for (unsigned long long i = lo + t; i < hi; i += blockDim.x) own[i] = in[i];
    }
    __syncthreads();
    // 2. Tell every peer my slice is ready.
    if (t < (unsigned)world && (int)t != me)
        store_release(&peers.signal[t][me * MAX_BLOCKS + b], epoch);
    // 3. Wait for every peer's slice.
    if (t < (unsigned)world && (int)t != me)
        wait_at_least(&peers.signal[me][t * MAX_BLOCKS + b], epoch);
    __syncthreads();
    // 4. Sum in rank order; peers' halves are read with ld.global.cv (no stale L1), all the
    // ranks' loads issued before the sum so that their NVLink round trips overlap.
    if (packed) {
        const uint4* src = (const uint4*)in;
        uint4* dst = (uint4*)out;
        for (unsigned long long i = lo + t; i < hi; i += blockDim.x) {
            uint4 v[MAX_RANKS];
#pragma unroll
            for (int p = 0; p < MAX_RANKS; ++p)
                if (p < world) v[p] = p == me ? src[i] : __ldcv((const uint4*)(peers.data[p] + half) + i);
            float acc[Pack<T>::N] = {};
#pragma unroll
            for (int p = 0; p < MAX_RANKS; ++p)
                if (p < world) Pack<T>::add(acc, v[p]);
            dst[i] = Pack<T>::pack(acc);
        }
    } else {
        for (unsigned long long i = lo + t; i < hi; i += blockDim.x) {
            float s = 0.0f;
            for (int p = 0; p < world; ++p) {
                const T* src = (const T*)(peers.data[p] + half);
                s += to_f32(p == me ? in[i] : __ldcv(src + i));
            }
            from_f32(&out[i], s);
        }
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

// ---------------------------------------------------------------------------------------------
// The push variant (LL, low latency, as NCCL's LL protocol): no barrier, no flag of its own, no
// remote load. Every rank owns a receive region of two halves (used by alternate epochs), each
// with one slot per rank; a slot holds the message as 16-byte lines {w0, epoch, w1, epoch}: 8
// payload bytes and the call's epoch twice. A rank
//   1. stores each 8-byte unit of its input, as a line, into its own slot of every peer's
//      receive region (st.volatile.v4: each 8-byte half {word, epoch} lands whole over NVLink,
//      which is what LL relies on; the two halves may land apart, so each carries the flag);
//   2. polls its own region's slot of every peer, line by line, with ld.volatile.v4 until both
//      flags equal the epoch, and sums the units in rank order (its own from its input), in
//      f32, so every rank gets the same bits.
// A flag equal to the epoch is the line's data of this call, so no ordering is needed between
// lines and no block waits for another. Reuse: this call's half is next written in call
// epoch + 2, which a peer starts only after its call epoch + 1 finished, which needed this
// rank's lines of epoch + 1, stored only after this rank's call epoch (its reads of this half
// included) finished on its stream. A stale line holds epoch - 2 (or 0: regions start zeroed)
// and never equals the epoch.

struct PushPeers {
    // Receive regions of ranks 0..world: 2 halves x world slots x slot_bytes.
    uint4* recv[MAX_RANKS];
};

__device__ __forceinline__ void store_line(uint4* p, uint2 unit, uint32_t epoch) {
    asm volatile("st.volatile.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(unit.x),
                 "r"(epoch), "r"(unit.y), "r"(epoch)
                 : "memory");
}

__device__ __forceinline__ uint2 wait_line(const uint4* p, uint32_t epoch) {
    uint32_t a, f0, b, f1;
    do {
        asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(a), "=r"(f0), "=r"(b), "=r"(f1)
                     : "l"(p)
                     : "memory");
    } while (f0 != epoch || f1 != epoch);
    return make_uint2(a, b);
}

// 8 bytes of T: 2 f32 or 4 bf16.
template <typename T> struct Unit;
template <> struct Unit<float> {
    static constexpr int N = 2;
    __device__ static void add(float* acc, uint2 v) {
        acc[0] += __uint_as_float(v.x); acc[1] += __uint_as_float(v.y);
    }
    __device__ static uint2 pack(const float* acc) {
        return make_uint2(__float_as_uint(acc[0]), __float_as_uint(acc[1]));
    }
};
template <> struct Unit<__nv_bfloat16> {
    static constexpr int N = 4;
    __device__ static void add(float* acc, uint2 v) {
        acc[0] += __uint_as_float(v.x << 16); acc[1] += __uint_as_float(v.x & 0xffff0000u);
        acc[2] += __uint_as_float(v.y << 16); acc[3] += __uint_as_float(v.y & 0xffff0000u);
    }
    __device__ static uint2 pack(const float* acc) {
        const __nv_bfloat162 lo = __floats2bfloat162_rn(acc[0], acc[1]);
        const __nv_bfloat162 hi = __floats2bfloat162_rn(acc[2], acc[3]);
        return make_uint2(*reinterpret_cast<const uint32_t*>(&lo),
                          *reinterpret_cast<const uint32_t*>(&hi));
    }
};

// Unit i of `in` (n elements): whole, or the last one padded with zero bits.
template <typename T>
__device__ __forceinline__ uint2 load_unit(const T* in, unsigned long long n, unsigned long long i) {
    if ((i + 1) * Unit<T>::N <= n) return reinterpret_cast<const uint2*>(in)[i];
    uint2 v = make_uint2(0, 0);
    T* e = reinterpret_cast<T*>(&v);
    for (unsigned long long k = i * Unit<T>::N; k < n; ++k) e[k - i * Unit<T>::N] = in[k];
    return v;
}

template <typename T>
__device__ __forceinline__ void store_unit(T* out, unsigned long long n, unsigned long long i, uint2 v) {
    if ((i + 1) * Unit<T>::N <= n) {
        reinterpret_cast<uint2*>(out)[i] = v;
        return;
    }
    const T* e = reinterpret_cast<const T*>(&v);
    for (unsigned long long k = i * Unit<T>::N; k < n; ++k) out[k] = e[k - i * Unit<T>::N];
}

// Where one call of a push kernel reads and writes: the message's 8-byte units, this thread's
// first unit and the grid's stride, and the byte offset of the call's half in every region.
struct PushCall {
    unsigned long long units, first, stride, half;
};

template <typename T>
__device__ __forceinline__ PushCall push_call(unsigned long long n, unsigned long long slot_bytes,
                                              int world, uint32_t epoch) {
    return {(n + Unit<T>::N - 1) / Unit<T>::N,
            (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x,
            (unsigned long long)gridDim.x * blockDim.x,
            (epoch & 1) * (unsigned long long)world * slot_bytes};
}

// Unit i summed over the ranks in rank order in f32 (this rank's from its input, the others'
// lines polled from `mine`, this rank's half of its receive region), packed back into T.
template <typename T>
__device__ __forceinline__ uint2 sum_unit(const T* in, unsigned long long n, unsigned long long i,
                                          const char* mine, unsigned long long slot_bytes, int me,
                                          int world, uint32_t epoch) {
    float acc[Unit<T>::N] = {};
    for (int p = 0; p < world; ++p) {
        const uint2 v = p == me ? load_unit(in, n, i)
                                : wait_line((const uint4*)(mine + p * slot_bytes) + i, epoch);
        Unit<T>::add(acc, v);
    }
    return Unit<T>::pack(acc);
}

template <typename T>
__device__ void push(const T* __restrict__ in, T* __restrict__ out, unsigned long long n,
                     const PushPeers peers, unsigned long long slot_bytes, int me, int world,
                     uint32_t epoch) {
    const PushCall c = push_call<T>(n, slot_bytes, world, epoch);
    const unsigned long long units = c.units, first = c.first, stride = c.stride, half = c.half;
    // 1. My units into my slot of every peer's region.
    for (unsigned long long i = first; i < units; i += stride) {
        const uint2 v = load_unit(in, n, i);
        for (int p = 0; p < world; ++p) {
            if (p == me) continue;
            uint4* slot = (uint4*)((char*)peers.recv[p] + half + me * slot_bytes);
            store_line(slot + i, v, epoch);
        }
    }
    // 2. Every peer's units from my own region, summed in rank order.
    const char* mine = (const char*)peers.recv[me] + half;
    for (unsigned long long i = first; i < units; i += stride)
        store_unit(out, n, i, sum_unit(in, n, i, mine, slot_bytes, me, world, epoch));
}

extern "C" __global__ void opbench_push_allreduce_f32(const float* in, float* out,
                                                      unsigned long long n, const PushPeers peers,
                                                      unsigned long long slot_bytes, int me,
                                                      int world, uint32_t epoch) {
    push<float>(in, out, n, peers, slot_bytes, me, world, epoch);
}

extern "C" __global__ void opbench_push_allreduce_bf16(const __nv_bfloat16* in,
                                                       __nv_bfloat16* out, unsigned long long n,
                                                       const PushPeers peers,
                                                       unsigned long long slot_bytes, int me,
                                                       int world, uint32_t epoch) {
    push<__nv_bfloat16>(in, out, n, peers, slot_bytes, me, world, epoch);
}

// ---------------------------------------------------------------------------------------------
// The two-shot variant of the push kernel: a reduce-scatter then an all-gather, both in LL
// lines, in one launch. The message's units are cut into `world` chunks, rank r owning units
// [r units / world, (r + 1) units / world) (rounded down), so no chunk is empty when there are
// at least `world` units. A rank
//   1. stores each unit of the other ranks' chunks, as a line, into its own slot of that
//      chunk's owner (one peer per unit, not every peer);
//   2. for each unit of its own chunk, polls every peer's line of it, sums in rank order (its
//      own from its input) in f32, writes the result to `out` and stores it, as a line, into
//      its own slot of every peer; `world` threads share each unit, each sending the sum to
//      one rank, so this step's stores spread over the whole grid as those of step 1 do;
//   3. polls the lines of the other chunks, each from its owner, and writes them to `out`.
// Each rank sends 2 (world - 1) / world of the message instead of world - 1 copies: the same
// bytes as the one-shot kernel on 2 ranks, half on 4. Only the owner sums a unit, so every rank
// holds the same bits. Lines of both steps use the one-shot kernel's slots and halves: a peer's
// step-1 lines land on units of this rank's chunk, its step-3 lines on units of its own chunk,
// so within one call they never share a line. Reuse is the one-shot kernel's argument: a call
// of a rank finishes only after lines of that call from every peer (its own chunk needs every
// peer's step-1 lines), as long as every chunk holds a unit; the caller uses this kernel only
// when the message has at least `world` units, and the one-shot kernel otherwise.
// The rank whose chunk holds unit i: the largest r with r * units / world <= i.
__device__ __forceinline__ int chunk_owner(unsigned long long i, unsigned long long units,
                                           int world) {
    return (int)(((i + 1) * world - 1) / units);
}

template <typename T>
__device__ void twoshot(const T* __restrict__ in, T* __restrict__ out, unsigned long long n,
                        const PushPeers peers, unsigned long long slot_bytes, int me, int world,
                        uint32_t epoch) {
    const PushCall c = push_call<T>(n, slot_bytes, world, epoch);
    const unsigned long long units = c.units, first = c.first, stride = c.stride, half = c.half;
    const char* mine = (const char*)peers.recv[me] + half;
    const unsigned long long lo = me * units / world;
    const unsigned long long hi = (me + 1) * units / world;
    // 1. Units of the other chunks to their owners.
    for (unsigned long long i = first; i < units; i += stride) {
        const int owner = chunk_owner(i, units, world);
        if (owner == me) continue;
        uint4* slot = (uint4*)((char*)peers.recv[owner] + half + me * slot_bytes);
        store_line(slot + i, load_unit(in, n, i), epoch);
    }
    // 2. My chunk: every peer's lines summed in rank order; work item w sends unit
    //    lo + w / world's sum to rank w % world (to `out` when that is this rank).
    for (unsigned long long w = first; w < (hi - lo) * world; w += stride) {
        const unsigned long long i = lo + w / world;
        const int to = (int)(w % world);
        const uint2 sum = sum_unit(in, n, i, mine, slot_bytes, me, world, epoch);
        if (to == me) {
            store_unit(out, n, i, sum);
        } else {
            uint4* slot = (uint4*)((char*)peers.recv[to] + half + me * slot_bytes);
            store_line(slot + i, sum, epoch);
        }
    }
    // 3. The other chunks' sums, each from its owner.
    for (unsigned long long i = first; i < units; i += stride) {
        const int owner = chunk_owner(i, units, world);
        if (owner == me) continue;
        store_unit(out, n, i, wait_line((const uint4*)(mine + owner * slot_bytes) + i, epoch));
    }
}

extern "C" __global__ void opbench_twoshot_allreduce_f32(const float* in, float* out,
                                                         unsigned long long n,
                                                         const PushPeers peers,
                                                         unsigned long long slot_bytes, int me,
                                                         int world, uint32_t epoch) {
    twoshot<float>(in, out, n, peers, slot_bytes, me, world, epoch);
}

extern "C" __global__ void opbench_twoshot_allreduce_bf16(const __nv_bfloat16* in,
                                                          __nv_bfloat16* out,
                                                          unsigned long long n,
                                                          const PushPeers peers,
                                                          unsigned long long slot_bytes, int me,
                                                          int world, uint32_t epoch) {
    twoshot<__nv_bfloat16>(in, out, n, peers, slot_bytes, me, world, epoch);
}
