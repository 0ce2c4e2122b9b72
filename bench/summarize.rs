//! `summarize`: merge every artifact under a folder into summary.json and summary.csv.

use clap::Parser;

fn main() {
    opbench::cli::main_with(|| opbench::summary::cli::run(opbench::summary::cli::Args::parse()));
}
