//! Semantic checks an artifact must pass beyond its JSON shape; errors name the field.

use super::{Artifact, Status, SCHEMA_VERSION};
use anyhow::{bail, Result};

/// Unit suffixes a `stats` key may end with.
pub const STAT_UNITS: [&str; 3] = ["_us", "_ms", "_s"];

fn finite(field: &str, v: f64) -> Result<()> {
    if !v.is_finite() {
        bail!("field `{field}` is {v}: every number in an artifact must be finite");
    }
    Ok(())
}

/// Checks everything serde cannot: versions, finiteness, units in names, consistency.
pub fn validate(a: &Artifact) -> Result<()> {
    if a.schema_version == 0 || a.schema_version > SCHEMA_VERSION {
        bail!(
            "field `schema_version` is {}, this opbench reads 1..={SCHEMA_VERSION}",
            a.schema_version
        );
    }
    if a.kind.trim().is_empty() {
        bail!("field `kind` is empty: name the benchmark that wrote the file");
    }
    if a.run.id.trim().is_empty() {
        bail!("field `run.id` is empty");
    }
    for (field, t) in [
        ("run.started_utc", &a.run.started_utc),
        ("run.finished_utc", &a.run.finished_utc),
    ] {
        if chrono::DateTime::parse_from_rfc3339(t).is_err() {
            bail!(
                "field `{field}` is {t:?}, expected an RFC 3339 time such as 2026-11-22T10:00:00Z"
            );
        }
    }
    if let Some(c) = a.ceilings.copy_gbps {
        finite("ceilings.copy_gbps", c)?;
    }
    for (k, v) in &a.ceilings.matmul_tflops {
        finite(&format!("ceilings.matmul_tflops.{k}"), *v)?;
    }
    for (i, r) in a.results.iter().enumerate() {
        let at = format!("results[{i}]");
        if r.benchmark.trim().is_empty() || r.implementation.trim().is_empty() {
            bail!("field `{at}.benchmark` and `{at}.implementation` must both be non-empty");
        }
        for (k, p) in &r.params {
            if let super::Param::Float(v) = p {
                finite(&format!("{at}.params.{k}"), *v)?;
            }
        }
        for (k, s) in &r.stats {
            if !STAT_UNITS.iter().any(|u| k.ends_with(u)) {
                bail!("field `{at}.stats.{k}`: a sampled quantity's name must end with its unit (one of {STAT_UNITS:?})");
            }
            s.check()
                .map_err(|e| anyhow::anyhow!("field `{at}.stats.{k}`: {e}"))?;
        }
        for (k, v) in &r.metrics {
            finite(&format!("{at}.metrics.{k}"), *v)?;
        }
        if let Some(c) = &r.correctness {
            // Producers store a NaN error as f64::MAX (JSON has no NaN).
            finite(&format!("{at}.correctness.max_abs_err"), c.max_abs_err)?;
            finite(&format!("{at}.correctness.rel_err"), c.rel_err)?;
            if c.passed && c.rel_err > c.tolerance {
                bail!(
                    "field `{at}.correctness.passed` is true but rel_err {} exceeds tolerance {}",
                    c.rel_err,
                    c.tolerance
                );
            }
            if !c.passed && r.status == Status::Ok {
                bail!("field `{at}.status` is ok but its correctness check failed");
            }
        }
        if r.status != Status::Ok && !r.stats.is_empty() {
            bail!(
                "field `{at}.stats`: a {:?} point must not carry timings (a failed check is never timed)",
                r.status
            );
        }
        if r.status == Status::Ok && r.stats.is_empty() && r.metrics.is_empty() {
            bail!("field `{at}`: status ok but neither stats nor metrics were recorded");
        }
    }
    Ok(())
}
