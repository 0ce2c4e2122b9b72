//! The small kernels of the decode path: token embedding, RMSNorm of rows (prefill), RoPE + KV
//! cache write of projected rows (prefill, after cuBLAS), SiLU(gate) * up of interleaved rows
//! (prefill), and the greedy argmax that writes the next tokens and advances the position on
//! the device, so a captured step needs nothing from the host.
#include "decode_common.cuh"

// x[r] = table[tok[r]]; a token outside the vocabulary gives a NaN row (the parity check then
// fails loudly rather than reading out of bounds).
extern "C" __global__ void decode_embed(const int *tok, const __half *table, __half *x, int m,
                                        int h, int vocab) {
    pdl_launch();
    pdl_wait();
    const int r = blockIdx.x;
    if (r >= m) return;
    const int t = tok[r];
    const bool ok = t >= 0 && t < vocab;
    for (int i = threadIdx.x * 8; i < h; i += blockDim.x * 8) {
        uint4 v = make_uint4(0x7e007e00u, 0x7e007e00u, 0x7e007e00u, 0x7e007e00u);
        if (ok) v = *reinterpret_cast<const uint4 *>(table + (size_t)t * h + i);
        *reinterpret_cast<uint4 *>(x + (size_t)r * h + i) = v;
    }
}

// y[r] = RMSNorm(x[r]) * w, one warp per row.
extern "C" __global__ void decode_rmsnorm(const __half *x, const __half *w, __half *y, int m,
                                          int k, float eps) {
    pdl_launch();
    pdl_wait();
    const int r = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if (r >= m) return;
    rmsnorm_row_warp(x + (size_t)r * k, w, y + (size_t)r * k, k, eps);
}

// qkv: [m][n] f32 rows in fused pair order; RoPE and the cache stores as the GEMV epilogue does.
extern "C" __global__ void decode_rope_cache(const float *qkv, const QkvStore s, int m, int n) {
    pdl_launch();
    pdl_wait();
    const int r = blockIdx.y;
    const int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= m || 2 * p >= n) return;
    const float *row = qkv + (size_t)r * n;
    qkv_store_pair(s, r, p, row[2 * p], row[2 * p + 1]);
}

// h[r][i] = silu(gu[r][2i]) * gu[r][2i + 1], computed in f32.
extern "C" __global__ void decode_silu(const __half *gu, __half *h, int m, int inter) {
    pdl_launch();
    pdl_wait();
    const size_t total = (size_t)m * inter;
    for (size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x; e < total;
         e += (size_t)gridDim.x * blockDim.x) {
        const float2 v = __half22float2(*reinterpret_cast<const __half2 *>(gu + 2 * e));
        h[e] = __float2half_rn(v.x / (1.f + __expf(-v.x)) * v.y);
    }
}

// tok[r] = argmax(logits[r]) (the lowest index among equal maxima); block 0 then adds pos_inc
// to *pos. One block of 1024 threads per row.
extern "C" __global__ void __launch_bounds__(1024)
    decode_argmax(const float *logits, int vocab, int *tok, int *pos, int pos_inc) {
    __shared__ float sv[32];
    __shared__ int si[32];
    pdl_launch();
    pdl_wait();
    const int r = blockIdx.x;
    const float *l = logits + (size_t)r * vocab;
    float best = -INFINITY;
    int bi = 0x7fffffff;
#pragma unroll 8
    for (int i = threadIdx.x; i < vocab; i += blockDim.x) {
        const float v = l[i];
        if (v > best || (v == best && i < bi)) {
            best = v;
            bi = i;
        }
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        const float ov = __shfl_xor_sync(0xffffffffu, best, o);
        const int oi = __shfl_xor_sync(0xffffffffu, bi, o);
        if (ov > best || (ov == best && oi < bi)) {
            best = ov;
            bi = oi;
        }
    }
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    if (lane == 0) {
        sv[warp] = best;
        si[warp] = bi;
    }
    __syncthreads();
    if (warp == 0) {
        const int nw = blockDim.x >> 5;
        best = lane < nw ? sv[lane] : -INFINITY;
        bi = lane < nw ? si[lane] : 0x7fffffff;
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) {
            const float ov = __shfl_xor_sync(0xffffffffu, best, o);
            const int oi = __shfl_xor_sync(0xffffffffu, bi, o);
            if (ov > best || (ov == best && oi < bi)) {
                best = ov;
                bi = oi;
            }
        }
        if (lane == 0) {
            tok[r] = bi == 0x7fffffff ? 0 : bi;
            if (r == 0) atomicAdd(pos, pos_inc);
        }
    }
}
