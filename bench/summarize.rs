//! `summarize`: merge every artifact under a folder into summary.json and summary.csv.

fn main() {
    opbench::cli::tools::summarize(opbench::cli::tools::args());
}
