// examples/matmul_kernels.cu: four FP32 matmul kernels for kernel_bench, from naive to
// register-tiled (after Simon Boehm's SGEMM worklog).
//
// All compute C[M x N] = A[M x K] * B[K x N], row-major, and take opbench's built-in matmul
// convention: (const float* A, const float* B, float* C, int M, int N, int K). Every load is
// bounds-checked, so any M, N, K is valid. The launch shapes each kernel expects are in
// examples/matmul_kernels.toml.

// One thread per element of C; thread x walks the columns, so B and C accesses coalesce.
// Any 2-D block; grid (ceil(N / block_x), ceil(M / block_y)).
extern "C" __global__ void matmul_naive(const float* A, const float* B, float* C,
                                        int M, int N, int K) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k) {
            acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
        }
        C[(size_t)row * N + col] = acc;
    }
}

// Shared-memory tiling: each 16x16 block stages 16x16 tiles of A and B, so each global element
// is read K/16 times instead of K times. Needs block 16x16; grid (ceil(N/16), ceil(M/16)).
#define TILE 16
extern "C" __global__ void matmul_tiled(const float* A, const float* B, float* C,
                                        int M, int N, int K) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;
    const int col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int t = 0; t < K; t += TILE) {
        As[ty][tx] = (row < M && t + tx < K) ? A[(size_t)row * K + t + tx] : 0.0f;
        Bs[ty][tx] = (t + ty < K && col < N) ? B[(size_t)(t + ty) * N + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k) {
            acc += As[ty][k] * Bs[k][tx];
        }
        __syncthreads();
    }
    if (row < M && col < N) {
        C[(size_t)row * N + col] = acc;
    }
}

// 1-D block tiling: a 64x64 tile of C per block of 512 threads, each thread computing 8
// consecutive rows of one column, so one B value from shared memory feeds 8 FMAs.
// Needs block 512 (1-D); grid (ceil(N/64), ceil(M/64)).
#define BM1 64
#define BN1 64
#define BK1 8
#define TM1 8
extern "C" __global__ void __launch_bounds__(512)
matmul_blocktile_1d(const float* A, const float* B, float* C, int M, int N, int K) {
    __shared__ float As[BM1 * BK1];
    __shared__ float Bs[BK1 * BN1];
    const int tcol = threadIdx.x % BN1;
    const int trow = threadIdx.x / BN1;
    const int row0 = blockIdx.y * BM1, col0 = blockIdx.x * BN1;
    const int a_r = threadIdx.x / BK1, a_c = threadIdx.x % BK1;
    const int b_r = threadIdx.x / BN1, b_c = threadIdx.x % BN1;
    float acc[TM1] = {0.0f};
    for (int t = 0; t < K; t += BK1) {
        const int ar = row0 + a_r, ac = t + a_c;
        As[a_r * BK1 + a_c] = (ar < M && ac < K) ? A[(size_t)ar * K + ac] : 0.0f;
        const int br = t + b_r, bc = col0 + b_c;
        Bs[b_r * BN1 + b_c] = (br < K && bc < N) ? B[(size_t)br * N + bc] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK1; ++k) {
            const float b = Bs[k * BN1 + tcol];
#pragma unroll
            for (int i = 0; i < TM1; ++i) {
                acc[i] += As[(trow * TM1 + i) * BK1 + k] * b;
            }
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM1; ++i) {
        const int r = row0 + trow * TM1 + i, c = col0 + tcol;
        if (r < M && c < N) {
            C[(size_t)r * N + c] = acc[i];
        }
    }
}

// 2-D block tiling: a 128x128 tile of C per block of 256 threads, each thread computing an
// 8x8 sub-tile from 8 values of A and 8 of B held in registers (64 FMAs per 16 loads).
// Needs block 256 (1-D); grid (ceil(N/128), ceil(M/128)).
#define BM2 128
#define BN2 128
#define BK2 8
#define TM2 8
#define TN2 8
extern "C" __global__ void __launch_bounds__(256)
matmul_blocktile_2d(const float* A, const float* B, float* C, int M, int N, int K) {
    __shared__ float As[BK2][BM2];  // transposed: As[k][m]
    __shared__ float Bs[BK2][BN2];
    const int tid = threadIdx.x;
    const int trow = tid / (BN2 / TN2);
    const int tcol = tid % (BN2 / TN2);
    const int row0 = blockIdx.y * BM2, col0 = blockIdx.x * BN2;
    float acc[TM2][TN2] = {{0.0f}};
    float ra[TM2], rb[TN2];
    for (int t = 0; t < K; t += BK2) {
        for (int i = tid; i < BM2 * BK2; i += blockDim.x) {
            const int r = i / BK2, c = i % BK2;
            const int gr = row0 + r, gc = t + c;
            As[c][r] = (gr < M && gc < K) ? A[(size_t)gr * K + gc] : 0.0f;
        }
        for (int i = tid; i < BK2 * BN2; i += blockDim.x) {
            const int r = i / BN2, c = i % BN2;
            const int gr = t + r, gc = col0 + c;
            Bs[r][c] = (gr < K && gc < N) ? B[(size_t)gr * N + gc] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK2; ++k) {
#pragma unroll
            for (int i = 0; i < TM2; ++i) ra[i] = As[k][trow * TM2 + i];
#pragma unroll
            for (int j = 0; j < TN2; ++j) rb[j] = Bs[k][tcol * TN2 + j];
#pragma unroll
            for (int i = 0; i < TM2; ++i)
#pragma unroll
                for (int j = 0; j < TN2; ++j) acc[i][j] += ra[i] * rb[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM2; ++i) {
#pragma unroll
        for (int j = 0; j < TN2; ++j) {
            const int r = row0 + trow * TM2 + i, c = col0 + tcol * TN2 + j;
            if (r < M && c < N) {
                C[(size_t)r * N + c] = acc[i][j];
            }
        }
    }
}
