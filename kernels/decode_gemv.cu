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
//! chunks, and the RMSNorm weight, are issued before waiting on the previous kernel
//! (programmatic dependent launch).
#include "decode_gemv_parts.cuh"

namespace {

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

// Adds one pass of U chunks per row (chunks base + u stride, those below kv) of the pair held
// in ra / rb, dotted with every row of x in shared memory, to acc0 / acc1.
template <int B, int U>
__device__ __forceinline__ void pass_sums(const uint4 *ra, const uint4 *rb, const __half *xs,
                                          int k, int base, int stride, int kv, float *acc0,
                                          float *acc1) {
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
    __half *gs = xs + B * k;  // the RMSNorm weight, after x
    prefetch_norm_w(a, gs);
    pdl_launch();
    pdl_wait();

    const bool writer = live && wig == 0 && lane < a.m && lane < B;
    EpiloguePre pre = {make_float2(0.f, 0.f), 0, 0.f};
    if (writer) pre = epilogue_pre(a, lane, p);  // after pdl_wait: the residual is final
    stage_x<B>(a, xs, k, gs);

    float acc0[B], acc1[B];
#pragma unroll
    for (int b = 0; b < B; b++) acc0[b] = acc1[b] = 0.f;
    if (live) {
        while (base < kv) {
            pass_sums<B, U>(ra, rb, xs, k, base, stride, kv, acc0, acc1);
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

// gemv_body at ksplit 1 on a grid smaller than the pairs need (decode_gemv_walk_b*): warp w
// of block b takes pairs p = 8b + w, p + 8 gridDim.x, ... So a matrix with more pairs than the
// resident warps (gate/up and lm_head at batch 1) runs in one wave, x is staged and normalized
// once per block rather than once per 8 pairs, and the next pair's first U chunks per row are
// in flight while a pair's sums are reduced and stored. A warp holds a pair's whole sums, so
// no block barrier follows staging and warps may walk different numbers of pairs.
template <int B, int U> __device__ void gemv_walk_body(const GemvArgs a) {
    extern __shared__ __align__(16) unsigned char smem_raw[];
    __half *xs = reinterpret_cast<__half *>(smem_raw);
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int k = a.k, kv = k >> 3;
    const int npairs = a.n >> 1, pstride = gridDim.x * 8;
    int p = blockIdx.x * 8 + warp;
    const __half *w0 = a.w + (size_t)(2 * p) * k;

    uint4 ra[U], rb[U];
    if (p < npairs) load_chunks<B, U>(w0, w0 + k, lane, 32, kv, ra, rb);
    __half *gs = xs + B * k;  // the RMSNorm weight, after x
    prefetch_norm_w(a, gs);
    pdl_launch();
    pdl_wait();

    const bool lane_row = lane < a.m && lane < B;
    EpiloguePre pre = {make_float2(0.f, 0.f), 0, 0.f};
    if (p < npairs && lane_row) pre = epilogue_pre(a, lane, p);  // after pdl_wait
    stage_x<B>(a, xs, k, gs);

    for (; p < npairs; p += pstride) {
        float acc0[B], acc1[B];
#pragma unroll
        for (int b = 0; b < B; b++) acc0[b] = acc1[b] = 0.f;
        for (int base = lane; base < kv;) {
            pass_sums<B, U>(ra, rb, xs, k, base, 32, kv, acc0, acc1);
            base += 32 * U;
            if (base < kv) load_chunks<B, U>(w0, w0 + k, base, 32, kv, ra, rb);
        }
        const int next = p + pstride;
        if (next < npairs) {
            w0 = a.w + (size_t)(2 * next) * k;
            load_chunks<B, U>(w0, w0 + k, lane, 32, kv, ra, rb);
        }
        float v0 = 0.f, v1 = 0.f;
#pragma unroll
        for (int b = 0; b < B; b++) {
            const float s0 = warp_sum(acc0[b]);
            const float s1 = warp_sum(acc1[b]);
            if (lane == b) {
                v0 = s0;
                v1 = s1;
            }
        }
        if (lane_row) {
            epilogue(a, lane, p, v0, v1, pre);
            if (next < npairs) pre = epilogue_pre(a, lane, next);
        }
    }
}

}  // namespace

#define GEMV_KERNEL(B, U)                                                                        \
    extern "C" __global__ void __launch_bounds__(256) decode_gemv_b##B(const GemvArgs a) {      \
        gemv_body<B, U>(a);                                                                      \
    }                                                                                            \
    extern "C" __global__ void __launch_bounds__(256) decode_gemv_walk_b##B(const GemvArgs a) { \
        gemv_walk_body<B, U>(a);                                                                 \
    }

GEMV_KERNEL(1, 8)
GEMV_KERNEL(2, 8)
GEMV_KERNEL(4, 4)
GEMV_KERNEL(8, 2)
GEMV_KERNEL(16, 2)
