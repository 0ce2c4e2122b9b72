//! LayerNorm forward, y = (x - mean) / sqrt(var + eps) * gamma + beta over each row, in f32,
//! f16 and bf16 with f32 accumulation. Launch arithmetic lives in src/layernorm/plan.rs.
//!
//! Two kernel families, both grid-stride over rows so any row count works:
//! - `layernorm_regs_<dt>_v<VEC>_n<NV>`: a group of `tpr` threads (32..1024, a multiple of 32)
//!   owns one row; each thread keeps NV vectors of VEC elements in registers, so x is read from
//!   memory once. All NV loads are issued before the first use; the mean and then the variance
//!   (sum of squared deviations, two passes over the registers) are reduced with warp shuffles,
//!   plus shared memory when the group spans several warps. gamma/beta are read (read-only
//!   cache, shared by every row of the block and the SM) only in the output pass.
//! - `layernorm_long_<dt>_v<VEC>`: rows longer than the register budget. One block per row;
//!   pass 1 streams the row in chunks, each thread merging the exact two-pass statistics of its
//!   chunk into running (count, mean, M2) by Chan's formula; pass 2 re-reads x (mostly from L2)
//!   and writes y.
//! VEC is 16 bytes' worth of elements when cols is a multiple of it (16-byte loads), else 1.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

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

template <typename T, int VEC, int NV>
__device__ __forceinline__ void layernorm_regs(const T* __restrict__ x, const T* __restrict__ gamma,
                                               const T* __restrict__ beta, T* __restrict__ y,
                                               long long rows, int cols, int tpr, float eps) {
    using P = Pack<T, VEC>;
    using raw_t = typename P::raw_t;
    __shared__ float red_mean[32];
    __shared__ float red_var[32];
    const int nvec = cols / VEC;
    const int rpb = blockDim.x / tpr;
    const int g = threadIdx.x / tpr;
    const int t = threadIdx.x - g * tpr;
    const int warp = threadIdx.x >> 5;
    const int lane = threadIdx.x & 31;
    const int wpg = tpr >> 5;
    const int gw0 = g * wpg;
    const float inv_n = 1.f / (float)cols;
    const raw_t* gr = reinterpret_cast<const raw_t*>(gamma);
    const raw_t* br = reinterpret_cast<const raw_t*>(beta);

    for (long long base = (long long)blockIdx.x * rpb; base < rows;
         base += (long long)gridDim.x * rpb) {
        const long long row = base + g;
        const bool live = row < rows;
        const raw_t* xr = reinterpret_cast<const raw_t*>(x + (live ? row : 0) * cols);

        P p[NV];
#pragma unroll
        for (int k = 0; k < NV; ++k) {
            const int i = t + k * tpr;
            p[k].raw = (live && i < nvec) ? __ldg(xr + i) : raw_zero<raw_t>();
        }
        float v[NV][VEC];
        float s = 0.f;
#pragma unroll
        for (int k = 0; k < NV; ++k) {
#pragma unroll
            for (int j = 0; j < VEC; ++j) {
                v[k][j] = to_f32(p[k].v[j]);
                s += v[k][j];
            }
        }
        const float mean = group_sum(s, red_mean, wpg, gw0, warp, lane) * inv_n;
        float q = 0.f;
#pragma unroll
        for (int k = 0; k < NV; ++k) {
            if (t + k * tpr < nvec) {
#pragma unroll
                for (int j = 0; j < VEC; ++j) {
                    const float d = v[k][j] - mean;
                    q = fmaf(d, d, q);
                }
            }
        }
        const float var = group_sum(q, red_var, wpg, gw0, warp, lane) * inv_n;
        const float rstd = rsqrtf(var + eps);
        if (live) {
            raw_t* yr = reinterpret_cast<raw_t*>(y + row * cols);
#pragma unroll
            for (int k = 0; k < NV; ++k) {
                const int i = t + k * tpr;
                if (i < nvec) {
                    P gp, bp, out;
                    gp.raw = __ldg(gr + i);
                    bp.raw = __ldg(br + i);
#pragma unroll
                    for (int j = 0; j < VEC; ++j) {
                        const float n = (v[k][j] - mean) * rstd;
                        out.v[j] = from_f32<T>(fmaf(n, to_f32(gp.v[j]), to_f32(bp.v[j])));
                    }
                    yr[i] = out.raw;
                }
            }
        }
    }
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

#define LN_REGS(NAME, T, VEC, NV)                                                               \
    extern "C" __global__ void NAME(const T* __restrict__ x, const T* __restrict__ gamma,       \
                                    const T* __restrict__ beta, T* __restrict__ y,              \
                                    long long rows, int cols, int tpr, float eps) {             \
        layernorm_regs<T, VEC, NV>(x, gamma, beta, y, rows, cols, tpr, eps);                    \
    }

#define LN_LONG(NAME, T, VEC)                                                                   \
    extern "C" __global__ void NAME(const T* __restrict__ x, const T* __restrict__ gamma,       \
                                    const T* __restrict__ beta, T* __restrict__ y,              \
                                    long long rows, int cols, int tpr, float eps) {             \
        (void)tpr;                                                                              \
        layernorm_long<T, VEC>(x, gamma, beta, y, rows, cols, eps);                             \
    }

// Keep in step with `REGS_NV` and `kernel_name` in src/layernorm/plan.rs.
#define LN_ALL(DT, T, VFULL)                                                                    \
    LN_REGS(layernorm_regs_##DT##_v##VFULL##_n1, T, VFULL, 1)                                   \
    LN_REGS(layernorm_regs_##DT##_v##VFULL##_n2, T, VFULL, 2)                                   \
    LN_REGS(layernorm_regs_##DT##_v##VFULL##_n4, T, VFULL, 4)                                   \
    LN_REGS(layernorm_regs_##DT##_v##VFULL##_n8, T, VFULL, 8)                                   \
    LN_REGS(layernorm_regs_##DT##_v1_n1, T, 1, 1)                                               \
    LN_REGS(layernorm_regs_##DT##_v1_n2, T, 1, 2)                                               \
    LN_REGS(layernorm_regs_##DT##_v1_n4, T, 1, 4)                                               \
    LN_REGS(layernorm_regs_##DT##_v1_n8, T, 1, 8)                                               \
    LN_REGS(layernorm_regs_##DT##_v1_n16, T, 1, 16)                                             \
    LN_REGS(layernorm_regs_##DT##_v1_n32, T, 1, 32)                                             \
    LN_LONG(layernorm_long_##DT##_v##VFULL, T, VFULL)                                           \
    LN_LONG(layernorm_long_##DT##_v1, T, 1)

LN_ALL(f32, float, 4)
LN_ALL(f16, __half, 8)
LN_ALL(bf16, __nv_bfloat16, 8)
