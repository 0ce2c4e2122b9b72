//! `history`: record finished artifacts into the run history, and list what it holds.

use clap::{Parser, Subcommand};
use opbench::history::{record, History, RecordOptions, HISTORY_DIR};
use std::path::PathBuf;

/// The run history: every finished benchmark run kept as one small file,
/// `<artifacts>/history/<kind>/<YYYYmmddTHHMMSSZ>-<commit12>-<gpu>-<run>.json.gz`
/// (per point: median, its 95% interval, P5/P95, n, metrics; gzip-compressed JSON).
/// One file per run, so machines that add runs in parallel never conflict.
#[derive(Parser)]
#[command(version)]
struct Args {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Copy finished artifacts into the history (idempotent: recording a run twice is a no-op).
    Record {
        /// Artifact files (.json) written by a benchmark.
        #[arg(required = true)]
        artifacts: Vec<PathBuf>,
        /// The artifacts folder whose history/ receives the runs.
        #[arg(long, default_value = "artifacts")]
        into: PathBuf,
        /// Accept runs made from a working tree with uncommitted changes.
        #[arg(long)]
        allow_dirty: bool,
    },
    /// List recorded runs, oldest first: time, commit, GPU, kind, points, file size.
    List {
        /// The artifacts folder whose history/ is listed.
        #[arg(long, default_value = "artifacts")]
        artifacts: PathBuf,
        /// Only runs on a GPU whose name contains this (e.g. h100).
        #[arg(long)]
        gpu: Option<String>,
        /// Only runs of this commit (hex prefix).
        #[arg(long)]
        commit: Option<String>,
        /// Only runs of this kind (layernorm, gemm, llm, ...).
        #[arg(long)]
        kind: Option<String>,
    },
    /// Write a SYNTHETIC history (seeded RNG, marked as such in every file) for demos and
    /// for measuring size and load time. Refuses folders named `artifacts` so fake runs never
    /// mix with measured ones.
    Synth {
        /// Folder whose history/ receives the runs (must not be, or lie in, an `artifacts` folder).
        #[arg(long)]
        out: PathBuf,
        /// Number of commits; each gets one run of every kind on every GPU.
        #[arg(long, default_value_t = 10)]
        commits: usize,
        /// GPU names to run on.
        #[arg(long, default_values_t = ["NVIDIA H100 80GB HBM3".to_string(), "NVIDIA H200".to_string()])]
        gpu: Vec<String>,
        /// Seed of the first run.
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
}

fn synth(out: &std::path::Path, commits: usize, gpus: &[String], seed: u64) -> anyhow::Result<()> {
    use opbench::history::synthetic::{commit, run, started, RunSpec};
    if out.components().any(|c| c.as_os_str() == "artifacts") {
        anyhow::bail!(
            "--out {} lies in an `artifacts` folder: synthetic runs must not mix with measured ones",
            out.display()
        );
    }
    let dir = out.join(HISTORY_DIR);
    let bar = indicatif::ProgressBar::new((commits * gpus.len() * 3) as u64);
    let mut s = seed;
    for i in 0..commits {
        for gpu in gpus {
            for kind in ["layernorm", "gemm", "llm"] {
                let a = run(&RunSpec::new(kind, &commit(i), gpu, &started(i), s));
                opbench::history::record_artifact(&a, &dir, RecordOptions::default())?;
                s += 1;
                bar.inc(1);
            }
        }
    }
    bar.finish_and_clear();
    println!("wrote {} synthetic runs into {}", s - seed, dir.display());
    Ok(())
}

fn main() {
    opbench::cli::main_with(|| match Args::parse().cmd {
        Cmd::Record {
            artifacts,
            into,
            allow_dirty,
        } => {
            let dir = into.join(HISTORY_DIR);
            for a in &artifacts {
                let r = record(a, &dir, RecordOptions { allow_dirty })?;
                println!(
                    "{} {} ({} bytes)",
                    if r.already_present {
                        "already recorded:"
                    } else {
                        "recorded"
                    },
                    r.path.display(),
                    r.bytes
                );
            }
            Ok(())
        }
        Cmd::List {
            artifacts,
            gpu,
            commit,
            kind,
        } => {
            let h = History::load(&artifacts.join(HISTORY_DIR), true)?;
            for w in &h.warnings {
                eprintln!("warning: {w}");
            }
            let runs = h.find(commit.as_deref(), gpu.as_deref(), kind.as_deref());
            let mut total = 0u64;
            for r in &runs {
                let bytes = std::fs::metadata(h.root.join(&r.file))
                    .map(|m| m.len())
                    .unwrap_or(0);
                total += bytes;
                println!(
                    "{}  {}  {:<28}  {:<10}  {:>4} points  {:>7} bytes  {}",
                    r.started_utc(),
                    r.commit()
                        .map(|c| c.chars().take(12).collect::<String>())
                        .unwrap_or_else(|| "no commit".into()),
                    r.gpu(),
                    r.kind(),
                    r.record.points.len(),
                    bytes,
                    r.file
                );
            }
            println!(
                "{} runs, {} commits, {} bytes",
                runs.len(),
                runs.iter()
                    .map(|r| r.commit().unwrap_or(""))
                    .collect::<std::collections::BTreeSet<_>>()
                    .len(),
                total
            );
            Ok(())
        }
        Cmd::Synth {
            out,
            commits,
            gpu,
            seed,
        } => synth(&out, commits, &gpu, seed),
    });
}
