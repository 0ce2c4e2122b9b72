//! `history`: record finished artifacts into the run history, and list what it holds.

fn main() {
    opbench::cli::tools::history(opbench::cli::tools::args());
}
