//! `kernel_bench`: benchmark user CUDA kernels from a .cu file (NVRTC, sweep, check, time, ncu).

use clap::Parser;

fn main() {
    opbench::cli::main_with(|| opbench::kernels::main(opbench::kernels::Args::parse()));
}
