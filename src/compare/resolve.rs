//! Turning a `--base`/`--head` spec into runs: a folder, a file, a run id, a commit or a GPU.

use crate::artifact::read_artifact;
use crate::artifact::{is_artifact_file, load_dir, symlink_warning, SKIP_INVALID_HINT};
use crate::history::{
    is_history_file, read_history_file, slug, History, HistoryRecord, HistoryRun, HISTORY_DIR,
};
use anyhow::{bail, Context, Result};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The runs a spec stands for.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The spec as given.
    pub label: String,
    /// How it was understood: "folder", "file", "run id", "commit 0123abcd", "GPU h100".
    pub how: String,
    pub runs: Vec<HistoryRun>,
    /// Files left out while looking (invalid, symbolic links, misnamed), each with the reason:
    /// what a user needs when a spec finds fewer runs than expected.
    pub warnings: Vec<String>,
    /// Every file the spec's runs were read from (before `--gpu` kept some of them).
    pub files: Vec<PathBuf>,
}

impl Resolved {
    /// Whether `path` is, or would be once its folders exist, one of the files this side was
    /// read from.
    pub fn reads(&self, path: &Path) -> bool {
        let Some(target) = crate::cli::output::full_path(path) else {
            return false;
        };
        self.files
            .iter()
            .any(|f| f.canonicalize().is_ok_and(|f| f == target))
    }
}

