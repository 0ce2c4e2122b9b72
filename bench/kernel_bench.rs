//! `kernel_bench`: benchmark user CUDA kernels from a .cu file (NVRTC, sweep, check, time, ncu).

fn main() {
    opbench::cli::tools::kernel_bench(opbench::cli::tools::args());
}
