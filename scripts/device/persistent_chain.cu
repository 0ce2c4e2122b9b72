// Does a persistent decode step keep the memory pipe busier than a graph of kernels? The design
// question of a decode megakernel (docs/notes/decode.md, "A persistent step with a weight
// ring"), measured on TinyLlama-1.1B's batch-1 chain of products without anything else around
// them: per layer qkv 2560x2048, o 2048x2048, gate/up 11264x2048 (its pairs of rows summed to
// 5632 outputs), down 2048x5632, then lm_head 32000x2048; f16 weights (2.069 GB, random),
// f32 activations, each product's input the previous one's output (o reads the first 2048 of
// qkv's 2560).
//
// Three ways to run one step, in one process, alternating:
//   graph       one CUDA graph of the 89 product kernels (8 warps a block, a warp per pair of
//               rows, 8 chunks of 16 B per row and lane in flight), no programmatic launch
//   graph_pdl   the same graph, each kernel launched with programmatic stream serialization:
//               its first weights are loaded into registers before griddepcontrol.wait, which
//               is how the decode path's kernels run today
//   persistent  one cooperative launch per step, one block per SM: a producer thread streams
//               the block's share of every product's weights, in order, through a ring of
//               shared-memory pages (cp.async.bulk on mbarriers) without ever waiting for an
//               activation; eight consumer warps wait for the previous product (one counter per
//               product in global memory, every block adds 1 when its outputs are written),
//               stage its output as their input and reduce the pages as they land (a warp per
//               1 KiB segment, twice a page; `_warps16`: sixteen consumer warps, one segment
//               each; `_paired`: a warp per two adjacent segments, loaded together and reduced
//               once where they lie in one row)
// --stall-ns D delays the input of every qkv, o and gate/up product by D ns after it is ready
// (every block spins on %globaltimer), standing in for the RMSNorm and attention chains that
// precede them in the real step: a graph pays D on the critical path, a ring that holds the next
// product's weights should not.
//
// Checked first: every variant's logits after one step on poisoned (NaN) activations against a
// float64 chain on the host over the same f16 weights (relative L2 error); a variant whose check
// fails is not timed. Timed: CUDA events around --steps back-to-back steps, --reps times after
// --warmup steps, variants and stalls interleaved; the copy rate (cudaMemcpy of 1 GiB device to
// device, read + write counted) is measured in the same process, before and after, and the
// floor is the weight bytes at that rate. L2 (tens of MB) is not cleared: a step streams 2 GB.
// Prints one line per check, per variant and stall, and the copy rate.
// Usage: persistent_chain [--steps N] [--reps R] [--warmup N] [--layers L] [--stall-ns LIST]
//                         [--slots LIST]: the persistent kernel once per ring size (2..12 pages)
//                         [--diagnose]: the largest ring also without the waits for the previous
//                         product, and as a bare stream (pages released unread); not checked
//                         [--timeline]: one more step of the last checked persistent variant
//                         (the paired one, largest ring, no stall) with %globaltimer stamps,
//                         summarised per kind of product (medians over layers 2.. and blocks)
// Build (sm_90a): nvcc -O3 -arch=sm_90a -Xcompiler -fopenmp scripts/device/persistent_chain.cu
//   -o persistent_chain (scripts/device/persistent_chain.sh builds and runs it).
#define FLOOR_NAME "persistent_chain"
#include "floor_common.cuh"
#include "../../kernels/decode_common.cuh"
#include "../../kernels/decode_gemv_parts.cuh"
#include "../../kernels/gemm_hopper.cuh"

#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr int HIDDEN = 2048, QKV = 2560, INTER = 5632, VOCAB = 32000;
constexpr int MAX_PHASES = 4 * 32 + 1;
constexpr int MAX_K = INTER;
// The ring: up to NSLOT pages of PAGE_BYTES (--slots picks how many are used). A page holds
// whole segments of SEG halves, and every row length (2048, 5632) is a multiple of SEG, so a
// segment never crosses a row.
constexpr int PAGE_BYTES = 16384, NSLOT = 12, SEG = 512;
constexpr int MAX_ROWS = 256;
// What the persistent kernel's consumers do: everything (MODE_FULL, and MODE_PAIRED with each
// warp's two segments of a page adjacent; both checked); no wait for the previous product
// (diagnostic: the chain without its dependencies); or only release each page as it lands
// (diagnostic: the producer's stream alone).
constexpr int MODE_FULL = 0, MODE_NO_WAIT = 1, MODE_STREAM = 2, MODE_PAIRED = 3;
// --timeline: per block and product, when the producer starts on its pages, when the consumers
// see its input ready (after the wait and any stall), have it staged, have reduced the last
// page, and have added to the product's counter.
constexpr int TL_PRODUCER = 0, TL_INPUT_READY = 1, TL_STAGED = 2, TL_PAGES_DONE = 3, TL_SIGNALLED = 4,
              TL_STAMPS = 5;
