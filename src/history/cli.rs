//! `history`'s command line: record, list and synth.

use super::synth::{SynthOptions, SYNTH_KINDS};
use super::{record, History, RecordOptions, HISTORY_DIR};
use clap::{Parser, Subcommand};
use std::path::PathBuf;

/// The run history: every finished benchmark run kept as one small file,
/// `<artifacts>/history/<kind>/<YYYYmmddTHHMMSSZ>-<commit12>-<gpu>-<run>.json.gz`
/// (per point: median, its 95% interval, P5/P95, n, metrics; gzip-compressed JSON).
/// One file per run, so machines that add runs in parallel never conflict.
#[derive(Parser)]
#[command(
    version,
    after_help = "Examples:\n  history record artifacts/gemm.json --artifacts artifacts\n  \
                  history list --artifacts artifacts --kind gemm\n  \
                  history calibrate --artifacts artifacts --processes 1,2 --json artifacts/calibration.json"
)]
pub struct Args {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
pub enum Cmd {
    /// Copy finished artifacts into the history (idempotent: recording a run twice is a no-op).
    Record {
        /// Artifact files (.json) written by a benchmark.
        #[arg(required = true, value_name = "ARTIFACT")]
        files: Vec<PathBuf>,
        /// The artifacts folder whose history/ receives the runs (as `history list
        /// --artifacts`; `--into` is the same flag).
        #[arg(
            long = "artifacts",
            visible_alias = "into",
            default_value = "artifacts"
        )]
        artifacts_dir: PathBuf,
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
    /// Measure the regression gate on the runs under a folder: for every pair of sides of one
    /// kind and GPU that ran the same code (the rows' `code` hashes, else one clean commit),
    /// the false-alarm rate (pairs with a FASTER/SLOWER/FAILED line of our code), the share of
    /// our GPU-time lines decided, and the power on planted 2/5/10% slowdowns of our rows of at
    /// least 10 us; per kind, GPU, scope (one board or two) and processes a side. Each pair is
    /// judged with the history minus its own runs.
    Calibrate {
        /// A folder of artifacts and/or history files (searched recursively).
        #[arg(long, default_value = "artifacts")]
        artifacts: PathBuf,
        /// Minimum effect, as for `compare`.
        #[arg(long, default_value_t = crate::compare::DEFAULT_MIN_EFFECT, value_parser = crate::cli::positive_f64)]
        min_effect: f64,
        /// Runs a side in each pair (disjoint same-code runs of one board, or of two), as
        /// the gate runs processes a side; several, comma-separated, give a table each.
        #[arg(long, default_value = "1", value_delimiter = ',', value_parser = crate::cli::positive)]
        processes: Vec<usize>,
        /// Also write the figures, with what they came from, as JSON to this file: as
        /// ARTIFACTS/calibration.json the history page and `compare` show them.
        #[arg(long, value_name = "FILE.json")]
        json: Option<PathBuf>,
        /// Replace --json's file even when it holds something other than a calibration.
        #[arg(long)]
        overwrite: bool,
    },
    /// Write a SYNTHETIC history (seeded RNG; every run has `run.synthetic: true` and is shown
    /// as SYNTHETIC by `history list`, `compare` and the dashboard) for demos and for measuring
    /// size and load time. Writes only into a new or empty folder, or one holding nothing but
    /// earlier synthetic runs, and never into an `artifacts` folder, so fake runs never mix
    /// with measured ones.
    Synth {
        /// A new or empty folder (or one holding only synthetic runs) whose history/ receives
        /// the runs; not an `artifacts` folder.
        #[arg(long)]
        out: PathBuf,
        /// Number of commits; each gets one run of every kind on every GPU.
        #[arg(
            long,
            default_value_t = 10,
            allow_negative_numbers = true,
            value_parser = crate::cli::count
        )]
        commits: usize,
        /// GPU names to run on.
        #[arg(
            long,
            default_values_t = ["NVIDIA H100 80GB HBM3".to_string(), "NVIDIA H200".to_string()]
        )]
        gpu: Vec<String>,
        /// Seed of the first run.
        #[arg(
            long,
            default_value_t = 1,
            allow_negative_numbers = true,
            value_parser = crate::cli::count_u64
        )]
        seed: u64,
    },
}

