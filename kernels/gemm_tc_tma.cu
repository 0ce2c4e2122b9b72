// Tensor-core GEMM steps 4-7 (f16/bf16 in, f32 accumulate) on Hopper: tiles arrive by TMA
// (tensor maps built on the host, 128-byte swizzle, out-of-bounds boxes zero-filled) into a
// ring of STAGES shared-memory stages guarded by mbarriers (full: the bytes landed; empty:
// every consumer warpgroup finished reading). Consumer warpgroup c multiplies rows 64c..64c+63
// of the block tile by the whole BN-wide B tile with wgmma m64nBNk16, keeping one wgmma group
// in flight. C = A[M,K] * B, row-major. B is either [K,N] (tiles read N-major, the transpose
// bit set) or, with NK, [N,K] like a linear layer's weight (C = A * W^T): then a B tile is BN
// rows of 64 k, K-major like A's, one TMA box, and wgmma reads it untransposed.
//
// One template, four ideas switched on or off:
//   WS       a producer warpgroup (one thread issuing TMA, registers given to the consumers by
//            setmaxnreg) instead of consumer thread 0 issuing loads between its own MMAs;
//   units    the grid walks work units (tile, K split) in steps of gridDim: launched with one
//            CTA per unit it is a plain grid, with one CTA per SM it is persistent, and the
//            producer streams the next unit's tiles while the consumers store the last one;
//   CLUSTER  2 CTAs on vertically adjacent tiles share one B tile: each loads half of it and
//            TMA multicasts it into both CTAs' shared memory;
//   splits   K split over `splits` units per tile, the partial tiles summed through an f32
//            workspace by the last unit of each tile to arrive (split_reduce).
// A second template, tma_gemm_swap, swaps the operands for products of few rows (tokens).
// Needs N % 8 == 0 and K % 8 == 0 (TMA strides are multiples of 16 bytes); any M.
#include "gemm_hopper.cuh"

