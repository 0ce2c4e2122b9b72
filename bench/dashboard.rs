//! `dashboard`: render the benchmark artifacts into a static site (HTML + Plotly, no server).

fn main() {
    opbench::cli::tools::dashboard(opbench::cli::tools::args());
}
