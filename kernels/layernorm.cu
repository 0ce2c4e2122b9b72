//! LayerNorm forward, y = (x - mean) / sqrt(var + eps) * gamma + beta over each row, in f32,
//! f16 and bf16 with f32 accumulation. Launch arithmetic lives in src/layernorm/plan.rs.
//!
//! Three kernel families, all grid-stride over rows so any row count works:
//! - `layernorm_regs_<dt>_v<VEC>_n<NV>`: a group of `tpr` threads (32..1024, a multiple of 32)
//!   owns one row; each thread keeps NV vectors of VEC elements in registers (converted to f32
//!   once they arrive), so x is read from memory once. All NV loads are issued before the
//!   first use; the mean and then the variance (sum of squared deviations, two passes over
//!   the registers) are reduced with warp shuffles, plus shared memory when the group spans
//!   several warps. gamma/beta are read (read-only path, shared by every row of the SM) only in
//!   the output pass. x is loaded and y stored with the evict-first (.cs) hints: both are
//!   touched once, and the hints keep them from pushing other lines out of L2 (measured on the
//!   H100: +1 to +5 points of copy bandwidth; docs/notes/layernorm.md, v5).
//! - `layernorm_keep_<dt>_v<VEC>_n<NV>`: the regs kernel with x read under an L2 evict-last
//!   policy (`EvictLastX`), for the large f32 tensors where that measured faster.
//! - `layernorm_stream_<dt>_v<VEC>_n<NV>`: the regs kernel's per-row work on a persistent grid
//!   (as many blocks as fit at once), each row group loading its next row into a second set
//!   of registers before it reduces and writes the current one, so the loads of row i+1 are in
//!   flight through row i's reductions and stores.
//! - `layernorm_pipe_<dt>_n<NV>_s<S>`: the same per-row work, but a persistent grid whose row
//!   groups stream their rows through an S-stage cp.async ring in shared memory: while row i is
//!   reduced and written, rows i+1..i+S-1 are already in flight, so far more bytes are in flight
//!   per SM than registers alone allow. Each thread copies exactly the 16-byte vectors it later
//!   reads, so no barrier guards the ring. 16-byte rows only.
//! - `layernorm_long_<dt>_v<VEC>`: rows longer than the register budget. One block per row;
//!   pass 1 streams the row in chunks, each thread merging the exact two-pass statistics of its
//!   chunk into running (count, mean, M2) by Chan's formula; pass 2 re-reads x (mostly from L2)
//!   and writes y.
//! VEC is 16 bytes' worth of elements when cols is a multiple of it (16-byte loads), else 1.
//! Each kernel carries __launch_bounds__(MAXT): src/layernorm/plan.rs never launches a block
//! larger than that, and the bound keeps the registers within what such a block may use.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include <type_traits>

