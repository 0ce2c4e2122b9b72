//! Shared helpers for the thin binaries in bench/: error-chain printing, exit codes, and
//! what Ctrl-C prints.

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