namespace {

using namespace hopper;

constexpr int BK = 64;

// Split-K: this unit's partial tile (ACC f32 per thread of THREADS consumers) meets the other
// ranges' in the f32 workspace, in float4 chunks (chunk q of thread t at q * THREADS + t: a warp
// moves 512 contiguous bytes). With atomics, every unit adds into one zeroed tile and the last
// to arrive (a per-tile counter) reads the sum and zeroes it for the next launch; with slots,
// every unit stores its partial in its own slot and the last adds the others' to its registers.
// Chunks for which chunk_in(q) is false (all past M or N) are neither written nor read.
// Returns true in the last unit of the tile, whose d then holds the whole sum.
template <int ACC, int THREADS, typename ChunkIn>
__device__ __forceinline__ bool split_reduce(float (&d)[ACC], float* __restrict__ ws, int* __restrict__ counters,
                                             int tile_id, int split, int splits, int slots, ChunkIn chunk_in,
                                             volatile int* last_flag, int ctid) {
    constexpr int TILE_F4 = ACC * THREADS / 4;
    float4* wt = reinterpret_cast<float4*>(ws) + (size_t)tile_id * TILE_F4 * (slots ? splits : 1);
    float4* mine = slots ? wt + (size_t)split * TILE_F4 : wt;
#pragma unroll
    for (int q = 0; q < ACC / 4; ++q) {
        if (!chunk_in(q)) continue;
        const float4 v = make_float4(d[4 * q], d[4 * q + 1], d[4 * q + 2], d[4 * q + 3]);
        if (slots)
            __stcg(mine + q * THREADS + ctid, v);
        else
            atomicAdd(mine + q * THREADS + ctid, v);
    }
    __threadfence();
    hopper::named_barrier(1, THREADS);
    if (ctid == 0) {
        const int last = atomicAdd(counters + tile_id, 1) == splits - 1;
        if (last) counters[tile_id] = 0;
        *last_flag = last;
    }
    hopper::named_barrier(1, THREADS);
    const bool last = *last_flag != 0;
    hopper::named_barrier(1, THREADS);
    if (!last) return false;
    __threadfence();
    if (slots) {
        for (int j = 0; j < splits; ++j) {
            if (j == split) continue;
            const float4* other = wt + (size_t)j * TILE_F4;
#pragma unroll
            for (int q = 0; q < ACC / 4; ++q) {
                if (!chunk_in(q)) continue;
                const float4 v = __ldcg(other + q * THREADS + ctid);
                d[4 * q] += v.x;
                d[4 * q + 1] += v.y;
                d[4 * q + 2] += v.z;
                d[4 * q + 3] += v.w;
            }
        }
    } else {
#pragma unroll
        for (int q = 0; q < ACC / 4; ++q) {
            if (!chunk_in(q)) continue;
            float4* p = wt + q * THREADS + ctid;
            const float4 v = __ldcg(p);
            d[4 * q] = v.x;
            d[4 * q + 1] = v.y;
            d[4 * q + 2] = v.z;
            d[4 * q + 3] = v.w;
            __stcg(p, make_float4(0.f, 0.f, 0.f, 0.f));
        }
    }
    return true;
}

template <int CONS, int BN, int STAGES>
struct Tile {
    static constexpr int BM = 64 * CONS;
    static constexpr int A_BYTES = BM * BK * 2;  // BM rows of 128 B
    static constexpr int B_BYTES = BK * BN * 2;  // BN/64 boxes of 64 k-rows x 128 B
    static constexpr int B_BOX_BYTES = BK * 128;
    static constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
    static constexpr int ACC = BN / 2;  // f32 accumulators per consumer thread (64 x BN / 128)
    static constexpr int CONSUMER_THREADS = 128 * CONS;
    // Epilogue staging: two 64 x 64 subtiles of C (64 rows of 128 B) per consumer warpgroup.
    static constexpr int EPI_SUB_BYTES = 64 * 128;
    static constexpr int EPI_BYTES = CONS * 2 * EPI_SUB_BYTES;
    // The host's tma_smem_bytes (src/gemm/splitk.rs) counts the same pieces.
    static_assert(STAGES * STAGE_BYTES + 1024 + 16 * STAGES + 16 + 128 + EPI_BYTES <= 227 * 1024,
                  "stage ring + barriers + epilogue subtiles exceed 227 KiB");
};

template <typename T, int CONS, int BN, int STAGES, bool WS, int CLUSTER, bool NK>
__device__ __forceinline__ void tma_gemm(const TmaDesc* ta, const TmaDesc* tb, T* __restrict__ C, int M, int N,
                                         int K, int splits, int slots, float* __restrict__ ws, int* __restrict__ counters) {
    using TL = Tile<CONS, BN, STAGES>;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    // The 128-byte swizzle pattern repeats every 1024 bytes: align the tiles to it.
    const uint32_t raw = gemm::smem_addr(smem_raw);
    const uint32_t base = (raw + 1023u) & ~1023u;
    const uint32_t a_base = base, b_base = base + STAGES * TL::A_BYTES;
    const uint32_t bars = b_base + STAGES * TL::B_BYTES;
    auto full = [&](int s) { return bars + 8u * s; };
    auto empty = [&](int s) { return bars + 8u * (STAGES + s); };
    volatile int* last_flag = reinterpret_cast<volatile int*>(smem_raw + (bars + 16u * STAGES - raw));
    const uint32_t epi = (bars + 16u * STAGES + 16u + 127u) & ~127u;  // the epilogue's subtiles

    const int tid = threadIdx.x;
    const uint32_t rank = CLUSTER > 1 ? cluster_rank() : 0;
    if (tid == 0) {
        prefetch_tma_desc(ta);
        prefetch_tma_desc(tb);
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(full(s), 1);
            mbar_init(empty(s), CONS * CLUSTER);
        }
        fence_barrier_init();
    }
    if constexpr (CLUSTER > 1) {
        cluster_sync();
    } else {
        __syncthreads();
    }