namespace {

template <typename T> __device__ __forceinline__ float to_f32(T v);
template <> __device__ __forceinline__ float to_f32<float>(float v) { return v; }
template <> __device__ __forceinline__ float to_f32<__half>(__half v) { return __half2float(v); }
template <> __device__ __forceinline__ float to_f32<__nv_bfloat16>(__nv_bfloat16 v) {
    return __bfloat162float(v);
}

template <typename T> __device__ __forceinline__ T from_f32(float v);
template <> __device__ __forceinline__ float from_f32<float>(float v) { return v; }
template <> __device__ __forceinline__ __half from_f32<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 from_f32<__nv_bfloat16>(float v) {
    return __float2bfloat16_rn(v);
}

// One memory access of `BYTES` bytes.
template <int BYTES> struct Raw;
template <> struct Raw<16> { using type = uint4; };
template <> struct Raw<4> { using type = unsigned int; };
template <> struct Raw<2> { using type = unsigned short; };

template <typename T, int VEC> union Pack {
    using raw_t = typename Raw<sizeof(T) * VEC>::type;
    raw_t raw;
    T v[VEC];
};

template <typename R> __device__ __forceinline__ R raw_zero();
template <> __device__ __forceinline__ uint4 raw_zero<uint4>() { return make_uint4(0, 0, 0, 0); }
template <> __device__ __forceinline__ unsigned int raw_zero<unsigned int>() { return 0u; }
template <> __device__ __forceinline__ unsigned short raw_zero<unsigned short>() { return 0; }

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// Sum over the `wpg` warps of a row group (first warp `gw0`); every thread gets the total.
// `wpg > 1` is uniform over the block, so the barrier is reached by all its threads.
__device__ __forceinline__ float group_sum(float v, float* red, int wpg, int gw0, int warp,
                                           int lane) {
    v = warp_sum(v);
    if (wpg > 1) {
        if (lane == 0) red[warp] = v;
        __syncthreads();
        v = lane < wpg ? red[gw0 + lane] : 0.f;
        v = warp_sum(v);
    }
    return v;
}

// A vector of x, gamma or beta in f32. bf16 is the top half of an f32, so a pair unpacks with
// one shift and one mask (the generic conversion took a PRMT and a SHF per value).
template <typename T, int VEC>
__device__ __forceinline__ void unpack(const Pack<T, VEC>& p, float (&f)[VEC]) {
    if constexpr (VEC % 2 == 0 && std::is_same<T, __nv_bfloat16>::value) {
        const unsigned* w = reinterpret_cast<const unsigned*>(&p.raw);
#pragma unroll
        for (int j = 0; j < VEC; j += 2) {
            f[j] = __uint_as_float(w[j / 2] << 16);
            f[j + 1] = __uint_as_float(w[j / 2] & 0xffff0000u);
        }
    } else {
#pragma unroll
        for (int j = 0; j < VEC; ++j) f[j] = to_f32(p.v[j]);
    }
}

// 16-bit outputs are converted two at a time (cvt.rn.f16x2.f32 / cvt.rn.bf16x2.f32).
template <typename T, int VEC>
__device__ __forceinline__ void pack_out(Pack<T, VEC>& out, const float (&o)[VEC]) {
    if constexpr (VEC % 2 == 0 && std::is_same<T, __half>::value) {
#pragma unroll
        for (int j = 0; j < VEC; j += 2)
            reinterpret_cast<__half2*>(out.v)[j / 2] = __floats2half2_rn(o[j], o[j + 1]);
    } else if constexpr (VEC % 2 == 0 && std::is_same<T, __nv_bfloat16>::value) {
#pragma unroll
        for (int j = 0; j < VEC; j += 2)
            reinterpret_cast<__nv_bfloat162*>(out.v)[j / 2] = __floats2bfloat162_rn(o[j], o[j + 1]);
    } else {
#pragma unroll
        for (int j = 0; j < VEC; ++j) out.v[j] = from_f32<T>(o[j]);
    }
}

// How x is loaded and y stored: a policy type with static `load` and `store` (`store` is also
// given the address of the x vector the output came from, for a policy that changes that line's
// cache priority once it is used) and `kBatchOutput` (see normalize_row). `Streaming`
// (evict-first, .cs, both ways) is what the kernels below use for data touched once; `Plain`
// (read-only path, default store) serves rows already staged in shared memory.
struct Streaming {
    static constexpr bool kBatchOutput = false;
    template <typename R> static __device__ __forceinline__ R load(const R* p) { return __ldcs(p); }
    template <typename R> static __device__ __forceinline__ void store(R* p, R v, const R*) {
        __stcs(p, v);
    }
};
struct Plain {
    static constexpr bool kBatchOutput = false;
    template <typename R> static __device__ __forceinline__ R load(const R* p) { return __ldg(p); }
    template <typename R> static __device__ __forceinline__ void store(R* p, R v, const R*) { *p = v; }
};
// x read under an L2 evict-last policy, y stored .cs (16-byte vectors only): the `keep` kernels.
// Faster than `Streaming` only where x is far larger than L2 (f32 rows with 128 MiB of x and
// more on the H200), slower at smaller tensors and at most 16-bit shapes, and it leaves none of
// the data other kernels had in L2 (docs/notes/layernorm.md); src/layernorm/plan.rs decides
// where it runs.
__device__ __forceinline__ unsigned long long l2_policy_last() {
    unsigned long long p;
    asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
    return p;
}
__device__ __forceinline__ uint4 ld_hint_last(const uint4* ptr, unsigned long long pol) {
    uint4 v;
    asm volatile("ld.global.L1::evict_last.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(ptr), "l"(pol));
    return v;
}
struct EvictLastX {
    static constexpr bool kBatchOutput = false;
    static __device__ __forceinline__ uint4 load(const uint4* p) { return ld_hint_last(p, l2_policy_last()); }
    static __device__ __forceinline__ void store(uint4* p, uint4 v, const uint4*) { __stcs(p, v); }
};

// Where a thread sits: rows go to groups of `tpr` threads, `rpb` groups per block; this
// thread is number `t` of group `g`, whose `wpg` warps start at block warp `gw0`.
// A block of one row group (the launch of every large shape) skips the two integer divisions,
// which ptxas expands into some thirty instructions ahead of the first load.
struct Group {
    int tpr, rpb, g, t, warp, lane, wpg, gw0;
    __device__ __forceinline__ explicit Group(int tpr_)
        : tpr(tpr_), warp(threadIdx.x >> 5), lane(threadIdx.x & 31), wpg(tpr_ >> 5) {
        if (tpr_ == (int)blockDim.x) {
            rpb = 1;
            g = 0;
            t = threadIdx.x;
        } else {
            rpb = blockDim.x / tpr_;
            g = threadIdx.x / tpr_;
            t = threadIdx.x - g * tpr_;
        }
        gw0 = g * wpg;
    }
};

// Loads this thread's vectors of `row` (zeros where the row or the vector does not exist).
template <class Acc, typename T, int VEC, int NV>
__device__ __forceinline__ void load_row(Pack<T, VEC> (&p)[NV], const T* __restrict__ x,
                                         long long row, bool live, int cols, int nvec,
                                         const Group& grp) {
    using raw_t = typename Pack<T, VEC>::raw_t;
    const raw_t* xr = reinterpret_cast<const raw_t*>(x + (live ? row : 0) * cols);
#pragma unroll
    for (int k = 0; k < NV; ++k) {
        const int i = grp.t + k * grp.tpr;
        p[k].raw = (live && i < nvec) ? Acc::load(xr + i) : raw_zero<raw_t>();
    }
}

// The per-row work shared by the regs, stream and pipe kernels: p[] holds the row's vectors of
// this thread (zeros where i >= nvec); reduces mean and variance over the group and writes y.
template <class Acc, typename T, int VEC, int NV>
__device__ __forceinline__ void normalize_row(const Pack<T, VEC> (&p)[NV], const T* __restrict__ x,
                                              const T* __restrict__ gamma,
                                              const T* __restrict__ beta, T* __restrict__ y,
                                              long long row, bool live, int cols, int nvec,
                                              const Group& grp, float eps, float* red_mean,
                                              float* red_var) {
    using raw_t = typename Pack<T, VEC>::raw_t;
    const int t = grp.t, tpr = grp.tpr;
    // The correctly rounded reciprocal, as 1.f / cols is, without the division's slow-path call.
    const float inv_n = __frcp_rn((float)cols);
    // Converted to f32 once; the three passes below read these.
    float f[NV][VEC];
#pragma unroll
    for (int k = 0; k < NV; ++k) unpack(p[k], f[k]);
    // ILP accumulators: four independent chains instead of one of NV * VEC dependent adds
    // (32 for f16/bf16 at 4 vectors), so the row's arithmetic latency shrinks fourfold.
    constexpr int ACC = 4;
    float s[ACC] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
    for (int k = 0; k < NV; ++k)
#pragma unroll
        for (int j = 0; j < VEC; ++j) s[(k * VEC + j) % ACC] += f[k][j];
    const float mean =
        group_sum((s[0] + s[1]) + (s[2] + s[3]), red_mean, grp.wpg, grp.gw0, grp.warp, grp.lane) * inv_n;
    // 16-bit rows keep the deviations in place, as the variance and the output both read them
    // (32 fewer FADDs per thread at 4 vectors). f32 rows subtract twice: in place, ptxas
    // batches the output pass's gamma/beta loads and the 4-vector kernel goes from 40 to 51
    // registers, 6 to 4 blocks of 256 threads per SM.
    constexpr bool IN_PLACE = sizeof(T) == 2;
    const float shift = IN_PLACE ? 0.f : mean;
    if constexpr (IN_PLACE) {
#pragma unroll
        for (int k = 0; k < NV; ++k)
#pragma unroll
            for (int j = 0; j < VEC; ++j) f[k][j] -= mean;
    }
    float q[ACC] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
    for (int k = 0; k < NV; ++k) {
        if (t + k * tpr < nvec) {
#pragma unroll
            for (int j = 0; j < VEC; ++j) {
                const float d = f[k][j] - shift;
                q[(k * VEC + j) % ACC] = fmaf(d, d, q[(k * VEC + j) % ACC]);
            }
        }
    }
    const float var =
        group_sum((q[0] + q[1]) + (q[2] + q[3]), red_var, grp.wpg, grp.gw0, grp.warp, grp.lane) * inv_n;
    const float rstd = rsqrtf(var + eps);
    if (!live) return;
    const raw_t* gr = reinterpret_cast<const raw_t*>(gamma);
    const raw_t* br = reinterpret_cast<const raw_t*>(beta);
    raw_t* yr = reinterpret_cast<raw_t*>(y + row * cols);
    const raw_t* xr = reinterpret_cast<const raw_t*>(x + row * cols);
    // A policy with kBatchOutput is launched only where every thread holds all NV vectors of its
    // row (nvec == NV * tpr): the output pass then has no branch per vector, so that ptxas can
    // issue the gamma and beta loads of every vector before the first store.
#pragma unroll
    for (int k = 0; k < NV; ++k) {
        const int i = t + k * tpr;
        if (Acc::kBatchOutput || i < nvec) {
            Pack<T, VEC> gp, bp, out;
            gp.raw = __ldg(gr + i);
            bp.raw = __ldg(br + i);
            float gf[VEC], bf[VEC], o[VEC];
            unpack(gp, gf);
            unpack(bp, bf);
#pragma unroll
            for (int j = 0; j < VEC; ++j) o[j] = fmaf((f[k][j] - shift) * rstd, gf[j], bf[j]);
            pack_out<T, VEC>(out, o);
            Acc::store(yr + i, out.raw, xr + i);
        }
    }
}

template <typename T, int VEC, int NV, class Acc = Streaming>
__device__ __forceinline__ void layernorm_regs(const T* __restrict__ x, const T* __restrict__ gamma,
                                               const T* __restrict__ beta, T* __restrict__ y,
                                               long long rows, int cols, int tpr, float eps) {
    using P = Pack<T, VEC>;
    __shared__ float red_mean[32];
    __shared__ float red_var[32];
    const int nvec = cols / VEC;
    const Group grp(tpr);
    for (long long base = (long long)blockIdx.x * grp.rpb; base < rows;
         base += (long long)gridDim.x * grp.rpb) {
        const long long row = base + grp.g;
        const bool live = row < rows;
        P p[NV];
        load_row<Acc>(p, x, row, live, cols, nvec, grp);
        normalize_row<Acc, T, VEC, NV>(p, x, gamma, beta, y, row, live, cols, nvec, grp, eps,
                                       red_mean, red_var);
    }
}

// As layernorm_regs on a persistent grid, the group's next row loaded into a second set of
// registers while the current one is reduced and written. The loop bound depends on the
// block only, so every thread of a block reaches the same barriers. 16-byte vectors only.
template <typename T, int VEC, int NV>
__device__ __forceinline__ void layernorm_stream(const T* __restrict__ x, const T* __restrict__ gamma,
                                                 const T* __restrict__ beta, T* __restrict__ y,
                                                 long long rows, int cols, int tpr, float eps) {
    using P = Pack<T, VEC>;
    __shared__ float red_mean[32];
    __shared__ float red_var[32];
    const int nvec = cols / VEC;
    const Group grp(tpr);
    const long long stride = (long long)gridDim.x * grp.rpb;
    long long base = (long long)blockIdx.x * grp.rpb;
    P cur[NV];
    load_row<Streaming>(cur, x, base + grp.g, base + grp.g < rows, cols, nvec, grp);
    for (; base < rows; base += stride) {
        const long long row = base + grp.g;
        const long long next = row + stride;
        P nxt[NV];
        load_row<Streaming>(nxt, x, next, next < rows, cols, nvec, grp);
        normalize_row<Streaming, T, VEC, NV>(cur, x, gamma, beta, y, row, row < rows, cols, nvec, grp,
                                             eps, red_mean, red_var);
#pragma unroll
        for (int k = 0; k < NV; ++k) cur[k] = nxt[k];
    }
}

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem, bool full) {
    const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    const int src_bytes = full ? 16 : 0;  // 0: nothing is read, the 16 bytes are zero-filled
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem),
                 "r"(src_bytes)
                 : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

template <typename T, int NV, int S>
__device__ __forceinline__ void layernorm_pipe(const T* __restrict__ x, const T* __restrict__ gamma,
                                               const T* __restrict__ beta, T* __restrict__ y,
                                               long long rows, int cols, int tpr, float eps) {
    constexpr int VEC = 16 / sizeof(T);
    using P = Pack<T, VEC>;
    extern __shared__ uint4 ring[];  // [S][NV][blockDim.x] 16-byte vectors
    __shared__ float red_mean[32];
    __shared__ float red_var[32];
    const int nvec = cols / VEC;
    const Group grp(tpr);
    const int g = grp.g, t = grp.t;
    const long long first = (long long)blockIdx.x * grp.rpb;
    const long long stride = (long long)gridDim.x * grp.rpb;
    const uint4* xv = reinterpret_cast<const uint4*>(x);

    // Starts the copy of this thread's vectors of iteration `it`'s row into ring slot it % S.
    auto issue = [&](long long it) {
        const long long row = first + it * stride + g;
        const bool live = row < rows;
        const uint4* src = xv + (live ? row : 0) * nvec;
        uint4* dst = ring + (int)(it % S) * NV * blockDim.x + threadIdx.x;
#pragma unroll
        for (int k = 0; k < NV; ++k) {
            const int i = t + k * tpr;
            const bool ok = live && i < nvec;
            cp_async16(dst + k * blockDim.x, src + (ok ? i : 0), ok);
        }
        cp_async_commit();
    };
#pragma unroll
    for (int s = 0; s < S - 1; ++s) issue(s);
    for (long long it = 0; first + it * stride < rows; ++it) {
        // Slot (it + S - 1) % S was read into registers in iteration it - 1: free to refill.
        issue(it + S - 1);
        cp_async_wait<S - 1>();  // this thread's copies of iteration `it` have landed
        const uint4* src = ring + (int)(it % S) * NV * blockDim.x + threadIdx.x;
        P p[NV];
#pragma unroll
        for (int k = 0; k < NV; ++k) p[k].raw = src[k * blockDim.x];
        const long long row = first + it * stride + g;
        normalize_row<Plain, T, VEC, NV>(p, x, gamma, beta, y, row, row < rows, cols, nvec, grp, eps,
                                         red_mean, red_var);
    }
    cp_async_wait<0>();
}

struct Stats {
    float n, mean, m2;
};

// Chan et al.: statistics of the union of two disjoint sets.
__device__ __forceinline__ Stats merge(Stats a, Stats b) {
    const float n = a.n + b.n;
    if (n == 0.f) return a;
    const float d = b.mean - a.mean;
    const float wb = b.n / n;
    return Stats{n, a.mean + d * wb, a.m2 + b.m2 + d * d * a.n * wb};
}

__device__ __forceinline__ Stats warp_merge(Stats s) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        Stats other{__shfl_xor_sync(0xffffffffu, s.n, o), __shfl_xor_sync(0xffffffffu, s.mean, o),
                    __shfl_xor_sync(0xffffffffu, s.m2, o)};
        s = merge(s, other);
    }
    return s;
}

