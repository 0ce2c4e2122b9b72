// Tensor-core GEMM step 3 (f16/bf16 in, f32 accumulate): Hopper warpgroup MMA (wgmma, sm_90a).
// Block tile 128x256x64, 2 warpgroups (256 threads); warpgroup g multiplies rows 64g..64g+63
// by the whole 256-wide B tile with wgmma.mma_async.m64n256k16, both operands read by the
// tensor cores straight from shared memory through matrix descriptors (A K-major, B N-major,
// i.e. B stays row-major [K,N] and the instruction transposes it). Tiles arrive by a 4-stage
// cp.async pipeline into the 128-byte-swizzled layout wgmma expects (16-byte chunk c of row r
// stored at chunk c ^ (r % 8) inside each 1024-byte atom), 1024-byte aligned.
// Any M (rows past M zero-filled, never stored); needs N % 256 == 0, K % 64 == 0.
// Dynamic shared memory: 4 x (16 KiB A + 32 KiB B) + 1 KiB alignment slack = 197632 bytes.
// 1-D grid of (N/256) * ceil(M/128) blocks, grouped order.
#include "gemm_hopper.cuh"

namespace {

using namespace hopper;

constexpr int BM = 128, BN = 256, BK = 64, STAGES = 4, THREADS = 256;
constexpr int A_BYTES = BM * BK * 2;   // 16 KiB: 128 rows of 128 B
constexpr int B_BYTES = BK * BN * 2;   // 32 KiB: 4 column chunks of 64 x (64 rows of 128 B)
constexpr int B_CHUNK_BYTES = BK * 128;  // one 64-column chunk of B: 8 KiB

template <typename T>
__device__ __forceinline__ void wgmma_gemm(const T* __restrict__ A, const T* __restrict__ B,
                                           T* __restrict__ C, int M, int N, int K) {
    extern __shared__ __align__(16) unsigned char smem_raw[];
    // Swizzling works on address bits 4..9: align the tiles to 1024 bytes.
    const uint32_t raw = gemm::smem_addr(smem_raw);
    const uint32_t base = (raw + 1023u) & ~1023u;
    unsigned char* smem = smem_raw + (base - raw);
    const uint32_t a_base = base, b_base = base + STAGES * A_BYTES;

    const int tid = threadIdx.x, wg = tid / 128, lane = tid & 31, warp_in_wg = (tid / 32) & 3;
    const int grid_m = (M + BM - 1) / BM, grid_n = N / BN;
    int pid_m, pid_n;
    gemm::grouped_block<8>(blockIdx.x, grid_m, grid_n, pid_m, pid_n);
    const int bm = pid_m * BM, bn = pid_n * BN;
    const int KT = K / BK;

    auto load_tile = [&](int stage, int kt) {
        const int k0 = kt * BK;
        unsigned char* as = smem + stage * A_BYTES;
        unsigned char* bs = smem + STAGES * A_BYTES + stage * B_BYTES;
#pragma unroll
        for (int i = 0; i < BM * BK / 8 / THREADS; ++i) {  // 4 chunks: row r, 16 B piece c
            const int idx = tid + i * THREADS, r = idx >> 3, c = idx & 7;
            const bool ok = bm + r < M;
            const T* src = A + (size_t)(ok ? bm + r : 0) * K + k0 + c * 8;
            gemm::cp_async_16_zfill(as + r * 128 + ((c ^ (r & 7)) << 4), src, ok);
        }
#pragma unroll
        for (int i = 0; i < BK * BN / 8 / THREADS; ++i) {  // 8 chunks: k row, 16 B piece c16
            const int idx = tid + i * THREADS, k = idx >> 5, c16 = idx & 31;
            const int j = c16 >> 3, c = c16 & 7;
            gemm::cp_async_16(bs + j * B_CHUNK_BYTES + k * 128 + ((c ^ (k & 7)) << 4),
                              B + (size_t)(k0 + k) * N + bn + c16 * 8);
        }
    };

    float d[128];
#pragma unroll
    for (int i = 0; i < 128; ++i) d[i] = 0.f;

#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < KT) load_tile(s, s);
        gemm::cp_async_commit();
    }
    for (int kt = 0; kt < KT; ++kt) {
        gemm::cp_async_wait<STAGES - 2>();  // this thread's copies of tile kt have landed
        fence_proxy_async();                // ...and are visible to the tensor cores' proxy
        __syncthreads();  // all copies of tile kt; every warpgroup finished tile kt-1's wgmma
        const int next = kt + STAGES - 1;
        if (next < KT) load_tile(next % STAGES, next);
        gemm::cp_async_commit();
        const int stage = kt % STAGES;
        const uint32_t a_tile = a_base + stage * A_BYTES + wg * 64 * 128;
        const uint32_t b_tile = b_base + stage * B_BYTES;
        wgmma_fence();
#pragma unroll
        for (int t = 0; t < BK / 16; ++t)
            Wgmma<T, BN>::template run<0, 1>(d, make_desc(a_tile + t * 32, 16), make_desc(b_tile + t * 2048, B_CHUNK_BYTES));
        wgmma_commit();
        wgmma_wait<0>();
    }
    gemm::cp_async_wait<0>();

    // Accumulator layout (m64nNk16 D fragment): warp w of the warpgroup holds rows 16w..16w+15;
    // d[4i + 0/1] at (row lane/4, cols 8i + 2(lane%4) + 0/1), d[4i + 2/3] at row lane/4 + 8.
    const int row = bm + wg * 64 + warp_in_wg * 16 + (lane >> 2);
    const int col = bn + 2 * (lane & 3);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const int r = row + 8 * h;
        if (r < M) {
            T* dst = C + (size_t)r * N + col;
#pragma unroll
            for (int i = 0; i < 32; ++i)
                *reinterpret_cast<uint32_t*>(dst + 8 * i) = gemm::pack2(d[4 * i + 2 * h], d[4 * i + 2 * h + 1], T());
        }
    }
}

}  // namespace

extern "C" __global__ void __launch_bounds__(THREADS, 1)
    gemm_tc_wgmma_128x256_bf16(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
                               __nv_bfloat16* __restrict__ C, int M, int N, int K) {
    wgmma_gemm<__nv_bfloat16>(A, B, C, M, N, K);
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
    gemm_tc_wgmma_128x256_f16(const __half* __restrict__ A, const __half* __restrict__ B,
                              __half* __restrict__ C, int M, int N, int K) {
    wgmma_gemm<__half>(A, B, C, M, N, K);
}
