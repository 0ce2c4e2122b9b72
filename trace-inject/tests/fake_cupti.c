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
/* The thread-id type last set (-1: never), for fake_thread_id_type. */
static int thread_id_type = -1;
int cuptiSetThreadIdType(int type) { thread_id_type = type; return 0; }
int fake_thread_id_type(void) { return thread_id_type; }
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
static int subscribers;
int cuptiFinalize(void) { finalized = 1; requested = NULL; completed = NULL; subscribers = 0; return 0; }
/* As CUPTI 13.0 was seen to do: a callback-API subscriber is refused (39,
 * MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) while another client's activity callbacks are
 * registered, and accepted once that client detached (cuptiFinalize). One subscriber at a
 * time: a second is refused until the first unsubscribes. The library subscribes before it
 * registers its activity callbacks, as Kineto does. */
typedef void (*api_callback_fn)(void *userdata, int domain, uint32_t cbid, const void *data);
static api_callback_fn subscriber_fn;
static void *subscriber_data;
enum { FAKE_CBIDS = 1024 };
static uint8_t callback_on[3][FAKE_CBIDS]; /* per domain (1 driver, 2 runtime) */
int cuptiSubscribe(void **subscriber, void *callback, void *userdata) {
    if (requested || subscribers) return 39;
    *subscriber = (void *)1;
    subscribers = 1;
    subscriber_fn = (api_callback_fn)callback;
    subscriber_data = userdata;
    memset(callback_on, 0, sizeof callback_on);
    return 0;
}
int cuptiUnsubscribe(void *subscriber) {
    if (subscriber != (void *)1 || !subscribers) return 1;
    subscribers = 0;
    subscriber_fn = NULL;
    return 0;
}
int cuptiEnableCallback(uint32_t enable, void *subscriber, int domain, uint32_t cbid) {
    if (subscriber != (void *)1 || !subscribers || domain < 1 || domain > 2 || cbid >= FAKE_CBIDS)
        return 1;
    callback_on[domain][cbid] = (uint8_t)enable;
    return 0;
}
/* Subscribers now (0 or 1). */
int fake_subscribers(void) { return subscribers; }
/* How many callback ids of a domain have their callback enabled. */
int fake_callbacks_on(int domain) {
    int n = 0, i;
    for (i = 0; i < FAKE_CBIDS; i++) n += callback_on[domain][i];
    return n;
}
/* CUpti_CallbackData as CUPTI 13 lays it out. */
struct callback_data {
    int site; /* 0 enter, 1 exit */
    const char *function_name;
    const void *params;
    void *return_value;
    const char *symbol_name;
    void *context;
    uint32_t context_uid;
    uint64_t *correlation_data;
    uint32_t correlation_id;
};
/* One API call as CUPTI would report it to the subscriber: entry, then exit with `ret`.
 * Returns 1 when the subscriber was called (its callback is enabled for the call). */
int fake_api_call(int domain, uint32_t cbid, uint32_t correlation, int ret) {
    uint64_t slot = 0;
    int value = ret;
    struct callback_data d = {0, "fake", NULL, NULL, NULL, NULL, 1, &slot, correlation};
    if (!subscribers || !subscriber_fn || domain < 1 || domain > 2 || cbid >= FAKE_CBIDS || !callback_on[domain][cbid])
        return 0;
    subscriber_fn(subscriber_data, domain, cbid, &d);
    d.site = 1;
    d.return_value = &value;
    subscriber_fn(subscriber_data, domain, cbid, &d);
    return 1;
}
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
/* Attribute 9 (per-thread activity buffers, a uint8_t): kept for fake_per_thread; it may only
 * be set while no buffer callbacks are registered, as CUPTI requires (17, NOT_INITIALIZED
 * stands for the refusal). Other attributes are accepted and ignored. */
static int per_thread = -1;
int cuptiActivitySetAttribute(int attr, size_t *size, void *value) {
    if (attr != 9) return 0;
    if (!size || *size != 1) return 1;
    if (completed && *(uint8_t *)value) return 17;
    per_thread = *(uint8_t *)value;
    return 0;
}
int fake_per_thread(void) { return per_thread; }
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
