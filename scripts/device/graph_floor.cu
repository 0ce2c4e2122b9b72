// What CUPTI costs a CUDA-graph replay: the floor under the graph overhead check of
// scripts/device/trace_workloads.sh (llm_bench's decode under `trace --graphs graph`, +1.97% to
// +4.49% against a 2% bar), measured without llm_bench around it.
//
// One graph, captured once from a stream: K kernels (--kernels, default 300), each a chain of W
// dependent FMAs (--work, default 600) on each of 4,096 floats, about 2 us a kernel, so that a
// replay takes about the 0.7 ms of a decode step's graph (kernels_us below says what it is on
// the GPU at hand; --work moves it). Each step imitates a decode step: an 8-byte copy from
// pinned memory to the GPU, the graph launch between two CUDA events, a 24-byte copy back, a
// stream synchronize. The host waits for the GPU, so a step's time is the replay plus what
// surrounds it (the launch call, the copies, the wake-up from the synchronize): a tracer's cost
// shows either in the replay (GPU) or around it (host).
//
// Built twice (scripts/device/trace_graph_floor.sh says how): without -DSELF_CUPTI it is a
// plain CUDA program, to run untraced and under `trace`; with -DSELF_CUPTI (linked to libcupti)
// it can attach CUPTI itself, before CUDA starts as `trace` does, to measure CUPTI's own floor
// without any tracer's processing:
//   --activity LIST   activity kinds on, records counted and dropped; LIST is a comma list of
//                     graph (GRAPH_TRACE), device (DEVICE), kernel (CONCURRENT_KERNEL), memcpy,
//                     memset, runtime, driver, sync (SYNCHRONIZATION). They are enabled in that
//                     order whatever LIST's order (graph first, as trace-inject/src/lib.rs does);
//                     a kind CUPTI refuses is named and the program exits 3
//   --subscribe       a callback subscriber with a callback that does nothing and no domain or
//                     callback enabled: CUPTI attached, nothing asked of it
// Prints one line: "step_us=<median over reps of wall time per step> graph_gpu_us=<median over
// replays of the GPU time between the events around the launch> records=<n>
// kernels_us=<median over replays of the first kernel's start to the last kernel's end>".
// graph_gpu_us begins when the copy before the launch has landed, so it also holds any wait
// for the launch call to hand the graph over; kernels_us (the GPU's %globaltimer, read by the
// first and the last kernel and brought back by the step's copy) holds the replay alone.
// Usage: graph_floor [--steps N] [--reps R] [--warmup N] [--kernels K] [--work W]
//                    [--activity LIST] [--subscribe]
#define FLOOR_NAME "graph_floor"
#include "floor_common.cuh"
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

static const int N = 4096;  // floats each kernel works on
static const int THREADS = 256;

// What the step's copies carry: the input in (8 bytes), the first and last kernel's clocks and
// an output back (24 bytes, from t_first on).
struct Io {
    float in[2];
    unsigned long long t_first, t_last;  // %globaltimer, ns
    float out[2];
};
static const size_t IN_AT = offsetof(Io, in), BACK_FROM = offsetof(Io, t_first);

enum { FIRST = 1, LAST = 2 };

__device__ __forceinline__ unsigned long long global_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// One graph node: W dependent FMAs on each float. The first node reads the step's input and
// notes its start, the last notes its end (block 0, once the block is done) and the output.
__global__ void fma_kernel(float *x, Io *io, int work, float a, float b, int role) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if ((role & FIRST) && i == 0) io->t_first = global_ns();
    float v = x[i];
    if (role & FIRST) v += io->in[0];
    for (int k = 0; k < work; k++) v = fmaf(v, a, b);
    x[i] = v;
    if (role & LAST) {
        __syncthreads();
        if (i == 0) {
            io->out[0] = v;
            io->t_last = global_ns();
        }
    }
}

static double now_us() {
    using namespace std::chrono;
    return duration<double, std::micro>(steady_clock::now().time_since_epoch()).count();
}

static double median(std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
}

