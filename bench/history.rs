//! `history`: record finished artifacts into the run history, and list what it holds.

use clap::Parser;

fn main() {
    opbench::cli::main_with(|| opbench::history::cli::run(opbench::history::cli::Args::parse()));
}
