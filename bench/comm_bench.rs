//! comm_bench: NCCL collectives across the GPUs of a host, one process per GPU under a launcher (torchrun); writes artifacts/comm.json.

fn main() {
    opbench::cli::tools::comm_bench(opbench::cli::tools::args());
}
