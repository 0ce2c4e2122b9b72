/* A stand-in libcupti for the injection library's CPU test: the CUPTI functions the library
 * calls, with activity records supplied by the test (fake_set_records) and handed over in one
 * buffer when someone flushes with cuptiActivityFlushAll. As in the real CUPTI, the periodic
 * flush (cuptiActivityFlushPeriod) never hands over a buffer that is not full: the records
 * here never fill one. The fake_* functions let the test see what the library did: kinds
 * enabled now, whose callbacks are registered, whether cuptiFinalize was called. Result codes
 * are CUPTI's: 0 success, 1 invalid parameter, 12 max limit reached (no more records). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef void (*requested_fn)(uint8_t **buffer, size_t *size, size_t *max);
typedef void (*completed_fn)(void *ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid);

static requested_fn requested;
static completed_fn completed;
static const uint8_t *records;
static const size_t *sizes;
static size_t count;
static size_t index_, offset;
static uint64_t clock_ns = 1000000;

static size_t align8(size_t n) { return (n + 7) & ~(size_t)7; }

void fake_set_records(const uint8_t *data, const size_t *record_sizes, size_t n) {
    records = data;
    sizes = record_sizes;
    count = n;
}

/* FAKE_CUPTI_VERSION stands for another CUPTI's version; FAKE_DEFAULT_VERSION, set when
   compiling, tells two builds apart. */
#ifndef FAKE_DEFAULT_VERSION
#define FAKE_DEFAULT_VERSION 130001
#endif
int cuptiGetVersion(uint32_t *v) {
    const char *e = getenv("FAKE_CUPTI_VERSION");
    *v = e ? (uint32_t)strtoul(e, NULL, 10) : FAKE_DEFAULT_VERSION;
    return 0;
}
int cuptiGetTimestamp(uint64_t *t) { clock_ns += 10; *t = clock_ns; return 0; }
int cuptiSetThreadIdType(int type) { (void)type; return 0; }
static int registrations, finalized;
int cuptiActivityRegisterCallbacks(requested_fn r, completed_fn c) {
    requested = r;
    completed = c;
    registrations++;
    return 0;
}
int fake_registrations(void) { return registrations; }
int fake_finalized(void) { return finalized; }
int fake_completed_is(completed_fn c) { return completed == c; }
int cuptiFinalize(void) { finalized = 1; requested = NULL; completed = NULL; return 0; }
/* As CUPTI 13.0 was seen to do: a callback-API subscriber is refused (39,
 * MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) while another client's activity callbacks are
 * registered, and accepted once that client detached (cuptiFinalize). */
static int subscribers;
int cuptiSubscribe(void **subscriber, void *callback, void *userdata) {
    (void)callback; (void)userdata;
    if (requested) return 39;
    *subscriber = (void *)1;
    subscribers++;
    return 0;
}
int fake_subscribers(void) { return subscribers; }
/* Synchronization (38) is refused, as a CUPTI without it would; once graph-level tracing
 * (51) is on, so is the concurrent-kernel kind (10), as CUPTI may do. */
static int graph_trace_on;
static uint64_t enabled; /* one bit per kind (every kind used is below 64) */
int cuptiActivityEnable(int kind) {
    if (kind == 51) graph_trace_on = 1;
    if (kind == 38 || (kind == 10 && graph_trace_on)) return 1;
    enabled |= (uint64_t)1 << kind;
    return 0;
}
int cuptiActivityDisable(int kind) { enabled &= ~((uint64_t)1 << kind); return 0; }
int fake_enabled(void) { return __builtin_popcountll(enabled); }
int cuptiActivityFlushPeriod(uint32_t ms) { (void)ms; return 0; }
int cuptiActivityFlushAll(uint32_t flag) {
    (void)flag;
    if (!requested || !completed || count == 0) return 0;
    uint8_t *buf = NULL;
    size_t size = 0, max = 0, off = 0, i, src = 0;
    requested(&buf, &size, &max);
    for (i = 0; i < count; i++) {
        memcpy(buf + off, records + src, sizes[i]);
        off += align8(sizes[i]);
        src += sizes[i];
    }
    count = 0;
    completed(NULL, 0, buf, size, off);
    return 0;
}
int cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, void **record) {
    if (*record == NULL) {
        index_ = 0;
        offset = 0;
    } else {
        offset += align8(sizes[index_]);
        index_ += 1;
    }
    if (offset >= valid) return 12;
    *record = buffer + offset;
    return 0;
}
int cuptiActivityGetNumDroppedRecords(void *ctx, uint32_t stream, size_t *dropped) {
    (void)ctx;
    (void)stream;
    *dropped = 2;
    return 0;
}
/* Callback ids 3 and 4 of each domain are queries (cudaGetDevice, cuCtxGetCurrent, ...);
 * every other id is named as the launch call. */
int cuptiGetCallbackName(int domain, uint32_t cbid, const char **name) {
    if (cbid == 3) *name = domain == 2 ? "cudaGetDevice_v3020" : "cuCtxGetCurrent";
    else if (cbid == 4) *name = domain == 2 ? "cudaGetLastError_v3020" : "cuDeviceGetAttribute";
    else *name = domain == 2 ? "cudaLaunchKernel_v7000" : "cuLaunchKernel";
    return 0;
}
/* How many callback ids of each domain (1 driver, 2 runtime) had their records turned off. */
static int api_off[3];
int fake_api_off(int domain) { return api_off[domain]; }
int cuptiActivityEnableRuntimeApi(uint32_t cbid, uint8_t enable) {
    (void)cbid;
    if (!enable) api_off[2]++;
    return 0;
}
int cuptiActivityEnableDriverApi(uint32_t cbid, uint8_t enable) {
    (void)cbid;
    if (!enable) api_off[1]++;
    return 0;
}
