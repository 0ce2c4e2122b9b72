//! `compare`: a per-point verdict table (SAME/FASTER/SLOWER/UNCERTAIN) between two sets of runs.

use clap::Parser;

fn main() {
    opbench::cli::main_with(|| opbench::compare::cli::run(opbench::compare::cli::Args::parse()));
}
