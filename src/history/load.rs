//! Loading the history: an index from file names alone, full runs keyed by commit, GPU and time.

use super::naming::{gpu_label, slug, HistoryName, HISTORY_EXT};
use super::record::HistoryRecord;
use super::store::read_history_file;
use anyhow::{bail, Context, Result};
use chrono::{DateTime, Utc};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The folder name of the history inside an artifacts folder.
pub const HISTORY_DIR: &str = "history";

/// A history file known by its name only (nothing decompressed yet).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct IndexEntry {
    pub name: HistoryName,
    /// The `<kind>` folder it lies in.
    pub kind_dir: String,
    /// Path relative to the history folder, '/' separated: `layernorm/2026...json.gz`.
    pub file: String,
    pub path: PathBuf,
}

/// Lists every history file under `dir` (`<kind>/<name>.json.gz`), sorted by time. Files
/// that look like history files but are not named by `history record`, and symbolic links
/// (not followed), become warnings.
pub fn index(dir: &Path) -> Result<(Vec<IndexEntry>, Vec<String>)> {
    let mut entries = Vec::new();
    let mut warnings = Vec::new();
    if !dir.is_dir() {
        return Ok((entries, warnings));
    }
    for e in walkdir::WalkDir::new(dir).min_depth(1).follow_links(false) {
        let e = e.with_context(|| format!("walking {}", dir.display()))?;
        let fname = e.file_name().to_string_lossy().to_string();
        let looks_like_run = fname.ends_with(".gz") || fname.ends_with(".json");
        if e.path_is_symlink() {
            if !fname.starts_with('.') && (looks_like_run || e.path().is_dir()) {
                warnings.push(crate::artifact::symlink_warning(e.path()));
            }
            continue;
        }
        if !e.file_type().is_file() {
            continue;
        }
        if fname.starts_with('.') || !looks_like_run {
            continue;
        }
        let rel = e.path().strip_prefix(dir).unwrap_or(e.path());
        let parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().to_string())
            .collect();
        match (parts.len(), HistoryName::parse(&fname)) {
            (2, Some(name)) => entries.push(IndexEntry {
                name,
                kind_dir: parts[0].clone(),
                file: parts.join("/"),
                path: e.path().to_path_buf(),
            }),
            _ => warnings.push(format!(
                "{}: not a history file (expected <kind>/<time>-<commit12>-<gpu>-<run>{HISTORY_EXT} \
                 written by `history record`); left out",
                e.path().display()
            )),
        }
    }
    entries.sort_by(|a, b| (&a.name.started, &a.file).cmp(&(&b.name.started, &b.file)));
    Ok((entries, warnings))
}

/// One run in history form: a recorded one, or an artifact converted with `HistoryRecord::of`.
#[derive(Debug, Clone)]
pub struct HistoryRun {
    /// Where it came from: relative to the history folder (`layernorm/2026...json.gz`), or
    /// the artifact's path.
    pub file: String,
    pub name: HistoryName,
    pub record: HistoryRecord,
}

impl HistoryRun {
    /// A run from any record (its name computed from the content).
    pub fn new(file: impl Into<String>, record: HistoryRecord) -> Result<Self> {
        Ok(HistoryRun {
            file: file.into(),
            name: HistoryName::of(&record)?,
            record,
        })
    }
    pub fn kind(&self) -> &str {
        &self.record.kind
    }
    /// Full commit hash, when the run had one.
    pub fn commit(&self) -> Option<&str> {
        self.record.run.git_commit.as_deref()
    }
    /// The board the run ran on ("GPU-9e9eaf8d"), when it recorded one.
    pub fn board(&self) -> Option<String> {
        self.record.env.gpu.as_ref().map(|g| g.board_label())
    }
    /// GPU name, or "cpu".
    pub fn gpu(&self) -> String {
        gpu_label(&self.record.env)
    }
    pub fn started(&self) -> DateTime<Utc> {
        self.name.started
    }
    pub fn started_utc(&self) -> &str {
        &self.record.run.started_utc
    }
    pub fn run_id(&self) -> &str {
        &self.record.run.id
    }
    /// Drawn by `history synth`, not measured (see [`HistoryRecord::synthetic`]).
    pub fn synthetic(&self) -> bool {
        self.record.synthetic()
    }
}

fn load_entry(e: &IndexEntry) -> Result<HistoryRun> {
    let record = read_history_file(&e.path)?;
    let expect = HistoryName::of(&record)?;
    if expect != e.name || slug(&record.kind) != e.kind_dir {
        bail!(
            "{}: the file's name and folder do not match its content (expected {}/{}): \
             renamed by hand? Re-record the run with `history record`",
            e.path.display(),
            slug(&record.kind),
            expect.file_name()
        );
    }
    Ok(HistoryRun {
        file: e.file.clone(),
        name: e.name.clone(),
        record,
    })
}

/// Whether `e` can be the base of `head`: another commit, or the one `against` names (a
/// prefix of at most the 12 digits a file name keeps).
pub fn is_base(e: &HistoryName, head: &HistoryName, against: Option<&str>) -> bool {
    match against {
        None => e.commit12 != head.commit12,
        Some(rev) => {
            let rev = rev.to_lowercase();
            let rev = &rev[..rev.len().min(12)];
            e.commit12.as_deref().is_some_and(|c| c.starts_with(rev))
        }
    }
}

