//! Semantic checks an artifact must pass beyond its JSON shape; errors name the field.

use super::{limits, Artifact, Status, SCHEMA_VERSION};
use anyhow::{bail, Result};

/// Unit suffixes a `stats` key may end with.
pub const STAT_UNITS: [&str; 3] = ["_us", "_ms", "_s"];

/// Endings of metric names that carry a unit of an amount, a time or a rate: such a metric is
/// a physical quantity and cannot be negative. (Unitless figures such as `speedup_vs_candle`
/// or `top1_agrees` are only required to be finite.)
pub const NONNEGATIVE_METRIC_ENDINGS: [&str; 10] = [
    "_us",
    "_ms",
    "_s",
    "gbps",
    "tflops",
    "bytes",
    "_per_s",
    "_per_byte",
    "_pct",
    "_count",
];

/// Whether a metric of this name is a physical quantity (see [`NONNEGATIVE_METRIC_ENDINGS`];
/// percentages named `pct_of_*` count too).
pub fn is_nonnegative_metric(name: &str) -> bool {
    NONNEGATIVE_METRIC_ENDINGS.iter().any(|e| name.ends_with(e)) || name.contains("pct_of")
}

fn finite(field: &str, v: f64) -> Result<()> {
    if !v.is_finite() {
        bail!("field `{field}` is {v}: every number in an artifact must be finite");
    }
    Ok(())
}

/// A finite number that is not negative: a time, a rate, an amount.
pub fn nonnegative(field: &str, v: f64) -> Result<()> {
    finite(field, v)?;
    if v < 0.0 {
        bail!(
            "field `{field}` is {v}: a time, rate or amount cannot be negative (a sign error in \
             the producer, or a hand-edited file?)"
        );
    }
    Ok(())
}

/// A ceiling: a finite number above 0 (every "% of ceiling" divides by it).
fn positive(field: &str, v: f64) -> Result<()> {
    finite(field, v)?;
    if v <= 0.0 {
        bail!("field `{field}` is {v}: a ceiling must be above 0");
    }
    Ok(())
}

/// A metric: finite, and not negative when its name carries a unit.
pub fn metric(field: &str, name: &str, v: f64) -> Result<()> {
    if is_nonnegative_metric(name) {
        nonnegative(field, v)
    } else {
        finite(field, v)
    }
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
    limits::name("kind", &a.kind)?;
    if a.run.id.trim().is_empty() {
        bail!("field `run.id` is empty");
    }
    limits::run(&a.run)?;
    limits::env(&a.env)?;
    limits::ceilings(&a.ceilings)?;
    limits::texts("notes", &a.notes)?;
    if let Some(c) = &a.compiler {
        limits::compiler(c)?;
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
        positive("ceilings.copy_gbps", c)?;
    }
    if let Some(c) = a.ceilings.launch_interval_us {
        positive("ceilings.launch_interval_us", c)?;
    }
    for (k, v) in &a.ceilings.matmul_tflops {
        positive(&format!("ceilings.matmul_tflops.{k}"), *v)?;
    }
    for (k, v) in &a.ceilings.peer_copy_gbps {
        positive(&format!("ceilings.peer_copy_gbps.{k}"), *v)?;
    }
    if let Some(c) = a.ceilings.collective_latency_us {
        positive("ceilings.collective_latency_us", c)?;
    }
    // A point's identity and settings are its benchmark, implementation and parameters.
    let mut seen: std::collections::HashMap<String, usize> = Default::default();
    for (i, r) in a.results.iter().enumerate() {
        let at = format!("results[{i}]");
        let key = serde_json::to_string(&(&r.benchmark, &r.implementation, &r.params))?;
        if let Some(first) = seen.insert(key, i) {
            bail!(
                "field `{at}` repeats `results[{first}]` ({} {}, the same parameters and \
                 settings): one point measured twice in one run (merged twice?); keep one of \
                 the two rows",
                r.benchmark,
                r.implementation
            );
        }
        if r.benchmark.trim().is_empty() || r.implementation.trim().is_empty() {
            bail!("field `{at}.benchmark` and `{at}.implementation` must both be non-empty");
        }
        limits::point(
            &at,
            &r.benchmark,
            &r.implementation,
            &r.params,
            r.stats.keys().chain(r.metrics.keys()),
            &r.notes,
        )?;
        super::check_row_device(&a.env, &at, r)?;
        limits::world_size(&at, &r.params)?;
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
            if s.fields().iter().all(|(_, v)| *v == 0.0) {
                bail!(
                    "field `{at}.stats.{k}` is 0 in every sample: a time of exactly zero is a \
                     timer that never ran (or a file filled by hand); re-run the benchmark"
                );
            }
            // Every sampled quantity is a duration (its name ends in a time unit).
            for (f, v) in s.fields() {
                nonnegative(&format!("{at}.stats.{k}.{f}"), v)?;
            }
        }
        for (k, v) in &r.metrics {
            metric(&format!("{at}.metrics.{k}"), k, *v)?;
        }
        if let Some(t) = &r.timing {
            limits::name(&format!("{at}.timing.method"), &t.method)?;
        }
        if let Some(c) = &r.correctness {
            // NaN/inf outputs are counted in `non_finite` (older producers stored f64::MAX).
            limits::name(&format!("{at}.correctness.reference"), &c.reference)?;
            nonnegative(&format!("{at}.correctness.max_abs_err"), c.max_abs_err)?;
            nonnegative(&format!("{at}.correctness.rel_err"), c.rel_err)?;
            nonnegative(&format!("{at}.correctness.tolerance"), c.tolerance)?;
            if c.passed && c.rel_err > c.tolerance {
                bail!(
                    "field `{at}.correctness.passed` is true but rel_err {} exceeds tolerance {}",
                    c.rel_err,
                    c.tolerance
                );
            }
            if c.passed && c.non_finite > 0 {
                bail!(
                    "field `{at}.correctness.passed` is true but {} output(s) are NaN or \
                     infinite (`non_finite`)",
                    c.non_finite
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
