// GEMM ladder step 6 (f32): warp tiling with double-buffered shared memory (CUTLASS-style SIMT).
// Block tile 128x128xBK, 256 threads = 8 warps as 2 (M) x 4 (N), warp tile 64x32. Each lane
// owns an 8x8 output split into 2x2 sub-tiles of 4x4, so every inner-loop shared load is a
// float4 that a warp reads as 128 contiguous bytes (A) or 64 bytes (B) with broadcasts: four
// LDS.128 per 64 FFMA. While the current k-tile is multiplied, the next one is fetched: B by
// cp.async straight into the other buffer, A into registers (it is transposed on the way to
// shared memory, which cp.async cannot do). One barrier per k-tile.
// Needs M % 128 == 0, N % 128 == 0, K % BK == 0. Grid (N/128, M/128).
#define BM 128
#define BN 128
#include "gemm_common.cuh"
#define AS_LD (BM + 4)  // padded: the transposed A stores hit 2-way instead of 4-way conflicts

template <int BK>
__device__ __forceinline__ void warptile(const float* __restrict__ A, const float* __restrict__ B,
                                         float* __restrict__ C, int M, int N, int K) {
    constexpr int A_LOADS = BM * BK / 4 / 256;  // float4 per thread per k-tile
    constexpr int B_LOADS = BK * BN / 4 / 256;
    static_assert(A_LOADS >= 1 && B_LOADS >= 1, "BK too small for 256 threads");
    __shared__ __align__(16) float As[2][BK * AS_LD];
    __shared__ __align__(16) float Bs[2][BK * BN];

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = warp / 4, wn = warp % 4;  // warp tile origin: (wm*64, wn*32)
    const int tm = lane / 4, tn = lane % 4;  // lane's 4x4 sub-tile origin inside a 32x16 step
    A += (size_t)blockIdx.y * BM * K;
    B += (size_t)blockIdx.x * BN;

    // Per-thread copy coordinates; load r of a k-tile is `r * rows_per_pass` rows further on.
    constexpr int A_ROWS_PER_PASS = 256 / (BK / 4), B_ROWS_PER_PASS = 256 / (BN / 4);
    const int a_row = tid / (BK / 4), a_c4 = tid % (BK / 4);
    const int b_row = tid / (BN / 4), b_c4 = tid % (BN / 4);
    const float* a_src = A + (size_t)a_row * K + a_c4 * 4;
    const float* b_src = B + (size_t)b_row * N + b_c4 * 4;
    const size_t a_pass = (size_t)A_ROWS_PER_PASS * K, b_pass = (size_t)B_ROWS_PER_PASS * N;
    float4 a_ld[A_LOADS];
    // A into registers, B asynchronously into shared buffer `buf`; both advance one k-tile.
    auto fetch = [&](int buf) {
#pragma unroll
        for (int r = 0; r < A_LOADS; ++r)
            a_ld[r] = *reinterpret_cast<const float4*>(a_src + r * a_pass);
#pragma unroll
        for (int r = 0; r < B_LOADS; ++r)
            gemm::cp_async_16(&Bs[buf][(b_row + r * B_ROWS_PER_PASS) * BN + b_c4 * 4],
                              b_src + r * b_pass);
        gemm::cp_async_commit();
        a_src += BK;
        b_src += (size_t)BK * N;
    };
    auto stash = [&](int buf) {
#pragma unroll
        for (int r = 0; r < A_LOADS; ++r) {
            float* as = &As[buf][(a_c4 * 4) * AS_LD + a_row + r * A_ROWS_PER_PASS];
            as[0 * AS_LD] = a_ld[r].x;
            as[1 * AS_LD] = a_ld[r].y;
            as[2 * AS_LD] = a_ld[r].z;
            as[3 * AS_LD] = a_ld[r].w;
        }
        gemm::cp_async_wait<0>();
    };

    float acc[8][8] = {};  // [2 m sub-tiles x 4 rows][2 n sub-tiles x 4 cols]
    const int KT = K / BK;
    fetch(0);
    stash(0);
    __syncthreads();
    for (int kt = 0; kt < KT; ++kt) {
        const int buf = kt & 1;
        if (kt + 1 < KT) fetch(buf ^ 1);
        const float* as = &As[buf][wm * 64 + tm * 4];
        const float* bs = &Bs[buf][wn * 32 + tn * 4];
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float a[8], b[8];
            *reinterpret_cast<float4*>(&a[0]) = *reinterpret_cast<const float4*>(as + k * AS_LD);
            *reinterpret_cast<float4*>(&a[4]) =
                *reinterpret_cast<const float4*>(as + k * AS_LD + 32);
            *reinterpret_cast<float4*>(&b[0]) = *reinterpret_cast<const float4*>(bs + k * BN);
            *reinterpret_cast<float4*>(&b[4]) = *reinterpret_cast<const float4*>(bs + k * BN + 16);
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        if (kt + 1 < KT) stash(buf ^ 1);
        __syncthreads();
    }
    // acc[i][j]: row wm*64 + (i/4)*32 + tm*4 + i%4, col wn*32 + (j/4)*16 + tn*4 + j%4.
    float* c = C + (size_t)(blockIdx.y * BM + wm * 64 + tm * 4) * N + blockIdx.x * BN + wn * 32 +
               tn * 4;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        float* row = c + (size_t)((i / 4) * 32 + i % 4) * N;
#pragma unroll
        for (int j = 0; j < 8; j += 4)
            *reinterpret_cast<float4*>(row + (j / 4) * 16) =
                make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
    }
}

extern "C" __global__ void __launch_bounds__(256, 2)
    gemm_f32_warptile_bk8(const float* __restrict__ A, const float* __restrict__ B,
                          float* __restrict__ C, int M, int N, int K) {
    warptile<8>(A, B, C, M, N, K);
}

extern "C" __global__ void __launch_bounds__(256, 2)
    gemm_f32_warptile_bk16(const float* __restrict__ A, const float* __restrict__ B,
                           float* __restrict__ C, int M, int N, int K) {
    warptile<16>(A, B, C, M, N, K);
}