    const int grid_m = (M + TL::BM - 1) / TL::BM, grid_n = (N + BN - 1) / BN;
    const int grid_mc = (grid_m + CLUSTER - 1) / CLUSTER;
    const int KT = (K + BK - 1) / BK;
    const int units = grid_mc * grid_n * splits;
    const int first_unit = blockIdx.x / CLUSTER, unit_step = gridDim.x / CLUSTER;

    // Unit u: its output tile (grouped order for L2 reuse) and its K range.
    auto coords = [&](int u, int& m_tile, int& n_tile, int& split, int& kt0, int& kt1) {
        const int tile = u / splits;
        split = u - tile * splits;
        int pm, pn;
        gemm::grouped_block<8>(tile, grid_mc, grid_n, pm, pn);
        m_tile = pm * CLUSTER + (int)rank;
        n_tile = pn;
        kt0 = (int)((long long)split * KT / splits);
        kt1 = (int)((long long)(split + 1) * KT / splits);
    };

    // The it-th k-tile of this CTA into stage it % STAGES, once its previous contents are read.
    auto issue = [&](int it, int m_tile, int n_tile, int kt) {
        const int s = it % STAGES;
        if (it >= STAGES) mbar_wait(empty(s), ((it / STAGES) + 1) & 1);
        mbar_expect_tx(full(s), TL::STAGE_BYTES);
        tma_load_2d(a_base + s * TL::A_BYTES, ta, full(s), kt * BK, m_tile * TL::BM);
        const uint32_t b_stage = b_base + s * TL::B_BYTES;
        if constexpr (NK) {
            // BN rows of 128 B; in a cluster each CTA loads BN / CLUSTER of them for both.
            constexpr int ROWS = BN / CLUSTER;
            if constexpr (CLUSTER == 1)
                tma_load_2d(b_stage, tb, full(s), kt * BK, n_tile * BN);
            else
                tma_load_2d_multicast(b_stage + rank * ROWS * 128, tb, full(s), kt * BK,
                                      n_tile * BN + (int)rank * ROWS, (uint16_t)((1u << CLUSTER) - 1));
        } else if constexpr (CLUSTER == 1) {
#pragma unroll
            for (int j = 0; j < BN / 64; ++j)
                tma_load_2d(b_stage + j * TL::B_BOX_BYTES, tb, full(s), n_tile * BN + 64 * j, kt * BK);
        } else {
            constexpr int PER = BN / 64 / CLUSTER;
#pragma unroll
            for (int i = 0; i < PER; ++i) {
                const int j = (int)rank * PER + i;
                tma_load_2d_multicast(b_stage + j * TL::B_BOX_BYTES, tb, full(s), n_tile * BN + 64 * j, kt * BK,
                                      (uint16_t)((1u << CLUSTER) - 1));
            }
        }
    };

    // Stage s may be refilled: one arrival per consumer warpgroup, on every CTA that writes it.
    auto release = [&](int s, int ctid) {
        if ((ctid & 127) == 0) {
            if constexpr (CLUSTER == 1) {
                mbar_arrive(empty(s));
            } else {
#pragma unroll
                for (int r = 0; r < CLUSTER; ++r) mbar_arrive_cluster(empty(s), r);
            }
        }
    };

