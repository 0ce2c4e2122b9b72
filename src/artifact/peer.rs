//! Files written by the Python peers (bench/peers/*.py): the envelope every peer writes, read
//! with errors that name the file and field, and the artifact written back after a merge.
//!
//! A peer records raw per-sample times only; each benchmark turns its rows into artifact rows
//! with the crate's own statistics (`llm::merge`, `layernorm::merge`).

use super::{read_artifact_of_kind, validate, write_json_atomic, Artifact, Correctness, Param};
use super::{ResultRow, Status};
use crate::env::Env;
use anyhow::{bail, Context, Result};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One row as a peer writes it: the point in `params`, raw per-sample times.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PeerRow {
    pub benchmark: String,
    pub implementation: String,
    pub status: Status,
    pub params: BTreeMap<String, Param>,
    /// Microseconds per launch, one value per sample (event pair); none on a failed row.
    #[serde(default)]
    pub samples_us: Vec<f64>,
    #[serde(default)]
    pub timing: Option<PeerTiming>,
    #[serde(default)]
    pub correctness: Option<Correctness>,
    #[serde(default)]
    pub notes: Vec<String>,
}

/// How the peer timed a row: the method names of `gpu::timing` / `gpu::rotation`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PeerTiming {
    pub method: String,
    pub warmup: usize,
    pub launches_per_sample: usize,
    /// Cold by rotation: the sets cycled and the L2 rule they were counted by.
    #[serde(default)]
    pub rotation: Option<PeerRotation>,
    /// Samples taken while NVML showed the clocks held back (as `SamplingRecord`'s field of
    /// the same name counts them); absent where the peer could not read NVML.
    #[serde(default)]
    pub throttled_samples: Option<usize>,
}

/// The buffer sets of a cold row timed by rotation.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PeerRotation {
    pub sets: usize,
    pub l2_bytes: usize,
    pub l2_multiple: usize,
}

/// A peer's file: `{"rows": [...], "notes": [...], "device": {...}}`; the row type is the
/// benchmark's.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PeerFile<R> {
    pub rows: Vec<R>,
    /// Notes on the peer's run as a whole (versions, compile times); added to the artifact's.
    #[serde(default)]
    pub notes: Vec<String>,
    /// The GPU the peer ran on, as its framework reports it.
    #[serde(default)]
    pub device: Option<PeerDevice>,
}

/// The GPU a peer ran on.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PeerDevice {
    /// "NVIDIA H100 80GB HBM3", as the driver names it.
    pub name: String,
    /// The GPU's UUID, with or without NVML's "GPU-" prefix.
    #[serde(default)]
    pub uuid: Option<String>,
}

/// A UUID without NVML's "GPU-" prefix, lower case: how torch and NVML write it differ in both.
fn bare_uuid(u: &str) -> String {
    let u = u.trim();
    u.strip_prefix("GPU-").unwrap_or(u).to_ascii_lowercase()
}

impl PeerDevice {
    /// Whether this is the GPU `env` measured on: the same UUID when both have one, else the
    /// same name.
    pub fn is(&self, env: &Env) -> bool {
        let Some(gpu) = &env.gpu else {
            return false;
        };
        match self.uuid.as_deref() {
            Some(u) if !u.trim().is_empty() && !gpu.uuid.is_empty() => {
                bare_uuid(u) == bare_uuid(&gpu.uuid)
            }
            _ => self.name.trim() == gpu.name.trim(),
        }
    }
}

/// Parses a peer file from its JSON value; errors name the file and the field at fault.
pub fn from_value<T: DeserializeOwned>(path: &Path, v: serde_json::Value) -> Result<T> {
    serde_path_to_error::deserialize(v)
        .map_err(|e| anyhow::anyhow!("{}: field `{}`: {}", path.display(), e.path(), e.inner()))
}

/// Reads and parses a peer file; errors name the file and, past the JSON syntax, the field.
pub fn read<T: DeserializeOwned>(path: &Path) -> Result<T> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read the peer file", path.display()))?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        anyhow::anyhow!(
            "{}: not JSON: {}",
            path.display(),
            super::json_error::describe(&text, &e)
        )
    })?;
    from_value(path, v)
}

/// Refuses a peer file that ran on another GPU than the artifact (or names none).
pub fn check_device(
    path: &Path,
    device: Option<&PeerDevice>,
    out: &Path,
    a: &Artifact,
) -> Result<()> {
    let Some(d) = device else {
        bail!(
            "{}: field `device` is missing: the peer must record the GPU it ran on, so its rows \
             are merged only into an artifact of the same GPU",
            path.display()
        );
    };
    if !d.is(&a.env) {
        bail!(
            "{}: field `device` is {:?} (uuid {}), but {} was measured on {}: merge a peer run \
             on the same GPU as the artifact",
            path.display(),
            d.name,
            d.uuid.as_deref().unwrap_or("not recorded"),
            out.display(),
            super::device_of(&a.env)
        );
    }
    Ok(())
}

