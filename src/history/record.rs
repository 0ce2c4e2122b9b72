//! The compact history form of a run: per point, the median, its 95% interval, P5/P95 and n of
//! each sampled quantity, the derived metrics, status and parameters; no raw samples.
//!
//! It is what a history file holds (gzip-compressed JSON) and what `compare` works on (a full
//! artifact converts to it exactly with [`HistoryRecord::of`]). Left out from the artifact:
//! min, max, P99, mean, stdev, cv and outlier counts of each quantity, the timing method and
//! warm-up, the correctness details other than `rel_err`. [`HistoryRecord::rounded`] keeps 6
//! significant digits of each statistic and 4 of each derived metric (they are derived from
//! the median, which keeps 6).

use crate::artifact::{
    is_nonnegative_metric, limits, Artifact, Ceilings, Param, ResultRow, RunInfo, Status,
};
use crate::env::Env;
use crate::stats::Summary;
use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The `format` field of every history record this build writes and reads.
pub const HISTORY_FORMAT: &str = "opbench-history/1";

/// Digits kept for statistics: 1 part per million, far below what a CUDA event (about 0.5 us
/// resolution) or any confidence interval of a median can tell apart.
pub const STAT_DIGITS: usize = 6;
/// Digits kept for derived metrics (GB/s, TFLOP/s, percentages) and for `rel_err`.
pub const METRIC_DIGITS: usize = 4;

/// `x` rounded to `digits` significant decimal digits (0, NaN and infinities unchanged).
/// Monotone: a <= b implies round(a) <= round(b).
pub fn round_sig(x: f64, digits: usize) -> f64 {
    if x == 0.0 || !x.is_finite() || digits == 0 {
        return x;
    }
    format!("{:.*e}", digits - 1, x).parse().unwrap_or(x)
}

/// What the history keeps of a statistics block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StatBrief {
    pub n: usize,
    pub p50: f64,
    /// Distribution-free 95% confidence interval of the median.
    pub median_ci95: [f64; 2],
    pub p5: f64,
    pub p95: f64,
}

impl StatBrief {
    /// The same samples `factor` times slower (or faster): median, its interval and the
    /// percentiles scaled alike, as a change of code would move them.
    pub fn scale(&mut self, factor: f64) {
        self.p50 *= factor;
        self.p5 *= factor;
        self.p95 *= factor;
        self.median_ci95 = [self.median_ci95[0] * factor, self.median_ci95[1] * factor];
    }
}

impl From<&Summary> for StatBrief {
    fn from(s: &Summary) -> Self {
        StatBrief {
            n: s.n,
            p50: s.p50,
            median_ci95: s.median_ci95,
            p5: s.p5,
            p95: s.p95,
        }
    }
}

/// One point of a run in history form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HistoryPoint {
    pub benchmark: String,
    pub implementation: String,
    pub status: Status,
    pub params: BTreeMap<String, Param>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub stats: BTreeMap<String, StatBrief>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metrics: BTreeMap<String, f64>,
    /// From the row's timing: whether L2 was flushed before each timed launch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l2_cleared: Option<bool>,
    /// From the row's correctness check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rel_err: Option<f64>,
    /// From the row's sampling record: "throttled" when the point could not be measured at
    /// full clocks (`SamplingRecord::throttled`), "recovered" when its samples were taken after
    /// the clocks recovered, "steady" otherwise. Absent in records of older builds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clocks: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl HistoryPoint {
    /// Whether the point could not be measured at full clocks.
    pub fn throttled(&self) -> bool {
        self.clocks.as_deref() == Some("throttled")
    }

    /// Whether its samples were taken after the clocks recovered.
    pub fn recovered(&self) -> bool {
        self.clocks.as_deref() == Some("recovered")
    }

    /// The point's identity in a run of `kind`, without the problem parameters in `ignore`.
    pub fn identity(&self, kind: &str, ignore: &[String]) -> crate::identity::Identity {
        crate::identity::Identity::ignoring(
            kind,
            &self.benchmark,
            &self.implementation,
            &self.params,
            ignore,
        )
    }

    pub fn of(r: &ResultRow) -> Self {
        HistoryPoint {
            benchmark: r.benchmark.clone(),
            implementation: r.implementation.clone(),
            status: r.status,
            params: r.params.clone(),
            stats: r
                .stats
                .iter()
                .map(|(k, s)| (k.clone(), StatBrief::from(s)))
                .collect(),
            metrics: r.metrics.clone(),
            l2_cleared: r.timing.as_ref().map(|t| t.l2_cleared),
            rel_err: r.correctness.as_ref().map(|c| c.rel_err),
            clocks: r.clocks().map(String::from),
            notes: r.notes.clone(),
        }
    }
}

