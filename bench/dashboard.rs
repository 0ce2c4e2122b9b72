//! `dashboard`: render the benchmark artifacts into a static site (HTML + Plotly, no server).

use clap::Parser;

fn main() {
    opbench::cli::main_with(|| opbench::site::cli::run(opbench::site::cli::Args::parse()));
}
