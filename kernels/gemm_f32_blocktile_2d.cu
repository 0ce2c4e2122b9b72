// GEMM ladder step 4 (f32): 2-D register blocking. A 128x128 block tile, BK = 8, 256 threads,
// each thread accumulates an 8x8 sub-tile in registers (64 FMAs per 16 shared-memory loads).
// Scalar loads. Needs M % 128 == 0, N % 128 == 0, K % 8 == 0. Grid (N/128, M/128).
#define BM 128
#define BN 128
#define BK 8
#define TM 8
#define TN 8
extern "C" __global__ void __launch_bounds__(256)
    gemm_f32_blocktile_2d(const float* __restrict__ A, const float* __restrict__ B,
                          float* __restrict__ C, int M, int N, int K) {
    __shared__ float As[BM * BK];
    __shared__ float Bs[BK * BN];
    const int tid = threadIdx.x;
    const int thread_col = tid % (BN / TN), thread_row = tid / (BN / TN);
    A += (size_t)blockIdx.y * BM * K;
    B += (size_t)blockIdx.x * BN;
    C += (size_t)blockIdx.y * BM * N + (size_t)blockIdx.x * BN;
    const int a_row = tid / BK, a_col = tid % BK;  // 32 rows per pass
    const int b_row = tid / BN, b_col = tid % BN;  // 2 rows per pass
    float acc[TM][TN] = {};
    float rm[TM], rn[TN];
    for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
        for (int off = 0; off < BM; off += 256 / BK)
            As[(a_row + off) * BK + a_col] = A[(size_t)(a_row + off) * K + a_col];
#pragma unroll
        for (int off = 0; off < BK; off += 256 / BN)
            Bs[(b_row + off) * BN + b_col] = B[(size_t)(b_row + off) * N + b_col];
        __syncthreads();
        A += BK;
        B += (size_t)BK * N;
#pragma unroll
        for (int d = 0; d < BK; ++d) {
#pragma unroll
            for (int i = 0; i < TM; ++i) rm[i] = As[(thread_row * TM + i) * BK + d];
#pragma unroll
            for (int j = 0; j < TN; ++j) rn[j] = Bs[d * BN + thread_col * TN + j];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] += rm[i] * rn[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j)
            C[(size_t)(thread_row * TM + i) * N + thread_col * TN + j] = acc[i][j];
}
