//! Decode skinny-matrix product on the tensor cores: out = W x for up to 8 (decode_gemv_tc_b8)
//! or 16 (_b16) rows of x, f16 weights and inputs, f32 accumulation with mma.sync.m16n8k16, the
//! same fused prologue (attention merge while staging x) and epilogues as decode_gemv.cu.
//! RMSNorm differs: these kernels take weights with the norm weight folded in along k
//! (folded_norm), find each row's 1/rms while staging x and scale the sums by it in the
//! epilogue, so x is never rescaled in shared memory before the first mma.
//!
//! A warp owns a tile of 16 weight rows (8 adjacent pairs) and `ksplit` warps share a tile,
//! each taking every ksplit-th span of 4U 16-byte column chunks (whole 128-byte lines of each
//! row, read by one warp). The tile's rows are the
//! 16-row A operand and x (rows = batch, staged in shared memory) the n = 8 B operand, one
//! n-tile per 8 batch rows, so each weight element is read from DRAM once, straight into the
//! registers the tensor core takes:
//! - lane (g = lane / 4, t = lane % 4) loads chunk c (8 halves) of weight rows 2g and 2g + 1
//!   of the tile and chunk c of x row g, where c runs over four adjacent chunks per mma step;
//! - the 8 halves of a chunk feed two k16 steps: halves 4j..4j+3 of chunk c stand for the
//!   mma's k indices {2t, 2t+1, 2t+8, 2t+9} of step j, in A (rows 2g -> mma row g, 2g + 1 ->
//!   mma row g + 8) and B (x row g -> mma column g) alike. A dot product does not care in
//!   which order k is summed, so the permutation, the same on both sides, leaves the result;
//! - the accumulator of lane (g, t) then holds rows 2g and 2g + 1 (a pair: RoPE, SiLU * up)
//!   for batch rows 2t and 2t + 1, which is what the pair epilogue takes.
//! x rows are padded by TC_X_PAD halves so the eight rows of one load land in distinct banks.
//! The first two spans are issued before waiting on the previous kernel (programmatic
//! dependent launch), as in decode_gemv.cu, and two register buffers alternate so that one
//! span's loads are in flight while the other's mma steps run.
#include "decode_gemv_parts.cuh"

// Halves of padding after each x row in shared memory (plan::TC_X_PAD).
#define TC_X_PAD 32

