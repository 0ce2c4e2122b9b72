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
#include "gemm_common.cuh"

namespace {

constexpr int BM = 128, BN = 256, BK = 64, STAGES = 4, THREADS = 256;
constexpr int A_BYTES = BM * BK * 2;   // 16 KiB: 128 rows of 128 B
constexpr int B_BYTES = BK * BN * 2;   // 32 KiB: 4 column chunks of 64 x (64 rows of 128 B)
constexpr int B_CHUNK_BYTES = BK * 128;  // one 64-column chunk of B: 8 KiB

// Shared-memory matrix descriptor field: address bits [17:4].
__device__ __forceinline__ uint64_t enc(uint32_t x) { return (uint64_t)((x & 0x3FFFF) >> 4); }

// 128B-swizzle descriptor: start address, leading byte offset, stride byte offset (8 rows).
__device__ __forceinline__ uint64_t make_desc(uint32_t addr, uint32_t lbo) {
    return enc(addr) | (enc(lbo) << 16) | (enc(1024) << 32) | (1ull << 62);
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_wait0() { asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory"); }
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

template <typename T>
struct Wgmma;

// D[64x256] += A[64x16] (K-major, smem) * B[16x256] (N-major, smem), f32 accumulators.
// One specialization per input type; only the PTX type suffix differs.
#define WGMMA_M64N256K16(CTYPE, PTYPE) \
template <> \
struct Wgmma<CTYPE> { \
    __device__ __forceinline__ static void run(float (&d)[128], uint64_t desc_a, uint64_t desc_b) { \
    asm volatile( \
        "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n" \
        "wgmma.mma_async.sync.aligned.m64n256k16.f32." PTYPE "." PTYPE " " \
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, %128, %129, p, 1, 1, 0, 1;\n}\n" \
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), \
          "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), \
          "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), \
          "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), \
          "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), \
          "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), \
          "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), \
          "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), \
          "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127]) \
        : "l"(desc_a), "l"(desc_b)); \
    } \
};

WGMMA_M64N256K16(__nv_bfloat16, "bf16")
WGMMA_M64N256K16(__half, "f16")
#undef WGMMA_M64N256K16

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
            Wgmma<T>::run(d, make_desc(a_tile + t * 32, 16), make_desc(b_tile + t * 2048, B_CHUNK_BYTES));
        wgmma_commit();
        wgmma_wait0();
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
