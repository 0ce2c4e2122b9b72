// The warp-level inner step shared by the mma.sync GEMM kernels: one BK = 32 slice of a
// shared-memory A tile (row-major, padded rows) and B tile (k-major, padded rows) multiplied
// into a 64x64 warp tile of f32 accumulators with ldmatrix + mma.sync.m16n8k16.
#pragma once
#include "gemm_common.cuh"

namespace gemm {

// acc[i][j]: the 16x8 accumulator tile at rows 16i, cols 8j of the warp's 64x64 tile.
// as: A tile at the warp's first row, row stride a_ld elements; bs: B tile at the warp's first
// column, row stride b_ld elements. Lane layout of acc (PTX m16n8 C fragment): rows
// lane/4 and lane/4 + 8, columns 2*(lane%4) and +1.
template <typename T, int BK>
__device__ __forceinline__ void warp_mma_64x64(float (&acc)[4][8][4], const T* as, int a_ld,
                                               const T* bs, int b_ld, int lane) {
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
        uint32_t af[4][4], bf[8][2];
        // A: matrices (rows 0-7 | 8-15) x (k 0-7 | 8-15); lane l gives row l%16, k 8*(l/16).
#pragma unroll
        for (int i = 0; i < 4; ++i)
            ldmatrix_x4(af[i], as + (i * 16 + (lane & 15)) * a_ld + kk + (lane >> 4) * 8);
        // B: each x4.trans covers k 0-15 x n 0-15 = the b0/b1 registers of two n8 tiles.
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            uint32_t r[4];
            ldmatrix_x4_trans(r, bs + (kk + (lane & 15)) * b_ld + j * 16 + (lane >> 4) * 8);
            bf[2 * j][0] = r[0];
            bf[2 * j][1] = r[1];
            bf[2 * j + 1][0] = r[2];
            bf[2 * j + 1][1] = r[3];
        }
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int j = 0; j < 8; ++j) Mma<T>::run(acc[i][j], af[i], bf[j]);
    }
}

// Writes a warp's 64x64 f32 accumulators as T, rows >= M skipped. c points at the warp's
// first output element (row-major, row stride N); row0 is that element's row.
template <typename T>
__device__ __forceinline__ void store_warp_64x64(const float (&acc)[4][8][4], T* c, int N,
                                                 int row0, int M, int lane) {
    const int r = lane >> 2, cc = (lane & 3) * 2;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int row = i * 16 + r + h * 8;
            if (row0 + row < M) {
                T* dst = c + (size_t)row * N + cc;
#pragma unroll
                for (int j = 0; j < 8; ++j)
                    *reinterpret_cast<uint32_t*>(dst + j * 8) =
                        pack2(acc[i][j][2 * h], acc[i][j][2 * h + 1], T());
            }
        }
    }
}

}  // namespace gemm