constexpr int LONG_CHUNK = 4;  // vectors per thread per step of the long-row kernel

template <typename T, int VEC>
__device__ __forceinline__ void layernorm_long(const T* __restrict__ x, const T* __restrict__ gamma,
                                               const T* __restrict__ beta, T* __restrict__ y,
                                               long long rows, int cols, float eps) {
    using P = Pack<T, VEC>;
    using raw_t = typename P::raw_t;
    __shared__ float red[3][32];
    const int nvec = cols / VEC;
    const int warp = threadIdx.x >> 5;
    const int lane = threadIdx.x & 31;
    const int nwarps = blockDim.x >> 5;
    const raw_t* gr = reinterpret_cast<const raw_t*>(gamma);
    const raw_t* br = reinterpret_cast<const raw_t*>(beta);

    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
        const raw_t* xr = reinterpret_cast<const raw_t*>(x + row * cols);
        Stats acc{0.f, 0.f, 0.f};
        for (int c0 = 0; c0 < nvec; c0 += LONG_CHUNK * blockDim.x) {
            P p[LONG_CHUNK];
            int valid = 0;
#pragma unroll
            for (int k = 0; k < LONG_CHUNK; ++k) {
                const int i = c0 + threadIdx.x + k * blockDim.x;
                const bool ok = i < nvec;
                p[k].raw = ok ? __ldg(xr + i) : raw_zero<raw_t>();
                valid += ok ? VEC : 0;
            }
            if (valid > 0) {
                float s = 0.f;
#pragma unroll
                for (int k = 0; k < LONG_CHUNK; ++k)
#pragma unroll
                    for (int j = 0; j < VEC; ++j) s += to_f32(p[k].v[j]);
                const float m = s / (float)valid;
                float q = 0.f;
#pragma unroll
                for (int k = 0; k < LONG_CHUNK; ++k) {
                    if (c0 + threadIdx.x + k * blockDim.x < nvec) {
#pragma unroll
                        for (int j = 0; j < VEC; ++j) {
                            const float d = to_f32(p[k].v[j]) - m;
                            q = fmaf(d, d, q);
                        }
                    }
                }
                acc = merge(acc, Stats{(float)valid, m, q});
            }
        }
        acc = warp_merge(acc);
        if (lane == 0) {
            red[0][warp] = acc.n;
            red[1][warp] = acc.mean;
            red[2][warp] = acc.m2;
        }
        __syncthreads();
        Stats w = lane < nwarps ? Stats{red[0][lane], red[1][lane], red[2][lane]}
                                : Stats{0.f, 0.f, 0.f};
        w = warp_merge(w);
        __syncthreads();  // red[] is reused by the next row
        const float mean = w.mean;
        const float rstd = rsqrtf(w.m2 / (float)cols + eps);
        raw_t* yr = reinterpret_cast<raw_t*>(y + row * cols);
        for (int c0 = 0; c0 < nvec; c0 += LONG_CHUNK * blockDim.x) {
            P p[LONG_CHUNK];
#pragma unroll
            for (int k = 0; k < LONG_CHUNK; ++k) {
                const int i = c0 + threadIdx.x + k * blockDim.x;
                p[k].raw = i < nvec ? __ldg(xr + i) : raw_zero<raw_t>();
            }
#pragma unroll
            for (int k = 0; k < LONG_CHUNK; ++k) {
                const int i = c0 + threadIdx.x + k * blockDim.x;
                if (i < nvec) {
                    P gp, bp, out;
                    gp.raw = __ldg(gr + i);
                    bp.raw = __ldg(br + i);
#pragma unroll
                    for (int j = 0; j < VEC; ++j) {
                        const float n = (to_f32(p[k].v[j]) - mean) * rstd;
                        out.v[j] = from_f32<T>(fmaf(n, to_f32(gp.v[j]), to_f32(bp.v[j])));
                    }
                    yr[i] = out.raw;
                }
            }
        }
    }
}

}  // namespace

