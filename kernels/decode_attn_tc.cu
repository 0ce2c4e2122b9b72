//! Attention over the static KV cache on the tensor cores, for launches whose whole context fits
//! one block (one split): block (kv head g, row r) of a few warps takes the G = heads / kv_heads
//! query heads that share kv head g, and each warp runs a flash-attention pass over every
//! nw-th chunk of 16 cached positions with mma.sync m16n8k16 (f16 in, f32 accumulators):
//! - S = Q K^T: A = the G query rows (scaled by 1/sqrt(hd), rows G..15 zero), B = K rows of
//!   the chunk straight from shared memory (ldmatrix: a K row is a B column);
//! - an online softmax over the chunk per row (the lane's four scores of a row, then its quad);
//! - O += P V: the score accumulators of two n-tiles are P's A fragment as they stand (the
//!   flash-attention register reuse, P rounded to f16), B = V rows (ldmatrix.trans).
//! The warps' (output, max, sum) meet in shared memory, where each thread merges some of the
//! block's (head, dim pair) outputs and stores them in f16. A block of 256 threads takes a third
//! of an SM's registers (88 each), so where the shared-memory carveout has room for it beside a
//! product's block (plan::smem_carveout_pct) it starts while the QKV product runs: in decode
//! (cache_ready) the cached positions are staged before waiting on that product.
//! HD (64 or 128) bounds the head dim the registers are laid out for; hd is a multiple of 8
//! (a head of 16c + 8 dims reads the zeroed pad of its K rows in its last k step).
#include "decode_common.cuh"

namespace {

__device__ __forceinline__ unsigned pack_f16x2(float lo, float hi) {
    const __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<const unsigned *>(&h);
}

// Four 8x8 f16 matrices from shared memory; lanes 8i..8i+7 give matrix i's row addresses.
__device__ __forceinline__ void ldsm_x4(unsigned (&r)[4], unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}
// The same, each matrix transposed (B stored k-major: V's rows are positions).
__device__ __forceinline__ void ldsm_x4_trans(unsigned (&r)[4], unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

__device__ __forceinline__ float quad_max(float v) {
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 1));
    return fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 2));
}
__device__ __forceinline__ float quad_sum(float v) {
    v += __shfl_xor_sync(0xffffffffu, v, 1);
    return v + __shfl_xor_sync(0xffffffffu, v, 2);
}

