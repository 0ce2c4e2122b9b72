// Shared device helpers for the GEMM kernels (gemm_*.cu): cp.async, ldmatrix, mma.sync, packing.
// Convention for every GEMM kernel: C[M,N] = A[M,K] * B[K,N], all row-major, f32 accumulation.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

namespace gemm {

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16-byte asynchronous global->shared copy, cached in L2 only (.cg).
__device__ __forceinline__ void cp_async_16(void* dst_smem, const void* src_gmem) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_addr(dst_smem)),
                 "l"(src_gmem));
}

// Same, but writes 16 zero bytes when `valid` is false (src-size 0: nothing is read).
__device__ __forceinline__ void cp_async_16_zfill(void* dst_smem, const void* src_gmem, bool valid) {
    int src_bytes = valid ? 16 : 0;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst_smem)),
                 "l"(src_gmem), "r"(src_bytes));
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }

// Waits until at most N of this thread's committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// Four 8x8 b16 matrices; lanes 8i..8i+7 give the row addresses of matrix i.
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const void* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr(p)));
}

// The same, each matrix transposed on the way (for B stored k-major: rows are k).
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], const void* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr(p)));
}

template <typename T>
struct Mma;

// D[16x8] += A[16x16] * B[16x8], f16 inputs, f32 accumulators.
template <>
struct Mma<__half> {
    __device__ __forceinline__ static void run(float (&d)[4], const uint32_t (&a)[4],
                                               const uint32_t (&b)[2]) {
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
            "{%8,%9}, {%0,%1,%2,%3};\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    }
};

// The bf16 version; fragment layouts are identical to f16.
template <>
struct Mma<__nv_bfloat16> {
    __device__ __forceinline__ static void run(float (&d)[4], const uint32_t (&a)[4],
                                               const uint32_t (&b)[2]) {
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
            "{%8,%9}, {%0,%1,%2,%3};\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    }
};

// Two f32 values rounded to a packed pair of 16-bit floats (round to nearest even).
__device__ __forceinline__ uint32_t pack2(float lo, float hi, __half) {
    __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<uint32_t*>(&h);
}
__device__ __forceinline__ uint32_t pack2(float lo, float hi, __nv_bfloat16) {
    __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t*>(&h);
}

// One f32 value rounded to a 16-bit float (round to nearest even), as its bits.
__device__ __forceinline__ uint16_t bits16(float x, __half) { return __half_as_ushort(__float2half_rn(x)); }
__device__ __forceinline__ uint16_t bits16(float x, __nv_bfloat16) {
    return __bfloat16_as_ushort(__float2bfloat16_rn(x));
}

// Grouped ("swizzled") block order: GROUP_M block-rows walk across N together so the
// A rows and B columns they share stay in L2. Returns (block_m, block_n) for a 1-D grid.
template <int GROUP_M>
__device__ __forceinline__ void grouped_block(int pid, int grid_m, int grid_n, int& pid_m,
                                              int& pid_n) {
    const int in_group = GROUP_M * grid_n;
    const int group = pid / in_group;
    const int first_m = group * GROUP_M;
    const int rows = min(grid_m - first_m, GROUP_M);
    pid_m = first_m + (pid % in_group) % rows;
    pid_n = (pid % in_group) / rows;
}

}  // namespace gemm
