//! Microbenchmark: how fast the decode step's tensor-core products can read their weights in
//! each layout, loads only (no mma, no x): the row-major pattern (lane (g, t) loads chunks
//! t + 4u of rows 2g and 2g + 1, each warp load eight 64-byte pieces 4 KiB or more apart)
//! against the same loop over the tiled layout of src/llm/fast/tiles.rs (each warp load 512
//! contiguous bytes), and a plain streaming read of the same bytes. Same grid, ksplit and
//! two-span register pipeline as kernels/decode_gemv_tc.cu at TinyLlama's four layer shapes;
//! 22 buffers per shape (one per layer, 0.2-1 GB in all, more than L2) read in turn, 27 timed
//! rounds after 3 warm-up ones, median per launch. On the GPU machine:
//!   /usr/local/cuda/bin/nvcc -O3 -arch=sm_90a -std=c++17 -o /tmp/wp scripts/device/weight_pattern.cu && /tmp/wp
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#define U 4
__device__ __forceinline__ uint4 ld_stream(const __half *p) {
    uint4 v;
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
}
__device__ __forceinline__ unsigned mix(const uint4 *r, const uint4 *s) {
    unsigned a = 0;
#pragma unroll
    for (int u = 0; u < U; u++) a ^= r[u].x ^ r[u].y ^ r[u].z ^ r[u].w ^ s[u].x ^ s[u].w;
    return a;
}
template <bool TILED>
__global__ void __launch_bounds__(256, 2) pat(const __half *w, int n, int k, int ksplit, unsigned *sink) {
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    const int group = warp / ksplit, wig = warp % ksplit;
    const int tile = blockIdx.x + gridDim.x * group;
    if (16 * tile >= n) return;
    const int kv = k >> 3, nspan = kv / (4 * U), wstep = 4 * U * ksplit;
    const __half *w0, *w1;
    if (!TILED) {
        w0 = w + (size_t)(tile * 16 + 2 * g) * k + t * 8;
        w1 = w0 + k;
    } else {
        w0 = w + (size_t)tile * nspan * 2048 + lane * 8;
        w1 = w0 + 256;
    }
    unsigned acc = 0;
    uint4 ra[U], rb[U], sa[U], sb[U];
    auto load = [&](int base, uint4 *a, uint4 *b) {
#pragma unroll
        for (int u = 0; u < U; u++) {
            if (!TILED) {
                a[u] = ld_stream(w0 + (base + 4 * u) * 8);
                b[u] = ld_stream(w1 + (base + 4 * u) * 8);
            } else {
                a[u] = ld_stream(w0 + (size_t)base * 128 + u * 512);
                b[u] = ld_stream(w1 + (size_t)base * 128 + u * 512);
            }
        }
    };
    int base = wig * 4 * U;
    load(base, ra, rb);
    load(base + wstep, sa, sb);
    while (base < kv) {
        acc ^= mix(ra, rb);
        if (base + 2 * wstep < kv) load(base + 2 * wstep, ra, rb);
        base += wstep;
        if (base >= kv) break;
        acc ^= mix(sa, sb);
        if (base + 2 * wstep < kv) load(base + 2 * wstep, sa, sb);
        base += wstep;
    }
    if (acc == 0x12345678u) *sink = acc;
}
__global__ void stream_read(const uint4 *w, size_t n16, unsigned *sink) {
    unsigned acc = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n16; i += (size_t)gridDim.x * blockDim.x) {
        uint4 v = __ldcs(w + i);
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x12345678u) *sink = acc;
}
int main(int argc, char **argv) {
    const int L = 22;
    struct Shape { const char *name; int n, k, ks; };
    Shape shapes[] = {{"gate_up", 11264, 2048, 2}, {"down", 2048, 5632, 8}, {"qkv", 2560, 2048, 2}, {"o_proj", 2048, 2048, 2}};
    unsigned *sink; cudaMalloc(&sink, 4);
    int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    for (auto &s : shapes) {
        size_t elems = (size_t)s.n * s.k;
        std::vector<__half *> bufs(L);
        for (auto &b : bufs) { cudaMalloc(&b, elems * 2); cudaMemset(b, 1, elems * 2); }
        cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
        for (int var = 0; var < 3; var++) {
            std::vector<float> ts;
            for (int rep = 0; rep < 30; rep++) {
                cudaEventRecord(e0);
                for (int l = 0; l < L; l++) {
                    if (var == 0) pat<false><<<2 * sms, 256>>>(bufs[l], s.n, s.k, s.ks, sink);
                    else if (var == 1) pat<true><<<2 * sms, 256>>>(bufs[l], s.n, s.k, s.ks, sink);
                    else stream_read<<<sms * 8, 256>>>((const uint4 *)bufs[l], elems / 8, sink);
                }
                cudaEventRecord(e1); cudaEventSynchronize(e1);
                float ms; cudaEventElapsedTime(&ms, e0, e1); if (rep >= 3) ts.push_back(ms);
            }
            std::sort(ts.begin(), ts.end());
            float med = ts[ts.size() / 2];
            printf("%-8s %-10s %7.1f us/launch  %6.0f GB/s\n", s.name, var == 0 ? "rows" : var == 1 ? "tiled" : "stream",
                   med * 1000 / L, elems * 2.0 * L / (med * 1e-3) / 1e9);
        }
        for (auto b : bufs) cudaFree(b);
    }
    cudaError_t err = cudaGetLastError();
    printf("status: %s\n", cudaGetErrorString(err));
}
