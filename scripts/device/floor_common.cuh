// What the floor programs (launch_floor.cu, graph_floor.cu) share: error checks that name the
// program and exit with a code of their own (2: CUDA, 3: CUPTI), and, in the -DSELF_CUPTI
// builds, activity buffers whose records are counted and dropped, so that CUPTI's own cost is
// measured without any tracer's processing. Define FLOOR_NAME (the program's name) first.
#pragma once
#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#ifdef SELF_CUPTI
#include <cupti.h>
#endif

#define CHECK(call)                                                                       \
    do {                                                                                  \
        cudaError_t e = (call);                                                           \
        if (e != cudaSuccess) {                                                           \
            fprintf(stderr, FLOOR_NAME ": %s: %s\n", #call, cudaGetErrorString(e));       \
            exit(2);                                                                      \
        }                                                                                 \
    } while (0)

#ifdef SELF_CUPTI
#define CUPTI_CHECK(call)                                                                 \
    do {                                                                                  \
        CUptiResult r = (call);                                                           \
        if (r != CUPTI_SUCCESS) {                                                         \
            const char *s = nullptr;                                                      \
            cuptiGetResultString(r, &s);                                                  \
            fprintf(stderr, FLOOR_NAME ": %s: %s\n", #call, s ? s : "?");                 \
            exit(3);                                                                      \
        }                                                                                 \
    } while (0)

// Activity records seen; CUPTI may complete buffers on its own thread.
static std::atomic<unsigned long long> g_records{0};
static const size_t BUF_BYTES = 8 << 20;

static void CUPTIAPI buffer_requested(uint8_t **buf, size_t *size, size_t *max_records) {
    *buf = (uint8_t *)aligned_alloc(8, BUF_BYTES);
    *size = BUF_BYTES;
    *max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t *buf, size_t, size_t valid) {
    CUpti_Activity *rec = nullptr;
    unsigned long long n = 0;
    while (cuptiActivityGetNextRecord(buf, valid, &rec) == CUPTI_SUCCESS) n++;
    g_records += n;
    free(buf);
}
#endif
