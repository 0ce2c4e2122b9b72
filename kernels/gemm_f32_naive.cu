// GEMM ladder step 1 (f32): one thread per output, threadIdx.x walks ROWS of C.
// Neighbouring threads read A rows K floats apart and write C N floats apart: no coalescing.
// C[M,N] = A[M,K] * B[K,N], row-major. Block 32x32, grid (ceil(M/32), ceil(N/32)).
extern "C" __global__ void gemm_f32_naive(const float* __restrict__ A, const float* __restrict__ B,
                                          float* __restrict__ C, int M, int N, int K) {
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    const int col = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        float acc = 0.f;
        for (int k = 0; k < K; ++k) acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
        C[(size_t)row * N + col] = acc;
    }
}
