//! `summarize`'s command line: its arguments, and the merge they ask for.

use clap::Parser;
use std::path::PathBuf;

/// Merge every benchmark artifact (*.json) under a folder into summary.json (all results
/// grouped by kind, with their environments) and summary.csv (one flat row per result).
/// A malformed, truncated, future-version or non-finite artifact stops it with a message
/// naming the file and field, unless --skip-invalid. Inputs are never modified.
#[derive(Parser)]
#[command(
    version,
    after_help = "Example:\n  summarize --artifacts artifacts --out-dir /tmp/summary\n  (writes \
                  /tmp/summary/summary.json and summary.csv)"
)]
pub struct Args {
    /// Folder to read artifacts from (searched recursively).
    #[arg(long, default_value = "artifacts")]
    artifacts: PathBuf,
    /// Folder to write summary.json and summary.csv into [default: the --artifacts folder].
    #[arg(long)]
    out_dir: Option<PathBuf>,
    /// Warn about invalid artifacts and leave them out instead of failing.
    #[arg(long)]
    skip_invalid: bool,
    /// Replace summary.json or summary.csv in --out-dir even when they do not hold an earlier
    /// summary (without this flag such a file is left alone and nothing is written).
    #[arg(long)]
    overwrite: bool,
}

/// Runs the command with its parsed arguments.
pub fn run(args: Args) -> anyhow::Result<()> {
    let out_dir = args.out_dir.unwrap_or_else(|| args.artifacts.clone());
    check_out_dir(&out_dir, args.overwrite)?;
    let o = super::run(&args.artifacts, &out_dir, args.skip_invalid)?;
    for w in &o.warnings {
        eprintln!("warning: {w}");
    }
    println!(
        "summarized {} results from {} artifacts into {} and {}",
        o.results,
        o.artifacts,
        o.json.display(),
        o.csv.display()
    );
    Ok(())
}

/// `--out-dir` passes the output guard: a folder, whose summary.json and summary.csv are
/// earlier summaries (or absent) unless --overwrite.
fn check_out_dir(out_dir: &std::path::Path, overwrite: bool) -> anyhow::Result<()> {
    use crate::cli::output::{check_output_dir, json_object_with, starts_with, DirFile, OutputDir};
    let files = &[
        DirFile {
            name: super::SUMMARY_JSON,
            what: "an opbench summary (JSON with `kinds`)",
            ours: |b| json_object_with(b, "kinds"),
        },
        DirFile {
            name: super::SUMMARY_CSV,
            what: "an opbench summary CSV",
            ours: |b| starts_with(b, "kind,file,"),
        },
    ];
    let o = OutputDir {
        flag: "--out-dir",
        path: out_dir,
        files,
    };
    check_output_dir(&o, &[], overwrite)
}
