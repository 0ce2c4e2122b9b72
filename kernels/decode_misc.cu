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

// The greedy argmax over a row split across `gridDim.x` blocks of ARGMAX_THREADS threads, each
// taking ARGMAX_PER_THREAD * ARGMAX_THREADS logits with every load in flight at once. A block
// folds its (value, index) into the row's 64-bit key with one atomicMax: the value's bits made
// order-preserving in the high word, the complement of the index in the low word, so a larger
// value wins and among equal values the lower index (NaN logits are skipped, as a comparison
// skips them). The row's last block to arrive takes the key (resetting it and the row's count
// for the next launch), writes tok[r], and tok_host[r] when given (mapped pinned memory, so the
// host reads the tokens after a synchronize without a copy); row 0's last block then adds
// pos_inc to *pos.
#define ARGMAX_THREADS 256 // plan::ARGMAX_THREADS
#define ARGMAX_PER_THREAD 8 // plan::ARGMAX_PER_THREAD

__device__ __forceinline__ unsigned long long argmax_key(float v, int i) {
    const unsigned u = __float_as_uint(v);
    const unsigned ord = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
    return ((unsigned long long)ord << 32) | (unsigned)(0xffffffffu - (unsigned)i);
}

__device__ __forceinline__ void argmax_take(float &best, int &bi, float v, int i) {
    if (v > best || (v == best && i < bi)) {
        best = v;
        bi = i;
    }
}

extern "C" __global__ void __launch_bounds__(ARGMAX_THREADS)
    decode_argmax(const float *logits, int vocab, int *tok, int *tok_host,
                  unsigned long long *key, unsigned *count, int *pos, int pos_inc) {
    __shared__ float sv[ARGMAX_THREADS / 32];
    __shared__ int si[ARGMAX_THREADS / 32];
    pdl_launch();
    pdl_wait();
    const int r = blockIdx.y;
    const int chunk = ARGMAX_THREADS * ARGMAX_PER_THREAD;
    const int lo = blockIdx.x * chunk;
    const float *l = logits + (size_t)r * vocab;
    float v[ARGMAX_PER_THREAD];
#pragma unroll
    for (int j = 0; j < ARGMAX_PER_THREAD; ++j) {
        const int i = lo + j * ARGMAX_THREADS + threadIdx.x;
        v[j] = i < vocab ? l[i] : -INFINITY;
    }
    float best = -INFINITY;
    int bi = 0x7fffffff;
#pragma unroll
    for (int j = 0; j < ARGMAX_PER_THREAD; ++j) {
        const int i = lo + j * ARGMAX_THREADS + threadIdx.x;
        if (i < vocab) argmax_take(best, bi, v[j], i);
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        argmax_take(best, bi, __shfl_xor_sync(0xffffffffu, best, o),
                    __shfl_xor_sync(0xffffffffu, bi, o));
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    if (lane == 0) {
        sv[warp] = best;
        si[warp] = bi;
    }
    __syncthreads();
    if (threadIdx.x != 0) return;
    for (int w = 1; w < ARGMAX_THREADS / 32; ++w) argmax_take(best, bi, sv[w], si[w]);
    if (bi != 0x7fffffff) atomicMax(key + r, argmax_key(best, bi));
    __threadfence();
    if (atomicAdd(count + r, 1u) != gridDim.x - 1) return;
    __threadfence();
    const unsigned long long k = atomicExch(key + r, 0ull);
    count[r] = 0;
    const int t = k == 0 ? 0 : (int)(0xffffffffu - (unsigned)(k & 0xffffffffu));
    tok[r] = t;
    if (tok_host) tok_host[r] = t;
    if (r == 0) atomicAdd(pos, pos_inc);
}