template <int HD> __device__ void attn_tc_body(const AttnArgs a) {
    constexpr int KK = HD / 16;  // k steps of S, and pairs of 8-dim n-tiles of O
    extern __shared__ __align__(16) unsigned char smem_raw[];
    const int hd = a.hd, ld = hd + 8;  // padded rows: ldmatrix's eight rows hit distinct banks
    const int L = a.split_len;         // >= every row's context: one split
    const int G = a.heads / a.kv_heads, nw = blockDim.x >> 5;
    const int kk_n = (hd + 15) >> 4;
    // K first; after the pass the warps' states take its place (plan::attn_tc_smem_bytes).
    __half *ks = reinterpret_cast<__half *>(smem_raw);
    float *os = reinterpret_cast<float *>(smem_raw);  // [nw][G][hd]
    float *ms = os + nw * G * hd;                     // [nw][G][2]: max, sum
    const size_t k_bytes = max((size_t)L * ld * 2, (size_t)nw * G * (hd + 2) * 4);
    __half *vs = reinterpret_cast<__half *>(smem_raw + ((k_bytes + 15) & ~(size_t)15));
    float *qs = reinterpret_cast<float *>(vs + L * ld);  // [G][hd]

    const int g = blockIdx.y, r = blockIdx.z;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, gq = lane >> 2, t = lane & 3;
    const size_t cache_base =
        ((size_t)row_seq(r, a.rows_per_seq) * a.kv_heads + g) * a.max_ctx * hd;

    pdl_launch();
    // In decode the positions below the step's own were written by earlier steps and the
    // position by the previous step's argmax: staged before waiting (see decode_attn.cu).
    int ctx = 0, ready = 0;
    if (a.cache_ready) {
        ctx = row_pos(a.pos, r, a.rows_per_seq) + 1;
        ready = ctx - 1;
        stage_cache_rows(ks, vs, ld, a.kc, a.vc, cache_base, hd, 0, 0, ready);
    }
    pdl_wait();
    if (!a.cache_ready) ctx = row_pos(a.pos, r, a.rows_per_seq) + 1;
    const int nv = min(L, ctx);
    stage_cache_rows(ks, vs, ld, a.kc, a.vc, cache_base, hd, 0, ready, nv);
    const float *q = a.q + ((size_t)r * a.heads + g * G) * hd;  // the group's G heads, f32
    for (int c = threadIdx.x; c < G * hd / 4; c += blockDim.x) cp_async16(qs + c * 4, q + c * 4);
    // The last chunk's rows past the context: V zeroed (their probabilities are 0, and 0 times
    // a stale NaN is not); K's pad columns zeroed when the last k step reaches into them.
    const int nv16 = (nv + 15) & ~15;
    const uint4 zero = make_uint4(0, 0, 0, 0);
    for (int i = threadIdx.x; i < (nv16 - nv) * ld / 8; i += blockDim.x)
        reinterpret_cast<uint4 *>(vs + (size_t)nv * ld)[i] = zero;
    if (hd & 15)
        for (int j = threadIdx.x; j < nv16; j += blockDim.x)
            *reinterpret_cast<uint4 *>(ks + (size_t)j * ld + hd) = zero;
    cp_async_wait_all();
    __syncthreads();

    // Q as the A operand: rows gq and gq + 8 (heads of the group; zero past G), k = dims.
    unsigned qa[KK][4];
#pragma unroll
    for (int kk = 0; kk < KK; kk++) {
        auto pair = [&](int h, int c) {
            if (h >= G || c >= hd) return 0u;
            const float2 v = *reinterpret_cast<const float2 *>(qs + h * hd + c);
            return pack_f16x2(v.x * a.scale, v.y * a.scale);
        };
        const int c = kk * 16 + 2 * t;
        qa[kk][0] = pair(gq, c);
        qa[kk][1] = pair(gq + 8, c);
        qa[kk][2] = pair(gq, c + 8);
        qa[kk][3] = pair(gq + 8, c + 8);
    }

    float o[2 * KK][4];
#pragma unroll
    for (int n = 0; n < 2 * KK; n++) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.f;
    float m0 = -INFINITY, m1 = -INFINITY, l0 = 0.f, l1 = 0.f;  // rows gq, gq + 8
    const unsigned ks_a = static_cast<unsigned>(__cvta_generic_to_shared(ks));
    const unsigned vs_a = static_cast<unsigned>(__cvta_generic_to_shared(vs));
    // ldmatrix row addresses: K (positions j0 + 0..15, the k step's two 8-dim halves) and V
    // (positions j0 + 0..7 then 8..15, two 8-dim n-tiles).
    const int k_row = (lane & 7) + ((lane >> 4) << 3), k_col = ((lane >> 3) & 1) << 3;
    const int v_row = (lane & 7) + (((lane >> 3) & 1) << 3), v_col = (lane >> 4) << 3;
    for (int j0 = warp * 16; j0 < nv; j0 += nw * 16) {
        // s[n][e]: position j0 + 8n + 2t + (e & 1), row gq (e < 2) or gq + 8.
        float s[2][4] = {{0.f, 0.f, 0.f, 0.f}, {0.f, 0.f, 0.f, 0.f}};
#pragma unroll
        for (int kk = 0; kk < KK; kk++) {
            if (kk >= kk_n) break;
            unsigned kb[4];
            ldsm_x4(kb, ks_a + ((j0 + k_row) * ld + kk * 16 + k_col) * 2);
            mma_16816(s[0], qa[kk][0], qa[kk][1], qa[kk][2], qa[kk][3], kb[0], kb[1]);
            mma_16816(s[1], qa[kk][0], qa[kk][1], qa[kk][2], qa[kk][3], kb[2], kb[3]);
        }
#pragma unroll
        for (int n = 0; n < 2; n++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                if (j0 + 8 * n + 2 * t + (e & 1) >= nv) s[n][e] = -INFINITY;
        // Position j0 < nv is in every row's chunk, so the new maxima are finite.
        const float n0 = fmaxf(m0, quad_max(fmaxf(fmaxf(s[0][0], s[0][1]), fmaxf(s[1][0], s[1][1]))));
        const float n1 = fmaxf(m1, quad_max(fmaxf(fmaxf(s[0][2], s[0][3]), fmaxf(s[1][2], s[1][3]))));
        const float c0 = __expf(m0 - n0), c1 = __expf(m1 - n1);
        m0 = n0;
        m1 = n1;
#pragma unroll
        for (int n = 0; n < 2; n++) {
            s[n][0] = __expf(s[n][0] - n0);
            s[n][1] = __expf(s[n][1] - n0);
            s[n][2] = __expf(s[n][2] - n1);
            s[n][3] = __expf(s[n][3] - n1);
        }
        // The lane's share of each row's sum; the quad adds them up after the pass.
        l0 = l0 * c0 + (s[0][0] + s[0][1]) + (s[1][0] + s[1][1]);
        l1 = l1 * c1 + (s[0][2] + s[0][3]) + (s[1][2] + s[1][3]);
        const unsigned p0 = pack_f16x2(s[0][0], s[0][1]), p1 = pack_f16x2(s[0][2], s[0][3]);
        const unsigned p2 = pack_f16x2(s[1][0], s[1][1]), p3 = pack_f16x2(s[1][2], s[1][3]);
#pragma unroll
        for (int np = 0; np < KK; np++) {
            if (np >= kk_n) break;
            unsigned vb[4];
            ldsm_x4_trans(vb, vs_a + ((j0 + v_row) * ld + np * 16 + v_col) * 2);
#pragma unroll
            for (int h = 0; h < 2; h++) {
                float *on = o[2 * np + h];
                on[0] *= c0;
                on[1] *= c0;
                on[2] *= c1;
                on[3] *= c1;
                mma_16816(on, p0, p1, p2, p3, vb[2 * h], vb[2 * h + 1]);
            }
        }
    }
    l0 = quad_sum(l0);
    l1 = quad_sum(l1);

    // Each warp's state over K's rows (every warp is done reading them after the barrier).
    __syncthreads();
    float *ow = os + warp * G * hd;
#pragma unroll
    for (int n = 0; n < 2 * KK; n++) {
        const int d = n * 8 + 2 * t;
        if (d >= hd) break;
        if (gq < G) *reinterpret_cast<float2 *>(ow + gq * hd + d) = make_float2(o[n][0], o[n][1]);
        if (gq + 8 < G)
            *reinterpret_cast<float2 *>(ow + (gq + 8) * hd + d) = make_float2(o[n][2], o[n][3]);
    }
    if (t == 0) {
        if (gq < G) *reinterpret_cast<float2 *>(ms + (warp * G + gq) * 2) = make_float2(m0, l0);
        if (gq + 8 < G)
            *reinterpret_cast<float2 *>(ms + (warp * G + gq + 8) * 2) = make_float2(m1, l1);
    }
    __syncthreads();
    // Each thread merges (head, dim pair) outputs over the warps, rescaled to the largest max
    // (a warp without positions has max -inf and adds nothing).
    __half *out = a.out + (size_t)r * a.heads * hd + (size_t)g * G * hd;
    const int pairs = hd >> 1;
    for (int i = threadIdx.x; i < G * pairs; i += blockDim.x) {
        const int h = i / pairs, d = 2 * (i - h * pairs);
        float mx = -INFINITY;
        for (int w = 0; w < nw; w++) mx = fmaxf(mx, ms[(w * G + h) * 2]);
        float den = 0.f, x = 0.f, y = 0.f;
        for (int w = 0; w < nw; w++) {
            const float2 st = *reinterpret_cast<const float2 *>(ms + (w * G + h) * 2);
            if (st.x == -INFINITY) continue;
            const float f = __expf(st.x - mx);
            const float2 v = *reinterpret_cast<const float2 *>(os + (w * G + h) * hd + d);
            den += f * st.y;
            x += f * v.x;
            y += f * v.y;
        }
        const float inv = 1.f / den;
        *reinterpret_cast<__half2 *>(out + h * hd + d) = __floats2half2_rn(x * inv, y * inv);
    }
}

}  // namespace

// At most 512 threads (16 warps), so ptxas keeps to 128 registers a thread (the 64-dim kernel
// takes 88).
extern "C" __global__ void __launch_bounds__(512) decode_attn_tc_d64(const AttnArgs a) {
    attn_tc_body<64>(a);
}
extern "C" __global__ void __launch_bounds__(512) decode_attn_tc_d128(const AttnArgs a) {
    attn_tc_body<128>(a);
}
