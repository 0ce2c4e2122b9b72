// GEMM ladder step 3 (f32): 32x32 output tile per block, A and B staged through shared memory
// in 32x32 tiles, so each global float is read once per tile instead of once per output.
// Any M, N, K (edges zero-filled). Block 32x32, grid (ceil(N/32), ceil(M/32)).
#define TILE 32
extern "C" __global__ void gemm_f32_smem_tiled(const float* __restrict__ A,
                                               const float* __restrict__ B, float* __restrict__ C,
                                               int M, int N, int K) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;
    const int col = blockIdx.x * TILE + tx;
    float acc = 0.f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        As[ty][tx] = (row < M && k0 + tx < K) ? A[(size_t)row * K + k0 + tx] : 0.f;
        Bs[ty][tx] = (k0 + ty < K && col < N) ? B[(size_t)(k0 + ty) * N + col] : 0.f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    if (row < M && col < N) C[(size_t)row * N + col] = acc;
}
