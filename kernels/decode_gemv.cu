//! Decode matrix-vector / skinny-matrix product: out = W x for up to B rows of x at once (B =
//! 1, 2, 4, 8, 16), f16 weights and inputs, f32 accumulation, with the step's neighbours fused:
//! RMSNorm of x in the prologue (when norm_w is given) and, in the epilogue, a plain f32 store,
//! the residual add, SiLU(gate) * up, or RoPE + the KV-cache write (modes in decode_common.cuh).
//!
//! Work split: a block is 8 warps; `ksplit` warps share one pair of adjacent weight rows, each
//! taking every ksplit-th 16-byte column chunk, so small-N shapes still fill every SM; partial
//! sums meet in shared memory. x (normalized when asked) sits in shared memory as f16, so each
//! weight chunk is read from DRAM once, with the no-L1-allocate hint (it is never reused), and
//! U chunks per row are loaded before any is used to keep enough bytes in flight. The first U
//! chunks are issued before waiting on the previous kernel (programmatic dependent launch).
#include "decode_common.cuh"

namespace {

__device__ __forceinline__ uint4 ld_stream(const __half *p) {
    uint4 v;
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
    return v;
}

__device__ __forceinline__ void to_float8(uint4 v, float *f) {
    const __half2 *h = reinterpret_cast<const __half2 *>(&v);
#pragma unroll
    for (int j = 0; j < 4; j++) {
        float2 t = __half22float2(h[j]);
        f[2 * j] = t.x;
        f[2 * j + 1] = t.y;
    }
}

__device__ __forceinline__ float dot8(const float *w, uint4 xv) {
    const __half2 *h = reinterpret_cast<const __half2 *>(&xv);
    float s = 0.f;
#pragma unroll
    for (int j = 0; j < 4; j++) {
        float2 t = __half22float2(h[j]);
        s = fmaf(w[2 * j], t.x, s);
        s = fmaf(w[2 * j + 1], t.y, s);
    }
    return s;
}

// What the epilogue reads besides the sums (the residual, the position, the RoPE frequency),
// loaded before the main loop so its latency hides under the weight stream.
struct EpiloguePre {
    float2 resid;
    int pos0;
    float freq;
};

__device__ __forceinline__ EpiloguePre epilogue_pre(const GemvArgs &a, int r, int p) {
    EpiloguePre e = {make_float2(0.f, 0.f), 0, 0.f};
    if (a.mode == GEMV_RESID) {
        e.resid = __half22float2(*reinterpret_cast<const __half2 *>(
            reinterpret_cast<const __half *>(a.out) + (size_t)r * a.out_stride + 2 * p));
    } else if (a.mode == GEMV_QKV) {
        e.pos0 = *a.qkv.pos;
        e.freq = qkv_pair_freq(a.qkv, p);
    }
    return e;
}

__device__ __forceinline__ void epilogue(const GemvArgs &a, int r, int p, float v0, float v1,
                                         const EpiloguePre &e) {
    switch (a.mode) {
    case GEMV_F32: {
        float *o = reinterpret_cast<float *>(a.out) + (size_t)r * a.out_stride + 2 * p;
        o[0] = v0;
        o[1] = v1;
        break;
    }
    case GEMV_RESID: {
        __half2 *o = reinterpret_cast<__half2 *>(reinterpret_cast<__half *>(a.out) +
                                                 (size_t)r * a.out_stride + 2 * p);
        *o = __floats2half2_rn(e.resid.x + v0, e.resid.y + v1);
        break;
    }
    case GEMV_SILU: {
        __half *o = reinterpret_cast<__half *>(a.out) + (size_t)r * a.out_stride + p;
        *o = __float2half_rn(v0 / (1.f + __expf(-v0)) * v1);
        break;
    }
    default:
        qkv_store_pair_at(a.qkv, r, p, v0, v1, e.pos0, e.freq);
    }
}

template <int B> __device__ __forceinline__ void stage_x(const GemvArgs &a, __half *xs) {
    __shared__ float inv_rms[B];
    const int k = a.k, kv = k >> 3, total = B * kv;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    if (a.merge.part_o) {
        // x[r] = attention output merged from its splits (online softmax rescaling), 4 dims
        // per thread, every split's loads issued before they are combined.
        const MergeIn &g = a.merge;
        const int k4 = k >> 2;
        for (int i = threadIdx.x; i < B * k4; i += blockDim.x) {
            const int r = i / k4, e = (i % k4) * 4, h = e / g.hd;
            float4 o = make_float4(0.f, 0.f, 0.f, 0.f);
            if (r < a.m) {
                const int ctx = row_pos(g.pos, r, g.rows_per_seq) + 1;
                const int used = min(g.splits, (ctx + g.split_len - 1) / g.split_len);
                const size_t base = (size_t)r * g.splits * g.heads + h;
                float mx = -INFINITY, den = 0.f;
#pragma unroll 8
                for (int t = 0; t < used; t++) {
                    const size_t hs = base + (size_t)t * g.heads;
                    const float2 ml = __ldcg(reinterpret_cast<const float2 *>(g.part_ml + hs * 2));
                    const float4 ot = __ldcg(reinterpret_cast<const float4 *>(
                        g.part_o + hs * g.hd + (e - h * g.hd)));
                    const float mn = fmaxf(mx, ml.x);
                    const float co = __expf(mx - mn), cn = __expf(ml.x - mn);
                    den = den * co + ml.y * cn;
                    o.x = o.x * co + ot.x * cn;
                    o.y = o.y * co + ot.y * cn;
                    o.z = o.z * co + ot.z * cn;
                    o.w = o.w * co + ot.w * cn;
                    mx = mn;
                }
                const float inv = 1.f / den;
                o.x *= inv;
                o.y *= inv;
                o.z *= inv;
                o.w *= inv;
            }
            __half2 *dst = reinterpret_cast<__half2 *>(xs + (size_t)r * k + e);
            dst[0] = __floats2half2_rn(o.x, o.y);
            dst[1] = __floats2half2_rn(o.z, o.w);
        }
        __syncthreads();
        return;
    }
    for (int i0 = threadIdx.x; i0 < total; i0 += 4 * blockDim.x) {
        uint4 v[4];
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const int i = i0 + j * blockDim.x, r = i / kv, c = i % kv;
            v[j] = make_uint4(0, 0, 0, 0);
            if (i < total && r < a.m)
                v[j] = *reinterpret_cast<const uint4 *>(a.x + (size_t)r * a.x_stride + c * 8);
        }
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const int i = i0 + j * blockDim.x, r = i / kv, c = i % kv;
            if (i < total) *reinterpret_cast<uint4 *>(xs + (size_t)r * k + c * 8) = v[j];
        }
    }
    __syncthreads();
    if (!a.norm_w) return;
    for (int r = warp; r < B; r += 8) {
        float ss = 0.f;
        for (int c = lane; c < kv; c += 32) {
            const uint4 v = *reinterpret_cast<const uint4 *>(xs + (size_t)r * k + c * 8);
            const __half2 *h = reinterpret_cast<const __half2 *>(&v);
#pragma unroll
            for (int j = 0; j < 4; j++) {
                const float2 f = __half22float2(h[j]);
                ss += f.x * f.x + f.y * f.y;
            }
        }
        ss = warp_sum(ss);
        if (lane == 0) inv_rms[r] = rsqrtf(ss / (float)k + a.eps);
    }
    __syncthreads();
    for (int c = threadIdx.x; c < kv; c += blockDim.x) {
        const uint4 g = *reinterpret_cast<const uint4 *>(a.norm_w + c * 8);
        const __half2 *gh = reinterpret_cast<const __half2 *>(&g);
#pragma unroll
        for (int r = 0; r < B; r++) {
            __half *p = xs + (size_t)r * k + c * 8;
            const uint4 v = *reinterpret_cast<const uint4 *>(p);
            const __half2 *h = reinterpret_cast<const __half2 *>(&v);
            const float inv = inv_rms[r];
            uint4 o;
            __half2 *oh = reinterpret_cast<__half2 *>(&o);
#pragma unroll
            for (int j = 0; j < 4; j++) {
                const float2 f = __half22float2(h[j]);
                const float2 gw = __half22float2(gh[j]);
                oh[j] = __floats2half2_rn(f.x * inv * gw.x, f.y * inv * gw.y);
            }
            *reinterpret_cast<uint4 *>(p) = o;
        }
    }
    __syncthreads();
}

