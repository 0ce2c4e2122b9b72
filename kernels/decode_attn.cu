//! Attention of each row's query over the static KV cache, split along the sequence: block
//! (split s, kv head g, row r) takes split_len cached positions (a multiple of ATTN_CHUNK = 32),
//! stages their K and V once in shared memory for the G = heads / kv_heads query heads that
//! share kv head g, and runs an online softmax over them 32 positions at a time (one lane per
//! position for the scores, lanes over head dims for the V sum), all in f32. Each query head
//! has W = blockDim.x / (32 G) warps that take every W-th chunk of 32 positions; the block
//! combines them in shared memory. With one split the block writes the f16 output directly.
//! With several, each writes an unnormalized partial (output, running max, sum of exp) and the
//! last block of (r, g) to finish, found with an atomic counter, merges them and resets the
//! counter, so no second kernel is needed. Splits past the row's context do no work but still
//! count, which lets one grid (sized for the longest context) serve every step. Launched as
//! clusters of the splits of each (r, g) (merge_in_block = 2, at most 8 splits), the blocks
//! merge through distributed shared memory instead, with no atomic or L2 round trip. In decode
//! (cache_ready), the cached positions before the step's own are staged before waiting on the
//! QKV product.
#include <cooperative_groups.h>

#include "decode_common.cuh"

namespace cg = cooperative_groups;

// Most splits one cluster merges (plan::ATTN_MAX_CLUSTER, the portable cluster size).
#define ATTN_MAX_CLUSTER 8

// A warp's unnormalized softmax state: its output dims (lane holds pairs lane and lane + 32)
// to o, its running max and sum to ml[0] and ml[1].
__device__ __forceinline__ void store_state(float *o, float *ml, const float (&ox)[2],
                                            const float (&oy)[2], float m, float l, int lane,
                                            int hd) {
#pragma unroll
    for (int t = 0; t < 2; t++) {
        const int d2 = lane + 32 * t;
        if (d2 < hd / 2) {
            o[2 * d2] = ox[t];
            o[2 * d2 + 1] = oy[t];
        }
    }
    if (lane == 0) {
        ml[0] = m;
        ml[1] = l;
    }
}

// Adds w times a stored state's output dims (store_state's o) to a warp's (ox, oy).
__device__ __forceinline__ void add_state(float (&ox)[2], float (&oy)[2], const float *o, float w,
                                          int lane, int hd) {
#pragma unroll
    for (int t = 0; t < 2; t++) {
        const int d2 = lane + 32 * t;
        if (d2 < hd / 2) {
            ox[t] += w * o[2 * d2];
            oy[t] += w * o[2 * d2 + 1];
        }
    }
}

// Stores a warp's output dims times inv as one head's f16 output row o.
__device__ __forceinline__ void store_out(__half *o, const float (&ox)[2], const float (&oy)[2],
                                          float inv, int lane, int hd) {
#pragma unroll
    for (int t = 0; t < 2; t++) {
        const int d2 = lane + 32 * t;
        if (d2 < hd / 2)
            *reinterpret_cast<__half2 *>(o + 2 * d2) = __floats2half2_rn(ox[t] * inv, oy[t] * inv);
    }
}