    // Accumulator layout (m64nNk16 D fragment): warp w of the warpgroup holds rows 16w..16w+15;
    // d[4i + 0/1] at (row lane/4, cols 8i + 2(lane%4) + 0/1), d[4i + 2/3] at row lane/4 + 8.
    // A fragment store would put 4-byte pieces of 8 rows in each warp instruction, so C goes
    // out through shared memory in 64 x 64 subtiles: written in the fragment layout (row r's
    // 16-byte chunk j at chunk j ^ (r % 8): no bank conflicts), then read back as whole 16-byte
    // chunks, so each warp stores four full 128-byte rows. The warpgroup's two subtile buffers
    // alternate over every subtile it stores (`sub` counts them), so one warpgroup barrier per
    // subtile orders the reuse of each buffer.
    auto store = [&](const float (&d)[TL::ACC], int m_tile, int n_tile, int c, int ctid, int& sub) {
        const int t = ctid & 127, lane = ctid & 31, warp = (ctid >> 5) & 3;
        const int row0 = m_tile * TL::BM + c * 64;
#pragma unroll
        for (int p = 0; p < BN / 64; ++p, ++sub) {
            const uint32_t buf = epi + (uint32_t)(c * 2 + (sub & 1)) * TL::EPI_SUB_BYTES;
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int r = warp * 16 + 8 * h + (lane >> 2);
#pragma unroll
                for (int j = 0; j < 8; ++j) {
                    const int i = 8 * p + j;
                    st_shared_u32(buf + r * 128 + ((j ^ (r & 7)) << 4) + 4 * (lane & 3),
                                  gemm::pack2(d[4 * i + 2 * h], d[4 * i + 2 * h + 1], T()));
                }
            }
            named_barrier(2 + c, 128);
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                const int r = q * 16 + (t >> 3), j = t & 7;
                const uint4 v = ld_shared_v4(buf + r * 128 + ((j ^ (r & 7)) << 4));
                const int row = row0 + r, col = n_tile * BN + 64 * p + 8 * j;
                if (row < M && col < N) *reinterpret_cast<uint4*>(C + (size_t)row * N + col) = v;
            }
        }
    };

    if (WS && tid < 128) {
        // Producer warpgroup: one thread streams every unit's k-tiles.
        if constexpr (WS && CONS == 2) regs_shrink<40>();
        if (tid == 0) {
            int it = 0;
            for (int u = first_unit; u < units; u += unit_step) {
                int m_tile, n_tile, split, kt0, kt1;
                coords(u, m_tile, n_tile, split, kt0, kt1);
                for (int kt = kt0; kt < kt1; ++kt) issue(it++, m_tile, n_tile, kt);
            }
        }
    } else {
        if constexpr (WS && CONS == 2) regs_grow<232>();
        const int ctid = WS ? tid - 128 : tid;
        const int c = ctid >> 7;
        int it = 0, sub = 0;
        for (int u = first_unit; u < units; u += unit_step) {
            int m_tile, n_tile, split, kt0, kt1;
            coords(u, m_tile, n_tile, split, kt0, kt1);
            if constexpr (!WS) {
                if (tid == 0)
                    for (int i = 0; i < STAGES && kt0 + i < kt1; ++i) issue(it + i, m_tile, n_tile, kt0 + i);
            }
            float d[TL::ACC];
#pragma unroll
            for (int i = 0; i < TL::ACC; ++i) d[i] = 0.f;
            for (int kt = kt0; kt < kt1; ++kt, ++it) {
                const int s = it % STAGES;
                mbar_wait(full(s), (it / STAGES) & 1);
                const uint32_t a_tile = a_base + s * TL::A_BYTES + c * 64 * 128;
                const uint32_t b_tile = b_base + s * TL::B_BYTES;
                fence_operands(d);
                wgmma_fence();
#pragma unroll
                for (int t = 0; t < BK / 16; ++t) {
                    if constexpr (NK)
                        Wgmma<T, BN>::template run<0, 0>(d, make_desc(a_tile + t * 32, 16), make_desc(b_tile + t * 32, 16));
                    else
                        Wgmma<T, BN>::template run<0, 1>(d, make_desc(a_tile + t * 32, 16),
                                                      make_desc(b_tile + t * 2048, TL::B_BOX_BYTES));
                }
                wgmma_commit();
                wgmma_wait<1>();  // the previous k-tile's group is done: its stage can go
                fence_operands(d);
                if (kt > kt0) {
                    const int prev = (it - 1) % STAGES;
                    release(prev, ctid);
                    if constexpr (!WS) {
                        if (tid == 0 && kt - 1 + STAGES < kt1) issue(it - 1 + STAGES, m_tile, n_tile, kt - 1 + STAGES);
                    }
                }
            }
            wgmma_wait<0>();
            fence_operands(d);
            if (kt1 > kt0) release((it - 1) % STAGES, ctid);

            if (CLUSTER == 1 && splits > 1) {
                const bool rows_in = m_tile * TL::BM + c * 64 + ((ctid >> 5) & 3) * 16 + ((ctid & 31) >> 2) < M;
                const int col0 = n_tile * BN + 2 * (ctid & 3);
                auto chunk_in = [&](int q) { return rows_in && col0 + 8 * q < N; };
                if (!split_reduce<TL::ACC, TL::CONSUMER_THREADS>(d, ws, counters, m_tile * grid_n + n_tile, split,
                                                                 splits, slots, chunk_in, last_flag, ctid))
                    continue;
            }
            store(d, m_tile, n_tile, c, ctid, sub);
        }
    }
    // No CTA may leave while its cluster peer can still multicast into it or arrive on it.
    if constexpr (CLUSTER > 1) cluster_sync();
}