#define LN_REGS(NAME, T, VEC, NV, MAXT)                                                         \
    extern "C" __global__ void __launch_bounds__(MAXT)                                          \
        NAME(const T* __restrict__ x, const T* __restrict__ gamma, const T* __restrict__ beta,   \
             T* __restrict__ y, long long rows, int cols, int tpr, float eps) {                  \
        layernorm_regs<T, VEC, NV>(x, gamma, beta, y, rows, cols, tpr, eps);                    \
    }

#define LN_KEEP(NAME, T, VEC, NV, MAXT)                                                         \
    extern "C" __global__ void __launch_bounds__(MAXT)                                          \
        NAME(const T* __restrict__ x, const T* __restrict__ gamma, const T* __restrict__ beta,   \
             T* __restrict__ y, long long rows, int cols, int tpr, float eps) {                  \
        layernorm_regs<T, VEC, NV, EvictLastX>(x, gamma, beta, y, rows, cols, tpr, eps);        \
    }

#define LN_STREAM(NAME, T, VEC, NV, MAXT)                                                       \
    extern "C" __global__ void __launch_bounds__(MAXT)                                          \
        NAME(const T* __restrict__ x, const T* __restrict__ gamma, const T* __restrict__ beta,   \
             T* __restrict__ y, long long rows, int cols, int tpr, float eps) {                  \
        layernorm_stream<T, VEC, NV>(x, gamma, beta, y, rows, cols, tpr, eps);                  \
    }

