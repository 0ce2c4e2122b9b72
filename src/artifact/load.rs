//! Loading every artifact under a folder: which files are artifacts, links left out, bad files
//! refused or skipped, a run found twice counted once.

use super::{read_artifact, Artifact};
use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The merged file `summarize` writes beside the artifacts; never read back as an input.
pub const SUMMARY_JSON: &str = "summary.json";

/// The gate's calibration (`history calibrate --json`, `compare::calibrate`), not a run.
pub const CALIBRATION_JSON: &str = "calibration.json";

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
        && name != CALIBRATION_JSON
        && !name.starts_with('.')
        && !name.ends_with(".trace.json")
}

/// How the warning about an invalid file left out (with `skip_invalid`) begins.
pub const SKIPPED_PREFIX: &str = "skipped ";

/// What an error about an invalid artifact ends with when the command has `--skip-invalid`.
pub const SKIP_INVALID_HINT: &str = "use --skip-invalid to leave bad files out and go on";

/// `e` with `hint` added to its first line, so the first line an error prints still names the
/// file at fault (a context on top would put the hint first and the file below it).
pub fn with_hint(e: anyhow::Error, hint: &str) -> anyhow::Error {
    let mut lines: Vec<String> = e.chain().map(|c| c.to_string()).collect();
    lines[0] = format!("{}; {hint}", lines[0]);
    let mut it = lines.into_iter().rev();
    let first = anyhow::anyhow!(it.next().unwrap_or_default());
    it.fold(first, |err, line| err.context(line))
}

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
/// counts once, from the first path; the others are reported in the warnings. Files that share
/// a `run.id` but differ are an error (with `skip_invalid`, the later ones are left out). Symbolic links
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
            Err(e) if skip_invalid => warnings.push(format!("{SKIPPED_PREFIX}{e:#}")),
            Err(e) => return Err(with_hint(e, hint)),
        }
    }
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut unique: Vec<Loaded> = Vec::with_capacity(loaded.len());
    for l in loaded {
        let Some(&first) = seen.get(&l.artifact.run.id) else {
            seen.insert(l.artifact.run.id.clone(), unique.len());
            unique.push(l);
            continue;
        };
        let first = &unique[first];
        if first.artifact == l.artifact {
            warnings.push(format!(
                "left out {}: the same run ({}) as {}, counted once",
                l.file, l.artifact.run.id, first.file
            ));
            continue;
        }
        // One run id, two contents: one file was edited or merged into; neither can be trusted
        // to be "the" run, and keeping the first would drop the other's rows unseen.
        let what = format!(
            "{} and {} both hold run {} with different content ({} and {} results)",
            first.file,
            l.file,
            l.artifact.run.id,
            first.artifact.results.len(),
            l.artifact.results.len()
        );
        if !skip_invalid {
            bail!(
                "in {}: {what}: keep one of the two files (or give the other run a new `run.id`); \
                 {hint}",
                dir.display()
            );
        }
        warnings.push(format!("left out {}: {what}", l.file));
    }
    Ok((unique, warnings))
}
