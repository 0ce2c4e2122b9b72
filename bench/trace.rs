//! `trace`: profile any CUDA workload through the CUPTI injection library (see `--help`).

use clap::Parser;

fn main() {
    let args = opbench::trace::cli::Args::parse();
    match opbench::trace::cli::run(args) {
        Ok(exit) => opbench::trace::cli::exit_as(exit),
        Err(e) => {
            eprintln!("error: {e}");
            for cause in e.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            std::process::exit(1);
        }
    }
}