/// A whole run in history form: the artifact's identity and environment, its points.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HistoryRecord {
    /// Always [`HISTORY_FORMAT`].
    pub format: String,
    pub kind: String,
    pub run: RunInfo,
    pub env: Env,
    #[serde(default)]
    pub ceilings: Ceilings,
    pub points: Vec<HistoryPoint>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl HistoryRecord {
    /// Drawn by `history synth`, not measured: `run.synthetic`, or (files written before that
    /// field existed) the synthetic note.
    pub fn synthetic(&self) -> bool {
        self.run.synthetic
            || self
                .notes
                .iter()
                .any(|n| n == super::synthetic::SYNTHETIC_NOTE)
    }

    /// The exact history form of an artifact (nothing rounded).
    pub fn of(a: &Artifact) -> Self {
        HistoryRecord {
            format: HISTORY_FORMAT.to_string(),
            kind: a.kind.clone(),
            run: a.run.clone(),
            env: a.env.clone(),
            ceilings: a.ceilings.clone(),
            points: a.results.iter().map(HistoryPoint::of).collect(),
            notes: a.notes.clone(),
        }
    }

    /// The stored form: statistics to [`STAT_DIGITS`], metrics and errors to [`METRIC_DIGITS`]
    /// significant digits; parameters untouched (they identify points).
    pub fn rounded(&self) -> Self {
        let mut c = self.clone();
        let metric = |v: &mut f64| *v = round_sig(*v, METRIC_DIGITS);
        if let Some(v) = c.ceilings.copy_gbps.as_mut() {
            metric(v);
        }
        c.ceilings.matmul_tflops.values_mut().for_each(metric);
        for p in &mut c.points {
            for s in p.stats.values_mut() {
                for v in [&mut s.p50, &mut s.p5, &mut s.p95]
                    .into_iter()
                    .chain(s.median_ci95.iter_mut())
                {
                    *v = round_sig(*v, STAT_DIGITS);
                }
            }
            p.metrics.values_mut().for_each(metric);
            if let Some(e) = p.rel_err.as_mut() {
                metric(e);
            }
        }
        c
    }

    /// The commit, when there is one, is a git hash (7 to 64 hex digits): list, compare and
    /// the dashboard find runs by hash prefix, so any other text would hide the run for good.
    pub fn check_commit(&self) -> Result<()> {
        match self.run.git_commit.as_deref() {
            Some(c)
                if !(7..=64).contains(&c.len()) || !c.bytes().all(|b| b.is_ascii_hexdigit()) =>
            {
                bail!(
                    "field `run.git_commit` is {:?}, not a git hash (7 to 64 hex digits): the \
                     history finds runs by hash, so this run could never be listed or compared; \
                     fix the artifact's commit, or set it to null for a run of no commit",
                    crate::text::elide_to(c, 40)
                )
            }
            _ => Ok(()),
        }
    }

    /// Checks what serde cannot; errors name the field.
    pub fn validate(&self) -> Result<()> {
        self.check_commit()?;
        if self.format != HISTORY_FORMAT {
            bail!(
                "field `format` is {:?}, this opbench reads {HISTORY_FORMAT:?}: upgrade opbench",
                self.format
            );
        }
        if self.kind.trim().is_empty() || self.run.id.trim().is_empty() {
            bail!("fields `kind` and `run.id` must be non-empty");
        }
        limits::name("kind", &self.kind)?;
        limits::run(&self.run)?;
        limits::env(&self.env)?;
        limits::ceilings(&self.ceilings)?;
        limits::texts("notes", &self.notes)?;
        if chrono::DateTime::parse_from_rfc3339(&self.run.started_utc).is_err() {
            bail!(
                "field `run.started_utc` is {:?}, expected RFC 3339",
                self.run.started_utc
            );
        }
        for (i, p) in self.points.iter().enumerate() {
            limits::point(
                &format!("points[{i}]"),
                &p.benchmark,
                &p.implementation,
                &p.params,
                p.stats.keys().chain(p.metrics.keys()),
                &p.notes,
            )?;
            for (k, s) in &p.stats {
                let at = format!("points[{i}].stats.{k}");
                let nums = [s.p5, s.p50, s.p95, s.median_ci95[0], s.median_ci95[1]];
                if nums.iter().any(|v| !v.is_finite()) {
                    bail!("field `{at}`: every number must be finite");
                }
                if nums.iter().any(|v| *v < 0.0) {
                    bail!(
                        "field `{at}`: a duration cannot be negative (p5 {}, p50 {}, p95 {}, \
                         median_ci95 [{}, {}])",
                        s.p5,
                        s.p50,
                        s.p95,
                        s.median_ci95[0],
                        s.median_ci95[1]
                    );
                }
                if s.n == 0 || !(s.median_ci95[0] <= s.p50 && s.p50 <= s.median_ci95[1]) {
                    bail!("field `{at}`: needs n >= 1 and median_ci95[0] <= p50 <= median_ci95[1]");
                }
                if p.status != Status::Ok {
                    bail!("field `{at}`: a point that is not ok carries no statistics");
                }
            }
            for (k, v) in &p.metrics {
                if !v.is_finite() {
                    bail!("field `points[{i}].metrics.{k}` is {v}: must be finite");
                }
                if *v < 0.0 && is_nonnegative_metric(k) {
                    bail!(
                        "field `points[{i}].metrics.{k}` is {v}: a time, rate or amount cannot \
                         be negative"
                    );
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_keeps_digits_and_order() {
        assert_eq!(round_sig(13.2145678, 6), 13.2146);
        assert_eq!(round_sig(0.000123456789, 6), 0.000123457);
        assert_eq!(round_sig(-2.5e-9, 6), -2.5e-9);
        assert_eq!(round_sig(1234.5678, 4), 1235.0);
        assert_eq!(round_sig(0.0, 6), 0.0);
        assert!(round_sig(f64::MAX, 6).is_finite());
        let xs = [9.9999949, 9.9999951, 9.99999999, 10.0, 10.000004];
        for w in xs.windows(2) {
            assert!(round_sig(w[0], 6) <= round_sig(w[1], 6));
        }
    }
}
