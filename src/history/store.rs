//! Writing runs into the history (compact, gzip-compressed copies) and reading them back.
//!
//! A history file is a complete schema-v1 artifact (it validates and every tool reads it),
//! with every measured number rounded to [`SIGNIFICANT_DIGITS`] significant digits,
//! serialized without whitespace and gzip-compressed. Rounding is monotone, so every
//! ordering the validator checks (min <= p50 <= max, rel_err <= tolerance) still holds.

use super::naming::{slug, HistoryName, HISTORY_EXT};
use crate::artifact::{parse_artifact, read_artifact, write_bytes_atomic, Artifact};
use crate::stats::Summary;
use anyhow::{bail, Context, Result};
use flate2::read::GzDecoder;
use flate2::write::GzEncoder;
use flate2::Compression;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// Digits kept by the compact form: 1 part per million, far below what a CUDA event
/// (about 0.5 us resolution) or any confidence interval of a median can tell apart.
pub const SIGNIFICANT_DIGITS: usize = 6;

/// The note a compacted artifact carries, so a reader knows the numbers were rounded.
pub const COMPACT_NOTE: &str =
    "history copy: measured numbers rounded to 6 significant digits by `history record`";

/// `x` rounded to `digits` significant decimal digits (0, NaN and infinities unchanged).
pub fn round_sig(x: f64, digits: usize) -> f64 {
    if x == 0.0 || !x.is_finite() || digits == 0 {
        return x;
    }
    format!("{:.*e}", digits - 1, x).parse().unwrap_or(x)
}

fn round_summary(s: &mut Summary) {
    let r = |v: &mut f64| *v = round_sig(*v, SIGNIFICANT_DIGITS);
    for v in [
        &mut s.min,
        &mut s.p5,
        &mut s.p50,
        &mut s.p95,
        &mut s.p99,
        &mut s.max,
        &mut s.mean,
        &mut s.stdev,
        &mut s.cv,
    ] {
        r(v);
    }
    s.median_ci95.iter_mut().for_each(r);
}

/// The compact history form of an artifact: measured numbers rounded, parameters untouched
/// (they identify points), everything else kept.
pub fn compact(a: &Artifact) -> Artifact {
    let mut c = a.clone();
    let r = |v: &mut f64| *v = round_sig(*v, SIGNIFICANT_DIGITS);
    if let Some(v) = c.ceilings.copy_gbps.as_mut() {
        r(v);
    }
    c.ceilings.matmul_tflops.values_mut().for_each(r);
    for row in &mut c.results {
        row.stats.values_mut().for_each(round_summary);
        row.metrics.values_mut().for_each(r);
        if let Some(k) = row.correctness.as_mut() {
            r(&mut k.max_abs_err);
            r(&mut k.rel_err);
            r(&mut k.tolerance);
        }
    }
    if !c.notes.iter().any(|n| n == COMPACT_NOTE) {
        c.notes.push(COMPACT_NOTE.to_string());
    }
    c
}

/// Minified JSON of the compact form, gzip-compressed (deterministic: no time in the header).
pub fn encode(a: &Artifact) -> Result<Vec<u8>> {
    let json = serde_json::to_vec(&compact(a)).context("serializing the history copy")?;
    let mut gz = GzEncoder::new(Vec::new(), Compression::best());
    gz.write_all(&json)?;
    Ok(gz.finish()?)
}

/// Reads one history file (`*.json.gz`), validating it like any artifact.
pub fn read_history_file(path: &Path) -> Result<Artifact> {
    let bytes =
        std::fs::read(path).with_context(|| format!("{}: cannot read the file", path.display()))?;
    let mut text = String::new();
    GzDecoder::new(&bytes[..])
        .read_to_string(&mut text)
        .with_context(|| format!("{}: not a valid gzip file (truncated?)", path.display()))?;
    parse_artifact(&text)
        .with_context(|| format!("{}: not a valid opbench artifact", path.display()))
}

/// Reads a plain artifact (`*.json`) or a history file (`*.json.gz`).
pub fn read_any(path: &Path) -> Result<Artifact> {
    if path.to_string_lossy().ends_with(".gz") {
        read_history_file(path)
    } else {
        read_artifact(path)
    }
}

/// Where `a` goes in the history rooted at `history_dir`: `<kind>/<name>.json.gz`.
pub fn history_path(history_dir: &Path, a: &Artifact) -> Result<PathBuf> {
    let kind = slug(&a.kind);
    if kind.is_empty() {
        bail!(
            "field `kind` is {:?}: it needs letters or digits to name a folder",
            a.kind
        );
    }
    Ok(history_dir.join(kind).join(HistoryName::of(a)?.file_name()))
}

/// Options of [`record`].
#[derive(Debug, Clone, Copy, Default)]
pub struct RecordOptions {
    /// Accept runs made from a working tree with uncommitted changes.
    pub allow_dirty: bool,
}

/// What [`record`] did.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub path: PathBuf,
    pub bytes: usize,
    /// The same run was already in the history (byte-identical): nothing was written.
    pub already_present: bool,
}

/// Copies a finished artifact into the history: validates it, refuses interrupted runs (and
/// dirty trees unless allowed), writes the compact gzip form atomically. Idempotent.
pub fn record(artifact: &Path, history_dir: &Path, opts: RecordOptions) -> Result<Recorded> {
    if artifact.to_string_lossy().ends_with(".partial") {
        bail!(
            "{} is an in-progress copy: record the finished artifact (without .partial)",
            artifact.display()
        );
    }
    let a = read_any(artifact)?;
    record_artifact(&a, history_dir, opts)
        .with_context(|| format!("recording {} into the history", artifact.display()))
}

/// [`record`] for an artifact already in memory.
pub fn record_artifact(a: &Artifact, history_dir: &Path, opts: RecordOptions) -> Result<Recorded> {
    if !a.run.complete {
        bail!(
            "run {} is not complete (field `run.complete` is false: interrupted?): \
             only finished runs enter the history",
            a.run.id
        );
    }
    if a.run.git_dirty == Some(true) && !opts.allow_dirty {
        bail!(
            "run {} was made from a working tree with uncommitted changes (field `run.git_dirty`): \
             its numbers belong to no commit. Commit and re-run, or pass --allow-dirty",
            a.run.id
        );
    }
    let path = history_path(history_dir, a)?;
    let bytes = encode(a)?;
    if path.exists() {
        let old = std::fs::read(&path)
            .with_context(|| format!("{}: cannot read the file", path.display()))?;
        if old == bytes {
            return Ok(Recorded {
                path,
                bytes: old.len(),
                already_present: true,
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
    })
}

/// Helper for file names: does `path` end with the history extension?
pub fn is_history_file(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.ends_with(HISTORY_EXT) && !n.starts_with('.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_keeps_six_digits_and_order() {
        assert_eq!(round_sig(13.2145678, 6), 13.2146);
        assert_eq!(round_sig(0.000123456789, 6), 0.000123457);
        assert_eq!(round_sig(-2.5e-9, 6), -2.5e-9);
        assert_eq!(round_sig(0.0, 6), 0.0);
        assert!(round_sig(f64::MAX, 6).is_finite());
        // Monotone: a <= b stays a <= b.
        let xs = [9.9999949, 9.9999951, 9.99999999, 10.0, 10.000004];
        for w in xs.windows(2) {
            assert!(round_sig(w[0], 6) <= round_sig(w[1], 6));
        }
    }
}