/// Runs the command with its parsed arguments.
pub fn run(a: Args) -> anyhow::Result<()> {
    match a.cmd {
        Cmd::Calibrate {
            artifacts,
            min_effect,
            processes,
            json,
            overwrite,
        } => {
            if !artifacts.is_dir() {
                anyhow::bail!(
                    "--artifacts {}: not a folder; give the folder that holds the runs (artifacts and/or history/)",
                    artifacts.display()
                );
            }
            if let Some(path) = &json {
                crate::cli::output::check_output(
                    &crate::cli::output::Output {
                        flag: "--json",
                        path,
                        what: "a calibration (`history calibrate --json`)",
                        ours: |b| {
                            std::str::from_utf8(b).is_ok_and(|t| {
                                crate::compare::calibrate::CalibrationFile::parse(t).is_ok()
                            })
                        },
                    },
                    &[],
                    overwrite,
                )?;
            }
            let mut warnings = Vec::new();
            let runs = crate::compare::pool(&artifacts, &mut warnings)?;
            for w in &warnings {
                eprintln!("warning: {w}");
            }
            let mut cals = Vec::new();
            for n in processes {
                cals.extend(crate::compare::calibrate::calibrate(&runs, min_effect, n));
            }
            if cals.is_empty() {
                anyhow::bail!(
                    "{}: no same-code pair (two runs of one kind and GPU whose rows carry the same \
                     `code` hashes, or, without them, from one clean commit) among its {} runs; \
                     run the suite twice and record both",
                    artifacts.display(),
                    runs.len()
                );
            }
            print!("{}", crate::compare::calibrate::table(&cals));
            if let Some(path) = json {
                let file = crate::compare::calibrate::CalibrationFile::new(
                    &artifacts.display().to_string(),
                    runs.len(),
                    min_effect,
                    cals,
                );
                crate::artifact::write_json_atomic(&path, &file)?;
                eprintln!("wrote {}", path.display());
            }
            Ok(())
        }
        Cmd::Record {
            files,
            artifacts_dir,
            allow_dirty,
        } => {
            let inputs: Vec<&std::path::Path> = files.iter().map(|a| a.as_path()).collect();
            no_files_dir("--artifacts", &artifacts_dir, &inputs)?;
            let dir = artifacts_dir.join(HISTORY_DIR);
            for a in &files {
                let opts = RecordOptions {
                    allow_dirty,
                    expand_commit: true,
                };
                let r = record(a, &dir, opts)?;
                let expanded = r.expanded_from.as_ref().map_or(String::new(), |c| {
                    format!("; commit {c} recorded with its full hash (git)")
                });
                println!(
                    "{} {} ({} bytes{expanded})",
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
                    "{}  {}  {:<28}  {:<10}  {:>4} points  {:>7} bytes  {}{}",
                    r.started_utc(),
                    r.commit()
                        .map(|c| c.chars().take(12).collect::<String>())
                        .unwrap_or_else(|| "no commit".into()),
                    r.gpu(),
                    r.kind(),
                    r.record.points.len(),
                    bytes,
                    r.file,
                    if r.synthetic() {
                        "  SYNTHETIC (not measured)"
                    } else {
                        ""
                    }
                );
            }
            let synthetic = runs.iter().filter(|r| r.synthetic()).count();
            println!(
                "{} runs, {} commits, {} bytes{}",
                runs.len(),
                runs.iter()
                    .map(|r| r.commit().unwrap_or(""))
                    .collect::<std::collections::BTreeSet<_>>()
                    .len(),
                total,
                if synthetic > 0 {
                    format!("; {synthetic} of the runs are SYNTHETIC (not measured)")
                } else {
                    String::new()
                }
            );
            Ok(())
        }
        Cmd::Synth {
            out,
            commits,
            mut gpu,
            seed,
        } => {
            no_files_dir("--out", &out, &[])?;
            crate::cli::dedup_warn("--gpu", &mut gpu);
            let opts = SynthOptions {
                out,
                commits,
                gpus: gpu,
                seed,
            };
            let bar = crate::progress::Progress::new(
                (commits * opts.gpus.len() * SYNTH_KINDS.len()) as u64,
            );
            bar.start("synthetic runs");
            let (written, present, dir) = super::synth::write(&opts, || bar.step())?;
            bar.finish();
            println!(
                "wrote {written} SYNTHETIC runs (not measurements) into {}{}",
                dir.display(),
                if present > 0 {
                    format!(" ({present} were already there)")
                } else {
                    String::new()
                }
            );
            Ok(())
        }
    }
}

/// The output guard for a folder flag whose files the history store names and checks itself.
fn no_files_dir(
    flag: &str,
    path: &std::path::Path,
    inputs: &[&std::path::Path],
) -> anyhow::Result<()> {
    use crate::cli::output::{check_output_dir, OutputDir};
    let files = &[];
    check_output_dir(&OutputDir { flag, path, files }, inputs, false)
}
