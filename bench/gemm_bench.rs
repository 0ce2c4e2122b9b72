//! `gemm_bench`: GEMM sweeps, cuBLAS against a ladder of our own kernels (see --help).

use clap::Parser;

fn main() {
    opbench::cli::main_with(|| opbench::gemm::run(&opbench::gemm::GemmArgs::parse()));
}
