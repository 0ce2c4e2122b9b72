//! Writing runs into the history (compact records, gzip-compressed) and reading them back.

use super::naming::{slug, HistoryName};
use super::record::HistoryRecord;
use crate::artifact::{read_artifact, write_bytes_atomic};
use anyhow::{bail, Context, Result};
use flate2::read::GzDecoder;
use flate2::write::GzEncoder;
use flate2::Compression;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Minified JSON of the rounded record, gzip-compressed (deterministic: no time in the header).
pub fn encode(r: &HistoryRecord) -> Result<Vec<u8>> {
    let json = serde_json::to_vec(&r.rounded()).context("serializing the history record")?;
    let mut gz = GzEncoder::new(Vec::new(), Compression::best());
    gz.write_all(&json)?;
    Ok(gz.finish()?)
}

/// Reads one history file (`*.json.gz`) and checks it. Errors name the file and field.
pub fn read_history_file(path: &Path) -> Result<HistoryRecord> {
    use crate::input::{read_bytes, read_limited, ARTIFACT_MAX_BYTES};
    let bytes = read_bytes(path, "history file", ARTIFACT_MAX_BYTES)?;
    // The decompressed text is bounded too: a small gzip file can expand without limit.
    let text = read_limited(
        GzDecoder::new(&bytes[..]),
        path,
        "history file (decompressed)",
        ARTIFACT_MAX_BYTES,
    )
    .and_then(|b| String::from_utf8(b).map_err(Into::into))
    .with_context(|| format!("{}: not a valid gzip file (truncated?)", path.display()))?;
    let mut de = serde_json::Deserializer::from_str(&text);
    let r: HistoryRecord = serde_path_to_error::deserialize(&mut de)
        .map_err(|e| {
            if e.inner().is_syntax() || e.inner().is_eof() {
                anyhow::anyhow!(crate::artifact::json_error::describe(&text, e.inner()))
            } else {
                anyhow::anyhow!("field `{}`: {}", e.path(), e.inner())
            }
        })
        .and_then(|r: HistoryRecord| r.validate().map(|_| r))
        .with_context(|| format!("{}: not a valid opbench history record", path.display()))?;
    Ok(r)
}

/// Reads a plain artifact (`*.json`, converted exactly) or a history file (`*.json.gz`).
pub fn read_any(path: &Path) -> Result<HistoryRecord> {
    if path.to_string_lossy().ends_with(".gz") {
        read_history_file(path)
    } else {
        Ok(HistoryRecord::of(&read_artifact(path)?))
    }
}

/// Where `r` goes in the history rooted at `history_dir`: `<kind>/<name>.json.gz`.
pub fn history_path(history_dir: &Path, r: &HistoryRecord) -> Result<PathBuf> {
    let kind = slug(&r.kind);
    if kind.is_empty() {
        bail!(
            "field `kind` is {:?}: it needs letters or digits to name a folder",
            r.kind
        );
    }
    Ok(history_dir.join(kind).join(HistoryName::of(r)?.file_name()))
}

/// Options of [`record`].
#[derive(Debug, Clone, Copy, Default)]
pub struct RecordOptions {
    /// Accept runs made from a working tree with uncommitted changes.
    pub allow_dirty: bool,
    /// Record an abbreviated commit with the full hash the git repository in the current
    /// folder gives it (`history record` does; see `commit_prefix::full_hash`).
    pub expand_commit: bool,
}

/// What [`record`] did.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub path: PathBuf,
    pub bytes: usize,
    /// The same run was already in the history (byte-identical): nothing was written.
    pub already_present: bool,
    /// The abbreviated commit the artifact named, when it was recorded with its full hash.
    pub expanded_from: Option<String>,
}

/// Copies a finished artifact into the history: validates it, refuses interrupted runs (and
/// dirty trees unless allowed), writes its compact record atomically. Idempotent.
pub fn record(artifact: &Path, history_dir: &Path, opts: RecordOptions) -> Result<Recorded> {
    let name = artifact.to_string_lossy();
    if name.ends_with(".partial") || name.ends_with(".gz") {
        bail!(
            "{} is not a finished artifact: record the benchmark's .json output",
            artifact.display()
        );
    }
    let a = read_artifact(artifact)?;
    let mut r = HistoryRecord::of(&a);
    let expanded_from = match r.run.git_commit.clone() {
        Some(c) if opts.expand_commit => {
            super::commit_prefix::full_hash(Path::new("."), &c).map(|full| {
                r.run.git_commit = Some(full);
                c
            })
        }
        _ => None,
    };
    record_record(&r, history_dir, opts)
        .map(|rec| Recorded {
            expanded_from,
            ..rec
        })
        .with_context(|| format!("recording {} into the history", artifact.display()))
}

/// [`record`] for an artifact already in memory.
pub fn record_artifact(
    a: &crate::artifact::Artifact,
    history_dir: &Path,
    opts: RecordOptions,
) -> Result<Recorded> {
    record_record(&HistoryRecord::of(a), history_dir, opts)
}

/// [`record`] for a run already in history form.
pub fn record_record(
    r: &HistoryRecord,
    history_dir: &Path,
    opts: RecordOptions,
) -> Result<Recorded> {
    r.check_commit()
        .with_context(|| format!("run {} is not recorded", r.run.id))?;
    if !r.run.complete {
        bail!(
            "run {} is not complete (field `run.complete` is false: interrupted?): \
             only finished runs enter the history",
            r.run.id
        );
    }
    if r.run.git_dirty == Some(true) && !opts.allow_dirty {
        bail!(
            "run {} was made from a working tree with uncommitted changes (field `run.git_dirty`): \
             its numbers belong to no commit. Commit and re-run, or pass --allow-dirty",
            r.run.id
        );
    }
    let path = history_path(history_dir, r)?;
    let bytes = encode(r)?;
    if path.exists() {
        let old =
            crate::input::read_bytes(&path, "history file", crate::input::ARTIFACT_MAX_BYTES)?;
        if old == bytes {
            return Ok(Recorded {
                path,
                bytes: old.len(),
                already_present: true,
                expanded_from: None,
            });
        }
        bail!(
            "{} exists with different content: two runs with the same start time, commit, GPU \
             and run id? Leave the history file as it is and check the run id",
            path.display()
        );
    }
    write_bytes_atomic(&path, &bytes)?;
    Ok(Recorded {
        path,
        bytes: bytes.len(),
        already_present: false,
        expanded_from: None,
    })
}

/// Whether a file name is a history file's (`*.json.gz`, not hidden).
pub fn is_history_file(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.ends_with(super::naming::HISTORY_EXT) && !n.starts_with('.'))
}
