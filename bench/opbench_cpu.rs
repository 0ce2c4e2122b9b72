//! `opbench-cpu`: the wheel's binary of the tools that need no GPU (`trace`, `compare`,
//! `summarize`, `dashboard`, `history`); the `opbench` launcher runs it.

fn main() {
    opbench::cli::tools::multicall("opbench-cpu", &opbench::cli::tools::cpu_tool);
}