constexpr int RING_SMEM = NSLOT * PAGE_BYTES + (MAX_K + MAX_ROWS) * 4 + 2 * NSLOT * 8;

// One product of the chain: out = W x (n rows of k), or with pair_sum out[i] = (acc[2i] +
// acc[2i + 1]) / sqrt(2); stall marks the products whose input comes D ns late.
struct Phase {
    unsigned long long w_off;  // halves into the weights
    int n, k, pair_sum, stall;
    int x_off, out_off;        // floats into the activations
};
__constant__ Phase c_phases[MAX_PHASES];

__device__ __forceinline__ unsigned long long globaltimer() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
__device__ __forceinline__ void spin_ns(long long ns) {
    unsigned long long t0 = globaltimer();
    while ((long long)(globaltimer() - t0) < ns) {
    }
}
__device__ __forceinline__ float dot8(uint4 w, const float *x) {
    const __half2 *h = reinterpret_cast<const __half2 *>(&w);
    float4 xa = *reinterpret_cast<const float4 *>(x), xb = *reinterpret_cast<const float4 *>(x + 4);
    float2 a = __half22float2(h[0]), b = __half22float2(h[1]), c = __half22float2(h[2]),
           d = __half22float2(h[3]);
    return a.x * xa.x + a.y * xa.y + b.x * xa.z + b.y * xa.w + c.x * xb.x + c.y * xb.y + d.x * xb.z +
           d.y * xb.w;
}

// x (k floats, k a multiple of 4, 16-byte aligned) from L2 into shared memory by NT threads:
// every load issued before any store, so staging costs one round trip, not one per element.
template <int NT>
__device__ __forceinline__ void stage_x(float *xs, const float *x, int k, int t) {
    constexpr int PER_THREAD = (MAX_K / 4 + NT - 1) / NT;
    const int n4 = k / 4;
    float4 v[PER_THREAD];
#pragma unroll
    for (int j = 0; j < PER_THREAD; ++j) {
        const int i = t + j * NT;
        if (i < n4) v[j] = __ldcg(reinterpret_cast<const float4 *>(x) + i);
    }
#pragma unroll
    for (int j = 0; j < PER_THREAD; ++j) {
        const int i = t + j * NT;
        if (i < n4) reinterpret_cast<float4 *>(xs)[i] = v[j];
    }
}

// ---- graph variants: one kernel per product ------------------------------------------------
constexpr int U = 8;  // 16-byte chunks per row and lane in flight

template <bool PDL>
__global__ void __launch_bounds__(256, 2) product_kernel(const __half *__restrict__ w, const float *x,
                                                      float *out, int n, int k, int pair_sum,
                                                      long long stall_ns) {
    extern __shared__ float xs[];
    if (PDL) pdl_launch();
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int pair = blockIdx.x * 8 + warp;
    const bool active = 2 * pair < n;
    const int chunks = k / 8;
    const __half *r0 = w + (size_t)(2 * pair) * k, *r1 = r0 + k;
    uint4 a[U], b[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
        int c = lane + 32 * u;
        if (active && c < chunks) {
            a[u] = ld_stream(r0 + 8 * c);
            b[u] = ld_stream(r1 + 8 * c);
        }
    }
    if (PDL) pdl_wait();
    if (stall_ns > 0) spin_ns(stall_ns);
    stage_x<256>(xs, x, k, threadIdx.x);
    __syncthreads();
    float s0 = 0.f, s1 = 0.f;
    for (int base = 0; base < chunks; base += 32 * U) {
        if (base > 0) {
#pragma unroll
            for (int u = 0; u < U; ++u) {
                int c = base + lane + 32 * u;
                if (active && c < chunks) {
                    a[u] = ld_stream(r0 + 8 * c);
                    b[u] = ld_stream(r1 + 8 * c);
                }
            }
        }
#pragma unroll
        for (int u = 0; u < U; ++u) {
            int c = base + lane + 32 * u;
            if (active && c < chunks) {
                s0 += dot8(a[u], xs + 8 * c);
                s1 += dot8(b[u], xs + 8 * c);
            }
        }
    }
    s0 = warp_sum(s0);
    s1 = warp_sum(s1);
    if (active && lane == 0) {
        if (pair_sum) {
            out[pair] = (s0 + s1) * 0.70710678f;
        } else {
            out[2 * pair] = s0;
            out[2 * pair + 1] = s1;
        }
    }
}