fn rel(dir: &Path, p: &Path) -> String {
    p.strip_prefix(dir)
        .unwrap_or(p)
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// Every run known under `artifacts_dir`: plain artifacts (all of them, not just the current
/// ones) and the whole history, each run once (a plain artifact wins over its history copy).
/// Files that cannot be used (invalid, symbolic links) are left out and named in `warnings`.
pub fn pool(artifacts_dir: &Path, warnings: &mut Vec<String>) -> Result<Vec<HistoryRun>> {
    let mut runs: Vec<HistoryRun> = Vec::new();
    if artifacts_dir.is_file() {
        warnings.push(format!(
            "--artifacts {} is a file, not a folder: run ids, commits and GPUs are looked up in \
             the folder that holds the artifacts and their history/",
            artifacts_dir.display()
        ));
    }
    if artifacts_dir.is_dir() {
        let hist = artifacts_dir.join(HISTORY_DIR);
        for e in walkdir::WalkDir::new(artifacts_dir).follow_links(false) {
            let e = e.with_context(|| format!("walking {}", artifacts_dir.display()))?;
            if e.path().starts_with(&hist) || !is_artifact_file(e.path()) {
                continue;
            }
            if e.path_is_symlink() {
                warnings.push(symlink_warning(e.path()));
            } else if e.file_type().is_file() {
                match read_artifact(e.path()) {
                    Ok(a) => runs.push(HistoryRun::new(
                        rel(artifacts_dir, e.path()),
                        HistoryRecord::of(&a),
                    )?),
                    Err(err) => warnings.push(format!("skipped {err:#}")),
                }
            }
        }
        let h = History::load(&hist, true)?;
        warnings.extend(h.warnings);
        for mut r in h.runs {
            if !runs.iter().any(|l| l.run_id() == r.run_id()) {
                r.file = format!("{HISTORY_DIR}/{}", r.file);
                runs.push(r);
            }
        }
    }
    Ok(runs)
}

/// ` (N file(s) left out: why; why; ...)`, at most five reasons, or nothing when none was.
fn left_out(warnings: &[String]) -> String {
    if warnings.is_empty() {
        return String::new();
    }
    let shown: Vec<&str> = warnings.iter().take(5).map(String::as_str).collect();
    let more = warnings.len() - shown.len();
    format!(
        " ({} file(s) left out: {}{})",
        warnings.len(),
        shown.join("; "),
        if more > 0 {
            format!("; and {more} more")
        } else {
            String::new()
        }
    )
}

fn is_hex(s: &str) -> bool {
    s.len() >= 4 && s.chars().all(|c| c.is_ascii_hexdigit())
}

/// The runs on the one GPU whose name contains `spec` (or is `spec`, when it is part of
/// other names too) and `gpu` (`--gpu`); empty when none does. Several GPUs are refused: one side is one GPU,
/// and a bare "nvidia" would silently mix models.
fn runs_on_gpu(spec: &str, all: &[HistoryRun], gpu: Option<&str>) -> Result<Vec<HistoryRun>> {
    let want = slug(spec);
    let kept = slug(gpu.unwrap_or(""));
    if want.is_empty() {
        return Ok(Vec::new());
    }
    let mut gpus: BTreeMap<String, usize> = BTreeMap::new();
    for l in all.iter().filter(|l| {
        let name = slug(&l.gpu());
        name.contains(&want) && name.contains(&kept)
    }) {
        *gpus.entry(l.gpu()).or_default() += 1;
    }
    let exact: Vec<&String> = gpus.keys().filter(|g| slug(g) == want).collect();
    let gpu = match (gpus.len(), exact.as_slice()) {
        (0, _) => return Ok(Vec::new()),
        (1, _) => gpus.keys().next().unwrap().clone(),
        (_, [one]) => (*one).clone(),
        (n, _) => {
            let listed: Vec<String> = gpus
                .iter()
                .map(|(g, k)| format!("{g} ({k} run{})", if *k == 1 { "" } else { "s" }))
                .collect();
            bail!(
                "GPU name {spec:?} matches {n} GPUs: {}; give more of one name (its whole name \
                 picks it), or add --gpu with part of one name",
                listed.join(", ")
            );
        }
    };
    Ok(all.iter().filter(|l| l.gpu() == gpu).cloned().collect())
}

/// Resolves `spec`, in this order: an existing file (`.json` artifact or `.json.gz` history
/// file); an existing folder (its current runs, as `summarize` counts them, or, for a folder
/// of history files, all of them); then, against every run under `artifacts_dir`: a run id
/// (whole, its random tail, or its history file name), a commit (a hex prefix of 4 or more
/// digits), a GPU (part of its name: `h100`). `gpu` keeps only runs on a matching GPU.
pub fn resolve(
    spec: &str,
    artifacts_dir: &Path,
    gpu: Option<&str>,
    skip_invalid: bool,
) -> Result<Resolved> {
    let mut warnings = Vec::new();
    let (how, root, mut runs) =
        resolve_unfiltered(spec, artifacts_dir, gpu, skip_invalid, &mut warnings)?;
    let files = runs.iter().map(|r| root.join(&r.file)).collect();
    if let Some(g) = gpu {
        let want = slug(g);
        runs.retain(|l| slug(&l.gpu()).contains(&want));
        if runs.is_empty() {
            bail!("{spec} ({how}) has no run on a GPU matching --gpu {g:?}");
        }
    }
    Ok(Resolved {
        label: spec.to_string(),
        how,
        runs,
        warnings,
        files,
    })
}

/// How the spec was understood, the folder its runs' `file` names are relative to, the runs.
fn resolve_unfiltered(
    spec: &str,
    artifacts_dir: &Path,
    gpu: Option<&str>,
    skip_invalid: bool,
    warnings: &mut Vec<String>,
) -> Result<(String, PathBuf, Vec<HistoryRun>)> {
    let p = Path::new(spec);
    if p.is_file() {
        let record = crate::history::read_any(p)?;
        return Ok((
            "file".into(),
            PathBuf::new(),
            vec![HistoryRun::new(spec, record)?],
        ));
    }
    if p.is_dir() {
        let (loaded, dir_warnings) = load_dir(p, skip_invalid)?;
        warnings.extend(dir_warnings);
        let mut runs = loaded
            .iter()
            .map(|l| HistoryRun::new(l.file.clone(), HistoryRecord::of(&l.artifact)))
            .collect::<Result<Vec<_>>>()?;
        if runs.is_empty() {
            for e in walkdir::WalkDir::new(p).follow_links(false) {
                let e = e.with_context(|| format!("walking {}", p.display()))?;
                if e.path_is_symlink() && is_history_file(e.path()) {
                    warnings.push(symlink_warning(e.path()));
                } else if e.file_type().is_file() && is_history_file(e.path()) {
                    match read_history_file(e.path()) {
                        Ok(r) => runs.push(HistoryRun::new(rel(p, e.path()), r)?),
                        Err(err) if skip_invalid => warnings.push(format!("skipped {err:#}")),
                        Err(err) => {
                            return Err(
                                err.context(format!("{SKIP_INVALID_HINT}{}", left_out(warnings)))
                            )
                        }
                    }
                }
            }
        }
        if runs.is_empty() {
            bail!(
                "folder {spec} holds no artifacts (*.json) and no history files (*.json.gz){}",
                left_out(warnings)
            );
        }
        return Ok(("folder".into(), p.to_path_buf(), runs));
    }
    let all = pool(artifacts_dir, warnings)?;
    let by_id: Vec<HistoryRun> = all
        .iter()
        .filter(|l| {
            let id = l.run_id();
            let name = l.file.rsplit('/').next().unwrap_or("");
            id == spec
                || id.rsplit('-').next() == Some(spec)
                || name == spec
                || name.strip_suffix(crate::history::HISTORY_EXT) == Some(spec)
        })
        .cloned()
        .collect();
    if !by_id.is_empty() {
        return Ok(("run id".into(), artifacts_dir.to_path_buf(), by_id));
    }
    if is_hex(spec) {
        let lower = spec.to_lowercase();
        let by_commit: Vec<HistoryRun> = all
            .iter()
            .filter(|l| {
                l.commit()
                    .is_some_and(|c| c.to_lowercase().starts_with(&lower))
            })
            .cloned()
            .collect();
        let commits: BTreeSet<&str> = by_commit.iter().filter_map(|l| l.commit()).collect();
        if commits.len() > 1 {
            bail!(
                "commit prefix {spec} is ambiguous: it matches {}; give more digits",
                commits.into_iter().collect::<Vec<_>>().join(", ")
            );
        }
        if !by_commit.is_empty() {
            return Ok((
                format!("commit {spec}"),
                artifacts_dir.to_path_buf(),
                by_commit,
            ));
        }
    }
    let by_gpu = runs_on_gpu(spec, &all, gpu)?;
    if !by_gpu.is_empty() {
        return Ok((format!("GPU {spec}"), artifacts_dir.to_path_buf(), by_gpu));
    }
    let gpus: BTreeSet<String> = all.iter().map(|l| l.gpu()).collect();
    let mut commits: Vec<(&str, &str)> = all
        .iter()
        .filter_map(|l| l.commit().map(|c| (l.started_utc(), c)))
        .collect();
    commits.sort();
    commits.dedup_by(|a, b| a.1 == b.1);
    let recent: Vec<String> = commits
        .iter()
        .rev()
        .take(5)
        .map(|(_, c)| c.chars().take(12).collect())
        .collect();
    bail!(
        "{spec:?} is no file or folder, and matches no run id, commit or GPU among the {} runs \
         under {}{}. Known GPUs: {}. Recent commits: {}",
        all.len(),
        artifacts_dir.display(),
        left_out(warnings),
        if gpus.is_empty() {
            "none".to_string()
        } else {
            gpus.into_iter().collect::<Vec<_>>().join(", ")
        },
        if recent.is_empty() {
            "none".to_string()
        } else {
            recent.join(", ")
        }
    )
}