// Operand-swapped kernel for products of few rows (tokens): C^T = B^T * A^T, so an output tile
// is 64 columns of C (64 weight rows: wgmma's M side) by BT rows of C (tokens: its N side,
// m64nBTk16), as libraries do for skinny products. One consumer warpgroup, a producer
// warpgroup, and a deep ring of small stages (64 x 64 of B plus BT x 64 of A). B [K,N] tiles
// are read M-major (the transpose bit on A), [N,K] tiles K-major; A's tile is the K-major B
// operand. Units and the K split are those of tma_gemm. A stage holds KS k-tiles of 64 side by
// side, so each row of A and W is read KS x 128 contiguous bytes at a time (fewer DRAM pages
// opened per byte when the operands come from DRAM).
template <typename T, int BT, int STAGES, bool NK, int KS>
__device__ __forceinline__ void tma_gemm_swap(const TmaDesc* ta, const TmaDesc* tb, T* __restrict__ C, int M, int N,
                                              int K, int splits, int slots, float* __restrict__ ws,
                                              int* __restrict__ counters) {
    constexpr int W_BYTES = 64 * BK * 2;
    constexpr int A_BYTES = BT * BK * 2;
    constexpr int ACC = BT / 2;  // f32 accumulators per consumer thread (64 x BT / 128)
    extern __shared__ __align__(16) unsigned char smem_raw[];
    const uint32_t raw = gemm::smem_addr(smem_raw);
    const uint32_t base = (raw + 1023u) & ~1023u;
    const uint32_t w_base = base, a_base = base + STAGES * KS * W_BYTES;
    const uint32_t bars = a_base + STAGES * KS * A_BYTES;
    auto full = [&](int s) { return bars + 8u * s; };
    auto empty = [&](int s) { return bars + 8u * (STAGES + s); };
    volatile int* last_flag = reinterpret_cast<volatile int*>(smem_raw + (bars + 16u * STAGES - raw));
    constexpr int EPI_SUB_BYTES = BT * 128;  // one BT x 64 tile of C; two alternate
    const uint32_t epi = (bars + 16u * STAGES + 16u + 127u) & ~127u;
    static_assert(STAGES * KS * (W_BYTES + A_BYTES) + 1024 + 16 * STAGES + 16 + 128 + 2 * EPI_SUB_BYTES <= 227 * 1024,
                  "stage ring + barriers + epilogue tiles exceed 227 KiB");

    const int tid = threadIdx.x;
    if (tid == 0) {
        prefetch_tma_desc(ta);
        prefetch_tma_desc(tb);
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(full(s), 1);
            mbar_init(empty(s), 1);
        }
        fence_barrier_init();
    }
    __syncthreads();

    const int grid_m = (M + BT - 1) / BT, grid_n = (N + 63) / 64;
    const int KT = (K + BK * KS - 1) / (BK * KS);
    const int units = grid_m * grid_n * splits;
    auto coords = [&](int u, int& m_tile, int& n_tile, int& split, int& kt0, int& kt1) {
        const int tile = u / splits;
        split = u - tile * splits;
        gemm::grouped_block<8>(tile, grid_m, grid_n, m_tile, n_tile);
        kt0 = (int)((long long)split * KT / splits);
        kt1 = (int)((long long)(split + 1) * KT / splits);
    };

    if (tid < 128) {
        if (tid == 0) {
            int it = 0;
            for (int u = blockIdx.x; u < units; u += gridDim.x) {
                int m_tile, n_tile, split, kt0, kt1;
                coords(u, m_tile, n_tile, split, kt0, kt1);
                for (int kt = kt0; kt < kt1; ++kt, ++it) {
                    const int s = it % STAGES;
                    if (it >= STAGES) mbar_wait(empty(s), ((it / STAGES) + 1) & 1);
                    mbar_expect_tx(full(s), KS * (W_BYTES + A_BYTES));
#pragma unroll
                    for (int j = 0; j < KS; ++j) {
                        const int k0 = (kt * KS + j) * BK;
                        if constexpr (NK)
                            tma_load_2d(w_base + (s * KS + j) * W_BYTES, tb, full(s), k0, n_tile * 64);
                        else
                            tma_load_2d(w_base + (s * KS + j) * W_BYTES, tb, full(s), n_tile * 64, k0);
                        tma_load_2d(a_base + (s * KS + j) * A_BYTES, ta, full(s), k0, m_tile * BT);
                    }
                }
            }
        }
        return;
    }
    const int ctid = tid - 128;
    const int lane = ctid & 31, warp = ctid >> 5;
    int it = 0, sub = 0;
    for (int u = blockIdx.x; u < units; u += gridDim.x) {
        int m_tile, n_tile, split, kt0, kt1;
        coords(u, m_tile, n_tile, split, kt0, kt1);
        float d[ACC];
#pragma unroll
        for (int i = 0; i < ACC; ++i) d[i] = 0.f;
        for (int kt = kt0; kt < kt1; ++kt, ++it) {
            const int s = it % STAGES;
            mbar_wait(full(s), (it / STAGES) & 1);
            fence_operands(d);
            wgmma_fence();
#pragma unroll
            for (int j = 0; j < KS; ++j) {
                const uint32_t w_tile = w_base + (s * KS + j) * W_BYTES, a_tile = a_base + (s * KS + j) * A_BYTES;
#pragma unroll
                for (int t = 0; t < BK / 16; ++t) {
                    if constexpr (NK)
                        Wgmma<T, BT>::template run<0, 0>(d, make_desc(w_tile + t * 32, 16), make_desc(a_tile + t * 32, 16));
                    else
                        Wgmma<T, BT>::template run<1, 0>(d, make_desc(w_tile + t * 2048, W_BYTES),
                                                          make_desc(a_tile + t * 32, 16));
                }
            }
            wgmma_commit();
            wgmma_wait<1>();
            fence_operands(d);
            if (kt > kt0 && lane == 0 && warp == 0) mbar_arrive(empty((it - 1) % STAGES));
        }
        wgmma_wait<0>();
        fence_operands(d);
        if (kt1 > kt0 && ctid == 0) mbar_arrive(empty((it - 1) % STAGES));

        // Accumulator (m64nBTk16 D fragment of C^T): d[4q + 2h + e] is C[m0 + 8q + e][n0 + 8h].
        const int n0 = n_tile * 64 + warp * 16 + (lane >> 2);
        const int m0 = m_tile * BT + 2 * (lane & 3);
        if (splits > 1) {
            auto chunk_in = [&](int q) { return n0 < N && m0 + 8 * q < M; };
            if (!split_reduce<ACC, 128>(d, ws, counters, m_tile * grid_n + n_tile, split, splits, slots, chunk_in,
                                        last_flag, ctid))
                continue;
        }
        // C goes out through shared memory: each value into its row of the BT x 64 tile
        // (128-byte rows, chunk j of row r at chunk j ^ (r % 8): no bank conflicts), then whole
        // 16-byte chunks, so each warp stores four full 128-byte rows of C rather than 2-byte
        // pieces of 32. Two buffers alternate over the units: one barrier per unit.
        const uint32_t buf = epi + (uint32_t)(sub++ & 1) * EPI_SUB_BYTES;
#pragma unroll
        for (int q = 0; q < ACC / 4; ++q) {
#pragma unroll
            for (int h = 0; h < 2; ++h) {
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    const int r = 8 * q + e + 2 * (lane & 3), j = warp * 2 + h;
                    st_shared_u16(buf + r * 128 + ((j ^ (r & 7)) << 4) + 2 * (lane >> 2),
                                  gemm::bits16(d[4 * q + 2 * h + e], T()));
                }
            }
        }
        named_barrier(2, 128);
