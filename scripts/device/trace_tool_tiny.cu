// A small CUDA program with known activity counts, for checking `trace` on a GPU
// (scripts/device/trace_tool.sh): 100 `scale` kernels on two streams, one CUDA graph of three
// `add_one` kernels launched 5 times (15 graph kernels, 5 graph launches), 2 memcpys
// (HtoD, DtoH), 1 memset, and 3 NVTX push/pop ranges ("setup", "streams", "graph").
// Usage: tiny [EXIT_CODE] [loop]   ("loop": after the counted part, launch kernels until
// killed, for the SIGKILL check).
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

__global__ void scale(float *x, int n, float a) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}

__global__ void add_one(float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
}

#define CHECK(call)                                                                 \
    do {                                                                            \
        cudaError_t e = (call);                                                     \
        if (e != cudaSuccess) {                                                     \
            fprintf(stderr, "tiny: %s: %s\n", #call, cudaGetErrorString(e));        \
            return 2;                                                               \
        }                                                                           \
    } while (0)

int main(int argc, char **argv) {
    int exit_code = argc > 1 ? atoi(argv[1]) : 0;
    bool loop = argc > 2 && strcmp(argv[2], "loop") == 0;
    const int n = 1 << 20, threads = 256, blocks = n / threads;
    float *d = nullptr;
    float *h = (float *)calloc(n, sizeof(float));
    cudaStream_t s[2];
    CHECK(cudaMalloc(&d, n * sizeof(float)));
    CHECK(cudaStreamCreate(&s[0]));
    CHECK(cudaStreamCreate(&s[1]));

    nvtxRangePushA("setup");
    CHECK(cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemset(d, 0, n * sizeof(float)));
    nvtxRangePop();

    nvtxRangePushA("streams");
    for (int i = 0; i < 100; i++) scale<<<blocks, threads, 0, s[i % 2]>>>(d, n, 1.0f);
    nvtxRangePop();
    CHECK(cudaDeviceSynchronize());

    cudaGraph_t g;
    cudaGraphExec_t ge;
    CHECK(cudaStreamBeginCapture(s[0], cudaStreamCaptureModeGlobal));
    for (int k = 0; k < 3; k++) add_one<<<blocks, threads, 0, s[0]>>>(d, n);
    CHECK(cudaStreamEndCapture(s[0], &g));
    CHECK(cudaGraphInstantiate(&ge, g, 0));
    nvtxRangePushA("graph");
    for (int r = 0; r < 5; r++) CHECK(cudaGraphLaunch(ge, s[0]));
    nvtxRangePop();
    CHECK(cudaStreamSynchronize(s[0]));
    CHECK(cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost));
    printf("tiny: 115 kernels (15 in a graph of 5 launches), 2 memcpy, 1 memset, 3 ranges; "
           "h[0] = %.0f (15 expected)\n", h[0]);
    fflush(stdout);
    while (loop) {
        scale<<<blocks, threads, 0, s[1]>>>(d, n, 1.0f);
        CHECK(cudaStreamSynchronize(s[1]));
        usleep(1000);
    }
    return exit_code;
}