template <int B, int U>
__device__ __forceinline__ void load_chunks(const __half *w0, const __half *w1, int base,
                                            int stride, int kv, uint4 *ra, uint4 *rb) {
#pragma unroll
    for (int u = 0; u < U; u++) {
        const int c = base + u * stride;
        if (c < kv) {
            ra[u] = ld_stream(w0 + c * 8);
            rb[u] = ld_stream(w1 + c * 8);
        }
    }
}

template <int B, int U> __device__ void gemv_body(const GemvArgs a) {
    extern __shared__ __align__(16) unsigned char smem_raw[];
    __half *xs = reinterpret_cast<__half *>(smem_raw);
    __shared__ float red[8][2][B];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int k = a.k, kv = k >> 3;
    const int groups = 8 / a.ksplit;
    const int group = warp / a.ksplit, wig = warp % a.ksplit;
    const int p = blockIdx.x * groups + group;
    const bool live = 2 * p < a.n;
    const int stride = 32 * a.ksplit;
    const __half *w0 = a.w + (size_t)(2 * p) * k;
    const __half *w1 = w0 + k;
    int base = wig * 32 + lane;

    // The weights do not depend on the previous kernel: the first U chunks per row are in
    // flight before waiting for it.
    uint4 ra[U], rb[U];
    if (live) load_chunks<B, U>(w0, w1, base, stride, kv, ra, rb);
    pdl_launch();
    pdl_wait();

    const bool writer = live && wig == 0 && lane < a.m && lane < B;
    EpiloguePre pre = {make_float2(0.f, 0.f), 0, 0.f};
    if (writer) pre = epilogue_pre(a, lane, p);  // after pdl_wait: the residual is final
    stage_x<B>(a, xs);

    float acc0[B], acc1[B];
#pragma unroll
    for (int b = 0; b < B; b++) acc0[b] = acc1[b] = 0.f;
    if (live) {
        while (base < kv) {
#pragma unroll
            for (int u = 0; u < U; u++) {
                const int c = base + u * stride;
                if (c < kv) {
                    float fa[8], fb[8];
                    to_float8(ra[u], fa);
                    to_float8(rb[u], fb);
#pragma unroll
                    for (int b = 0; b < B; b++) {
                        const uint4 xv = *reinterpret_cast<const uint4 *>(xs + b * k + c * 8);
                        acc0[b] += dot8(fa, xv);
                        acc1[b] += dot8(fb, xv);
                    }
                }
            }
            base += stride * U;
            if (base < kv) load_chunks<B, U>(w0, w1, base, stride, kv, ra, rb);
        }
    }
#pragma unroll
    for (int b = 0; b < B; b++) {
        const float s0 = warp_sum(acc0[b]);
        const float s1 = warp_sum(acc1[b]);
        if (lane == 0) {
            red[warp][0][b] = s0;
            red[warp][1][b] = s1;
        }
    }
    __syncthreads();
    if (writer) {
        float v0 = 0.f, v1 = 0.f;
        for (int w = warp; w < warp + a.ksplit; w++) {
            v0 += red[w][0][lane];
            v1 += red[w][1][lane];
        }
        epilogue(a, lane, p, v0, v1, pre);
    }
}

}  // namespace

#define GEMV_KERNEL(B, U)                                                                        \
    extern "C" __global__ void __launch_bounds__(256) decode_gemv_b##B(const GemvArgs a) {      \
        gemv_body<B, U>(a);                                                                      \
    }

GEMV_KERNEL(1, 8)
GEMV_KERNEL(2, 8)
GEMV_KERNEL(4, 4)
GEMV_KERNEL(8, 2)
GEMV_KERNEL(16, 2)
