// Tensor-core GEMM step 1 (f16/bf16 in, f32 accumulate): 128x128x32 block tile, 4 warps each
// owning a 64x64 warp tile, mma.sync.m16n8k16 fed by ldmatrix from padded shared memory.
// Tiles are loaded synchronously (16-byte global loads through registers) into ONE buffer:
// two barriers per k-tile and no overlap of loads with math. The baseline for the pipeline.
// Any M (rows past M zero-filled, never stored); needs N % 128 == 0, K % 32 == 0.
// 128 threads, grid (N/128, ceil(M/128)).
#include "gemm_tc_mma.cuh"

#define BM 128
#define BN 128
#define BK 32
#define A_LD (BK + 8)  // 80-byte rows: the 8 rows of an ldmatrix land in 8 distinct 16 B slots
#define B_LD (BN + 8)  // 272-byte rows: same

template <typename T>
__device__ __forceinline__ void mma_smem(const T* __restrict__ A, const T* __restrict__ B,
                                         T* __restrict__ C, int M, int N, int K) {
    __shared__ __align__(16) T As[BM * A_LD];
    __shared__ __align__(16) T Bs[BK * B_LD];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = warp / 2, wn = warp % 2;
    const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
    float acc[4][8][4] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
        for (int i = 0; i < BM * BK / 8 / 128; ++i) {  // A: 128 rows x 4 chunks of 8
            const int c = tid + i * 128, row = c >> 2, col = (c & 3) * 8;
            uint4 v = make_uint4(0, 0, 0, 0);
            if (bm + row < M) v = *reinterpret_cast<const uint4*>(A + (size_t)(bm + row) * K + k0 + col);
            *reinterpret_cast<uint4*>(As + row * A_LD + col) = v;
        }
#pragma unroll
        for (int i = 0; i < BK * BN / 8 / 128; ++i) {  // B: 32 rows x 16 chunks of 8
            const int c = tid + i * 128, row = c >> 4, col = (c & 15) * 8;
            *reinterpret_cast<uint4*>(Bs + row * B_LD + col) =
                *reinterpret_cast<const uint4*>(B + (size_t)(k0 + row) * N + bn + col);
        }
        __syncthreads();
        gemm::warp_mma_64x64<T, BK>(acc, As + wm * 64 * A_LD, A_LD, Bs + wn * 64, B_LD, lane);
        __syncthreads();
    }
    const int row0 = bm + wm * 64;
    gemm::store_warp_64x64<T>(acc, C + (size_t)row0 * N + bn + wn * 64, N, row0, M, lane);
}

extern "C" __global__ void __launch_bounds__(128)
    gemm_tc_mma_smem_f16(const __half* __restrict__ A, const __half* __restrict__ B,
                         __half* __restrict__ C, int M, int N, int K) {
    mma_smem<__half>(A, B, C, M, N, K);
}

extern "C" __global__ void __launch_bounds__(128)
    gemm_tc_mma_smem_bf16(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
                          __nv_bfloat16* __restrict__ C, int M, int N, int K) {
    mma_smem<__nv_bfloat16>(A, B, C, M, N, K);
}
