//! One line of a comparison: a point's quantity on each side and how it changed.

use super::verdict::{Judgement, Verdict};
use crate::history::{HistoryPoint, StatBrief};
use crate::identity::Identity;
use serde::Serialize;

/// What one side says about a quantity: median and its interval.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Side {
    pub p50: f64,
    pub median_ci95: [f64; 2],
    pub n: usize,
    /// 5th and 95th percentiles of the samples: how far the point's own samples spread.
    pub p5: f64,
    pub p95: f64,
    pub run_id: String,
    /// The point could not be measured at full clocks on this side.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub throttled: bool,
    /// Its samples were taken after the clocks recovered (the power-capped steady state left out).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub recovered: bool,
}

impl Side {
    pub(super) fn of(s: &StatBrief, run_id: &str, point: &HistoryPoint) -> Self {
        Side {
            p50: s.p50,
            median_ci95: s.median_ci95,
            n: s.n,
            p5: s.p5,
            p95: s.p95,
            run_id: run_id.to_string(),
            throttled: point.throttled(),
            recovered: point.recovered(),
        }
    }

    /// The statistics this side was judged on.
    pub(super) fn brief(&self) -> StatBrief {
        StatBrief {
            n: self.n,
            p50: self.p50,
            median_ci95: self.median_ci95,
            p5: self.p5,
            p95: self.p95,
        }
    }

    /// Whether `value` lies within this side's P5-P95 samples.
    pub fn spans(&self, value: f64) -> bool {
        self.p5 <= value && value <= self.p95
    }
}

/// How a point (one quantity) changed.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "change", rename_all = "snake_case")]
pub enum Change {
    /// Measured on both sides and judged.
    Compared(Judgement),
    /// Only in head.
    Added,
    /// Only in base.
    Removed,
    /// Failed its correctness check (or errored) in head, and not in base: a regression.
    Failed,
    /// Present on both sides without two measurements to compare (skipped, failed in base, ...).
    /// `lost`: measured in base and skipped in head, which fails `--fail-on-regression`.
    NotComparable {
        reason: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        lost: bool,
    },
}

/// One line of the table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Line {
    /// "NVIDIA H100 80GB HBM3", or "base GPU -> head GPU" when they differ.
    pub gpu: String,
    pub point: Identity,
    /// Settings that differ between the two matched rows, as `k: base -> head`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub settings: Vec<String>,
    /// The row's settings, when a side holds several rows of this point (told apart by them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// The sampled quantity (`time_us`, ...); "-" when the point has none.
    pub stat: String,
    pub base: Option<Side>,
    pub head: Option<Side>,
    pub change: Change,
    /// Set when a control implementation moved at this point (see `control`), or on the
    /// lines of library implementations, whose moves are the machine's drift (see `drift`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control: Option<String>,
    /// The rule that decided a judged line's verdict, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// [`Line::needs_confirmation`] at the comparison's minimum effect: what the gate hands to
    /// interleaved processes (scripts/ci/gate-suite.sh reads it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub confirm: bool,
}

impl Line {
    /// The verdict word for tables: SAME, FASTER, SLOWER, UNCERTAIN, ADDED, REMOVED, FAILED, N/A.
    pub fn label(&self) -> &'static str {
        match &self.change {
            Change::Compared(j) => j.verdict.as_str(),
            Change::Added => "ADDED",
            Change::Removed => "REMOVED",
            Change::Failed => "FAILED",
            Change::NotComparable { .. } => "N/A",
        }
    }

    pub fn verdict(&self) -> Option<Verdict> {
        match &self.change {
            Change::Compared(j) => Some(j.verdict),
            _ => None,
        }
    }

    /// SLOWER (except a control implementation's own drift), or a point that was measured in
    /// base and fails in head.
    pub fn is_regression(&self) -> bool {
        matches!(self.change, Change::Failed)
            || (self.verdict() == Some(Verdict::Slower) && self.control.is_none())
    }

    /// What `--fail-on-regression` fails on: a regression, or a point (or quantity) measured in
    /// base that head no longer has (removed, or skipped).
    pub fn fails_gate(&self) -> bool {
        self.is_regression() || self.is_lost()
    }

    /// Measured in base and missing from head: REMOVED, or N/A because head skipped it.
    pub fn is_lost(&self) -> bool {
        matches!(
            self.change,
            Change::Removed | Change::NotComparable { lost: true, .. }
        )
    }

    /// Whether the gate should settle this line by interleaved processes: a line of our code
    /// that is FAILED, SLOWER or UNCERTAIN, or SAME while its median moved the slow way by at
    /// least `min_effect`. Such a SAME was held back by the noise the rules allow for (the
    /// machine's drift, the processes' spread), not shown unmoved; interleaving removes that
    /// noise. A library line never needs it: its code did not change.
    pub fn needs_confirmation(&self, min_effect: f64) -> bool {
        if crate::identity::is_library(&self.point.implementation) {
            return false;
        }
        match self.verdict() {
            None => matches!(self.change, Change::Failed),
            Some(Verdict::Slower | Verdict::Uncertain) => true,
            Some(Verdict::Faster) => false,
            Some(Verdict::Same) => self.ratio().is_some_and(|r| {
                let slower_by = match super::verdict::Direction::of_stat(&self.stat) {
                    super::verdict::Direction::LowerIsBetter => r - 1.0,
                    super::verdict::Direction::HigherIsBetter => 1.0 / r - 1.0,
                };
                slower_by >= min_effect
            }),
        }
    }

    pub fn ratio(&self) -> Option<f64> {
        match &self.change {
            Change::Compared(j) => j.ratio,
            _ => None,
        }
    }
}
