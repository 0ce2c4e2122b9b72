//! Pieces shared by the decode products (decode_gemv.cu on CUDA cores, decode_gemv_tc.cu on
//! tensor cores): the streaming weight load, staging x into shared memory (attention merge or
//! copy, RMSNorm), and the fused epilogues of one pair of output rows.
#pragma once
#include "decode_common.cuh"

namespace {

__device__ __forceinline__ uint4 ld_stream(const __half *p) {
    uint4 v;
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
    return v;
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

// The RMSNorm weight does not depend on the previous kernel: every block copies it into shared
// memory (gs, k halves) before pdl_wait, so the norm in stage_x waits on no load of its own.
// Every thread of the block must call it.
__device__ __forceinline__ void prefetch_norm_w(const GemvArgs &a, __half *gs) {
    if (!a.norm_w) return;
    for (int c = threadIdx.x; c < (a.k >> 3); c += blockDim.x) cp_async16(gs + c * 8, a.norm_w + c * 8);
    asm volatile("cp.async.commit_group;" ::: "memory");
}

// Sum of the squares of 8 halves in shared memory.
__device__ __forceinline__ float sum_sq8(const __half *p) {
    const uint4 v = *reinterpret_cast<const uint4 *>(p);
    const __half2 *h = reinterpret_cast<const __half2 *>(&v);
    float ss = 0.f;
#pragma unroll
    for (int j = 0; j < 4; j++) {
        const float2 f = __half22float2(h[j]);
        ss += f.x * f.x + f.y * f.y;
    }
    return ss;
}

// Issues the copy of `rows` rows of kv 16-byte chunks from src (src_stride halves apart) to
// dst in shared memory (dst_stride halves apart), every chunk in flight at once (cp.async: no
// registers held), so staging costs one L2 round trip at any batch. Each thread walks its
// columns down the rows with two pointers: no division and no address rebuilt per chunk (at
// batch 16 a product is bound by its warps' instructions, and a copy per chunk and row is
// many of them). The caller waits (cp_async_wait_all) and synchronizes.
__device__ __forceinline__ void stage_rows_async(__half *dst, int dst_stride, const __half *src,
                                                 int src_stride, int rows, int kv) {
    for (int c = threadIdx.x; c < kv; c += blockDim.x) {
        unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst + c * 8));
        const __half *g = src + c * 8;
        for (int r = 0; r < rows; r++) {
            cp_async16_s(d, g);
            d += dst_stride * 2;
            g += src_stride;
        }
    }
}

// Stages x (B rows) into shared memory, xs_stride halves apart: merged from attention partials
// when a.merge.part_o is set (rows >= m zero), else copied, then RMS-normalized when a.norm_w
// is set, with the weight prefetch_norm_w left in gs (rows >= m not written: they hold
// whatever shared memory held). Both products keep batch rows apart (row b of x only reaches
// output row b, and rows >= m are never stored), so those rows cost nothing and need no
// zeros; reads past k are guarded by the callers.
// Every thread of the block must call it.
template <int B>
__device__ __forceinline__ void stage_x(const GemvArgs &a, __half *xs, int xs_stride, const __half *gs) {
    __shared__ float part_ss[8], inv_rms[B];
    const int rows = min(B, a.m);  // rows >= m are left as they are (see above)
    const int k = a.k, kv = k >> 3;
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
            __half2 *dst = reinterpret_cast<__half2 *>(xs + (size_t)r * xs_stride + e);
            dst[0] = __floats2half2_rn(o.x, o.y);
            dst[1] = __floats2half2_rn(o.z, o.w);
        }
        __syncthreads();
        return;
    }
    stage_rows_async(xs, xs_stride, a.x, a.x_stride, rows, kv);
    cp_async_wait_all();
    __syncthreads();
    if (!a.norm_w) return;
    // 1/rms of each row. At batch 1 all eight warps share the row and every thread sums their
    // eight partial sums itself: one barrier, and no warp walks the whole row (this norm sits
    // on the critical path of the step; docs/notes/decode.md). With more rows, one warp per
    // row leaves it in shared memory (an array per thread would take the registers of the
    // weights prefetched before pdl_wait).
    float inv1 = 0.f;
    if constexpr (B == 1) {
        float ss = 0.f;
        for (int c = threadIdx.x; c < kv; c += blockDim.x) ss += sum_sq8(xs + c * 8);
        ss = warp_sum(ss);
        if (lane == 0) part_ss[warp] = ss;
        __syncthreads();
        ss = 0.f;
#pragma unroll
        for (int w = 0; w < 8; w++) ss += part_ss[w];
        inv1 = rsqrtf(ss / (float)k + a.eps);
    } else {
        for (int r = warp; r < rows; r += 8) {
            float ss = 0.f;
            for (int c = lane; c < kv; c += 32) ss += sum_sq8(xs + (size_t)r * xs_stride + c * 8);
            ss = warp_sum(ss);
            if (lane == 0) inv_rms[r] = rsqrtf(ss / (float)k + a.eps);
        }
        __syncthreads();
    }
    for (int c = threadIdx.x; c < kv; c += blockDim.x) {
        const uint4 g = *reinterpret_cast<const uint4 *>(gs + c * 8);
        const __half2 *gh = reinterpret_cast<const __half2 *>(&g);
#pragma unroll
        for (int r = 0; r < B; r++) {
            if (r >= rows) break;
            __half *p = xs + (size_t)r * xs_stride + c * 8;
            const uint4 v = *reinterpret_cast<const uint4 *>(p);
            const __half2 *h = reinterpret_cast<const __half2 *>(&v);
            const float inv = B == 1 ? inv1 : inv_rms[r];
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

}  // namespace
