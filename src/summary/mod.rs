//! `summarize`: load every artifact under a folder, validate, merge into summary.json + summary.csv.

pub mod cli;
mod flat;

pub use flat::{flatten, FlatRow};

use crate::artifact::{load_dir, write_bytes_atomic, write_json_atomic, Loaded, ResultRow};
use anyhow::{Context, Result};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// File names `summarize` writes; never read back as inputs.
pub use crate::artifact::SUMMARY_JSON;
pub const SUMMARY_CSV: &str = "summary.csv";

/// One artifact's identity in summary.json.
#[derive(Debug, Clone, Serialize)]
pub struct ArtifactEntry<'a> {
    pub file: &'a str,
    pub kind: &'a str,
    pub run: &'a crate::artifact::RunInfo,
    pub env: &'a crate::env::Env,
    pub ceilings: &'a crate::artifact::Ceilings,
    pub result_count: usize,
}

/// A result row with a pointer to the artifact it came from.
#[derive(Debug, Clone, Serialize)]
pub struct SummaryRow<'a> {
    /// Index into `artifacts`.
    pub artifact: usize,
    #[serde(flatten)]
    pub row: &'a ResultRow,
}

/// The merged document written to summary.json.
#[derive(Debug, Clone, Serialize)]
pub struct SummaryDoc<'a> {
    pub schema_version: u32,
    pub generated_utc: String,
    pub artifacts: Vec<ArtifactEntry<'a>>,
    /// Results grouped by artifact kind.
    pub kinds: BTreeMap<&'a str, Vec<SummaryRow<'a>>>,
    /// Per kind and GPU in the history: the newest run against the previous commit's run,
    /// with its SLOWER/FAILED points (see docs/history.md). Absent without a history.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub regressions: Vec<crate::trend::LatestChange>,
}

/// Builds the merged document.
pub fn build(loaded: &[Loaded]) -> SummaryDoc<'_> {
    let mut kinds: BTreeMap<&str, Vec<SummaryRow>> = BTreeMap::new();
    let artifacts = loaded
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let a = &l.artifact;
            kinds
                .entry(a.kind.as_str())
                .or_default()
                .extend(a.results.iter().map(|row| SummaryRow { artifact: i, row }));
            ArtifactEntry {
                file: &l.file,
                kind: &a.kind,
                run: &a.run,
                env: &a.env,
                ceilings: &a.ceilings,
                result_count: a.results.len(),
            }
        })
        .collect();
    SummaryDoc {
        schema_version: crate::artifact::SCHEMA_VERSION,
        generated_utc: crate::env::now_utc(),
        artifacts,
        kinds,
        regressions: Vec::new(),
    }
}

/// Renders the flat CSV: fixed identity columns, then the union of params, stats and metrics.
pub fn to_csv(loaded: &[Loaded]) -> Result<Vec<u8>> {
    let rows: Vec<FlatRow> = loaded.iter().flat_map(flatten).collect();
    let mut columns: Vec<String> = flat::FIXED_COLUMNS.iter().map(|s| s.to_string()).collect();
    let mut extra: std::collections::BTreeSet<&str> = Default::default();
    for r in &rows {
        extra.extend(r.extra.keys().map(|k| k.as_str()));
    }
    columns.extend(extra.iter().map(|s| s.to_string()));
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(&columns)?;
    for r in &rows {
        let mut rec: Vec<String> = r.fixed.to_vec();
        rec.extend(
            extra
                .iter()
                .map(|k| r.extra.get(*k).cloned().unwrap_or_default()),
        );
        w.write_record(&rec)?;
    }
    w.into_inner().context("finishing CSV")
}

/// The `regressions` section of summary.json: per kind and GPU in `artifacts_dir/history`,
/// the newest run judged against the newest run of an earlier commit on the same GPU (only
/// those two runs per group are read). Returns it with the warnings of the history load.
/// Anything else that writes a summary.json (the dashboard) sets `SummaryDoc::regressions`
/// from this.
pub fn regressions(
    artifacts_dir: &Path,
    skip_invalid: bool,
) -> Result<(Vec<crate::trend::LatestChange>, Vec<String>)> {
    let history = crate::history::History::load_latest_pairs(
        &artifacts_dir.join(crate::history::HISTORY_DIR),
        skip_invalid,
    )?;
    let changes = history.latest_changes(&crate::compare::Options::default());
    Ok((changes, history.warnings))
}

/// What `summarize` did.
#[derive(Debug)]
pub struct Outcome {
    pub artifacts: usize,
    pub results: usize,
    pub json: PathBuf,
    pub csv: PathBuf,
    pub warnings: Vec<String>,
}

/// The whole `summarize` command.
pub fn run(artifacts_dir: &Path, out_dir: &Path, skip_invalid: bool) -> Result<Outcome> {
    let (loaded, mut warnings) = load_dir(artifacts_dir, skip_invalid)?;
    let mut doc = build(&loaded);
    let (regressions, history_warnings) = regressions(artifacts_dir, skip_invalid)?;
    doc.regressions = regressions;
    for w in history_warnings {
        if !warnings.contains(&w) {
            warnings.push(w);
        }
    }
    let json = out_dir.join(SUMMARY_JSON);
    let csv_path = out_dir.join(SUMMARY_CSV);
    write_json_atomic(&json, &doc)?;
    write_bytes_atomic(&csv_path, &to_csv(&loaded)?)?;
    Ok(Outcome {
        artifacts: loaded.len(),
        results: loaded.iter().map(|l| l.artifact.results.len()).sum(),
        json,
        csv: csv_path,
        warnings,
    })
}
