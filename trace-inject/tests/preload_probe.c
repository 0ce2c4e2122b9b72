/* A program that uses CUPTI itself, linked against the fake libcupti (a DT_NEEDED entry, as
 * libtorch_cuda has): run with the injection library in LD_PRELOAD, it calls the library's
 * InitializeInjection (as the CUDA driver would) and then registers its own activity callbacks
 * through its ordinary binding to libcupti, which the preloaded library intercepts.
 * Exit codes: 0 the callbacks reached libcupti; 10 no preloaded InitializeInjection; 11 the
 * registration failed; 12 libcupti holds other callbacks. */
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>

typedef void (*requested_fn)(uint8_t **buffer, size_t *size, size_t *max);
typedef void (*completed_fn)(void *ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid);
int cuptiActivityRegisterCallbacks(requested_fn r, completed_fn c);
int fake_completed_is(completed_fn c);

static void requested(uint8_t **buffer, size_t *size, size_t *max) {
    *buffer = NULL;
    *size = 0;
    *max = 0;
}
static void completed(void *ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid) {
    (void)ctx; (void)stream; (void)buffer; (void)size; (void)valid;
}

int main(void) {
    int (*init)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "InitializeInjection");
    if (!init) return 10;
    init();
    if (cuptiActivityRegisterCallbacks(requested, completed) != 0) return 11;
    return fake_completed_is(completed) ? 0 : 12;
}