#pragma unroll
        for (int q = 0; q < BT / 16; ++q) {
            const int r = q * 16 + (ctid >> 3), j = ctid & 7;
            const uint4 v = ld_shared_v4(buf + r * 128 + ((j ^ (r & 7)) << 4));
            const int row = m_tile * BT + r, col = n_tile * 64 + 8 * j;
            if (row < M && col < N) *reinterpret_cast<uint4*>(C + (size_t)row * N + col) = v;
        }
    }
}

}  // namespace

// (name, type, consumer warpgroups, BN, stages, producer warpgroup, cluster CTAs, B [N,K])
#define TMA_GEMM(NAME, T, CONS, BN, STAGES, WS, CLUSTER, NK, ATTRS)                                              \
    extern "C" __global__ void ATTRS __launch_bounds__(128 * (CONS + (WS ? 1 : 0)), 1)                        \
        NAME(const __grid_constant__ hopper::TmaDesc ta, const __grid_constant__ hopper::TmaDesc tb,           \
             T* __restrict__ C, int M, int N, int K, int splits, int slots, float* __restrict__ ws,           \
             int* __restrict__ counters) {                                                                   \
        tma_gemm<T, CONS, BN, STAGES, WS, CLUSTER, NK>(&ta, &tb, C, M, N, K, splits, slots, ws, counters);          \
    }