// ---- persistent variant ---------------------------------------------------------------------
__device__ __forceinline__ void bulk_copy(uint32_t dst, const void *src, uint32_t bytes, uint32_t bar) {
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
        "l"(src), "r"(bytes), "r"(bar)
        : "memory");
}
__device__ __forceinline__ unsigned ld_acquire(const unsigned *p) {
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
template <int CW>
__device__ __forceinline__ void consumers_sync() {
    asm volatile("bar.sync 1, %0;" ::"n"(32 * CW) : "memory");
}

// Rows [r0, r1) of an n-row product for block b of g: whole pairs, as evenly as they go.
__device__ __forceinline__ void block_rows(int n, int b, int g, int &r0, int &r1) {
    long long pairs = n / 2;
    r0 = (int)(2 * (pairs * b / g));
    r1 = (int)(2 * (pairs * (b + 1) / g));
}

// CW consumer warps (8, or 16 in the `_warps16` variant) after the producer warp.
template <int CW>
__global__ void __launch_bounds__(32 * (1 + CW), 1)
    persistent_kernel(const __half *__restrict__ w, float *act, unsigned *done, int nphase,
                      unsigned target, long long stall_ns, int nslot, int mode,
                      unsigned long long *tl) {
    // tl (or null): TL_STAMPS %globaltimer stamps per (block, product), see TL_* below.
    extern __shared__ __align__(128) unsigned char smem[];
    float *xs = reinterpret_cast<float *>(smem + NSLOT * PAGE_BYTES);
    float *acc = xs + MAX_K;
    uint64_t *bars = reinterpret_cast<uint64_t *>(acc + MAX_ROWS);
    const uint32_t ring_s = (uint32_t)__cvta_generic_to_shared(smem);
    const uint32_t full_s = (uint32_t)__cvta_generic_to_shared(bars), empty_s = full_s + 8 * NSLOT;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (threadIdx.x == 0) {
        for (int i = 0; i < nslot; ++i) {
            hopper::mbar_init(full_s + 8 * i, 1);
            hopper::mbar_init(empty_s + 8 * i, CW);
        }
        hopper::fence_barrier_init();
    }
    __syncthreads();

    if (warp == 0) {  // producer: weights only, never an activation
        if (lane == 0) {
            unsigned g = 0;
            for (int p = 0; p < nphase; ++p) {
                const Phase ph = c_phases[p];
                int r0, r1;
                block_rows(ph.n, blockIdx.x, gridDim.x, r0, r1);
                if (tl) tl[((size_t)blockIdx.x * nphase + p) * TL_STAMPS + TL_PRODUCER] = globaltimer();
                const unsigned char *src =
                    reinterpret_cast<const unsigned char *>(w + ph.w_off + (size_t)r0 * ph.k);
                const long long bytes = 2LL * (r1 - r0) * ph.k;
                for (long long off = 0; off < bytes; off += PAGE_BYTES, ++g) {
                    const unsigned slot = g % nslot, round = g / nslot;
                    hopper::mbar_wait(empty_s + 8 * slot, (round & 1) ^ 1);
                    const uint32_t sz = (uint32_t)min((long long)PAGE_BYTES, bytes - off);
                    hopper::mbar_expect_tx(full_s + 8 * slot, sz);
                    bulk_copy(ring_s + slot * PAGE_BYTES, src + off, sz, full_s + 8 * slot);
                }
            }
        }
        return;
    }

    const int ct = threadIdx.x - 32, cw = warp - 1;
    unsigned g = 0;
    for (int p = 0; p < nphase; ++p) {
        const Phase ph = c_phases[p];
        int r0, r1;
        block_rows(ph.n, blockIdx.x, gridDim.x, r0, r1);
        const int nrows = r1 - r0;
        if (mode == MODE_STREAM) {  // diagnostic: the pages are released unread
            const int pages = (2 * nrows * ph.k + PAGE_BYTES - 1) / PAGE_BYTES;
            for (int pg = 0; pg < pages; ++pg, ++g) {
                hopper::mbar_wait(full_s + 8 * (g % nslot), (g / nslot) & 1);
                __syncwarp();
                if (lane == 0) hopper::mbar_arrive(empty_s + 8 * (g % nslot));
            }
            // Counted like every other launch, so that later launches' targets hold.
            if (ct == 0) atomicAdd(done + p, 1u);
            continue;
        }
        if (ct == 0) {
            if (p > 0 && mode != MODE_NO_WAIT)
                while (ld_acquire(done + p - 1) < target) {
                }
            if (ph.stall && stall_ns > 0) spin_ns(stall_ns);
        }
        unsigned long long *stamp = tl ? tl + ((size_t)blockIdx.x * nphase + p) * TL_STAMPS : nullptr;
        if (stamp && ct == 0) stamp[TL_INPUT_READY] = globaltimer();
        consumers_sync<CW>();
        stage_x<32 * CW>(xs, act + ph.x_off, ph.k, ct);
        for (int i = ct; i < nrows; i += 32 * CW) acc[i] = 0.f;
        consumers_sync<CW>();
        if (stamp && ct == 0) stamp[TL_STAGED] = globaltimer();
        const int halves = nrows * ph.k;  // at most 256 rows of 5632
        const int pages = (2 * halves + PAGE_BYTES - 1) / PAGE_BYTES;
        for (int pg = 0; pg < pages; ++pg, ++g) {
            const unsigned slot = g % nslot, round = g / nslot;
            hopper::mbar_wait(full_s + 8 * slot, round & 1);
            const __half *page = reinterpret_cast<const __half *>(smem + slot * PAGE_BYTES);
            const int first = pg * (PAGE_BYTES / 2);
            const int nseg = min(PAGE_BYTES / 2 / SEG, (halves - first) / SEG);
            if (mode == MODE_PAIRED) {
                // Two adjacent segments a warp: their four loads first, one reduction where both
                // lie in one row.
                const int sa = 2 * cw, sb = sa + 1;
                float va = 0.f, vb = 0.f;
                int ra = -1, rb = -1;
                if (sa < nseg) {
                    const int le = first + sa * SEG;
                    ra = le / ph.k;
                    const int col = le - ra * ph.k;
                    const __half *sp = page + sa * SEG + 8 * lane;
                    const uint4 w0 = *reinterpret_cast<const uint4 *>(sp);
                    const uint4 w1 = *reinterpret_cast<const uint4 *>(sp + 256);
                    uint4 w2 = w0, w3 = w1;
                    int colb = 0;
                    if (sb < nseg) {
                        w2 = *reinterpret_cast<const uint4 *>(sp + SEG);
                        w3 = *reinterpret_cast<const uint4 *>(sp + SEG + 256);
                        rb = (le + SEG) / ph.k;
                        colb = le + SEG - rb * ph.k;
                    }
                    va = dot8(w0, xs + col + 8 * lane) + dot8(w1, xs + col + 256 + 8 * lane);
                    if (sb < nseg) vb = dot8(w2, xs + colb + 8 * lane) + dot8(w3, xs + colb + 256 + 8 * lane);
                }
                if (ra >= 0 && ra == rb) {
                    const float v = warp_sum(va + vb);
                    if (lane == 0) atomicAdd(acc + ra, v);
                } else {
                    if (ra >= 0) {
                        const float v = warp_sum(va);
                        if (lane == 0) atomicAdd(acc + ra, v);
                    }
                    if (rb >= 0) {
                        const float v = warp_sum(vb);
                        if (lane == 0) atomicAdd(acc + rb, v);
                    }
                }
            } else {
                for (int s = cw; s < nseg; s += CW) {
                    const int le = first + s * SEG;
                    const int row = le / ph.k, col = le - row * ph.k;
                    const __half *sp = page + s * SEG + 8 * lane;
                    float v = dot8(*reinterpret_cast<const uint4 *>(sp), xs + col + 8 * lane) +
                              dot8(*reinterpret_cast<const uint4 *>(sp + 256), xs + col + 256 + 8 * lane);
                    v = warp_sum(v);
                    if (lane == 0) atomicAdd(acc + row, v);
                }
            }
            __syncwarp();
            if (lane == 0) hopper::mbar_arrive(empty_s + 8 * slot);
        }
        consumers_sync<CW>();
        if (stamp && ct == 0) stamp[TL_PAGES_DONE] = globaltimer();
        float *out = act + ph.out_off;
        if (ph.pair_sum) {
            for (int i = ct; i < nrows / 2; i += 32 * CW) out[r0 / 2 + i] = (acc[2 * i] + acc[2 * i + 1]) * 0.70710678f;
        } else {
            for (int i = ct; i < nrows; i += 32 * CW) out[r0 + i] = acc[i];
        }
        consumers_sync<CW>();
        if (ct == 0) {
            __threadfence();
            atomicAdd(done + p, 1u);
            if (stamp) stamp[TL_SIGNALLED] = globaltimer();
        }
    }
}

// Uniform in (-1, 1) times sqrt(3 / k), so that each product keeps its input's scale.
__global__ void fill_weights(__half *w, size_t n, unsigned long long seed, float scale) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        unsigned long long z = (i + seed) * 0x9E3779B97F4A7C15ull;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        w[i] = __float2half_rn(((float)(z >> 40) * (1.0f / 16777216.0f) * 2.0f - 1.0f) * scale);
    }
}

