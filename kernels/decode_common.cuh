//! Shared pieces of the decode-path kernels (decode_*.cu): the argument blocks (mirrored by
//! #[repr(C)] structs in src/llm/fast/kernels.rs), row -> (sequence, position) arithmetic,
//! warp-per-row RMSNorm, and the RoPE + KV-cache store of one projected pair of rows.
//!
//! Layouts (all row-major, f16 unless named f32):
//! - a "row" is one token: decode has batch rows, prefill batch x prompt rows; row r belongs to
//!   sequence r / rows_per_seq at position *pos + r % rows_per_seq.
//! - fused QKV weight rows come in pairs: for q and k, pair (h, i) holds head h's rows i and
//!   i + hd/2 (the two halves RoPE rotates together); for v, pair p holds rows 2p and 2p+1.
//! - fused gate/up weight rows interleave: row 2i = gate i, row 2i+1 = up i.
//! - KV cache of one layer: [seq][kv_head][max_ctx][hd].
#pragma once
#include <cuda_fp16.h>
#include <stdint.h>

// Output modes of the matrix-vector kernel.
#define GEMV_F32 0      // out_f32[r][n] = acc
#define GEMV_RESID 1    // out_f16[r][n] += acc (the residual add, in place)
#define GEMV_SILU 2     // out_f16[r][p] = silu(acc[2p]) * acc[2p + 1]
#define GEMV_QKV 3      // RoPE on q/k pairs; q to q_out (f32), k and v into the KV cache

struct QkvStore {
    float *q_out;           // [rows][nq] f32, RoPE applied
    __half *kc;             // this layer's K cache
    __half *vc;             // this layer's V cache
    const float *inv_freq;  // [hd / 2] RoPE frequencies
    const int *pos;         // device position of the step's first row
    int rows_per_seq;
    int nq;                 // q rows (heads * hd)
    int nkv;                // k rows (= v rows, kv_heads * hd)
    int hd;
    int max_ctx;
};

// Attention partials (decode_attn with merge_in_block = 0) to merge into x while staging it.
struct MergeIn {
    const float *part_o;   // [rows][splits][heads][hd], null: x is read as f16 rows
    const float *part_ml;  // [rows][splits][heads][2]
    const int *pos;
    int rows_per_seq;
    int splits, split_len, heads, hd;
};

struct GemvArgs {
    const __half *w;       // [n][k]
    const __half *x;       // rows of k elements, x_stride apart (unless merge.part_o)
    const __half *norm_w;  // RMSNorm weight [k], or null for no norm
    void *out;
    QkvStore qkv;
    MergeIn merge;
    float eps;
    int n, k, m;
    int x_stride, out_stride;
    int ksplit;            // warps that share one pair of weight rows (1, 2, 4 or 8)
    int mode;
    // Tensor-core kernel: 1 = out = (W' x) / rms(x) per row, W' = W with the RMSNorm weight
    // folded in along k at load (weights::fold_norm); norm_w is then null.
    int folded_norm;
};

struct AttnArgs {
    const float *q;        // [rows][heads][hd] f32
    const __half *kc;      // this layer's caches
    const __half *vc;
    float *part_o;         // [rows][splits][heads][hd] unnormalized partial outputs
    float *part_ml;        // [rows][splits][heads][2]: running max, sum of exp
    unsigned *counters;    // [rows][kv_heads], zero between launches
    __half *out;           // [rows][heads * hd]
    const int *pos;
    int rows_per_seq;
    int m;
    int heads, kv_heads, hd, max_ctx;
    int splits;            // blocks along the sequence (grid.x)
    int split_len;         // positions per split, a multiple of ATTN_CHUNK
    int merge_in_block;    // 1: the last block merges into out; 0: partials only; 2: the
                           // splits are one cluster (grid.x <= 8) and merge through DSMEM
    int cache_ready;       // 1: positions below *pos are final before the launch (decode)
    float scale;
};

#define ATTN_CHUNK 32

// Programmatic dependent launch: a kernel launched with programmatic stream serialization may
// start while its predecessor finishes; pdl_wait() blocks until the predecessor grid has
// completed and its writes are visible (a no-op when launched without the attribute), and
// pdl_launch() lets the successor be scheduled once every block of this grid has issued it.
// Nothing before pdl_wait() may read what earlier kernels write or write what they read.
__device__ __forceinline__ void pdl_wait() { asm volatile("griddepcontrol.wait;" ::: "memory"); }
__device__ __forceinline__ void pdl_launch() { asm volatile("griddepcontrol.launch_dependents;"); }

// 16-byte asynchronous global -> shared copy to a shared-memory address (through L2 only; no
// registers held while in flight). cp_async_wait_all() waits for every copy this thread issued.
__device__ __forceinline__ void cp_async16_s(unsigned dst, const void *src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
}
// The same copy to a generic pointer into shared memory.
__device__ __forceinline__ void cp_async16(void *dst, const void *src) {
    cp_async16_s(static_cast<unsigned>(__cvta_generic_to_shared(dst)), src);
}
__device__ __forceinline__ void cp_async_wait_all() {
    asm volatile("cp.async.commit_group;\n\tcp.async.wait_group 0;" ::: "memory");
}

