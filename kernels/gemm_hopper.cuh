// Hopper (sm_90a) building blocks of the GEMM kernels: shared-memory matrix descriptors,
// wgmma fences, mbarriers, TMA tensor loads (with cluster multicast), register reallocation
// and cluster barriers. Thin wrappers over single PTX instructions.
#pragma once
#include <stdint.h>
#include "gemm_common.cuh"
#include "gemm_wgmma_ops.cuh"

namespace hopper {

// A CUtensorMap (built on the host by cuTensorMapEncodeTiled), passed by value as a
// `const __grid_constant__` kernel parameter so TMA reads it from parameter space.
struct alignas(64) TmaDesc {
    uint64_t opaque[16];
};

// Shared-memory matrix descriptor field: address bits [17:4].
__device__ __forceinline__ uint64_t desc_field(uint32_t x) { return (uint64_t)((x & 0x3FFFF) >> 4); }

// 128B-swizzle descriptor: start address, leading byte offset, stride byte offset (8 rows of
// 128 B = 1024 B). The tile must be 1024-byte aligned; K steps of 16 move the start by 32 B.
__device__ __forceinline__ uint64_t make_desc(uint32_t addr, uint32_t lbo) {
    return desc_field(addr) | (desc_field(lbo) << 16) | (desc_field(1024) << 32) | (1ull << 62);
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

// Pins accumulator registers around asynchronous wgmma: the compiler may not move their reads
// or writes across this point.
template <int N>
__device__ __forceinline__ void fence_operands(float (&d)[N]) {
#pragma unroll
    for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count));
}

// Makes the barrier initialisations visible to the async proxy and to the cluster.
__device__ __forceinline__ void fence_barrier_init() {
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

// One arrival that also announces `bytes` of TMA traffic the phase must wait for.
__device__ __forceinline__ void mbar_expect_tx(uint32_t bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
                 : "memory");
}

__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

// Arrives on the barrier at the same shared-memory offset in CTA `rank` of the cluster, with
// the default (CTA-scope) release, as CUTLASS's ClusterBarrier does: what the arrival
// announces is that wgmma, already waited for, has read a stage. A `.release.cluster`
// arrival orders every earlier memory access of the thread cluster-wide first, and made the
// 2-CTA kernel twice as slow (docs/notes/gemm.md).
__device__ __forceinline__ void mbar_arrive_cluster(uint32_t bar, uint32_t rank) {
    asm volatile(
        "{\n.reg .b32 remote;\n"
        "mapa.shared::cluster.u32 remote, %0, %1;\n"
        "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(bar),
        "r"(rank)
        : "memory");
}

// Spins until the barrier's phase with this parity has completed.
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
    asm volatile(
        "{\n.reg .pred done;\n"
        "WAIT_AGAIN:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
        "@done bra WAIT_DONE;\n"
        "bra WAIT_AGAIN;\n"
        "WAIT_DONE:\n}\n" ::"r"(bar),
        "r"(parity)
        : "memory");
}

// TMA: the box at element coordinates (c0 innermost, c1) of `map` into shared memory at
// `dst`, completing `bytes` on the barrier `bar`.
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const TmaDesc* map, uint32_t bar, int c0, int c1) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%3, %4}], [%2];\n" ::"r"(dst),
        "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1)
        : "memory");
}

// The same box written to the same offset (and signalled on the same barrier offset) in
// every CTA of the cluster named in `mask`.
__device__ __forceinline__ void tma_load_2d_multicast(uint32_t dst, const TmaDesc* map, uint32_t bar, int c0,
                                                      int c1, uint16_t mask) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        ".multicast::cluster [%0], [%1, {%3, %4}], [%2], %5;\n" ::"r"(dst),
        "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1), "h"(mask)
        : "memory");
}

__device__ __forceinline__ void prefetch_tma_desc(const TmaDesc* map) {
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

// Warpgroup-wide register budget changes (producer gives registers to the consumers).
template <int R>
__device__ __forceinline__ void regs_grow() {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(R));
}
template <int R>
__device__ __forceinline__ void regs_shrink() {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(R));
}

__device__ __forceinline__ uint32_t cluster_rank() {
    uint32_t r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
}

// Every thread of every CTA in the cluster.
__device__ __forceinline__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::
                     : "memory");
}

__device__ __forceinline__ void st_shared_u32(uint32_t addr, uint32_t v) {
    asm volatile("st.shared.u32 [%0], %1;\n" ::"r"(addr), "r"(v) : "memory");
}

__device__ __forceinline__ void st_shared_u16(uint32_t addr, uint16_t v) {
    asm volatile("st.shared.u16 [%0], %1;\n" ::"r"(addr), "h"(v) : "memory");
}

__device__ __forceinline__ uint4 ld_shared_v4(uint32_t addr) {
    uint4 v;
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "r"(addr)
                 : "memory");
    return v;
}

// A barrier among `threads` threads (whole warps) under id `id`; id 0 is __syncthreads.
__device__ __forceinline__ void named_barrier(int id, int threads) {
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

}  // namespace hopper