__global__ void fill_f32(float *p, size_t n, float v) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) p[i] = v;
}

struct Chain {
    std::vector<Phase> phases;
    size_t w_halves = 0, act_floats = 0;
    int logits_off = 0;
};

Chain make_chain(int layers) {
    Chain c;
    auto add = [&](int n, int k, int pair_sum, int stall) {
        c.phases.push_back(Phase{c.w_halves, n, k, pair_sum, stall, 0, 0});
        c.w_halves += (size_t)n * k;
    };
    for (int l = 0; l < layers; ++l) {
        add(QKV, HIDDEN, 0, 1);
        add(HIDDEN, HIDDEN, 0, 1);
        add(2 * INTER, HIDDEN, 1, 1);
        add(HIDDEN, INTER, 0, 0);
    }
    add(VOCAB, HIDDEN, 0, 0);
    // A buffer per product's input, 16-byte aligned, as wide as what writes it and what reads
    // it (o reads the first 2048 of qkv's 2560 outputs).
    int off = 0, in_len = HIDDEN;
    for (Phase &p : c.phases) {
        p.x_off = off;
        off += (std::max(in_len, p.k) + 3) / 4 * 4;
        p.out_off = off;
        in_len = p.pair_sum ? p.n / 2 : p.n;
    }
    c.logits_off = c.phases.back().out_off;
    c.act_floats = (size_t)c.logits_off + VOCAB;
    return c;
}