/// Every run in a history folder, oldest first.
#[derive(Debug, Clone, Default)]
pub struct History {
    pub root: PathBuf,
    pub runs: Vec<HistoryRun>,
    /// Files left out (with `skip_invalid`, or not named like history files).
    pub warnings: Vec<String>,
}

impl History {
    /// Loads every run under `dir` (usually `artifacts/history`). A missing folder is an
    /// empty history. A bad file stops the load unless `skip_invalid`, which makes it a warning.
    pub fn load(dir: &Path, skip_invalid: bool) -> Result<History> {
        let (entries, mut warnings) = index(dir)?;
        let mut runs = Vec::with_capacity(entries.len());
        for e in &entries {
            match load_entry(e) {
                Ok(r) => runs.push(r),
                Err(err) if skip_invalid => warnings.push(format!("skipped {err:#}")),
                Err(err) => {
                    return Err(crate::artifact::with_hint(
                        err,
                        crate::artifact::SKIP_INVALID_HINT,
                    ))
                }
            }
        }
        Ok(History {
            root: dir.to_path_buf(),
            runs,
            warnings,
        })
    }

    /// Only what [`History::latest_changes`] needs, chosen by file name before anything is
    /// decompressed: per kind and GPU, the newest run and the newest run of another commit.
    pub fn load_latest_pairs(dir: &Path, skip_invalid: bool) -> Result<History> {
        Self::load_pairs(dir, None, skip_invalid)
    }

    /// Per kind and GPU, the newest run and the runs of its base commit: the newest commit
    /// before it, or with `against`, the commit whose hash starts with it.
    pub fn load_pairs(dir: &Path, against: Option<&str>, skip_invalid: bool) -> Result<History> {
        let (entries, warnings) = index(dir)?;
        let mut groups: BTreeMap<(&str, &str), Vec<&IndexEntry>> = BTreeMap::new();
        for e in &entries {
            groups
                .entry((e.kind_dir.as_str(), e.name.gpu_slug.as_str()))
                .or_default()
                .push(e);
        }
        let mut keep: Vec<IndexEntry> = Vec::new();
        for group in groups.values() {
            let head = group[group.len() - 1];
            keep.push(head.clone());
            // Every run of the base commit, so the head can be paired with one on its board.
            if let Some(base) = group
                .iter()
                .rev()
                .find(|e| is_base(&e.name, &head.name, against))
            {
                keep.extend(
                    group
                        .iter()
                        .filter(|e| e.name.commit12 == base.name.commit12)
                        .map(|e| (*e).clone()),
                );
            }
        }
        keep.sort_by(|a, b| (&a.name.started, &a.file).cmp(&(&b.name.started, &b.file)));
        let mut h = History {
            root: dir.to_path_buf(),
            runs: Vec::new(),
            warnings,
        };
        for e in &keep {
            match load_entry(e) {
                Ok(r) => h.runs.push(r),
                Err(err) if skip_invalid => h.warnings.push(format!("skipped {err:#}")),
                Err(err) => {
                    return Err(crate::artifact::with_hint(
                        err,
                        crate::artifact::SKIP_INVALID_HINT,
                    ))
                }
            }
        }
        Ok(h)
    }

    /// Runs grouped by full commit hash ("nocommit" for runs without one), oldest first.
    pub fn by_commit(&self) -> BTreeMap<String, Vec<&HistoryRun>> {
        let mut m: BTreeMap<String, Vec<&HistoryRun>> = BTreeMap::new();
        for r in &self.runs {
            m.entry(r.commit().unwrap_or("nocommit").to_string())
                .or_default()
                .push(r);
        }
        m
    }

    /// Runs grouped by GPU name ("cpu" for CPU runs), oldest first.
    pub fn by_gpu(&self) -> BTreeMap<String, Vec<&HistoryRun>> {
        let mut m: BTreeMap<String, Vec<&HistoryRun>> = BTreeMap::new();
        for r in &self.runs {
            m.entry(r.gpu()).or_default().push(r);
        }
        m
    }

    /// Commits in the order their first run started (the x axis of "over commits").
    pub fn commits(&self) -> Vec<String> {
        let mut seen = Vec::<String>::new();
        for r in &self.runs {
            let c = r.commit().unwrap_or("nocommit").to_string();
            if !seen.contains(&c) {
                seen.push(c);
            }
        }
        seen
    }

    /// Runs matching every given filter: commit prefix, GPU (substring of the GPU name's
    /// slug, so "h100" matches "NVIDIA H100 80GB HBM3"), kind.
    pub fn find(
        &self,
        commit_prefix: Option<&str>,
        gpu: Option<&str>,
        kind: Option<&str>,
    ) -> Vec<&HistoryRun> {
        self.runs
            .iter()
            .filter(|r| {
                commit_prefix.is_none_or(|c| {
                    r.commit()
                        .is_some_and(|rc| rc.to_lowercase().starts_with(&c.to_lowercase()))
                })
            })
            .filter(|r| gpu.is_none_or(|g| slug(&r.gpu()).contains(&slug(g))))
            .filter(|r| kind.is_none_or(|k| r.kind() == k))
            .collect()
    }

    /// The run with this id, if recorded.
    pub fn run(&self, run_id: &str) -> Option<&HistoryRun> {
        self.runs.iter().find(|r| r.run_id() == run_id)
    }
}
