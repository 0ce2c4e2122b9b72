// GEMM ladder step 2 (f32): one thread per output, threadIdx.x walks COLUMNS of C, so a warp
// reads 32 consecutive B floats and writes 32 consecutive C floats (A is a broadcast).
// C[M,N] = A[M,K] * B[K,N], row-major. Block 32x32, grid (ceil(N/32), ceil(M/32)).
extern "C" __global__ void gemm_f32_coalesced(const float* __restrict__ A,
                                              const float* __restrict__ B, float* __restrict__ C,
                                              int M, int N, int K) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        float acc = 0.f;
        for (int k = 0; k < K; ++k) acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
        C[(size_t)row * N + col] = acc;
    }
}
