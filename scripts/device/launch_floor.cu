// What tracing costs a host-bound launch loop, per kernel: the floor under the eager overhead
// check of scripts/device/trace_workloads.sh, measured without Python's noise.
//
// The loop imitates an eager PyTorch decode: each iteration spends HOST_US of host work (a
// spin on the clock), makes QUERIES cheap runtime calls (cudaGetDevice and cudaGetLastError,
// as torch's dispatcher does around a launch) and launches one empty kernel. The GPU keeps up,
// so an iteration's time is host time: whatever a tracer adds per call shows in full.
//
// Built twice (scripts/device/trace_floor.sh says how): without -DSELF_CUPTI it is a plain
// CUDA program, to run untraced and under `trace`; with -DSELF_CUPTI (linked to libcupti) it
// can attach CUPTI itself, to measure CUPTI's own floor without any tracer's processing:
//   --activity kernel|kernel,runtime|kernel,runtime,driver   activity kinds on, records counted
//                                                            and dropped
//   --callback launch     callback API for cudaLaunchKernel only (enter/exit timestamps kept)
//   --callback domain     callback API for every runtime and driver call, filtered inside
// Prints one line: "iter_us=<median over reps> launch_us=<median launch call> records=<n>".
// Usage: launch_floor [--iters N] [--reps R] [--host-us U] [--queries Q] [--activity K]
//                     [--callback launch|domain]
#define FLOOR_NAME "launch_floor"
#include "floor_common.cuh"
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

__global__ void empty_kernel() {}

static double now_us() {
    using namespace std::chrono;
    return duration<double, std::micro>(steady_clock::now().time_since_epoch()).count();
}

#ifdef SELF_CUPTI
// One API call as a tracer would keep it: what, when, which launch.
struct ApiCall {
    uint32_t cbid, correlation;
    uint64_t start_ns, end_ns;
};
static std::vector<ApiCall> g_calls;
static thread_local uint64_t t_enter_ns = 0;

static void CUPTIAPI on_api(void *, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                            const void *data) {
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API &&
        cbid != CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000)
        return;
    if (domain == CUPTI_CB_DOMAIN_DRIVER_API) return;
    const CUpti_CallbackData *d = (const CUpti_CallbackData *)data;
    uint64_t t = 0;
    cuptiGetTimestamp(&t);
    if (d->callbackSite == CUPTI_API_ENTER) {
        t_enter_ns = t;
    } else {
        g_calls.push_back({cbid, d->correlationId, t_enter_ns, t});
    }
}

static void attach(const std::vector<std::string> &kinds, const std::string &callback) {
    if (!kinds.empty()) {
        CUPTI_CHECK(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
        for (const std::string &k : kinds) {
            if (k == "kernel")
                CUPTI_CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
            else if (k == "runtime")
                CUPTI_CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME));
            else
                CUPTI_CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER));
        }
    }
    if (!callback.empty()) {
        g_calls.reserve(1 << 22);
        CUpti_SubscriberHandle sub;
        CUPTI_CHECK(cuptiSubscribe(&sub, (CUpti_CallbackFunc)on_api, nullptr));
        if (callback == "launch") {
            CUPTI_CHECK(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API,
                                            CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
        } else {
            CUPTI_CHECK(cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API));
            CUPTI_CHECK(cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_DRIVER_API));
        }
    }
}

static unsigned long long detach(bool activity) {
    if (activity) CUPTI_CHECK(cuptiActivityFlushAll(1));
    return g_records.load() + g_calls.size();
}
#endif

int main(int argc, char **argv) {
    int iters = 20000, reps = 5, queries = 12;
    double host_us = 14.0;
    std::string activity, callback;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
        if (!v) {
            fprintf(stderr, "launch_floor: %s needs a value\n", a.c_str());
            return 1;
        }
        if (a == "--iters") iters = atoi(v);
        else if (a == "--reps") reps = atoi(v);
        else if (a == "--host-us") host_us = atof(v);
        else if (a == "--queries") queries = atoi(v);
        else if (a == "--activity") activity = v;
        else if (a == "--callback") callback = v;
        else {
            fprintf(stderr, "launch_floor: unknown flag %s (see the header of launch_floor.cu)\n",
                    a.c_str());
            return 1;
        }
        i++;
    }
    if (iters < 1 || reps < 1) {
        fprintf(stderr, "launch_floor: --iters and --reps must be at least 1\n");
        return 1;
    }
    // --activity: kernel, runtime and driver, comma-separated; --callback: launch or domain.
    std::vector<std::string> kinds;
    for (size_t from = 0; !activity.empty() && from <= activity.size();) {
        size_t to = std::min(activity.find(',', from), activity.size());
        kinds.push_back(activity.substr(from, to - from));
        if (kinds.back() != "kernel" && kinds.back() != "runtime" && kinds.back() != "driver") {
            fprintf(stderr,
                    "launch_floor: --activity takes kernel, runtime and driver, comma-separated, "
                    "not %s\n",
                    kinds.back().c_str());
            return 1;
        }
        from = to + 1;
    }
    if (!callback.empty() && callback != "launch" && callback != "domain") {
        fprintf(stderr, "launch_floor: --callback takes launch or domain, not %s\n",
                callback.c_str());
        return 1;
    }
#ifdef SELF_CUPTI
    attach(kinds, callback);
#else
    if (!activity.empty() || !callback.empty()) {
        fprintf(stderr, "launch_floor: --activity and --callback need the -DSELF_CUPTI build\n");
        return 1;
    }
#endif
    CHECK(cudaSetDevice(0));
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    std::vector<double> iter_us, launch_us;
    launch_us.reserve((size_t)iters * reps);
    for (int r = -1; r < reps; r++) {  // r = -1: warm-up, not kept
        double t0 = now_us();
        for (int i = 0; i < iters; i++) {
            double until = now_us() + host_us;
            while (now_us() < until) {
            }
            int dev = 0;
            for (int q = 0; q < queries; q++) {
                if (q % 2 == 0) CHECK(cudaGetDevice(&dev));
                else CHECK(cudaGetLastError());
            }
            double l0 = now_us();
            empty_kernel<<<1, 32, 0, s>>>();
            if (r >= 0) launch_us.push_back(now_us() - l0);
        }
        CHECK(cudaStreamSynchronize(s));
        if (r >= 0) iter_us.push_back((now_us() - t0) / iters);
    }
    unsigned long long records = 0;
#ifdef SELF_CUPTI
    records = detach(!activity.empty());
#endif
    std::sort(iter_us.begin(), iter_us.end());
    std::nth_element(launch_us.begin(), launch_us.begin() + launch_us.size() / 2, launch_us.end());
    printf("iter_us=%.4f launch_us=%.4f records=%llu\n", iter_us[iter_us.size() / 2],
           launch_us[launch_us.size() / 2], records);
    return 0;
}