// --activity's names, in the order they are enabled.
static const char *const KIND_NAMES[] = {"graph",  "device",  "kernel", "memcpy",
                                         "memset", "runtime", "driver", "sync"};
static const int N_KINDS = sizeof(KIND_NAMES) / sizeof(KIND_NAMES[0]);

#ifdef SELF_CUPTI
static const struct {
    CUpti_ActivityKind kind;
    const char *name;
} KINDS[] = {
    {CUPTI_ACTIVITY_KIND_GRAPH_TRACE, "CUPTI_ACTIVITY_KIND_GRAPH_TRACE"},
    {CUPTI_ACTIVITY_KIND_DEVICE, "CUPTI_ACTIVITY_KIND_DEVICE"},
    {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL"},
    {CUPTI_ACTIVITY_KIND_MEMCPY, "CUPTI_ACTIVITY_KIND_MEMCPY"},
    {CUPTI_ACTIVITY_KIND_MEMSET, "CUPTI_ACTIVITY_KIND_MEMSET"},
    {CUPTI_ACTIVITY_KIND_RUNTIME, "CUPTI_ACTIVITY_KIND_RUNTIME"},
    {CUPTI_ACTIVITY_KIND_DRIVER, "CUPTI_ACTIVITY_KIND_DRIVER"},
    {CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"},
};
static_assert(sizeof(KINDS) / sizeof(KINDS[0]) == N_KINDS, "one CUPTI kind per name");

static void CUPTIAPI on_nothing(void *, CUpti_CallbackDomain, CUpti_CallbackId, const void *) {}

// Called before CUDA starts. The subscriber comes before the activity callbacks, the order of
// the injection library (and Kineto).
static void attach(unsigned kinds, bool subscribe) {
    if (subscribe) {
        CUpti_SubscriberHandle sub;
        CUPTI_CHECK(cuptiSubscribe(&sub, on_nothing, nullptr));
    }
    if (kinds == 0) return;
    CUPTI_CHECK(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
    for (int k = 0; k < N_KINDS; k++) {
        if (!(kinds & (1u << k))) continue;
        CUptiResult r = cuptiActivityEnable(KINDS[k].kind);
        if (r != CUPTI_SUCCESS) {
            const char *s = nullptr;
            cuptiGetResultString(r, &s);
            fprintf(stderr, "graph_floor: --activity %s: cuptiActivityEnable(%s) refused: %s\n",
                    KIND_NAMES[k], KINDS[k].name, s ? s : "?");
            exit(3);
        }
    }
}

static unsigned long long detach(bool activity) {
    if (activity) CUPTI_CHECK(cuptiActivityFlushAll(1));
    return g_records.load();
}
#endif

int main(int argc, char **argv) {
    int steps = 300, reps = 5, warmup = 300, kernels = 300, work = 600;
    std::string activity;
    bool subscribe = false;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a == "--subscribe") {
            subscribe = true;
            continue;
        }
        const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
        if (!v) {
            fprintf(stderr, "graph_floor: %s needs a value\n", a.c_str());
            return 1;
        }
        if (a == "--steps") steps = atoi(v);
        else if (a == "--reps") reps = atoi(v);
        else if (a == "--warmup") warmup = atoi(v);
        else if (a == "--kernels") kernels = atoi(v);
        else if (a == "--work") work = atoi(v);
        else if (a == "--activity") activity = v;
        else {
            fprintf(stderr, "graph_floor: unknown flag %s (see the header of graph_floor.cu)\n",
                    a.c_str());
            return 1;
        }
        i++;
    }
    if (steps < 1 || reps < 1 || warmup < 0 || kernels < 1 || work < 0) {
        fprintf(stderr,
                "graph_floor: --steps, --reps and --kernels must be at least 1, --warmup and "
                "--work at least 0\n");
        return 1;
    }
    // --activity: names of KIND_NAMES, comma-separated; bit k of `kinds` is KIND_NAMES[k].
    unsigned kinds = 0;
    for (size_t from = 0; !activity.empty() && from <= activity.size();) {
        size_t to = std::min(activity.find(',', from), activity.size());
        std::string name = activity.substr(from, to - from);
        int k = 0;
        while (k < N_KINDS && name != KIND_NAMES[k]) k++;
        if (k == N_KINDS) {
            fprintf(stderr,
                    "graph_floor: --activity takes graph, device, kernel, memcpy, memset, "
                    "runtime, driver and sync, comma-separated, not %s\n",
                    name.c_str());
            return 1;
        }
        kinds |= 1u << k;
        from = to + 1;
    }
#ifdef SELF_CUPTI
    attach(kinds, subscribe);
#else
    if (kinds != 0 || subscribe) {
        fprintf(stderr, "graph_floor: --activity and --subscribe need the -DSELF_CUPTI build\n");
        return 1;
    }
#endif
    CHECK(cudaSetDevice(0));
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    float *x = nullptr;
    Io *io = nullptr, *h_io = nullptr;
    CHECK(cudaMalloc(&x, N * sizeof(float)));
    CHECK(cudaMemset(x, 0, N * sizeof(float)));
    CHECK(cudaMalloc(&io, sizeof(Io)));
    CHECK(cudaMemset(io, 0, sizeof(Io)));
    CHECK(cudaMallocHost(&h_io, sizeof(Io)));  // pinned: the step's copies are truly async
    memset(h_io, 0, sizeof(Io));

    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    for (int k = 0; k < kernels; k++) {
        int role = (k == 0 ? FIRST : 0) | (k == kernels - 1 ? LAST : 0);
        fma_kernel<<<N / THREADS, THREADS, 0, s>>>(x, io, work, 0.999f, 0.001f, role);
    }
    CHECK(cudaPeekAtLastError());
    CHECK(cudaStreamEndCapture(s, &graph));
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    CHECK(cudaGraphUpload(exec, s));
    CHECK(cudaStreamSynchronize(s));

    // One pair of events per step of a rep, read once the rep's clock has stopped.
    std::vector<cudaEvent_t> ev(2 * (size_t)std::max(steps, warmup));
    for (cudaEvent_t &event : ev) CHECK(cudaEventCreate(&event));
    std::vector<double> step_us, graph_us, kernels_us;
    graph_us.reserve((size_t)steps * reps);
    kernels_us.reserve((size_t)steps * reps);
    for (int r = -1; r < reps; r++) {  // r = -1: warm-up, not kept
        int n = r < 0 ? warmup : steps;
        double t0 = now_us();
        for (int i = 0; i < n; i++) {
            h_io->in[0] = (float)(i % 1000);
            CHECK(cudaMemcpyAsync((char *)io + IN_AT, (char *)h_io + IN_AT, sizeof(h_io->in),
                                  cudaMemcpyHostToDevice, s));
            CHECK(cudaEventRecord(ev[2 * i], s));
            CHECK(cudaGraphLaunch(exec, s));
            CHECK(cudaEventRecord(ev[2 * i + 1], s));
            CHECK(cudaMemcpyAsync((char *)h_io + BACK_FROM, (char *)io + BACK_FROM,
                                  sizeof(Io) - BACK_FROM, cudaMemcpyDeviceToHost, s));
            CHECK(cudaStreamSynchronize(s));
            long long span_ns = (long long)(h_io->t_last - h_io->t_first);
            if (r >= 0) kernels_us.push_back(span_ns / 1e3);
        }
        double t1 = now_us();
        if (r < 0) continue;
        step_us.push_back((t1 - t0) / n);
        for (int i = 0; i < n; i++) {
            float ms = 0.0f;
            CHECK(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
            graph_us.push_back(ms * 1e3);
        }
    }
    unsigned long long records = 0;
#ifdef SELF_CUPTI
    records = detach(kinds != 0);
#endif
    printf("step_us=%.3f graph_gpu_us=%.3f records=%llu kernels_us=%.3f\n", median(step_us),
           median(graph_us), records, median(kernels_us));
    return 0;
}
