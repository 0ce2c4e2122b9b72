//! Decode skinny-matrix product on the tensor cores: out = W x for up to 8 (decode_gemv_tc_b8)
//! or 16 (_b16) rows of x, f16 weights and inputs, f32 accumulation with mma.sync.m16n8k16, the
//! same fused prologue (attention merge while staging x) and epilogues as decode_gemv.cu.
//! RMSNorm differs: these kernels take weights with the norm weight folded in along k
//! (folded_norm), sum each x row's squares on the tensor cores (gram_sum_sq) and scale the
//! sums by 1/rms in the epilogue, so x is never rescaled in shared memory.
//!
//! A warp owns a tile of 16 weight rows (8 adjacent pairs) and `ksplit` warps share a tile,
//! each taking every ksplit-th span of 4U 16-byte column chunks; block b takes tiles b, b +
//! blocks, ... (plan::gemv_tc_grid), and a tile's outputs are shared out among its warps for
//! the reduction and the epilogue. The weights come in the tiled layout
//! (src/llm/fast/tiles.rs): each (tile, span) is 4 KiB of contiguous memory and each 16-byte
//! load of a warp 512 contiguous bytes, zeros past n and k, so no weight load has a guard. At
//! batch 16 a product warp runs a long chain of its own instructions with few warps beside it
//! on the SM, so these kernels count instructions: staging and loads walk pointers. The tile's
//! rows are the 16-row A operand and x (rows = batch, staged in shared memory) the n = 8 B
//! operand, one n-tile per 8 batch rows, so each weight element is read from DRAM once,
//! straight into the registers the tensor core takes:
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

// The lane's chunks base + t + 4u (u < U) of its two weight rows from the tile's weights in
// the tiled layout (src/llm/fast/tiles.rs): wt is the tile's first span plus the lane's 8
// halves, so step u of the span at chunk `base` is one 512-byte load of the warp at
// base * 128 + u * 512 halves (row 2g), and 256 halves on (row 2g + 1). The layout holds whole
// spans, zeros past k, so any span that begins inside k loads without a guard.
template <int U>
__device__ __forceinline__ void load_tc_chunks(const __half *wt, int base, uint4 *ra,
                                               uint4 *rb) {
    const __half *p = wt + (size_t)base * 128;
#pragma unroll
    for (int u = 0; u < U; u++) {
        ra[u] = ld_stream(p + u * 512);
        rb[u] = ld_stream(p + u * 512 + 256);
    }
}

// The mma steps of one span: chunks base + t + 4u of the lane's two rows against x (xr[nt]:
// the lane's x row nt * 8 + g in shared memory, offset by its t chunks).
template <int NT, int U>
__device__ __forceinline__ void mma_span(float (&acc)[NT][4], const uint4 *ra, const uint4 *rb,
                                         const __half *const (&xr)[NT], int base, int t,
                                         int kv) {
    const bool full = base + 4 * U <= kv;  // warp-uniform
#pragma unroll
    for (int u = 0; u < U; u++) {
        const int c = base + 4 * u;
        uint4 xv[NT];
#pragma unroll
        for (int nt = 0; nt < NT; nt++) {
            xv[nt] = make_uint4(0, 0, 0, 0);
            if (full || c + t < kv) xv[nt] = *reinterpret_cast<const uint4 *>(xr[nt] + c * 8);
        }
#pragma unroll
        for (int nt = 0; nt < NT; nt++) {
            mma_16816(acc[nt], ra[u].x, rb[u].x, ra[u].y, rb[u].y, xv[nt].x, xv[nt].y);
            mma_16816(acc[nt], ra[u].z, rb[u].z, ra[u].w, rb[u].w, xv[nt].z, xv[nt].w);
        }
    }
}

