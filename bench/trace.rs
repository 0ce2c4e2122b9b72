//! `trace`: profile any CUDA workload through the CUPTI injection library (see `--help`).

fn main() {
    opbench::cli::tools::trace(opbench::cli::tools::args());
}
