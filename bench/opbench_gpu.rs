//! `opbench-gpu`: the wheel's binary linked against the CUDA libraries; runs every tool, and is
//! what the `opbench` launcher runs for `kernel_bench` and the other GPU tools.

fn main() {
    opbench::cli::tools::multicall("opbench-gpu", &|name| {
        opbench::cli::tools::gpu_tool(name).or_else(|| opbench::cli::tools::cpu_tool(name))
    });
}
