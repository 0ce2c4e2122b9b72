// Launch variants of our LayerNorm row kernel (kernels/layernorm.cu, included whole) at the
// large shapes where torch.compile and Triton come within a few percent of it: the same
// per-row code with other register caps (__launch_bounds__ minimum blocks per SM), other
// vectors per thread and other threads per row, timed against the committed launch in one
// process, on the same buffers, with a same-size device-to-device copy beside them.
//
// Why a harness and not layernorm_bench flags: a register cap is a compile-time property of a
// kernel, and trying a dozen of them through the production kernel table would add a dozen
// instantiations per dtype to every build. What wins here moves into kernels/layernorm.cu.
//
// Each (shape, dtype): fresh random x, gamma, beta; the committed launch (`base`: the kernel
// and threads per row src/layernorm/plan.rs picks) writes the reference output, and every
// variant's output, written over a NaN-poisoned y, must match it within 1e-4 (f32) or 2e-2
// (f16, bf16) absolute, else the variant is reported FAILED with no time. Timing: CUDA events
// around LAUNCHES back-to-back launches, SAMPLES samples per variant per round, ROUNDS rounds
// with the variants in a rotated order each round; the figure is the median over all samples.
// At these sizes (>= 64 MiB moved) the buffers are over twice the L2, so each launch reads x
// from DRAM.
//
// Build (GPU machine): nvcc -O3 -arch=sm_90 -std=c++17 -I kernels
//     scripts/device/layernorm_probe.cu -o /tmp/layernorm_probe
// Run: /tmp/layernorm_probe [ROUNDS=3] [SAMPLES=15] [LAUNCHES=10]
// Prints one line per variant: shape dtype variant regs blocks_per_sm us GB/s vs_base.
#include "layernorm.cu"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define CHECK(call)                                                                       \
    do {                                                                                  \
        cudaError_t e = (call);                                                           \
        if (e != cudaSuccess) {                                                           \
            fprintf(stderr, "layernorm_probe: %s: %s\n", #call, cudaGetErrorString(e));   \
            exit(2);                                                                      \
        }                                                                                 \
    } while (0)

// Variant kernels are declared exactly as kernels/layernorm.cu declares its own (extern "C",
// one __launch_bounds__ each): ptxas allocates registers differently for a templated
// __global__ wrapper of the same code (70 instead of 40 for the f32 four-vector kernel).
#define PROBE(NAME, T, VEC, NV, MAXT, MINB)                                                   \
    extern "C" __global__ void __launch_bounds__(MAXT, MINB)                                  \
        NAME(const T* __restrict__ x, const T* __restrict__ gamma, const T* __restrict__ beta, \
             T* __restrict__ y, long long rows, int cols, int tpr, float eps) {                \
        layernorm_regs<T, VEC, NV>(x, gamma, beta, y, rows, cols, tpr, eps);                  \
    }
#define PROBE_DT(DT, T, V)                                                                    \
    PROBE(probe_##DT##_n4_b256_m6, T, V, 4, 256, 6)                                           \
    PROBE(probe_##DT##_n4_b256_m5, T, V, 4, 256, 5)                                           \
    PROBE(probe_##DT##_n4_b512_m3, T, V, 4, 512, 3)                                           \
    PROBE(probe_##DT##_n4_b128_m10, T, V, 4, 128, 10)                                         \
    PROBE(probe_##DT##_n4_b128_m12, T, V, 4, 128, 12)                                         \
    PROBE(probe_##DT##_n2_b512_m3, T, V, 2, 512, 3)                                           \
    PROBE(probe_##DT##_n2_b512_m4, T, V, 2, 512, 4)                                           \
    PROBE(probe_##DT##_n8_b256_m4, T, V, 8, 256, 4)                                           \
    PROBE(probe_##DT##_n8_b128_m4, T, V, 8, 128, 4)
PROBE_DT(f32, float, 4)
PROBE_DT(f16, __half, 8)
PROBE_DT(bf16, __nv_bfloat16, 8)

struct Variant {
    std::string name;
    const void* fn;
    int nv, maxt;
};

#define V(NAME, NV, MAXT) Variant{#NAME, reinterpret_cast<const void*>(&NAME), NV, MAXT}
// The committed kernels first (`base`: the one src/layernorm/plan.rs launches, by vectors per
// thread), then the probes.
#define VARIANTS(DT)                                                                           \
    {V(layernorm_regs_##DT##_n4, 4, 512), V(layernorm_regs_##DT##_n2, 2, 1024),                \
     V(layernorm_regs_##DT##_n8, 8, 512), V(probe_##DT##_n4_b256_m6, 4, 256),                  \
     V(probe_##DT##_n4_b256_m5, 4, 256), V(probe_##DT##_n4_b512_m3, 4, 512),                   \
     V(probe_##DT##_n4_b128_m10, 4, 128), V(probe_##DT##_n4_b128_m12, 4, 128),                 \
     V(probe_##DT##_n2_b512_m3, 2, 512), V(probe_##DT##_n2_b512_m4, 2, 512),                   \
     V(probe_##DT##_n8_b256_m4, 8, 256), V(probe_##DT##_n8_b128_m4, 8, 128)}
#define layernorm_regs_f32_n4 layernorm_regs_f32_v4_n4
#define layernorm_regs_f32_n2 layernorm_regs_f32_v4_n2
#define layernorm_regs_f32_n8 layernorm_regs_f32_v4_n8
#define layernorm_regs_f16_n4 layernorm_regs_f16_v8_n4
#define layernorm_regs_f16_n2 layernorm_regs_f16_v8_n2
#define layernorm_regs_f16_n8 layernorm_regs_f16_v8_n8
#define layernorm_regs_bf16_n4 layernorm_regs_bf16_v8_n4
#define layernorm_regs_bf16_n2 layernorm_regs_bf16_v8_n2
#define layernorm_regs_bf16_n8 layernorm_regs_bf16_v8_n8

template <typename T> std::vector<Variant> variants();
template <> std::vector<Variant> variants<float>() { return VARIANTS(f32); }
template <> std::vector<Variant> variants<__half>() { return VARIANTS(f16); }
template <> std::vector<Variant> variants<__nv_bfloat16>() { return VARIANTS(bf16); }

template <typename T> __global__ void fill(T* p, long long n, unsigned seed, float lo, float hi) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        unsigned h = (unsigned)i * 2654435761u ^ seed;
        h ^= h >> 16;
        h *= 2246822519u;
        h ^= h >> 13;
        h *= 3266489917u;
        h ^= h >> 16;
        p[i] = from_f32<T>(lo + (hi - lo) * (h * (1.f / 4294967296.f)));
    }
}
template <typename T> __global__ void poison(T* p, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        p[i] = from_f32<T>(__int_as_float(0x7fc00000));
}
template <typename T>
__global__ void max_diff(const T* a, const T* b, long long n, float* out) {
    float m = 0.f;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        const float d = fabsf(to_f32(a[i]) - to_f32(b[i]));
        m = (d == d) ? fmaxf(m, d) : INFINITY;  // NaN (an unwritten output) counts as infinite
    }
    m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 16));
    m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 8));
    m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 4));
    m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 2));
    m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 1));
    if ((threadIdx.x & 31) == 0) atomicMax(reinterpret_cast<int*>(out), __float_as_int(m));
}

static float median(std::vector<float> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

struct Launch {
    const Variant* v;
    int tpr, block;
    long long grid;
};

// The launch src/layernorm/plan.rs would make for this variant's vectors per thread, or none
// when the row does not split into whole warps under the variant's block limit.
static bool launch_for(const Variant& v, long long rows, int cols, int vec, Launch* l) {
    const int nvec = cols / vec;
    if (nvec % v.nv) return false;
    const int tpr = nvec / v.nv;
    if (tpr % 32 || tpr > v.maxt) return false;
    const int block = std::max(tpr, 128);
    if (block > v.maxt || block % tpr) return false;
    const int rpb = block / tpr;
    *l = Launch{&v, tpr, block, (rows + rpb - 1) / rpb};
    return true;
}

template <typename T, int VEC>
void probe(const char* dt, long long rows, int cols, int rounds, int samples, int launches) {
    const long long n = rows * cols;
    const double bytes = 2.0 * n * sizeof(T);
    T *x, *g, *b, *y, *ref;
    float* diff;
    CHECK(cudaMalloc(&x, n * sizeof(T)));
    CHECK(cudaMalloc(&y, n * sizeof(T)));
    CHECK(cudaMalloc(&ref, n * sizeof(T)));
    CHECK(cudaMalloc(&g, cols * sizeof(T)));
    CHECK(cudaMalloc(&b, cols * sizeof(T)));
    CHECK(cudaMalloc(&diff, sizeof(float)));
    const unsigned seed = (unsigned)rand();
    fill<<<1024, 256>>>(x, n, seed, -2.f, 3.f);
    fill<<<64, 256>>>(g, cols, seed * 3u + 1u, 0.5f, 1.5f);
    fill<<<64, 256>>>(b, cols, seed * 5u + 2u, -0.5f, 0.5f);
    const float eps = 1e-5f;
    const float tol = sizeof(T) == 4 ? 1e-4f : 2e-2f;
    std::vector<Variant> all = variants<T>();
    std::vector<Launch> ls;
    for (const Variant& v : all) {
        Launch l;
        if (launch_for(v, rows, cols, VEC, &l)) ls.push_back(l);
    }
    auto run = [&](const Launch& l, T* out) {
        void* args[] = {&x, &g, &b, &out, &rows, &cols,
                        const_cast<int*>(&l.tpr), const_cast<float*>(&eps)};
        CHECK(cudaLaunchKernel(l.v->fn, dim3((unsigned)l.grid), dim3(l.block), args, 0, 0));
    };
    if (ls.empty() || ls[0].v->nv != 4) {
        printf("%lldx%d %s: the committed launch does not apply; skipped\n", rows, cols, dt);
        return;
    }
    run(ls[0], ref);
    CHECK(cudaDeviceSynchronize());
    std::vector<bool> ok(ls.size(), true);
    for (size_t i = 0; i < ls.size(); ++i) {
        poison<<<1024, 256>>>(y, n);
        run(ls[i], y);
        CHECK(cudaMemset(diff, 0, sizeof(float)));
        max_diff<<<1024, 256>>>(y, ref, n, diff);
        float d;
        CHECK(cudaMemcpy(&d, diff, sizeof d, cudaMemcpyDeviceToHost));
        ok[i] = d <= tol;
        if (!ok[i]) printf("%lldx%d %s %s FAILED: max abs diff %g\n", rows, cols, dt,
                           ls[i].v->name.c_str(), d);
    }
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    const size_t ncopy = ls.size();  // the copy's index in `times`
    std::vector<std::vector<float>> times(ls.size() + 1);
    for (int r = 0; r < rounds; ++r) {
        for (size_t k = 0; k <= ls.size(); ++k) {
            const size_t i = (k + r) % (ls.size() + 1);
            if (i < ls.size() && !ok[i]) continue;
            for (int w = 0; w < 3; ++w) {
                if (i == ncopy) CHECK(cudaMemcpyAsync(y, x, n * sizeof(T), cudaMemcpyDeviceToDevice));
                else run(ls[i], y);
            }
            for (int s = 0; s < samples; ++s) {
                CHECK(cudaEventRecord(e0));
                for (int j = 0; j < launches; ++j) {
                    if (i == ncopy) CHECK(cudaMemcpyAsync(y, x, n * sizeof(T), cudaMemcpyDeviceToDevice));
                    else run(ls[i], y);
                }
                CHECK(cudaEventRecord(e1));
                CHECK(cudaEventSynchronize(e1));
                float ms;
                CHECK(cudaEventElapsedTime(&ms, e0, e1));
                times[i].push_back(ms * 1000.f / launches);
            }
        }
    }
    const float base_us = median(times[0]);
    for (size_t i = 0; i <= ls.size(); ++i) {
        if (i < ls.size() && !ok[i]) continue;
        const float us = median(times[i]);
        int regs = 0, per_sm = 0;
        std::string name = "copy_d2d";
        if (i < ls.size()) {
            cudaFuncAttributes a;
            CHECK(cudaFuncGetAttributes(&a, ls[i].v->fn));
            regs = a.numRegs;
            CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, ls[i].v->fn, ls[i].block, 0));
            char buf[96];
            snprintf(buf, sizeof buf, "%s_tpr%d", ls[i].v->name.c_str(), ls[i].tpr);
            name = buf;
        }
        printf("%lldx%d %s %-26s regs=%3d blocks_per_sm=%2d us=%8.2f GB/s=%7.0f vs_base=%+.2f%%\n",
               rows, cols, dt, name.c_str(), regs, per_sm, us, bytes / us / 1e3,
               (us / base_us - 1.0) * 100.0);
    }
    fflush(stdout);
    CHECK(cudaFree(x));
    CHECK(cudaFree(y));
    CHECK(cudaFree(ref));
    CHECK(cudaFree(g));
    CHECK(cudaFree(b));
    CHECK(cudaFree(diff));
}

int main(int argc, char** argv) {
    const int rounds = argc > 1 ? atoi(argv[1]) : 3;
    const int samples = argc > 2 ? atoi(argv[2]) : 15;
    const int launches = argc > 3 ? atoi(argv[3]) : 10;
    srand(12345);
    cudaDeviceProp p;
    CHECK(cudaGetDeviceProperties(&p, 0));
    printf("device %s, %d SMs, L2 %d MB\n", p.name, p.multiProcessorCount, p.l2CacheSize >> 20);
    probe<float, 4>("f32", 32768, 4096, rounds, samples, launches);
    probe<float, 4>("f32", 16384, 8192, rounds, samples, launches);
    probe<float, 4>("f32", 4096, 8192, rounds, samples, launches);
    probe<__nv_bfloat16, 8>("bf16", 16384, 8192, rounds, samples, launches);
    probe<__half, 8>("f16", 16384, 8192, rounds, samples, launches);
    probe<__nv_bfloat16, 8>("bf16", 4096, 8192, rounds, samples, launches);
    probe<__half, 8>("f16", 4096, 8192, rounds, samples, launches);
    probe<__nv_bfloat16, 8>("bf16", 32768, 4096, rounds, samples, launches);
    return 0;
}