#define NO_ATTRS
#define CLUSTER2 __cluster_dims__(2, 1, 1)

TMA_GEMM(gemm_tc_tma_128x256_bf16, __nv_bfloat16, 2, 256, 4, false, 1, false, NO_ATTRS)
TMA_GEMM(gemm_tc_tma_128x256_f16, __half, 2, 256, 4, false, 1, false, NO_ATTRS)
TMA_GEMM(gemm_tc_tma_ws_128x256_bf16, __nv_bfloat16, 2, 256, 4, true, 1, false, NO_ATTRS)
TMA_GEMM(gemm_tc_tma_ws_128x256_f16, __half, 2, 256, 4, true, 1, false, NO_ATTRS)
TMA_GEMM(gemm_tc_tma_ws_128x128_bf16, __nv_bfloat16, 2, 128, 6, true, 1, false, NO_ATTRS)
TMA_GEMM(gemm_tc_tma_ws_128x128_f16, __half, 2, 128, 6, true, 1, false, NO_ATTRS)
TMA_GEMM(gemm_tc_tma_ws_64x128_bf16, __nv_bfloat16, 1, 128, 8, true, 1, false, NO_ATTRS)
TMA_GEMM(gemm_tc_tma_ws_64x128_f16, __half, 1, 128, 8, true, 1, false, NO_ATTRS)
TMA_GEMM(gemm_tc_tma_ws_128x192_bf16, __nv_bfloat16, 2, 192, 4, true, 1, false, NO_ATTRS)
TMA_GEMM(gemm_tc_tma_ws_128x192_f16, __half, 2, 192, 4, true, 1, false, NO_ATTRS)
TMA_GEMM(gemm_tc_tma_ws_cluster2_128x256_bf16, __nv_bfloat16, 2, 256, 4, true, 2, false, CLUSTER2)
TMA_GEMM(gemm_tc_tma_ws_cluster2_128x256_f16, __half, 2, 256, 4, true, 2, false, CLUSTER2)

