//! `opbench_env`: print this machine's environment block (host, GPU via NVML) as JSON.

fn main() {
    opbench::cli::tools::opbench_env(opbench::cli::tools::args());
}