// This warp's share of the sums of squares of the NT * 8 x rows in shared memory (kv chunks,
// xst halves apart), on the tensor cores: for the RMSNorm folded into the weights. With x as
// both operands, A = rows 0..15 and B = rows 0..7 (G0) or 8..15 (G1), the Gram tiles hold
// |x_n|^2 on their diagonals: row n < 8 at (n, n) of G0, row 8 + n at (8 + n, n) of G1, in
// lane (g = n, t = n / 2). Warp w takes the quads of chunks w, w + 8, ...; out[r] receives
// its sum for row r. f16 products are exact in f32, so this sums what the CUDA cores would,
// in fewer instructions than converting and squaring every element.
template <int NT>
__device__ __forceinline__ void gram_sum_sq(const __half *xs, int xst, int kv, float *out,
                                            int warp, int lane) {
    const int g = lane >> 2, t = lane & 3;
    float g0[4] = {0.f, 0.f, 0.f, 0.f}, g1[4] = {0.f, 0.f, 0.f, 0.f};
    for (int q = warp; 4 * q < kv; q += 8) {
        const int c = 4 * q + t;
        uint4 x0 = make_uint4(0, 0, 0, 0), x1 = make_uint4(0, 0, 0, 0);
        if (c < kv) {
            x0 = *reinterpret_cast<const uint4 *>(xs + (size_t)g * xst + c * 8);
            if (NT == 2) x1 = *reinterpret_cast<const uint4 *>(xs + (size_t)(8 + g) * xst + c * 8);
        }
        mma_16816(g0, x0.x, x1.x, x0.y, x1.y, x0.x, x0.y);
        mma_16816(g0, x0.z, x1.z, x0.w, x1.w, x0.z, x0.w);
        if (NT == 2) {
            mma_16816(g1, x0.x, x1.x, x0.y, x1.y, x1.x, x1.y);
            mma_16816(g1, x0.z, x1.z, x0.w, x1.w, x1.z, x1.w);
        }
    }
    if (t == (g >> 1)) {
        out[g] = g0[g & 1];
        if (NT == 2) out[8 + g] = g1[2 + (g & 1)];
    }
}