// The float64 chain over the same f16 weights.
std::vector<double> reference(const Chain &c, const std::vector<__half> &w, const std::vector<float> &x0) {
    std::vector<double> x(x0.begin(), x0.end());
    for (const Phase &p : c.phases) {
        std::vector<double> y(p.n);
#pragma omp parallel for schedule(static)
        for (int r = 0; r < p.n; ++r) {
            const __half *row = w.data() + p.w_off + (size_t)r * p.k;
            double s = 0;
            for (int j = 0; j < p.k; ++j) s += (double)__half2float(row[j]) * x[j];
            y[r] = s;
        }
        if (p.pair_sum) {
            std::vector<double> z(p.n / 2);
            for (int i = 0; i < p.n / 2; ++i) z[i] = (y[2 * i] + y[2 * i + 1]) * 0.70710678;
            y.swap(z);
        }
        x.swap(y);
    }
    return x;
}

double rel_l2(const std::vector<float> &got, const std::vector<double> &want) {
    double num = 0, den = 0;
    for (size_t i = 0; i < want.size(); ++i) {
        double d = (double)got[i] - want[i];
        num += std::isfinite(d) ? d * d : INFINITY;
        den += want[i] * want[i];
    }
    return std::sqrt(num / den);
}

// A comma list of numbers for `flag`; anything else ends the program with the flag named.
std::vector<double> parse_list(const char *flag, const char *s) {
    std::vector<double> v;
    std::string str(s);
    size_t i = 0;
    while (i <= str.size()) {
        size_t j = str.find(',', i);
        if (j == std::string::npos) j = str.size();
        const std::string item = str.substr(i, j - i);
        char *end = nullptr;
        const double d = strtod(item.c_str(), &end);
        if (item.empty() || *end != '\0' || !std::isfinite(d) || d < 0) {
            fprintf(stderr, FLOOR_NAME ": %s wants a comma list of numbers >= 0, got \"%s\"\n", flag, s);
            exit(1);
        }
        v.push_back(d);
        i = j + 1;
    }
    return v;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// One step with stamps, summarised per kind of product: for each block, the wait for the input
// (its previous product signalled -> input ready), staging, the pages, the epilogue, how far the
// producer ran ahead (producer start -> staged; > 0 when the pages were being fetched before the
// input came), and the GPU-wide span (last block's signal of the previous product -> of this one).
template <class Step>
void print_timeline(const Chain &c, int sms, Step step, cudaStream_t stream) {
    const int np = (int)c.phases.size();
    const size_t n = (size_t)sms * np * TL_STAMPS;
    unsigned long long *tl = nullptr;
    CHECK(cudaMalloc(&tl, n * 8));
    CHECK(cudaMemsetAsync(tl, 0, n * 8, stream));
    step(tl);
    CHECK(cudaStreamSynchronize(stream));
    std::vector<unsigned long long> h(n);
    CHECK(cudaMemcpy(h.data(), tl, n * 8, cudaMemcpyDeviceToHost));
    CHECK(cudaFree(tl));
    auto at = [&](int b, int p, int j) { return (double)h[((size_t)b * np + p) * TL_STAMPS + j]; };
    std::vector<double> last_signal(np, 0);
    for (int p = 0; p < np; ++p)
        for (int b = 0; b < sms; ++b) last_signal[p] = std::max(last_signal[p], at(b, p, TL_SIGNALLED));
    const char *kinds[5] = {"qkv", "o", "gate_up", "down", "lm_head"};
    for (int kind = 0; kind < 5; ++kind) {
        std::vector<double> wait, stage, pages, epi, lead, span;
        for (int p = 4; p < np; ++p) {  // layer 0 starts from the launch; left out
            if ((p == np - 1 ? 4 : p % 4) != kind) continue;
            span.push_back((last_signal[p] - last_signal[p - 1]) * 1e-3);
            for (int b = 0; b < sms; ++b) {
                wait.push_back((at(b, p, TL_INPUT_READY) - at(b, p - 1, TL_SIGNALLED)) * 1e-3);
                stage.push_back((at(b, p, TL_STAGED) - at(b, p, TL_INPUT_READY)) * 1e-3);
                pages.push_back((at(b, p, TL_PAGES_DONE) - at(b, p, TL_STAGED)) * 1e-3);
                epi.push_back((at(b, p, TL_SIGNALLED) - at(b, p, TL_PAGES_DONE)) * 1e-3);
                lead.push_back((at(b, p, TL_STAGED) - at(b, p, TL_PRODUCER)) * 1e-3);
            }
        }
        if (span.empty()) continue;
        printf("timeline kind=%s products=%zu wait_us=%.2f stage_us=%.2f pages_us=%.2f epilogue_us=%.2f "
               "producer_lead_us=%.2f span_us=%.2f\n",
               kinds[kind], span.size(), median(wait), median(stage), median(pages), median(epi), median(lead),
               median(span));
    }
    printf("timeline step_us=%.1f (first product's first stamp to the last signal)\n", [&] {
        double first = 1e30;
        for (int b = 0; b < sms; ++b) first = std::min(first, at(b, 0, TL_PRODUCER));
        return (last_signal[np - 1] - first) * 1e-3;
    }());
}

}  // namespace

