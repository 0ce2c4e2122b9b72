//! History file names: `<YYYYmmddTHHMMSSZ>-<commit12>-<gpu-slug>-<run-suffix>.json.gz`, built and parsed.
//!
//! The name alone says when, on which commit and on which GPU a run happened, so the history
//! can be indexed (and the newest run per GPU found) without opening a file, and two machines
//! never pick the same name (the run-id suffix is random per run).

use super::record::HistoryRecord;
use crate::env::Env;
use anyhow::{bail, Context, Result};
use chrono::{DateTime, NaiveDateTime, Utc};

/// Extension of every history file: a compact record, minified and gzip-compressed.
pub const HISTORY_EXT: &str = ".json.gz";

/// The commit part of a name when the artifact has no git commit.
pub const NO_COMMIT: &str = "nocommit";

/// Marker appended to the commit part when the working tree was dirty.
pub const DIRTY_MARK: &str = "+dirty";

/// Lowercase ASCII letters and digits, every other run of characters one '-', no '-' at
/// either end: "NVIDIA H100 80GB HBM3" -> "nvidia-h100-80gb-hbm3".
pub fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    while out.ends_with('-') {
        out.pop();
    }
    out
}

/// The machine a run ran on, for display and grouping: the GPU name, or "cpu".
pub fn gpu_label(env: &Env) -> String {
    match &env.gpu {
        Some(g) => g.name.clone(),
        None => "cpu".to_string(),
    }
}

/// The GPU part of a history name ("cpu" for CPU runs).
pub fn gpu_slug(env: &Env) -> String {
    let s = slug(&gpu_label(env));
    if s.is_empty() {
        "unknown-gpu".into()
    } else {
        s
    }
}

/// What a history file name encodes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct HistoryName {
    /// Start of the run, whole seconds, UTC.
    pub started: DateTime<Utc>,
    /// First 12 hex digits of the commit, or None when the run had no commit.
    pub commit12: Option<String>,
    pub dirty: bool,
    pub gpu_slug: String,
    /// The random tail of the run id (what makes two runs in the same second distinct).
    pub run_suffix: String,
}

const TIME_FORMAT: &str = "%Y%m%dT%H%M%SZ";

impl HistoryName {
    /// The name a finished run gets in the history.
    pub fn of(a: &HistoryRecord) -> Result<Self> {
        let started = DateTime::parse_from_rfc3339(&a.run.started_utc)
            .with_context(|| {
                format!(
                    "field `run.started_utc` is {:?}, expected RFC 3339",
                    a.run.started_utc
                )
            })?
            .with_timezone(&Utc);
        let commit12 = a
            .run
            .git_commit
            .as_deref()
            .map(|c| slug(c).chars().take(12).collect::<String>())
            .filter(|c| !c.is_empty());
        // Run ids are "<time>-<random hex>"; the part after the last '-' tells runs apart.
        let tail = a.run.id.rsplit('-').next().unwrap_or(&a.run.id);
        let run_suffix: String = slug(tail).replace('-', "").chars().take(16).collect();
        if run_suffix.is_empty() {
            bail!(
                "field `run.id` is {:?}: it needs letters or digits to name the history file",
                a.run.id
            );
        }
        Ok(HistoryName {
            started,
            commit12,
            dirty: a.run.git_dirty == Some(true),
            gpu_slug: gpu_slug(&a.env),
            run_suffix,
        })
    }

    /// `20261122T100000Z-0123456789ab-nvidia-h200-1a2b3c4d.json.gz`
    pub fn file_name(&self) -> String {
        format!(
            "{}-{}{}-{}-{}{HISTORY_EXT}",
            self.started.format(TIME_FORMAT),
            self.commit12.as_deref().unwrap_or(NO_COMMIT),
            if self.dirty { DIRTY_MARK } else { "" },
            self.gpu_slug,
            self.run_suffix
        )
    }

    /// Parses a file name made by [`HistoryName::file_name`]; None for anything else.
    pub fn parse(file_name: &str) -> Option<Self> {
        let stem = file_name.strip_suffix(HISTORY_EXT)?;
        let (time, rest) = stem.split_once('-')?;
        let started = NaiveDateTime::parse_from_str(time, TIME_FORMAT)
            .ok()?
            .and_utc();
        let (commit_part, rest) = rest.split_once('-')?;
        let (gpu_slug, run_suffix) = rest.rsplit_once('-')?;
        let (commit, dirty) = match commit_part.strip_suffix(DIRTY_MARK) {
            Some(c) => (c, true),
            None => (commit_part, false),
        };
        let commit12 = match commit {
            NO_COMMIT => None,
            c if !c.is_empty() && c.chars().all(|ch| ch.is_ascii_alphanumeric()) => {
                Some(c.to_string())
            }
            _ => return None,
        };
        if gpu_slug.is_empty() || run_suffix.is_empty() {
            return None;
        }
        Some(HistoryName {
            started,
            commit12,
            dirty,
            gpu_slug: gpu_slug.to_string(),
            run_suffix: run_suffix.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slug_is_lowercase_dashed() {
        assert_eq!(slug("NVIDIA H100 80GB HBM3"), "nvidia-h100-80gb-hbm3");
        assert_eq!(slug("  NVIDIA  H200 (141GB) "), "nvidia-h200-141gb");
        assert_eq!(slug("--"), "");
    }

    #[test]
    fn names_round_trip_and_sort_by_time() {
        let a = HistoryName {
            started: NaiveDateTime::parse_from_str("20261122T100000Z", TIME_FORMAT)
                .unwrap()
                .and_utc(),
            commit12: Some("0123456789ab".into()),
            dirty: false,
            gpu_slug: "nvidia-h100-80gb-hbm3".into(),
            run_suffix: "1a2b3c4d".into(),
        };
        let name = a.file_name();
        assert_eq!(
            name,
            "20261122T100000Z-0123456789ab-nvidia-h100-80gb-hbm3-1a2b3c4d.json.gz"
        );
        assert_eq!(HistoryName::parse(&name), Some(a.clone()));
        let b = HistoryName {
            commit12: None,
            dirty: true,
            started: a.started + chrono::Duration::seconds(1),
            ..a.clone()
        };
        assert!(b.file_name().contains("-nocommit+dirty-"));
        assert_eq!(HistoryName::parse(&b.file_name()), Some(b.clone()));
        assert!(a.file_name() < b.file_name());
        for bad in [
            "summary.json",
            "x.json.gz",
            "20261122T100000Z-abc.json.gz",
            "2026-11-22-abc-gpu-1.json.gz",
        ] {
            assert_eq!(HistoryName::parse(bad), None, "{bad}");
        }
    }
}
