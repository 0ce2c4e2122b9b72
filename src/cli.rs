//! Shared helpers for the thin binaries in bench/: error-chain printing and exit codes.

/// Runs a binary's body; on error prints the whole chain ("error: a\n  caused by: b") and exits 1.
pub fn main_with(body: impl FnOnce() -> anyhow::Result<()>) {
    if let Err(e) = body() {
        eprintln!("error: {e}");
        for cause in e.chain().skip(1) {
            eprintln!("  caused by: {cause}");
        }
        std::process::exit(1);
    }
}