extern "C" __global__ void __launch_bounds__(1024) decode_attn(const AttnArgs a) {
    extern __shared__ __align__(16) unsigned char smem_raw[];
    const int hd = a.hd, ld = hd + 8;  // padded rows: 16-byte row reads hit distinct banks
    const int L = a.split_len;
    __half *ks = reinterpret_cast<__half *>(smem_raw);
    __half *vs = ks + L * ld;
    const int G = a.heads / a.kv_heads;
    const int nw = blockDim.x >> 5, W = nw / G;  // warps; warps per query head
    float *qs = reinterpret_cast<float *>(vs + L * ld);  // [G][hd]
    float *ps = qs + G * hd;                              // [nw][ATTN_CHUNK]
    float *cs = ps + nw * ATTN_CHUNK;                     // [nw][hd + 2] (W > 1): o, m, l
    __shared__ bool am_last;

    const int s = blockIdx.x, g = blockIdx.y, r = blockIdx.z;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int hw = warp % G, wi = warp / G;  // query head in the group; its warp among W
    const int h = g * G + hw;
    const int seq = row_seq(r, a.rows_per_seq);
    const int start = s * L;
    const int cpr = hd >> 3;  // 16-byte chunks per row
    const size_t cache_base = ((size_t)seq * a.kv_heads + g) * a.max_ctx * hd;
    auto stage_kv = [&](int from, int to) {
        stage_cache_rows(ks, vs, ld, a.kc, a.vc, cache_base, hd, start, from, to);
    };

    pdl_launch();
    // In decode, the cached positions below the step's own were written by earlier steps (a
    // graph replay starts once the previous one has ended), and the QKV product this kernel
    // waits for writes only the new one: those rows are staged before waiting, so their DRAM
    // round trip overlaps the QKV product instead of following it.
    // The position is final then too (the previous step's argmax wrote it).
    int ctx = 0, ready = 0;
    if (a.cache_ready) {
        ctx = row_pos(a.pos, r, a.rows_per_seq) + 1;
        ready = min(max(ctx - 1 - start, 0), L);
        stage_kv(0, ready);
    }
    pdl_wait();
    if (!a.cache_ready) ctx = row_pos(a.pos, r, a.rows_per_seq) + 1;

    float m = -INFINITY, l = 0.f;
    float ox[2] = {0.f, 0.f}, oy[2] = {0.f, 0.f};
    if (start < ctx) {
        const int nv = min(L, ctx - start);
        // The rows not staged yet and the query (f32, from the QKV product) in one round trip.
        stage_kv(ready, nv);
        if (wi == 0) {
            const float *q = a.q + ((size_t)r * a.heads + h) * hd;
            for (int c = lane; c < hd / 4; c += 32) cp_async16(qs + hw * hd + c * 4, q + c * 4);
        }
        cp_async_wait_all();
        __syncthreads();

        const float *qw = qs + hw * hd;
        for (int j0 = wi * ATTN_CHUNK; j0 < nv; j0 += W * ATTN_CHUNK) {
            const int j = j0 + lane;
            float sc = -INFINITY;
            if (j < nv) {
                // Two accumulators (even and odd dims) halve the dependent FMA chain; the query
                // comes in 16-byte loads (qw is 16-byte aligned: hd is a multiple of 8).
                float acc0 = 0.f, acc1 = 0.f;
#pragma unroll 4
                for (int c = 0; c < cpr; c++) {
                    const uint4 kv = *reinterpret_cast<const uint4 *>(ks + j * ld + c * 8);
                    const __half2 *k2 = reinterpret_cast<const __half2 *>(&kv);
                    const float4 qa = *reinterpret_cast<const float4 *>(qw + c * 8);
                    const float4 qb = *reinterpret_cast<const float4 *>(qw + c * 8 + 4);
                    const float2 f0 = __half22float2(k2[0]), f1 = __half22float2(k2[1]);
                    const float2 f2 = __half22float2(k2[2]), f3 = __half22float2(k2[3]);
                    acc0 = fmaf(qa.x, f0.x, acc0);
                    acc1 = fmaf(qa.y, f0.y, acc1);
                    acc0 = fmaf(qa.z, f1.x, acc0);
                    acc1 = fmaf(qa.w, f1.y, acc1);
                    acc0 = fmaf(qb.x, f2.x, acc0);
                    acc1 = fmaf(qb.y, f2.y, acc1);
                    acc0 = fmaf(qb.z, f3.x, acc0);
                    acc1 = fmaf(qb.w, f3.y, acc1);
                }
                sc = (acc0 + acc1) * a.scale;
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
                    // Even and odd positions in separate sums: half the dependent chain.
                    const __half *vc = vs + j0 * ld + 2 * d2;
                    float x0 = ox[t] * corr, y0 = oy[t] * corr, x1 = 0.f, y1 = 0.f;
                    int jj = 0;
                    for (; jj + 1 < n; jj += 2) {
                        const float2 p = *reinterpret_cast<const float2 *>(ps + warp * ATTN_CHUNK + jj);
                        const float2 v0 = __half22float2(*reinterpret_cast<const __half2 *>(vc + jj * ld));
                        const float2 v1 =
                            __half22float2(*reinterpret_cast<const __half2 *>(vc + (jj + 1) * ld));
                        x0 = fmaf(p.x, v0.x, x0);
                        y0 = fmaf(p.x, v0.y, y0);
                        x1 = fmaf(p.y, v1.x, x1);
                        y1 = fmaf(p.y, v1.y, y1);
                    }
                    if (jj < n) {
                        const float p = ps[warp * ATTN_CHUNK + jj];
                        const float2 v = __half22float2(*reinterpret_cast<const __half2 *>(vc + jj * ld));
                        x0 = fmaf(p, v.x, x0);
                        y0 = fmaf(p, v.y, y0);
                    }
                    ox[t] = x0 + x1;
                    oy[t] = y0 + y1;
                }
            }
        }
    }

    if (W > 1) {
        // The head's other warps hand their (o, m, l) to warp wi = 0, which rescales all of
        // them to the largest max. A warp that got no chunk has m = -inf and adds nothing.
        float *c = cs + warp * (hd + 2);
        if (wi > 0) store_state(c, c + hd, ox, oy, m, l, lane, hd);
        __syncthreads();
        if (wi == 0 && m != -INFINITY) {
            float mx = m;
            for (int w = 1; w < W; w++) mx = fmaxf(mx, cs[(w * G + hw) * (hd + 2) + hd]);
            const float f0 = __expf(m - mx);
            l *= f0;
#pragma unroll
            for (int t = 0; t < 2; t++) {
                ox[t] *= f0;
                oy[t] *= f0;
            }
            for (int w = 1; w < W; w++) {
                const float *cw = cs + (w * G + hw) * (hd + 2);
                if (cw[hd] == -INFINITY) continue;
                const float f = __expf(cw[hd] - mx);
                l += f * cw[hd + 1];
                add_state(ox, oy, cw, f, lane, hd);
            }
            m = mx;
        }
    }

    if (a.splits == 1 && a.merge_in_block) {  // the whole context here: normalize and store
        if (wi > 0) return;
        store_out(a.out + (size_t)r * a.heads * hd + h * hd, ox, oy, 1.f / l, lane, hd);
        return;
    }
    if (a.merge_in_block == 2) {
        // The splits of (r, g) are one thread-block cluster: each block leaves its partial for
        // its G heads in its own shared memory ([G][hd + 2]: output, max, sum; an empty split's
        // max is -inf), and after one cluster barrier block s merges heads s, s + splits, ...
        // from every block's shared memory (distributed shared memory: no L2 round trip) and
        // writes the f16 output. A second barrier keeps each block's shared memory alive until
        // the others have read it.
        cg::cluster_group cl = cg::this_cluster();
        float *state = reinterpret_cast<float *>(smem_raw);  // over K/V: done with them
        __syncthreads();
        if (wi == 0) {
            float *mine = state + hw * (hd + 2);
            store_state(mine, mine + hd, ox, oy, m, l, lane, hd);
        }
        cl.sync();
        const int used = min(a.splits, (ctx + L - 1) / L);
        const int rank = (int)cl.block_rank();
        for (int hh = warp; hh < G; hh += nw) {
            if (hh % a.splits != rank) continue;
            // Every block's max and sum and this lane's first pair of output dims are loaded
            // at once (one distributed-shared-memory round trip), then combined; a head wider
            // than 64 dims loads its second pair in one more.
            auto at = [&](int t) { return cl.map_shared_rank(state, t) + hh * (hd + 2); };
            float mt[ATTN_MAX_CLUSTER], lt[ATTN_MAX_CLUSTER];
            float2 ot[ATTN_MAX_CLUSTER];
#pragma unroll
            for (int t = 0; t < ATTN_MAX_CLUSTER; t++) {
                mt[t] = -INFINITY;
                lt[t] = 0.f;
                ot[t] = make_float2(0.f, 0.f);
                if (t < used) {
                    const float *rs = at(t);
                    mt[t] = rs[hd];
                    lt[t] = rs[hd + 1];
                    ot[t] = make_float2(rs[2 * lane], rs[2 * lane + 1]);
                }
            }
            float mx = -INFINITY;
#pragma unroll
            for (int t = 0; t < ATTN_MAX_CLUSTER; t++) mx = fmaxf(mx, mt[t]);
            float den = 0.f, nx[2] = {0.f, 0.f}, ny[2] = {0.f, 0.f};
#pragma unroll
            for (int t = 0; t < ATTN_MAX_CLUSTER; t++) {
                mt[t] = t < used ? __expf(mt[t] - mx) : 0.f;  // now the split's weight
                den += mt[t] * lt[t];
                nx[0] += mt[t] * ot[t].x;
                ny[0] += mt[t] * ot[t].y;
            }
            if (lane + 32 < hd / 2) {
#pragma unroll
                for (int t = 0; t < ATTN_MAX_CLUSTER; t++)
                    if (t < used) ot[t] = make_float2(at(t)[2 * lane + 64], at(t)[2 * lane + 65]);
#pragma unroll
                for (int t = 0; t < ATTN_MAX_CLUSTER; t++)
                    if (t < used) {
                        nx[1] += mt[t] * ot[t].x;
                        ny[1] += mt[t] * ot[t].y;
                    }
            }
            store_out(a.out + (size_t)r * a.heads * hd + (g * G + hh) * hd, nx, ny, 1.f / den,
                      lane, hd);
        }
        cl.sync();
        return;
    }
    if (start < ctx && wi == 0) {
        const size_t rsh = ((size_t)r * a.splits + s) * a.heads + h;
        store_state(a.part_o + rsh * hd, a.part_ml + rsh * 2, ox, oy, m, l, lane, hd);
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
    if (!am_last || wi > 0) return;
    __threadfence();
    const int used = (ctx + a.split_len - 1) / a.split_len;
    const float *ml = a.part_ml + ((size_t)r * a.splits * a.heads + h) * 2;
    const size_t ml_stride = (size_t)a.heads * 2;
    const float *po = a.part_o + ((size_t)r * a.splits * a.heads + h) * hd;
    const size_t po_stride = (size_t)a.heads * hd;
    __half *o = a.out + (size_t)r * a.heads * hd + h * hd;
    // 32 splits per round: lane t holds split t0 + t's max and sum (one round trip), then
    // every lane's dims of the round's splits are loaded together (one more); rounds rescale
    // to the running max.
    float mx = -INFINITY, den = 0.f;
    float num[4] = {0.f, 0.f, 0.f, 0.f};  // dims lane + 32 i (hd <= 128)
    for (int t0 = 0; t0 < used; t0 += 32) {
        const int t = t0 + lane;
        float2 mlt = make_float2(-INFINITY, 0.f);
        if (t < used) mlt = __ldcg(reinterpret_cast<const float2 *>(ml + t * ml_stride));
        const float mn = fmaxf(mx, warp_max(mlt.x));  // finite: split t0 has positions
        const float co = __expf(mx - mn);
        const float wt = t < used ? __expf(mlt.x - mn) : 0.f;
        den = den * co + warp_sum(wt * mlt.y);
        const int n = min(32, used - t0);
#pragma unroll
        for (int i = 0; i < 4; i++) num[i] *= co;
#pragma unroll 8
        for (int j = 0; j < n; j++) {
            const float w = __shfl_sync(0xffffffffu, wt, j);
#pragma unroll
            for (int i = 0; i < 4; i++)
                if (lane + 32 * i < hd)
                    num[i] += w * __ldcg(po + (size_t)(t0 + j) * po_stride + lane + 32 * i);
        }
        mx = mn;
    }
    const float inv = 1.f / den;
#pragma unroll
    for (int i = 0; i < 4; i++)
        if (lane + 32 * i < hd) o[lane + 32 * i] = __float2half_rn(num[i] * inv);
}