/// Writes a merged artifact back to `out`: finish time now, checked, atomically.
pub fn write_merged(out: &Path, a: &mut Artifact) -> Result<()> {
    a.run.finished_utc = crate::env::now_utc();
    validate(a).with_context(|| format!("{}: the merged artifact is invalid", out.display()))?;
    write_json_atomic(out, a)
}

/// How one benchmark merges peer rows: its artifact kind, how a peer row becomes an artifact
/// row, which old row a new one replaces, and the line said of each merged row.
pub struct Merger<'a> {
    pub kind: &'a str,
    /// Peer row `at` ("peers.json: rows[3]") as an artifact row of `a`, or why not.
    pub to_row: &'a dyn Fn(PeerRow, &str, &Artifact) -> Result<ResultRow>,
    /// Whether old row `old` is the same implementation at the same point as `new`.
    pub same: &'a dyn Fn(&ResultRow, &ResultRow) -> bool,
    pub describe: &'a dyn Fn(&ResultRow, &Artifact) -> String,
}

/// Adds the rows of each peer file to the artifact at `out` and writes it back; a row of the
/// same implementation and point replaces the old one. Nothing is written when any file is
/// malformed, ran on another GPU or names a point the artifact lacks. Returns one line per
/// file and per row.
pub fn merge_files(out: &Path, files: &[PathBuf], m: &Merger<'_>) -> Result<Vec<String>> {
    let mut a = read_artifact_of_kind(out, m.kind).context("--out: the artifact to merge into")?;
    let mut said = Vec::new();
    for f in files {
        let pf: PeerFile<PeerRow> = read(f)?;
        check_device(f, pf.device.as_ref(), out, &a)?;
        let rows = pf
            .rows
            .into_iter()
            .enumerate()
            .map(|(i, p)| (m.to_row)(p, &format!("{}: rows[{i}]", f.display()), &a))
            .collect::<Result<Vec<_>>>()?;
        said.push(format!("{}: {} row(s)", f.display(), rows.len()));
        for row in rows {
            said.push((m.describe)(&row, &a));
            match a.results.iter().position(|r| (m.same)(r, &row)) {
                Some(i) => a.results[i] = row,
                None => a.results.push(row),
            }
        }
        a.notes.extend(pf.notes);
    }
    write_merged(out, &mut a)?;
    Ok(said)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::{ClockSample, GpuEnv};

    fn env(name: &str, uuid: &str) -> Env {
        let c = ClockSample {
            sm_mhz: 1980,
            mem_mhz: 3201,
            temperature_c: None,
            power_w: None,
        };
        let mut e = Env::cpu();
        e.device = "cuda".into();
        e.gpu = Some(GpuEnv {
            index: 0,
            name: name.into(),
            uuid: uuid.into(),
            compute_capability: "9.0".into(),
            driver_version: "580".into(),
            cuda_driver_version: "13.0".into(),
            memory_total_bytes: 1 << 37,
            max_sm_mhz: 1980,
            max_mem_mhz: 3201,
            clocks_start: c.clone(),
            clocks_end: c,
            throttle_reasons_seen: Vec::new(),
            samples: 1,
            board: None,
        });
        e
    }

    #[test]
    fn a_device_matches_by_uuid_whatever_the_prefix_else_by_name() {
        let e = env("NVIDIA H100 80GB HBM3", "GPU-AB12-cd34");
        let d = |name: &str, uuid: Option<&str>| PeerDevice {
            name: name.into(),
            uuid: uuid.map(String::from),
        };
        assert!(d("NVIDIA H100 80GB HBM3", Some("ab12-CD34")).is(&e));
        assert!(d("renamed", Some("GPU-ab12-cd34")).is(&e));
        assert!(!d("NVIDIA H100 80GB HBM3", Some("ffff")).is(&e));
        assert!(d("NVIDIA H100 80GB HBM3", None).is(&e));
        assert!(!d("NVIDIA H200", None).is(&e));
        assert!(!d("NVIDIA H200", None).is(&Env::cpu()));
    }

    #[test]
    fn errors_name_the_file_and_field() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("peer.json");
        std::fs::write(&p, r#"{"rows": [1, "x"]}"#).unwrap();
        let e = format!("{:#}", read::<PeerFile<u32>>(&p).unwrap_err());
        assert!(e.contains("peer.json") && e.contains("rows[1]"), "{e}");
        std::fs::write(&p, r#"{"rows": [1], "extra": 2}"#).unwrap();
        let e = format!("{:#}", read::<PeerFile<u32>>(&p).unwrap_err());
        assert!(e.contains("extra"), "{e}");
        std::fs::write(&p, r#"{"rows": [NaN]}"#).unwrap();
        let e = format!("{:#}", read::<PeerFile<u32>>(&p).unwrap_err());
        assert!(e.contains("not JSON") && e.contains("NaN"), "{e}");
        std::fs::write(&p, r#"{"rows": [1], "notes": ["n"]}"#).unwrap();
        let f: PeerFile<u32> = read(&p).unwrap();
        assert_eq!(
            (f.rows, f.notes, f.device),
            (vec![1], vec!["n".into()], None)
        );
    }
}
