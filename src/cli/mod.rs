//! Shared helpers for the thin binaries in bench/: error-chain printing, exit codes, what Ctrl-C
//! prints, number flags, list flags and the guard on output flags.

pub mod launch;
mod lists;
mod numbers;
pub mod output;
pub mod tools;

pub use lists::{dedup_flag, dedup_flag_by, dedup_warn, dedup_warn_by, repeats};
pub use numbers::{
    at_least_two, budget_ms, count, count_u64, positive, positive_f32, positive_f64, positive_u64,
    MAX_BUDGET_MS,
};

/// Runs a binary's body; on error prints the whole chain ("error: a\n  caused by: b") and exits 1.
/// Ctrl-C and SIGTERM print what the runs in progress kept (see `artifact::interrupt`).
pub fn main_with(body: impl FnOnce() -> anyhow::Result<()>) {
    crate::artifact::interrupt::install();
    if let Err(e) = body() {
        eprintln!("error: {e}");
        for cause in e.chain().skip(1) {
            eprintln!("  caused by: {cause}");
        }
        std::process::exit(1);
    }
}
