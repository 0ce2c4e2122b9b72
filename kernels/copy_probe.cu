//! A plain streaming copy kernel, the memory floor any one-read-one-write kernel can reach:
//! timed beside cuMemcpyDtoD at each size so a kernel's fixed cost per launch (grid launch,
//! first-load latency, last-wave tail) can be told apart from the copy engine's.
//!
//! Persistent grid, 16-byte accesses, four independent loads per thread issued before their
//! stores, evict-first (.cs) hints on both sides as the data is touched once.

extern "C" __global__ void __launch_bounds__(256) opbench_copy16(const uint4* __restrict__ src,
                                                                uint4* __restrict__ dst,
                                                                long long n) {
    constexpr int U = 4;
    const long long stride = (long long)gridDim.x * blockDim.x;
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + (U - 1) * stride < n; i += U * stride) {
        uint4 v[U];
#pragma unroll
        for (int u = 0; u < U; ++u) v[u] = __ldcs(src + i + u * stride);
#pragma unroll
        for (int u = 0; u < U; ++u) __stcs(dst + i + u * stride, v[u]);
    }
    for (; i < n; i += stride) __stcs(dst + i, __ldcs(src + i));
}
