//! `opbench`: the wheel's command. Finds the CUDA libraries of its Python environment and runs
//! `opbench-cpu` or `opbench-gpu` beside it (src/cli/launch.rs, included by path so that this
//! binary links nothing but the standard library and starts anywhere).

#[path = "../src/cli/launch.rs"]
mod launch;

fn main() {
    launch::main()
}
