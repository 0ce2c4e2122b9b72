// GEMM ladder step 5 (f32): step 4 with 16-byte (float4) global loads and stores, A stored
// transposed in shared memory so both operands are read as float4 in the inner loop.
// Needs M % 128 == 0, N % 128 == 0, K % 8 == 0. 256 threads, grid (N/128, M/128).
#define BM 128
#define BN 128
#define BK 8
#define TM 8
#define TN 8
extern "C" __global__ void __launch_bounds__(256)
    gemm_f32_vectorized_2d(const float* __restrict__ A, const float* __restrict__ B,
                           float* __restrict__ C, int M, int N, int K) {
    __shared__ __align__(16) float As[BK * BM];  // transposed: As[k][m]
    __shared__ __align__(16) float Bs[BK * BN];
    const int tid = threadIdx.x;
    const int thread_col = tid % (BN / TN), thread_row = tid / (BN / TN);
    A += (size_t)blockIdx.y * BM * K;
    B += (size_t)blockIdx.x * BN;
    C += (size_t)blockIdx.y * BM * N + (size_t)blockIdx.x * BN;
    const int a_row = tid / (BK / 4), a_col4 = tid % (BK / 4);  // 128 rows x 2 float4
    const int b_row = tid / (BN / 4), b_col4 = tid % (BN / 4);  // 8 rows x 32 float4
    float acc[TM][TN] = {};
    float rm[TM], rn[TN];
    for (int k0 = 0; k0 < K; k0 += BK) {
        const float4 a = *reinterpret_cast<const float4*>(&A[(size_t)a_row * K + a_col4 * 4]);
        As[(a_col4 * 4 + 0) * BM + a_row] = a.x;
        As[(a_col4 * 4 + 1) * BM + a_row] = a.y;
        As[(a_col4 * 4 + 2) * BM + a_row] = a.z;
        As[(a_col4 * 4 + 3) * BM + a_row] = a.w;
        *reinterpret_cast<float4*>(&Bs[b_row * BN + b_col4 * 4]) =
            *reinterpret_cast<const float4*>(&B[(size_t)b_row * N + b_col4 * 4]);
        __syncthreads();
        A += BK;
        B += (size_t)BK * N;
#pragma unroll
        for (int d = 0; d < BK; ++d) {
#pragma unroll
            for (int i = 0; i < TM; i += 4)
                *reinterpret_cast<float4*>(&rm[i]) =
                    *reinterpret_cast<const float4*>(&As[d * BM + thread_row * TM + i]);
#pragma unroll
            for (int j = 0; j < TN; j += 4)
                *reinterpret_cast<float4*>(&rn[j]) =
                    *reinterpret_cast<const float4*>(&Bs[d * BN + thread_col * TN + j]);
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
        for (int j = 0; j < TN; j += 4)
            *reinterpret_cast<float4*>(&C[(size_t)(thread_row * TM + i) * N + thread_col * TN + j]) =
                make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
}