namespace {

__device__ __forceinline__ void mma_16816(float *d, unsigned a0, unsigned a1, unsigned a2,
                                          unsigned a3, unsigned b0, unsigned b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, "
                 "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// Chunks base + 4u of rows w0 and w1; zeros past k or for a pair beyond n.
template <int U>
__device__ __forceinline__ void load_tc_chunks(const __half *w0, const __half *w1, bool live,
                                               int base, int kv, uint4 *ra, uint4 *rb) {
#pragma unroll
    for (int u = 0; u < U; u++) {
        const int c = base + 4 * u;
        if (live && c < kv) {
            ra[u] = ld_stream(w0 + c * 8);
            rb[u] = ld_stream(w1 + c * 8);
        } else {
            ra[u] = rb[u] = make_uint4(0, 0, 0, 0);
        }
    }
}

// The mma steps of one span: chunks base + t + 4u of the lane's two rows against x.
template <int NT, int U>
__device__ __forceinline__ void mma_span(float (&acc)[NT][4], const uint4 *ra, const uint4 *rb,
                                         const __half *xs, int xst, int base, int t, int g,
                                         int kv) {
#pragma unroll
    for (int u = 0; u < U; u++) {
        const int c = base + t + 4 * u;
        uint4 xv[NT];
#pragma unroll
        for (int nt = 0; nt < NT; nt++) {
            xv[nt] = make_uint4(0, 0, 0, 0);
            if (c < kv)
                xv[nt] = *reinterpret_cast<const uint4 *>(xs + (size_t)(nt * 8 + g) * xst + c * 8);
        }
#pragma unroll
        for (int nt = 0; nt < NT; nt++) {
            mma_16816(acc[nt], ra[u].x, rb[u].x, ra[u].y, rb[u].y, xv[nt].x, xv[nt].y);
            mma_16816(acc[nt], ra[u].z, rb[u].z, ra[u].w, rb[u].w, xv[nt].z, xv[nt].w);
        }
    }
}

template <int NT, int U> __device__ void gemv_tc_body(const GemvArgs a) {
    constexpr int B = 8 * NT;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    __half *xs = reinterpret_cast<__half *>(smem_raw);
    __shared__ float red[8][32][4 * NT];
    __shared__ float inv_rows[B];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int g = lane >> 2, t = lane & 3;
    const int k = a.k, kv = k >> 3, xst = k + TC_X_PAD;
    const int groups = 8 / a.ksplit;
    const int group = warp / a.ksplit, wig = warp % a.ksplit;
    const int tile = blockIdx.x * groups + group;
    const bool tile_live = 16 * tile < a.n;  // warp-uniform
    const int p = tile * 8 + g;              // this lane's pair of weight rows
    const bool live = 2 * p < a.n;
    const int wstep = 4 * U * a.ksplit;      // chunks between a warp's spans of 4U
    const __half *w0 = a.w + (size_t)(2 * p) * k;
    const __half *w1 = w0 + k;

    // The weights do not depend on the previous kernel: the warp's first two spans (2U chunks
    // per row) are in flight before waiting for it. Then two register buffers alternate: a
    // span's mma steps run while the next span's loads are in flight.
    uint4 ra[U], rb[U], sa[U], sb[U];
    int base = wig * 4 * U;  // warp-uniform: every lane takes part in every mma
    load_tc_chunks<U>(w0, w1, live, base + t, kv, ra, rb);
    load_tc_chunks<U>(w0, w1, live, base + wstep + t, kv, sa, sb);
    pdl_launch();
    pdl_wait();

    const bool writer = live && wig == 0;
    EpiloguePre pre[NT][2];
#pragma unroll
    for (int nt = 0; nt < NT; nt++)
#pragma unroll
        for (int j = 0; j < 2; j++) {
            const int r = nt * 8 + 2 * t + j;
            pre[nt][j] = {make_float2(0.f, 0.f), 0, 0.f};
            if (writer && r < a.m) pre[nt][j] = epilogue_pre(a, r, p);  // after pdl_wait
        }
    stage_x_folded<B>(a, xs, xst, inv_rows);

    float acc[NT][4];
#pragma unroll
    for (int nt = 0; nt < NT; nt++) acc[nt][0] = acc[nt][1] = acc[nt][2] = acc[nt][3] = 0.f;
    if (tile_live) {
        while (base < kv) {
            mma_span<NT, U>(acc, ra, rb, xs, xst, base, t, g, kv);
            if (base + 2 * wstep < kv)
                load_tc_chunks<U>(w0, w1, live, base + 2 * wstep + t, kv, ra, rb);
            base += wstep;
            if (base >= kv) break;
            mma_span<NT, U>(acc, sa, sb, xs, xst, base, t, g, kv);
            if (base + 2 * wstep < kv)
                load_tc_chunks<U>(w0, w1, live, base + 2 * wstep + t, kv, sa, sb);
            base += wstep;
        }
    }
    if (a.ksplit > 1) {
#pragma unroll
        for (int nt = 0; nt < NT; nt++)
#pragma unroll
            for (int i = 0; i < 4; i++) red[warp][lane][nt * 4 + i] = acc[nt][i];
        __syncthreads();
        if (wig == 0) {
            for (int w = warp + 1; w < warp + a.ksplit; w++)
#pragma unroll
                for (int nt = 0; nt < NT; nt++)
#pragma unroll
                    for (int i = 0; i < 4; i++) acc[nt][i] += red[w][lane][nt * 4 + i];
        }
    }
    if (writer) {
        // acc[nt][j]: row 2g, batch row nt*8 + 2t + j; acc[nt][2 + j]: row 2g + 1, same.
#pragma unroll
        for (int nt = 0; nt < NT; nt++)
#pragma unroll
            for (int j = 0; j < 2; j++) {
                const int r = nt * 8 + 2 * t + j;
                if (r >= a.m) continue;
                const float s = a.folded_norm ? inv_rows[r] : 1.f;
                epilogue(a, r, p, s * acc[nt][j], s * acc[nt][2 + j], pre[nt][j]);
            }
    }
}

}  // namespace

#define GEMV_TC_KERNEL(B, U)                                                                     \
    extern "C" __global__ void __launch_bounds__(256) decode_gemv_tc_b##B(const GemvArgs a) {   \
        gemv_tc_body<B / 8, U>(a);                                                               \
    }

GEMV_TC_KERNEL(8, 4)
GEMV_TC_KERNEL(16, 4)