// K and V cache rows of one (sequence, kv head), positions start + j for j in [from, to), into
// shared rows j of ks and vs (ld halves apart): 16-byte cp.async copies, every thread of the
// block taking every blockDim.x-th one (nothing held in registers, so the copies stay in flight
// across pdl_wait). base: the (sequence, kv head)'s first cache element.
__device__ __forceinline__ void stage_cache_rows(__half *ks, __half *vs, int ld, const __half *kc,
                                                 const __half *vc, size_t base, int hd, int start,
                                                 int from, int to) {
    const int cpr = hd >> 3;  // 16-byte chunks per row
    for (int t = from * cpr + threadIdx.x; t < to * cpr; t += blockDim.x) {
        const int j = t / cpr, c = t % cpr;
        const size_t off = base + (size_t)(start + j) * hd + c * 8;
        cp_async16(ks + j * ld + c * 8, kc + off);
        cp_async16(vs + j * ld + c * 8, vc + off);
    }
}

// D += A B on the tensor cores: mma.sync m16n8k16, f16 A (16 x 16, row-major fragments a0..a3)
// and B (16 x 8, b0 b1), f32 accumulators d[0..3].
__device__ __forceinline__ void mma_16816(float *d, unsigned a0, unsigned a1, unsigned a2,
                                          unsigned a3, unsigned b0, unsigned b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, "
                 "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

__device__ __forceinline__ int row_seq(int r, int rows_per_seq) { return r / rows_per_seq; }
__device__ __forceinline__ int row_pos(const int *pos, int r, int rows_per_seq) {
    return *pos + r % rows_per_seq;
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// One warp normalizes one row of k elements (k % 8 == 0): y = f16(x * rsqrt(mean(x^2) + eps)
// * w), statistics in f32. x and y may be global or shared memory.
__device__ __forceinline__ void rmsnorm_row_warp(const __half *x, const __half *w, __half *y,
                                                 int k, float eps) {
    const int lane = threadIdx.x & 31;
    float ss = 0.f;
    for (int i = lane * 8; i < k; i += 256) {
        uint4 v = *reinterpret_cast<const uint4 *>(x + i);
        const __half2 *h = reinterpret_cast<const __half2 *>(&v);
#pragma unroll
        for (int j = 0; j < 4; j++) {
            float2 f = __half22float2(h[j]);
            ss += f.x * f.x + f.y * f.y;
        }
    }
    ss = warp_sum(ss);
    const float inv = rsqrtf(ss / (float)k + eps);
    for (int i = lane * 8; i < k; i += 256) {
        uint4 v = *reinterpret_cast<const uint4 *>(x + i);
        uint4 g = *reinterpret_cast<const uint4 *>(w + i);
        const __half2 *h = reinterpret_cast<const __half2 *>(&v);
        const __half2 *gh = reinterpret_cast<const __half2 *>(&g);
        uint4 o;
        __half2 *oh = reinterpret_cast<__half2 *>(&o);
#pragma unroll
        for (int j = 0; j < 4; j++) {
            float2 f = __half22float2(h[j]);
            float2 gw = __half22float2(gh[j]);
            oh[j] = __floats2half2_rn(f.x * inv * gw.x, f.y * inv * gw.y);
        }
        *reinterpret_cast<uint4 *>(y + i) = o;
    }
}

// RoPE frequency of projected pair p (0 for v pairs, which are not rotated).
__device__ __forceinline__ float qkv_pair_freq(const QkvStore &s, int p) {
    const int half_hd = s.hd >> 1;
    const int qk_pairs = (s.nq >> 1) + (s.nkv >> 1);
    if (p >= qk_pairs) return 0.f;
    const int pp = p < (s.nq >> 1) ? p : p - (s.nq >> 1);
    return s.inv_freq[pp % half_hd];
}

// Stores projected pair `p` (values a, b) of row r, whose sequence starts at position pos0
// and whose RoPE frequency is freq: RoPE + q_out for q pairs, RoPE + K cache for k pairs, V
// cache for v pairs. Taking pos0 and freq as values lets a caller load them early.
__device__ __forceinline__ void qkv_store_pair_at(const QkvStore &s, int r, int p, float a,
                                                  float b, int pos0, float freq) {
    const int half_hd = s.hd >> 1;
    const int q_pairs = s.nq >> 1, k_pairs = s.nkv >> 1;
    const int seq = row_seq(r, s.rows_per_seq);
    const int pos = pos0 + r % s.rows_per_seq;
    const int kv_heads = s.nkv / s.hd;
    if (p < q_pairs + k_pairs) {
        const bool is_q = p < q_pairs;
        const int pp = is_q ? p : p - q_pairs;
        const int h = pp / half_hd, i = pp % half_hd;
        float sn, cs;
        sincosf((float)pos * freq, &sn, &cs);
        const float ra = a * cs - b * sn;
        const float rb = b * cs + a * sn;
        if (is_q) {
            float *q = s.q_out + (size_t)r * s.nq + h * s.hd;
            q[i] = ra;
            q[i + half_hd] = rb;
        } else {
            __half *k = s.kc + (((size_t)seq * kv_heads + h) * s.max_ctx + pos) * s.hd;
            k[i] = __float2half_rn(ra);
            k[i + half_hd] = __float2half_rn(rb);
        }
    } else {
        const int vp = p - q_pairs - k_pairs;
        const int row0 = vp * 2;  // v row within [0, nkv)
        const int h = row0 / s.hd, d = row0 % s.hd;
        __half *v = s.vc + (((size_t)seq * kv_heads + h) * s.max_ctx + pos) * s.hd + d;
        *reinterpret_cast<__half2 *>(v) = __floats2half2_rn(a, b);
    }
}

__device__ __forceinline__ void qkv_store_pair(const QkvStore &s, int r, int p, float a,
                                               float b) {
    qkv_store_pair_at(s, r, p, a, b, *s.pos, qkv_pair_freq(s, p));
}
