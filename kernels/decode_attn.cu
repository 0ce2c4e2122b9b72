//! Attention of each row's query over the static KV cache, split along the sequence: block
//! (split s, kv head g, row r) takes split_len cached positions (a multiple of ATTN_CHUNK = 32),
//! stages their K and V once in shared memory for the G = heads / kv_heads query heads that
//! share kv head g (one warp per query head), and runs an online softmax over them 32
//! positions at a time (one lane per position for the scores, lanes over head dims for the V
//! sum), all in f32. With one split the block writes the f16 output directly. With several,
//! each writes an unnormalized partial (output, running max, sum of exp) and the last block of
//! (r, g) to finish, found with an atomic counter, merges them and resets the counter, so no
//! second kernel is needed. Splits past the row's context do no work but still count, which
//! lets one grid (sized for the longest context) serve every step.
#include "decode_common.cuh"

extern "C" __global__ void __launch_bounds__(1024) decode_attn(const AttnArgs a) {
    extern __shared__ __align__(16) unsigned char smem_raw[];
    const int hd = a.hd, ld = hd + 8;  // padded rows: 16-byte row reads hit distinct banks
    const int L = a.split_len;
    __half *ks = reinterpret_cast<__half *>(smem_raw);
    __half *vs = ks + L * ld;
    const int G = a.heads / a.kv_heads;
    float *qs = reinterpret_cast<float *>(vs + L * ld);  // [G][hd]
    float *ps = qs + G * hd;                              // [G][ATTN_CHUNK]
    __shared__ bool am_last;

    pdl_launch();
    pdl_wait();
    const int s = blockIdx.x, g = blockIdx.y, r = blockIdx.z;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int h = g * G + warp;
    const int seq = row_seq(r, a.rows_per_seq);
    const int ctx = row_pos(a.pos, r, a.rows_per_seq) + 1;
    const int start = s * L;
    const size_t cache_base = ((size_t)seq * a.kv_heads + g) * a.max_ctx * hd;

    float m = -INFINITY, l = 0.f;
    float ox[2] = {0.f, 0.f}, oy[2] = {0.f, 0.f};
    if (start < ctx) {
        const int nv = min(L, ctx - start);
        const int cpr = hd >> 3;  // 16-byte chunks per row
        // The query first (its loads overlap the K/V chunk's), then K and V, 4 rows in flight.
        const float *q = a.q + ((size_t)r * a.heads + h) * hd;
        for (int d = lane; d < hd; d += 32) qs[warp * hd + d] = q[d];
        const int total = nv * cpr;
        for (int t0 = threadIdx.x; t0 < total; t0 += 4 * blockDim.x) {
            uint4 kv[4], vv[4];
#pragma unroll
            for (int u = 0; u < 4; u++) {
                const int t = t0 + u * blockDim.x;
                if (t < total) {
                    const size_t off = cache_base + (size_t)(start + t / cpr) * hd + (t % cpr) * 8;
                    kv[u] = *reinterpret_cast<const uint4 *>(a.kc + off);
                    vv[u] = *reinterpret_cast<const uint4 *>(a.vc + off);
                }
            }
#pragma unroll
            for (int u = 0; u < 4; u++) {
                const int t = t0 + u * blockDim.x;
                if (t < total) {
                    const int j = t / cpr, c = t % cpr;
                    *reinterpret_cast<uint4 *>(ks + j * ld + c * 8) = kv[u];
                    *reinterpret_cast<uint4 *>(vs + j * ld + c * 8) = vv[u];
                }
            }
        }
        __syncthreads();

        const float *qw = qs + warp * hd;
        for (int j0 = 0; j0 < nv; j0 += ATTN_CHUNK) {
            const int j = j0 + lane;
            float sc = -INFINITY;
            if (j < nv) {
                float acc = 0.f;
                for (int c = 0; c < cpr; c++) {
                    uint4 kv = *reinterpret_cast<const uint4 *>(ks + j * ld + c * 8);
                    const __half2 *k2 = reinterpret_cast<const __half2 *>(&kv);
#pragma unroll
                    for (int i = 0; i < 4; i++) {
                        float2 f = __half22float2(k2[i]);
                        acc = fmaf(qw[c * 8 + 2 * i], f.x, acc);
                        acc = fmaf(qw[c * 8 + 2 * i + 1], f.y, acc);
                    }
                }
                sc = acc * a.scale;
            }
            const float mn = fmaxf(m, warp_max(sc));  // finite: lane 0's position is valid
            const float corr = __expf(m - mn);
            const float pj = j < nv ? __expf(sc - mn) : 0.f;
            l = l * corr + warp_sum(pj);
            m = mn;
            __syncwarp();
            ps[warp * ATTN_CHUNK + lane] = pj;
            __syncwarp();
            const int n = min(ATTN_CHUNK, nv - j0);
            #pragma unroll
        for (int t = 0; t < 2; t++) {
                const int d2 = lane + 32 * t;
                if (d2 < hd / 2) {
                    float x = ox[t] * corr, y = oy[t] * corr;
                    for (int jj = 0; jj < n; jj++) {
                        const float p = ps[warp * ATTN_CHUNK + jj];
                        const float2 v = __half22float2(
                            *reinterpret_cast<const __half2 *>(vs + (j0 + jj) * ld + 2 * d2));
                        x = fmaf(p, v.x, x);
                        y = fmaf(p, v.y, y);
                    }
                    ox[t] = x;
                    oy[t] = y;
                }
            }
        }
    }

    if (a.splits == 1 && a.merge_in_block) {  // the whole context here: normalize and store
        const float inv = 1.f / l;
        __half *o = a.out + (size_t)r * a.heads * hd + h * hd;
        #pragma unroll
        for (int t = 0; t < 2; t++) {
            const int d2 = lane + 32 * t;
            if (d2 < hd / 2)
                *reinterpret_cast<__half2 *>(o + 2 * d2) = __floats2half2_rn(ox[t] * inv, oy[t] * inv);
        }
        return;
    }
    if (start < ctx) {
        float *po = a.part_o + (((size_t)r * a.splits + s) * a.heads + h) * hd;
        #pragma unroll
        for (int t = 0; t < 2; t++) {
            const int d2 = lane + 32 * t;
            if (d2 < hd / 2) {
                po[2 * d2] = ox[t];
                po[2 * d2 + 1] = oy[t];
            }
        }
        if (lane == 0) {
            float *ml = a.part_ml + (((size_t)r * a.splits + s) * a.heads + h) * 2;
            ml[0] = m;
            ml[1] = l;
        }
    }

    if (!a.merge_in_block) return;  // the next kernel merges while staging its input

    // The last block of (r, g) merges every split's partial.
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned *ctr = a.counters + (size_t)r * a.kv_heads + g;
        const unsigned old = atomicAdd(ctr, 1u);
        am_last = old == (unsigned)(a.splits - 1);
        if (am_last) *ctr = 0u;
    }
    __syncthreads();
    if (!am_last) return;
    __threadfence();
    // Merge: lanes take splits for the max and the denominator, then each lane sums its
    // output dims over the splits, 8 loads in flight at a time.
    const int used = (ctx + a.split_len - 1) / a.split_len;
    const float *ml = a.part_ml + ((size_t)r * a.splits * a.heads + h) * 2;
    const size_t ml_stride = (size_t)a.heads * 2;
    float mx = -INFINITY;
    for (int t = lane; t < used; t += 32) mx = fmaxf(mx, __ldcg(ml + t * ml_stride));
    mx = warp_max(mx);
    float den = 0.f;
    for (int t = lane; t < used; t += 32)
        den += __expf(__ldcg(ml + t * ml_stride) - mx) * __ldcg(ml + t * ml_stride + 1);
    den = warp_sum(den);
    const float inv = 1.f / den;
    const float *po = a.part_o + ((size_t)r * a.splits * a.heads + h) * hd;
    const size_t po_stride = (size_t)a.heads * hd;
    float *wts = ps + warp * ATTN_CHUNK;
    for (int d0 = 0; d0 < hd; d0 += 32) {  // uniform trip count: __syncwarp needs every lane
        const int d = d0 + lane;
        float num = 0.f;
        for (int t0 = 0; t0 < used; t0 += 32) {
            const int t = t0 + lane;
            __syncwarp();
            wts[lane] = t < used ? __expf(__ldcg(ml + t * ml_stride) - mx) : 0.f;
            __syncwarp();
            const int n = min(32, used - t0);
            if (d < hd) {
#pragma unroll 8
                for (int j = 0; j < n; j++) num += wts[j] * __ldcg(po + (t0 + j) * po_stride + d);
            }
        }
        if (d < hd) a.out[(size_t)r * a.heads * hd + h * hd + d] = __float2half_rn(num * inv);
    }
}
