//! comm_bench: NCCL collectives across the GPUs of a host, one process per GPU under a launcher (torchrun); writes artifacts/comm.json.

use clap::Parser;

fn main() {
    opbench::cli::main_with(|| opbench::comm::cli::run(opbench::comm::cli::Args::parse()));
}