int main(int argc, char **argv) {
    setvbuf(stdout, nullptr, _IOLBF, 0);  // a line per check as it ends, also into a pipe
    int steps = 50, reps = 11, warmup = 10, layers = 22;
    std::vector<double> stalls{0, 2000};
    std::vector<int> slots{NSLOT};
    bool diagnose = false, timeline = false;
    for (int i = 1; i < argc; ++i) {
        auto need = [&](const char *flag) {
            if (i + 1 >= argc) {
                fprintf(stderr, FLOOR_NAME ": %s needs a value\n", flag);
                exit(1);
            }
            return argv[++i];
        };
        if (!strcmp(argv[i], "--steps")) steps = atoi(need("--steps"));
        else if (!strcmp(argv[i], "--reps")) reps = atoi(need("--reps"));
        else if (!strcmp(argv[i], "--warmup")) warmup = atoi(need("--warmup"));
        else if (!strcmp(argv[i], "--layers")) layers = atoi(need("--layers"));
        else if (!strcmp(argv[i], "--stall-ns")) stalls = parse_list("--stall-ns", need("--stall-ns"));
        else if (!strcmp(argv[i], "--diagnose")) diagnose = true;
        else if (!strcmp(argv[i], "--timeline")) timeline = true;
        else if (!strcmp(argv[i], "--slots")) {
            slots.clear();
            for (double d : parse_list("--slots", need("--slots"))) slots.push_back((int)d);
        }
        else {
            const bool help = !strcmp(argv[i], "--help") || !strcmp(argv[i], "-h");
            if (!help) fprintf(stderr, FLOOR_NAME ": unknown argument %s\n", argv[i]);
            fprintf(help ? stdout : stderr,
                    "usage: persistent_chain [--steps N] [--reps R] [--warmup N] [--layers L (1..32)] "
                    "[--stall-ns LIST] [--slots LIST (2..12)] [--diagnose] [--timeline]\n"
                    "example: persistent_chain --steps 50 --reps 11 --stall-ns 0,2000 --slots 4,12\n");
            return help ? 0 : 1;
        }
    }
    bool slots_ok = !slots.empty();
    for (int s : slots) slots_ok = slots_ok && s >= 2 && s <= NSLOT;
    if (layers < 1 || layers > 32 || steps < 1 || reps < 1 || !slots_ok) {
        fprintf(stderr, FLOOR_NAME ": --layers must be 1..32, --steps and --reps at least 1, --slots "
                                   "values 2..%d\n", NSLOT);
        return 1;
    }
    Chain chain = make_chain(layers);
    const int nphase = (int)chain.phases.size();
    const double weight_bytes = 2.0 * chain.w_halves;

    int dev = 0, sms = 0, coop = 0;
    CHECK(cudaGetDevice(&dev));
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    CHECK(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev));
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, dev));
    printf("gpu=\"%s\" sms=%d layers=%d products=%d weight_bytes=%.0f page_bytes=%d\n", prop.name, sms, layers,
           nphase, weight_bytes, PAGE_BYTES);

    __half *w = nullptr;
    float *act = nullptr;
    unsigned *done = nullptr;
    CHECK(cudaMalloc(&w, chain.w_halves * 2));
    CHECK(cudaMalloc(&act, chain.act_floats * 4));
    CHECK(cudaMalloc(&done, MAX_PHASES * 4));
    CHECK(cudaMemset(done, 0, MAX_PHASES * 4));
    CHECK(cudaMemcpyToSymbol(c_phases, chain.phases.data(), nphase * sizeof(Phase)));
    for (const Phase &p : chain.phases) {
        fill_weights<<<4 * sms, 256>>>(w + p.w_off, (size_t)p.n * p.k, 12345 + p.w_off, sqrtf(3.0f / p.k));
        CHECK(cudaGetLastError());
    }
    std::vector<float> x0(HIDDEN);
    for (int i = 0; i < HIDDEN; ++i) x0[i] = (float)((i * 2654435761u) % 2001) / 1000.0f - 1.0f;
    std::vector<__half> w_host(chain.w_halves);
    CHECK(cudaMemcpy(w_host.data(), w, chain.w_halves * 2, cudaMemcpyDeviceToHost));
    std::vector<double> want = reference(chain, w_host, x0);
    std::vector<__half>().swap(w_host);

    cudaStream_t stream;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    // The persistent kernel with 8 or 16 consumer warps; each must fit one block on every SM.
    const void *kernels[2] = {(const void *)persistent_kernel<8>, (const void *)persistent_kernel<16>};
    for (int i = 0; i < 2; ++i) {
        const int threads = 32 * (1 + 8 * (i + 1));
        CHECK(cudaFuncSetAttribute(kernels[i], cudaFuncAttributeMaxDynamicSharedMemorySize, RING_SMEM));
        int per_sm = 0;
        CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernels[i], threads, RING_SMEM));
        if (!coop || per_sm < 1) {
            fprintf(stderr, FLOOR_NAME ": the persistent kernel (%d threads) cannot be resident on every SM "
                            "(cooperative %d, blocks per SM %d)\n", threads, coop, per_sm);
            return 2;
        }
    }
    unsigned epoch = 0;
    auto persistent_step = [&](long long stall, int nslot, int mode, int warps,
                               unsigned long long *tl = nullptr) {
        ++epoch;
        unsigned target = epoch * (unsigned)sms;
        void *args[] = {&w, &act, &done, (void *)&nphase, &target, &stall, &nslot, &mode, &tl};
        CHECK(cudaLaunchCooperativeKernel(kernels[warps == 16 ? 1 : 0], dim3(sms), dim3(32 * (1 + warps)), args,
                                          RING_SMEM, stream));
    };
    // One graph per (PDL, stall).
    auto build_graph = [&](bool pdl, long long stall) {
        cudaGraph_t graph;
        cudaGraphExec_t exec;
        CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
        for (const Phase &p : chain.phases) {
            cudaLaunchConfig_t cfg = {};
            cfg.gridDim = dim3((p.n / 2 + 7) / 8);
            cfg.blockDim = dim3(256);
            cfg.dynamicSmemBytes = p.k * 4;
            cfg.stream = stream;
            cudaLaunchAttribute attr[1];
            attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
            attr[0].val.programmaticStreamSerializationAllowed = 1;
            cfg.attrs = attr;
            cfg.numAttrs = pdl ? 1 : 0;
            const __half *wp = w + p.w_off;
            const float *xp = act + p.x_off;
            float *op = act + p.out_off;
            long long st = p.stall ? stall : 0;
            if (pdl)
                CHECK(cudaLaunchKernelEx(&cfg, product_kernel<true>, wp, xp, op, p.n, p.k, p.pair_sum, st));
            else
                CHECK(cudaLaunchKernelEx(&cfg, product_kernel<false>, wp, xp, op, p.n, p.k, p.pair_sum, st));
        }
        CHECK(cudaStreamEndCapture(stream, &graph));
        CHECK(cudaGraphInstantiate(&exec, graph, 0));
        CHECK(cudaGraphDestroy(graph));
        return exec;
    };
    // Variants: the two graphs; the persistent kernel at each ring size, and at the largest with
    // sixteen consumer warps and with paired segments (all checked); with --diagnose, the largest
    // ring once more without its waits and as a bare stream (nothing checkable, listed last).
    struct Variant {
        std::string name;
        int slots, mode, warps;
    };
    std::vector<Variant> vars{{"graph", 0, 0, 0}, {"graph_pdl", 0, 0, 0}};
    const int most = *std::max_element(slots.begin(), slots.end());
    const std::string ring = "persistent_slots" + std::to_string(most);
    for (int s : slots) vars.push_back({"persistent_slots" + std::to_string(s), s, MODE_FULL, 8});
    vars.push_back({ring + "_warps16", most, MODE_FULL, 16});
    vars.push_back({ring + "_paired", most, MODE_PAIRED, 8});
    const int nchecked = (int)vars.size();
    if (diagnose) {
        vars.push_back({"diagnostic_" + ring + "_no_wait", most, MODE_NO_WAIT, 8});
        vars.push_back({"diagnostic_" + ring + "_stream", most, MODE_STREAM, 8});
    }
    const int nvar = (int)vars.size();
    std::vector<std::vector<cudaGraphExec_t>> graphs(2);
    for (int v = 0; v < 2; ++v)
        for (double s : stalls) graphs[v].push_back(build_graph(v == 1, (long long)s));
    auto step = [&](int v, int si) {
        if (v < 2) CHECK(cudaGraphLaunch(graphs[v][si], stream));
        else persistent_step((long long)stalls[si], vars[v].slots, vars[v].mode, vars[v].warps);
    };

    // Checks: poisoned activations, one step, logits against the float64 chain.
    std::vector<float> got(VOCAB);
    std::vector<bool> ok(nvar);
    for (int v = 0; v < nvar; ++v) {
        ok[v] = true;
        for (size_t si = 0; si < stalls.size() && v < nchecked; ++si) {
            fill_f32<<<sms, 256, 0, stream>>>(act, chain.act_floats, NAN);
            CHECK(cudaMemcpyAsync(act + chain.phases[0].x_off, x0.data(), HIDDEN * 4, cudaMemcpyHostToDevice, stream));
            step(v, (int)si);
            CHECK(cudaMemcpyAsync(got.data(), act + chain.logits_off, VOCAB * 4, cudaMemcpyDeviceToHost, stream));
            CHECK(cudaStreamSynchronize(stream));
            double err = rel_l2(got, want);
            bool pass = err < 1e-4;
            ok[v] = ok[v] && pass;
            printf("check variant=%s stall_ns=%.0f rel_l2=%.3e %s\n", vars[v].name.c_str(), stalls[si], err,
                   pass ? "PASS" : "FAIL");
        }
    }

    auto copy_gbps = [&]() {
        const size_t bytes = 1ull << 30;
        void *a, *b;
        CHECK(cudaMalloc(&a, bytes));
        CHECK(cudaMalloc(&b, bytes));
        cudaEvent_t e0, e1;
        CHECK(cudaEventCreate(&e0));
        CHECK(cudaEventCreate(&e1));
        std::vector<double> r;
        for (int i = 0; i < 7; ++i) {
            CHECK(cudaEventRecord(e0, stream));
            CHECK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, stream));
            CHECK(cudaEventRecord(e1, stream));
            CHECK(cudaEventSynchronize(e1));
            float ms;
            CHECK(cudaEventElapsedTime(&ms, e0, e1));
            if (i > 1) r.push_back(2.0 * bytes / (ms * 1e-3) / 1e9);
        }
        CHECK(cudaFree(a));
        CHECK(cudaFree(b));
        return median(r);
    };
    const double copy_before = copy_gbps();

    // Timing: variants and stalls interleaved, rep by rep.
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    std::vector<std::vector<std::vector<double>>> us(nvar, std::vector<std::vector<double>>(stalls.size()));
    for (int v = 0; v < nvar; ++v)
        for (size_t si = 0; si < stalls.size(); ++si)
            for (int i = 0; i < warmup; ++i) step(v, (int)si);
    CHECK(cudaStreamSynchronize(stream));
    for (int r = 0; r < reps; ++r)
        for (int v = 0; v < nvar; ++v) {
            if (!ok[v]) continue;
            for (size_t si = 0; si < stalls.size(); ++si) {
                step(v, (int)si);
                CHECK(cudaEventRecord(e0, stream));
                for (int i = 0; i < steps; ++i) step(v, (int)si);
                CHECK(cudaEventRecord(e1, stream));
                CHECK(cudaEventSynchronize(e1));
                float ms;
                CHECK(cudaEventElapsedTime(&ms, e0, e1));
                us[v][si].push_back(ms * 1e3 / steps);
            }
        }
    // A last checked variant's step after the timing, checked again (every launch computes the
    // same chain).
    step(nchecked - 1, 0);
    CHECK(cudaMemcpy(got.data(), act + chain.logits_off, VOCAB * 4, cudaMemcpyDeviceToHost));
    const double last_err = rel_l2(got, want);
    const double copy_after = copy_gbps();
    const double copy = 0.5 * (copy_before + copy_after);
    const double floor_us = weight_bytes / (copy * 1e9) * 1e6;
    printf("copy_gbps_before=%.0f copy_gbps_after=%.0f floor_us=%.1f last_step_rel_l2=%.3e\n", copy_before,
           copy_after, floor_us, last_err);
    if (timeline) print_timeline(chain, sms, [&](unsigned long long *tl) {
        const Variant &last = vars[nchecked - 1];
        persistent_step(0, last.slots, last.mode, last.warps, tl);
    }, stream);
    bool all = last_err < 1e-4;
    for (int v = 0; v < nvar; ++v) {
        all = all && ok[v];
        if (!ok[v]) {
            printf("variant=%s not timed: its check failed\n", vars[v].name.c_str());
            continue;
        }
        for (size_t si = 0; si < stalls.size(); ++si) {
            const auto &t = us[v][si];
            double med = median(t);
            printf("variant=%s stall_ns=%.0f step_us_median=%.1f step_us_min=%.1f step_us_max=%.1f "
                   "pct_of_floor=%.1f samples=%zu steps_per_sample=%d\n",
                   vars[v].name.c_str(), stalls[si], med, *std::min_element(t.begin(), t.end()),
                   *std::max_element(t.begin(), t.end()), 100.0 * floor_us / med, t.size(), steps);
        }
    }
    return all ? 0 : 1;
}
