//! `compare`'s command line: its arguments, and the report it prints or writes.

use super::{
    check_distinct, check_kinds, check_names, check_out, compare, render, resolve, Options,
    DEFAULT_MIN_EFFECT,
};
use clap::{Parser, ValueEnum};
use std::path::PathBuf;

#[derive(Clone, Copy, ValueEnum)]
pub enum Format {
    /// Aligned columns for a terminal.
    Text,
    /// A GitHub-flavoured Markdown table (pull-request comments).
    Markdown,
    /// The full report as JSON.
    Json,
    /// One self-contained HTML page (no script, no external file), e.g. to publish a pull
    /// request's table beside the dashboard.
    Html,
}

/// Compare two sets of benchmark runs point by point.
///
/// BASE and HEAD are each, tried in this order: an artifact file (.json) or history file
/// (.json.gz); a folder (its current runs, as `summarize` counts them); a run id (whole, or
/// its random tail); a commit (hex prefix, 4+ digits); a GPU (part of its name, e.g. h100,
/// matching one GPU).
/// Ids, commits and GPUs are looked up among the artifacts and the history under --artifacts.
///
/// Points match on their identity: kind, benchmark, implementation and the problem
/// parameters (shape, dtype, model, batch, ...); run settings such as event tracking, memory
/// sampling or a kernel's launch configuration are not identity, and the table shows the
/// ones that differ beside the verdict. GPUs pair by name, or
/// directly when each side ran on one GPU (so `--base h100 --head h200` compares models).
/// When a side holds several runs of a point, the newest is used.
///
/// Verdict rule, per sampled quantity (lower is better for times: time_us, *_ms; higher for
/// rates named *_per_*): FASTER or SLOWER when the two 95% confidence intervals of the median
/// (median_ci95) do not overlap AND the medians differ by at least --min-effect; SAME when
/// they differ by less, or when the intervals overlap and no change of --min-effect fits
/// both intervals; otherwise UNCERTAIN (too noisy to tell). A fixed ratio alone never
/// decides. Points present on one side only are listed as ADDED or REMOVED; a point that
/// did not fail in BASE and fails its correctness check in HEAD is FAILED. BASE and HEAD must
/// hold runs of at least one common benchmark kind.
#[derive(Parser)]
#[command(version)]
pub struct Args {
    /// The reference: folder, file, run id, commit or GPU.
    #[arg(long)]
    base: String,
    /// What is judged against the reference: folder, file, run id, commit or GPU.
    #[arg(long)]
    head: String,
    /// Name shown for BASE in the output [default: the spec and how it was read].
    #[arg(long)]
    base_name: Option<String>,
    /// Name shown for HEAD in the output [default: the spec and how it was read].
    #[arg(long)]
    head_name: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Smallest relative change of the median that counts as FASTER/SLOWER (0.03 = 3%).
    #[arg(long, default_value_t = DEFAULT_MIN_EFFECT, allow_negative_numbers = true)]
    min_effect: f64,
    /// Parameters left out of a point's identity (comma list), e.g. a kernel's launch
    /// configuration that changes between commits while the problem (shape, dtype) does not.
    #[arg(long, value_delimiter = ',')]
    ignore_params: Vec<String>,
    /// An implementation whose code did not change between the runs (e.g. candle, cublas):
    /// where its own verdict is not SAME, the machine drifted, and the FASTER/SLOWER verdicts
    /// of the other implementations at the same point become UNCERTAIN.
    #[arg(long)]
    control: Option<String>,
    /// Keep only runs on a GPU whose name contains this (e.g. h100), on both sides.
    #[arg(long)]
    gpu: Option<String>,
    /// List only points that are not SAME (they are still counted in the result line).
    #[arg(long)]
    only_changes: bool,
    /// Exit with status 1 when any point is SLOWER, FAILED or REMOVED (measured in BASE, missing
    /// from HEAD), or measured in BASE and skipped in HEAD, after printing the table.
    #[arg(long)]
    fail_on_regression: bool,
    /// Where run ids, commits and GPUs are looked up (its history/ folder included).
    #[arg(long, default_value = "artifacts")]
    artifacts: PathBuf,
    /// Leave invalid artifacts out of folder specs instead of failing.
    #[arg(long)]
    skip_invalid: bool,
    /// Also write the output to this file (never one of the files BASE or HEAD is read from;
    /// an existing file is replaced only when it holds an earlier comparison).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Replace the --out file even when it does not hold an earlier comparison.
    #[arg(long)]
    overwrite: bool,
}

/// Whether existing bytes are an earlier `compare` output, in any of its formats.
fn is_comparison(bytes: &[u8]) -> bool {
    use crate::cli::output::{json_object_with, starts_with};
    starts_with(bytes, "base: ")
        || starts_with(bytes, "### opbench compare: ")
        || (starts_with(bytes, "<!doctype html>")
            && bytes.windows(24).any(|w| w == b"<title>opbench compare: "))
        || (json_object_with(bytes, "lines") && json_object_with(bytes, "base_label"))
}