template <int NT, int U> __device__ void gemv_tc_body(const GemvArgs a) {
    static_assert(U == 4, "the tiled layout's spans are 16 chunks (src/llm/fast/tiles.rs)");
    constexpr int B = 8 * NT;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    __half *xs = reinterpret_cast<__half *>(smem_raw);
    __shared__ float red[8][32][4 * NT];
    __shared__ float ss_red[8][B];  // each warp's share of each x row's sum of squares
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int g = lane >> 2, t = lane & 3;
    const int k = a.k, kv = k >> 3, xst = k + TC_X_PAD;
    const int ks_log = __ffs(a.ksplit) - 1;  // ksplit is a power of two: shifts, no division
    const int group = warp >> ks_log, wig = warp & (a.ksplit - 1);
    // Tiles go round the blocks (block b takes tiles b, b + blocks, ...): a grid of more blocks
    // than tiles / groups spreads a wide matrix evenly over the SMs (plan::gemv_tc_grid).
    const int tile = blockIdx.x + gridDim.x * group;
    const bool tile_live = 16 * tile < a.n;  // warp-uniform
    const int p = tile * 8 + g;              // this lane's pair of weight rows
    const bool live = 2 * p < a.n;
    const int wstep = 4 * U * a.ksplit;      // chunks between a warp's spans of 4U
    // The tile's spans (whole ones: kv rounded up to 4U chunks) in the tiled layout; a warp
    // without a tile reads tile 0 (its sums are never stored).
    const int spans = (kv + 4 * U - 1) / (4 * U);
    const __half *wt = a.w + (size_t)(tile_live ? tile : 0) * spans * (16 * 4 * U * 8) + lane * 8;
    const __half *xr[NT];
#pragma unroll
    for (int nt = 0; nt < NT; nt++) xr[nt] = xs + (size_t)(nt * 8 + g) * xst + t * 8;

    // The weights do not depend on the previous kernel: the warp's first two spans (4U chunks
    // per row each) are in flight before waiting for it. Then two register buffers alternate:
    // a span's mma steps run while the next span's loads are in flight.
    uint4 ra[U], rb[U], sa[U], sb[U];
    int base = wig * 4 * U;  // warp-uniform: every lane takes part in every mma
    // A span past k (a warp's first two at small k) is never used: the loop below stops first.
    if (base < kv) load_tc_chunks<U>(wt, base, ra, rb);
    if (base + wstep < kv) load_tc_chunks<U>(wt, base + wstep, sa, sb);
    pdl_launch();
    pdl_wait();

    // The tile's (nt, j) outputs (batch rows nt*8 + 2t + j) are shared out among its ksplit
    // warps, so that no one warp adds every partial sum and runs every epilogue (RoPE and the
    // cache writes at batch 16 are long chains).
    auto owns = [&](int nt, int j) { return ((nt * 2 + j) & (a.ksplit - 1)) == wig; };
    EpiloguePre pre[NT][2];
#pragma unroll
    for (int nt = 0; nt < NT; nt++)
#pragma unroll
        for (int j = 0; j < 2; j++) {
            const int r = nt * 8 + 2 * t + j;
            pre[nt][j] = {make_float2(0.f, 0.f), 0, 0.f};
            if (live && owns(nt, j) && r < a.m)
                pre[nt][j] = epilogue_pre(a, r, p);  // after pdl_wait
        }
    stage_x<B>(a, xs, xst, nullptr);  // no norm_w: staging (or the merge) only

    float acc[NT][4];
#pragma unroll
    for (int nt = 0; nt < NT; nt++) acc[nt][0] = acc[nt][1] = acc[nt][2] = acc[nt][3] = 0.f;
    // The folded RMSNorm's sums of squares (gram_sum_sq) are needed by the epilogue only. A
    // warp takes its share once its third span's loads are issued, so that the pass neither
    // holds back the weight stream nor waits after the last span.
    bool gram_due = a.folded_norm;
    if (tile_live) {
        while (base < kv) {
            mma_span<NT, U>(acc, ra, rb, xr, base, t, kv);
            if (base + 2 * wstep < kv) load_tc_chunks<U>(wt, base + 2 * wstep, ra, rb);
            if (gram_due) {
                gram_sum_sq<NT>(xs, xst, kv, ss_red[warp], warp, lane);
                gram_due = false;
            }
            base += wstep;
            if (base >= kv) break;
            mma_span<NT, U>(acc, sa, sb, xr, base, t, kv);
            if (base + 2 * wstep < kv) load_tc_chunks<U>(wt, base + 2 * wstep, sa, sb);
            base += wstep;
        }
    }
    if (gram_due) gram_sum_sq<NT>(xs, xst, kv, ss_red[warp], warp, lane);  // no tile or no span
    if (a.ksplit > 1) {
#pragma unroll
        for (int nt = 0; nt < NT; nt++)
#pragma unroll
            for (int i = 0; i < 4; i++) red[warp][lane][nt * 4 + i] = acc[nt][i];
    }
    if (a.ksplit > 1 || a.folded_norm) __syncthreads();
    if (a.ksplit > 1) {
        // Each output's partial sums are added in warp order, whichever warp owns it.
        const int first = group << ks_log;
#pragma unroll
        for (int nt = 0; nt < NT; nt++)
#pragma unroll
            for (int j = 0; j < 2; j++) {
                if (!owns(nt, j)) continue;
                float s0 = 0.f, s1 = 0.f;
                for (int w = first; w < first + a.ksplit; w++) {
                    s0 += red[w][lane][nt * 4 + j];
                    s1 += red[w][lane][nt * 4 + 2 + j];
                }
                acc[nt][j] = s0;
                acc[nt][2 + j] = s1;
            }
    }
    if (live) {
        // acc[nt][j]: row 2g, batch row nt*8 + 2t + j; acc[nt][2 + j]: row 2g + 1, same.
#pragma unroll
        for (int nt = 0; nt < NT; nt++)
#pragma unroll
            for (int j = 0; j < 2; j++) {
                const int r = nt * 8 + 2 * t + j;
                if (r >= a.m || !owns(nt, j)) continue;
                float s = 1.f;
                if (a.folded_norm) {
                    float ss = 0.f;
#pragma unroll
                    for (int w = 0; w < 8; w++) ss += ss_red[w][r];
                    s = rsqrtf(ss / (float)k + a.eps);
                }
                epilogue(a, r, p, s * acc[nt][j], s * acc[nt][2 + j], pre[nt][j]);
            }
    }
}

}  // namespace

// Two blocks per SM: the 128 registers the loop is tuned at (ptxas would otherwise take more
// and leave one block per SM).
#define GEMV_TC_KERNEL(B, U)                                                                     \
    extern "C" __global__ void __launch_bounds__(256, 2) decode_gemv_tc_b##B(const GemvArgs a) { \
        gemv_tc_body<B / 8, U>(a);                                                               \
    }

GEMV_TC_KERNEL(8, 4)
GEMV_TC_KERNEL(16, 4)
