// Tensor-core GEMM step 2 (f16/bf16 in, f32 accumulate): the mma.sync/ldmatrix warp tile of
// step 1 (64x64 per warp) fed by a STAGES-deep cp.async pipeline: while the tensor cores work
// on k-tile kt, the copies of tiles kt+1 .. kt+STAGES-1 are in flight; one barrier per k-tile.
// Padded shared-memory rows (conflict-free ldmatrix), grouped block order for L2 reuse.
// Variants: 128x128 tile, 4 warps, 4 stages (2 blocks/SM); 128x256 tile, 8 warps, 3 stages.
// Any M (rows past M zero-filled by cp.async src-size 0, never stored); N % BN == 0,
// K % 32 == 0. Dynamic shared memory (see smem_bytes in the host wrapper); 1-D grid of
// (N/BN) * ceil(M/BM) blocks.
#include "gemm_tc_mma.cuh"

template <typename T, int BM, int BN, int STAGES>
__device__ __forceinline__ void mma_pipelined(const T* __restrict__ A, const T* __restrict__ B,
                                              T* __restrict__ C, int M, int N, int K) {
    constexpr int BK = 32;
    constexpr int WARPS_N = BN / 64;
    constexpr int THREADS = (BM / 64) * WARPS_N * 32;
    constexpr int A_LD = BK + 8, B_LD = BN + 8;
    constexpr int A_STAGE = BM * A_LD, B_STAGE = BK * B_LD;
    constexpr int A_CHUNKS = BM * BK / 8 / THREADS, B_CHUNKS = BK * BN / 8 / THREADS;
    static_assert(A_CHUNKS * THREADS * 8 == BM * BK, "A tile must split evenly into 16 B chunks");
    static_assert(B_CHUNKS * THREADS * 8 == BK * BN, "B tile must split evenly into 16 B chunks");
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T* As = reinterpret_cast<T*>(smem_raw);
    T* Bs = As + STAGES * A_STAGE;

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = warp / WARPS_N, wn = warp % WARPS_N;
    const int grid_m = (M + BM - 1) / BM, grid_n = N / BN;
    int pid_m, pid_n;
    gemm::grouped_block<8>(blockIdx.x, grid_m, grid_n, pid_m, pid_n);
    const int bm = pid_m * BM, bn = pid_n * BN;
    const int KT = K / BK;

    auto load_tile = [&](int stage, int kt) {
        const int k0 = kt * BK;
        T* as = As + stage * A_STAGE;
        T* bs = Bs + stage * B_STAGE;
#pragma unroll
        for (int i = 0; i < A_CHUNKS; ++i) {
            const int c = tid + i * THREADS, row = c >> 2, col = (c & 3) * 8;
            const bool ok = bm + row < M;
            const T* src = A + (size_t)(ok ? bm + row : 0) * K + k0 + col;
            gemm::cp_async_16_zfill(as + row * A_LD + col, src, ok);
        }
#pragma unroll
        for (int i = 0; i < B_CHUNKS; ++i) {
            const int c = tid + i * THREADS, row = c / (BN / 8), col = (c % (BN / 8)) * 8;
            gemm::cp_async_16(bs + row * B_LD + col, B + (size_t)(k0 + row) * N + bn + col);
        }
    };

    float acc[4][8][4] = {};
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < KT) load_tile(s, s);
        gemm::cp_async_commit();  // empty groups keep the wait count uniform
    }
    for (int kt = 0; kt < KT; ++kt) {
        gemm::cp_async_wait<STAGES - 2>();  // tile kt has landed (for this thread)...
        __syncthreads();  // ...for all threads, and everyone is done with tile kt-1's stage
        const int next = kt + STAGES - 1;
        if (next < KT) load_tile(next % STAGES, next);
        gemm::cp_async_commit();
        const int stage = kt % STAGES;
        gemm::warp_mma_64x64<T, BK>(acc, As + stage * A_STAGE + wm * 64 * A_LD, A_LD,
                                    Bs + stage * B_STAGE + wn * 64, B_LD, lane);
    }
    gemm::cp_async_wait<0>();
    const int row0 = bm + wm * 64;
    gemm::store_warp_64x64<T>(acc, C + (size_t)row0 * N + bn + wn * 64, N, row0, M, lane);
}

#define INSTANTIATE(NAME, T, BM, BN, STAGES)                                                   \
    extern "C" __global__ void __launch_bounds__((BM / 64) * (BN / 64) * 32)                   \
        NAME(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C, int M, int N, \
             int K) {                                                                           \
        mma_pipelined<T, BM, BN, STAGES>(A, B, C, M, N, K);                                     \
    }

INSTANTIATE(gemm_tc_mma_pipelined_128x128_f16, __half, 128, 128, 4)
INSTANTIATE(gemm_tc_mma_pipelined_128x128_bf16, __nv_bfloat16, 128, 128, 4)
INSTANTIATE(gemm_tc_mma_pipelined_128x256_f16, __half, 128, 256, 3)
INSTANTIATE(gemm_tc_mma_pipelined_128x256_bf16, __nv_bfloat16, 128, 256, 3)