/// Runs the command with its parsed arguments.
pub fn run(a: Args) -> anyhow::Result<()> {
    if !(0.0..1.0).contains(&a.min_effect) {
        anyhow::bail!(
            "--min-effect {} is outside [0, 1): give a fraction, e.g. 0.03 for 3%",
            a.min_effect
        );
    }
    let base = resolve(&a.base, &a.artifacts, a.gpu.as_deref(), a.skip_invalid)
        .map_err(|e| e.context(format!("--base {}", a.base)))?;
    let head = resolve(&a.head, &a.artifacts, a.gpu.as_deref(), a.skip_invalid)
        .map_err(|e| e.context(format!("--head {}", a.head)))?;
    let mut warned: Vec<&String> = Vec::new();
    for w in base.warnings.iter().chain(&head.warnings) {
        if !warned.contains(&w) {
            eprintln!("warning: {w}");
            warned.push(w);
        }
    }
    check_kinds(&base, &head)?;
    check_distinct(&base, &head)?;
    check_names(&base, &head, a.control.as_deref(), &a.ignore_params)?;
    if let Some(out) = &a.out {
        check_out(out, &base, &head)?;
        let output = crate::cli::output::Output {
            flag: "--out",
            path: out,
            what: "an earlier comparison",
            ours: is_comparison,
        };
        crate::cli::output::check_output(&output, &[], a.overwrite)?;
    }
    let name = |given: &Option<String>, r: &super::Resolved| {
        given
            .clone()
            .unwrap_or_else(|| format!("{} ({})", r.label, r.how))
    };
    // The runs rules `processes` (same-code processes of a point on one board) and `boards`
    // (a point's range across boards) draw on: every run under --artifacts, plain artifacts and
    // history alike.
    let history = {
        let mut warnings = Vec::new();
        match super::pool(&a.artifacts, &mut warnings) {
            Ok(runs) => {
                for w in &warnings {
                    eprintln!("warning: rules `processes` and `boards` go on without: {w}");
                }
                runs
            }
            Err(e) => {
                eprintln!("warning: {e:#}; rules `processes` and `boards` draw on no history");
                Vec::new()
            }
        }
    };
    let mut report = compare(
        &name(&a.base_name, &base),
        &base.runs,
        &name(&a.head_name, &head),
        &head.runs,
        &Options {
            min_effect: a.min_effect,
            ignore_params: a.ignore_params.clone(),
            control: a.control.clone(),
            history,
        },
    );
    report
        .notes
        .extend(calibration_notes(&a.artifacts, &report));
    if a.only_changes {
        report.hide_same();
    }
    let text = match a.format {
        Format::Text => render::text(&report),
        Format::Markdown => render::markdown(&report),
        Format::Json => serde_json::to_string_pretty(&report)? + "\n",
        Format::Html => super::html::html(&report),
    };
    print!("{text}");
    if let Some(out) = &a.out {
        crate::artifact::write_bytes_atomic(out, text.as_bytes())?;
    }
    let regressions = report.regressions().count();
    let lost = |label: &str| {
        report
            .lines
            .iter()
            .filter(|l| l.is_lost() && l.label() == label)
            .count()
    };
    let (removed, skipped) = (lost("REMOVED"), lost("N/A"));
    if a.fail_on_regression && regressions + removed + skipped > 0 {
        eprintln!(
            "compare: {regressions} regression(s) (SLOWER or FAILED), {removed} REMOVED \
             line(s) (measured in base, missing from head) and {skipped} N/A line(s) \
             (measured in base, skipped in head); failing as asked by --fail-on-regression"
        );
        std::process::exit(1);
    }
    Ok(())
}

/// The gate's measured false alarms and power for the kinds and GPUs of `report`, from
/// `<artifacts>/calibration.json` (`history calibrate --json`) when there is one.
fn calibration_notes(artifacts: &std::path::Path, report: &super::Report) -> Vec<String> {
    let path = artifacts.join(super::calibrate::CALIBRATION_JSON);
    let file = match super::calibrate::CalibrationFile::read(&path) {
        Ok(Some(f)) => f,
        Ok(None) => return Vec::new(),
        Err(e) => {
            eprintln!("warning: {e:#}; the report goes on without the gate's calibration");
            return Vec::new();
        }
    };
    let mut seen = std::collections::BTreeSet::new();
    for l in &report.lines {
        let gpu = l.gpu.rsplit(" -> ").next().unwrap_or(&l.gpu);
        seen.insert((l.point.kind.clone(), gpu.to_string()));
    }
    seen.iter()
        .flat_map(|(kind, gpu)| file.lines_for(kind, gpu))
        .collect()
}
