//! `summarize`: load every artifact under a folder, validate, merge into summary.json + summary.csv.

mod flat;

pub use flat::{flatten, FlatRow};

use crate::artifact::{read_artifact, write_bytes_atomic, write_json_atomic, Artifact, ResultRow};
use anyhow::{bail, Context, Result};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// File names `summarize` writes; never read back as inputs.
pub const SUMMARY_JSON: &str = "summary.json";
pub const SUMMARY_CSV: &str = "summary.csv";

/// One artifact as loaded from disk.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// Path relative to the folder it was found in, with '/' separators.
    pub file: String,
    pub artifact: Artifact,
}

/// Whether a file under the artifacts folder is an artifact: `*.json`, not our own outputs,
/// not hidden, not a trace export (`*.trace.json`).
pub fn is_artifact_file(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name.ends_with(".json")
        && name != SUMMARY_JSON
        && !name.starts_with('.')
        && !name.ends_with(".trace.json")
}

/// What an error about an invalid artifact ends with when the command has `--skip-invalid`.
pub const SKIP_INVALID_HINT: &str = "use --skip-invalid to leave bad files out and go on";

/// The warning for a symbolic link met while walking an artifacts or history folder: links are
/// not followed (one could point anywhere, a folder link could loop, and a linked copy would
/// count the same run twice).
pub fn symlink_warning(path: &Path) -> String {
    format!(
        "{}: a symbolic link, not followed: left out (copy the file into the folder instead)",
        path.display()
    )
}

/// Loads every artifact under `dir`, sorted by path. With `skip_invalid`, a bad file becomes a
/// warning (returned) instead of an error. A run found in several files (same `run.id`: a copy)
/// counts once, from the first path; the others are reported in the warnings. Symbolic links
/// are not followed; each one is reported in the warnings. History records
/// (`history/**/*.json.gz`) are not artifacts and are never loaded here (docs/history.md).
pub fn load_dir(dir: &Path, skip_invalid: bool) -> Result<(Vec<Loaded>, Vec<String>)> {
    load_dir_with_hint(dir, skip_invalid, SKIP_INVALID_HINT)
}

/// [`load_dir`] for a command whose way to go past bad files is not `--skip-invalid`: `hint`
/// is added to the error about an invalid artifact.
pub fn load_dir_with_hint(
    dir: &Path,
    skip_invalid: bool,
    hint: &str,
) -> Result<(Vec<Loaded>, Vec<String>)> {
    if dir.is_file() {
        bail!(
            "{} is a file, not a folder: --artifacts takes the folder that holds the artifacts \
             (e.g. artifacts); to use one file alone, put it in a folder of its own",
            dir.display()
        );
    }
    if !dir.is_dir() {
        bail!(
            "artifacts folder {} does not exist: pass --artifacts DIR with the folder your benchmarks wrote",
            dir.display()
        );
    }
    let mut paths: Vec<PathBuf> = Vec::new();
    let mut warnings = Vec::new();
    for entry in walkdir::WalkDir::new(dir).follow_links(false) {
        let entry = entry.with_context(|| format!("walking {}", dir.display()))?;
        if entry.path_is_symlink() && entry.depth() > 0 {
            let name = entry.file_name().to_string_lossy();
            if !name.starts_with('.') && (is_artifact_file(entry.path()) || entry.path().is_dir()) {
                warnings.push(symlink_warning(entry.path()));
            }
        } else if entry.file_type().is_file() && is_artifact_file(entry.path()) {
            paths.push(entry.into_path());
        }
    }
    paths.sort();
    // Parse on every core (a long history is thousands of files); results keep path order.
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(paths.len().max(1));
    let chunk = paths.len().div_ceil(threads).max(1);
    let parsed: Vec<Result<Artifact>> = std::thread::scope(|s| {
        let handles: Vec<_> = paths
            .chunks(chunk)
            .map(|ps| s.spawn(move || ps.iter().map(|p| read_artifact(p)).collect::<Vec<_>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("artifact parsing thread panicked"))
            .collect()
    });
    let mut loaded = Vec::new();
    for (p, parsed) in paths.iter().zip(parsed) {
        match parsed {
            Ok(artifact) => {
                let rel = p.strip_prefix(dir).unwrap_or(p);
                let file = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy())
                    .collect::<Vec<_>>()
                    .join("/");
                loaded.push(Loaded { file, artifact })
            }
            Err(e) if skip_invalid => warnings.push(format!("skipped {:#}", e)),
            Err(e) => return Err(e.context(hint.to_string())),
        }
    }
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    let mut unique = Vec::with_capacity(loaded.len());
    for l in loaded {
        match seen.get(&l.artifact.run.id) {
            Some(first) => warnings.push(format!(
                "left out {}: the same run ({}) as {first}, counted once",
                l.file, l.artifact.run.id
            )),
            None => {
                seen.insert(l.artifact.run.id.clone(), l.file.clone());
                unique.push(l);
            }
        }
    }
    Ok((unique, warnings))
}

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
    pub regressions: Vec<crate::history::LatestChange>,
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
) -> Result<(Vec<crate::history::LatestChange>, Vec<String>)> {
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