#define LN_PIPE(NAME, T, NV, S, MAXT)                                                           \
    extern "C" __global__ void __launch_bounds__(MAXT)                                          \
        NAME(const T* __restrict__ x, const T* __restrict__ gamma, const T* __restrict__ beta,   \
             T* __restrict__ y, long long rows, int cols, int tpr, float eps) {                  \
        layernorm_pipe<T, NV, S>(x, gamma, beta, y, rows, cols, tpr, eps);                      \
    }

#define LN_LONG(NAME, T, VEC, MAXT)                                                             \
    extern "C" __global__ void __launch_bounds__(MAXT)                                          \
        NAME(const T* __restrict__ x, const T* __restrict__ gamma, const T* __restrict__ beta,   \
             T* __restrict__ y, long long rows, int cols, int tpr, float eps) {                  \
        (void)tpr;                                                                              \
        layernorm_long<T, VEC>(x, gamma, beta, y, rows, cols, eps);                             \
    }

#define LN_PIPE_S(DT, T, NV, MAXT)                                                              \
    LN_PIPE(layernorm_pipe_##DT##_n##NV##_s2, T, NV, 2, MAXT)                                   \
    LN_PIPE(layernorm_pipe_##DT##_n##NV##_s3, T, NV, 3, MAXT)                                   \
    LN_PIPE(layernorm_pipe_##DT##_n##NV##_s4, T, NV, 4, MAXT)

// Keep in step with `max_group_threads`, `REGS_NV_*`, `PIPE_*` and the names in
// src/layernorm/plan.rs (a test there expands this macro and compares).
#define LN_ALL(DT, T, VFULL)                                                                    \
    LN_REGS(layernorm_regs_##DT##_v##VFULL##_n1, T, VFULL, 1, 1024)                             \
    LN_REGS(layernorm_regs_##DT##_v##VFULL##_n2, T, VFULL, 2, 1024)                             \
    LN_REGS(layernorm_regs_##DT##_v##VFULL##_n4, T, VFULL, 4, 512)                              \
    LN_REGS(layernorm_regs_##DT##_v##VFULL##_n8, T, VFULL, 8, 512)                              \
    LN_KEEP(layernorm_keep_##DT##_v##VFULL##_n1, T, VFULL, 1, 1024)                             \
    LN_KEEP(layernorm_keep_##DT##_v##VFULL##_n2, T, VFULL, 2, 1024)                             \
    LN_KEEP(layernorm_keep_##DT##_v##VFULL##_n4, T, VFULL, 4, 512)                              \
    LN_KEEP(layernorm_keep_##DT##_v##VFULL##_n8, T, VFULL, 8, 512)                              \
    LN_STREAM(layernorm_stream_##DT##_v##VFULL##_n1, T, VFULL, 1, 1024)                         \
    LN_STREAM(layernorm_stream_##DT##_v##VFULL##_n2, T, VFULL, 2, 1024)                         \
    LN_STREAM(layernorm_stream_##DT##_v##VFULL##_n4, T, VFULL, 4, 512)                          \
    LN_STREAM(layernorm_stream_##DT##_v##VFULL##_n8, T, VFULL, 8, 512)                          \
    LN_REGS(layernorm_regs_##DT##_v1_n1, T, 1, 1, 1024)                                         \
    LN_REGS(layernorm_regs_##DT##_v1_n2, T, 1, 2, 1024)                                         \
    LN_REGS(layernorm_regs_##DT##_v1_n4, T, 1, 4, 1024)                                         \
    LN_REGS(layernorm_regs_##DT##_v1_n8, T, 1, 8, 512)                                          \
    LN_REGS(layernorm_regs_##DT##_v1_n16, T, 1, 16, 256)                                        \
    LN_REGS(layernorm_regs_##DT##_v1_n32, T, 1, 32, 256)                                        \
    LN_PIPE_S(DT, T, 1, 512)                                                                    \
    LN_PIPE_S(DT, T, 2, 512)                                                                    \
    LN_PIPE_S(DT, T, 4, 512)                                                                    \
    LN_PIPE_S(DT, T, 8, 512)                                                                    \
    LN_LONG(layernorm_long_##DT##_v##VFULL, T, VFULL, 512)                                      \
    LN_LONG(layernorm_long_##DT##_v1, T, 1, 512)

LN_ALL(f32, float, 4)
LN_ALL(f16, __half, 8)
LN_ALL(bf16, __nv_bfloat16, 8)