// B stored [N,K]: the warp-specialized kernels only.
TMA_GEMM(gemm_tc_tma_ws_128x256_nk_bf16, __nv_bfloat16, 2, 256, 4, true, 1, true, NO_ATTRS)
TMA_GEMM(gemm_tc_tma_ws_128x256_nk_f16, __half, 2, 256, 4, true, 1, true, NO_ATTRS)
TMA_GEMM(gemm_tc_tma_ws_128x128_nk_bf16, __nv_bfloat16, 2, 128, 6, true, 1, true, NO_ATTRS)
TMA_GEMM(gemm_tc_tma_ws_128x128_nk_f16, __half, 2, 128, 6, true, 1, true, NO_ATTRS)
TMA_GEMM(gemm_tc_tma_ws_64x128_nk_bf16, __nv_bfloat16, 1, 128, 8, true, 1, true, NO_ATTRS)
TMA_GEMM(gemm_tc_tma_ws_64x128_nk_f16, __half, 1, 128, 8, true, 1, true, NO_ATTRS)
TMA_GEMM(gemm_tc_tma_ws_128x192_nk_bf16, __nv_bfloat16, 2, 192, 4, true, 1, true, NO_ATTRS)
TMA_GEMM(gemm_tc_tma_ws_128x192_nk_f16, __half, 2, 192, 4, true, 1, true, NO_ATTRS)
TMA_GEMM(gemm_tc_tma_ws_cluster2_128x256_nk_bf16, __nv_bfloat16, 2, 256, 4, true, 2, true, CLUSTER2)
TMA_GEMM(gemm_tc_tma_ws_cluster2_128x256_nk_f16, __half, 2, 256, 4, true, 2, true, CLUSTER2)

// Operand-swapped kernels: (name, type, tokens per tile, stages, B [N,K], k-tiles per stage).
#define TMA_GEMM_SWAP(NAME, T, BT, STAGES, NK, KS)                                                               \
    extern "C" __global__ void __launch_bounds__(256, 1)                                                       \
        NAME(const __grid_constant__ hopper::TmaDesc ta, const __grid_constant__ hopper::TmaDesc tb,           \
             T* __restrict__ C, int M, int N, int K, int splits, int slots, float* __restrict__ ws,           \
             int* __restrict__ counters) {                                                                   \
        tma_gemm_swap<T, BT, STAGES, NK, KS>(&ta, &tb, C, M, N, K, splits, slots, ws, counters);             \
    }

// Every dtype and B layout of one swapped tile: gemm_tc_tma_ws_swap_<TILE>{,_nk}_{bf16,f16}.
#define TMA_GEMM_SWAP_ALL(TILE, BT, STAGES, KS)                                                                  \
    TMA_GEMM_SWAP(gemm_tc_tma_ws_swap_##TILE##_bf16, __nv_bfloat16, BT, STAGES, false, KS)                        \
    TMA_GEMM_SWAP(gemm_tc_tma_ws_swap_##TILE##_f16, __half, BT, STAGES, false, KS)                                \
    TMA_GEMM_SWAP(gemm_tc_tma_ws_swap_##TILE##_nk_bf16, __nv_bfloat16, BT, STAGES, true, KS)                      \
    TMA_GEMM_SWAP(gemm_tc_tma_ws_swap_##TILE##_nk_f16, __half, BT, STAGES, true, KS)

// 16-row tiles take one k-tile per stage; 32- and 64-row tiles two (256 contiguous bytes of
// each operand row per stage).
TMA_GEMM_SWAP_ALL(16x64, 16, 19, 1)
TMA_GEMM_SWAP_ALL(32x64_k128, 32, 8, 2)
TMA_GEMM_SWAP_ALL(64x64_k128, 64, 6, 2)
