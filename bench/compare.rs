//! `compare`: a per-point verdict table (SAME/FASTER/SLOWER/UNCERTAIN) between two sets of runs.

fn main() {
    opbench::cli::tools::compare(opbench::cli::tools::args());
}
