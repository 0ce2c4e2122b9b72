//! `gemm_bench`: GEMM sweeps, cuBLAS against a ladder of our own kernels (see --help).

fn main() {
    opbench::cli::tools::gemm_bench(opbench::cli::tools::args());
}
