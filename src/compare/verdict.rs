//! The verdict rule: is head SAME, FASTER, SLOWER or UNCERTAIN against base, from two stats blocks.
//!
//! Rule (one sampled quantity, two runs):
//! 0. Identical blocks (same median and same median interval, e.g. two copies of one file):
//!    SAME. There is no second measurement to be uncertain about.
//! 1. ratio = head.p50 / base.p50; effect = |ratio - 1|.
//! 2. If the two 95% confidence intervals of the median (`median_ci95`) do not overlap, the
//!    medians differ beyond noise: FASTER or SLOWER when effect >= min_effect (default 3%),
//!    else SAME (a real but negligible difference).
//! 3. If they overlap, the difference is not established. SAME when even the largest change
//!    compatible with both intervals, max(head.hi / base.lo, base.hi / head.lo) - 1, is below
//!    min_effect; otherwise UNCERTAIN (too noisy to tell a min_effect change from none).
//!
//! Two disjoint 95% intervals are a conservative test (under no change they occur far less
//! often than 5% of the time), and the minimum effect keeps run-to-run drift of clocks and
//! machines (not covered by a within-run interval) from being called a regression.

use crate::history::StatBrief;
use serde::Serialize;

/// Default minimum effect size: 3%.
pub const DEFAULT_MIN_EFFECT: f64 = 0.03;

/// Which way is better for a sampled quantity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Durations: `time_us`, `decode_step_ms`, `prefill_s`.
    LowerIsBetter,
    /// Rates sampled directly, e.g. `tokens_per_s`.
    HigherIsBetter,
}

impl Direction {
    /// From a stats key: names with `_per_` (a rate, e.g. `tokens_per_s`) are higher-is-better,
    /// every other key (the validator requires a `_us`/`_ms`/`_s` unit) is a duration.
    pub fn of_stat(key: &str) -> Direction {
        if key.contains("_per_") {
            Direction::HigherIsBetter
        } else {
            Direction::LowerIsBetter
        }
    }
}

/// The outcome for one quantity of one point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Verdict {
    Same,
    Faster,
    Slower,
    Uncertain,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Same => "SAME",
            Verdict::Faster => "FASTER",
            Verdict::Slower => "SLOWER",
            Verdict::Uncertain => "UNCERTAIN",
        }
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A verdict with the numbers it was decided on.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Judgement {
    pub verdict: Verdict,
    /// head.p50 / base.p50 (None when a median is not positive).
    pub ratio: Option<f64>,
    /// Whether the two median intervals overlap.
    pub ci_overlap: bool,
}

/// Applies the rule in this module's header to `base` and `head`.
pub fn judge(
    base: &StatBrief,
    head: &StatBrief,
    direction: Direction,
    min_effect: f64,
) -> Judgement {
    let [bl, bh] = base.median_ci95;
    let [hl, hh] = head.median_ci95;
    let ci_overlap = !(hl > bh || hh < bl);
    if base.p50 == head.p50 && base.median_ci95 == head.median_ci95 {
        return Judgement {
            verdict: Verdict::Same,
            ratio: (base.p50 > 0.0).then_some(1.0),
            ci_overlap,
        };
    }
    if base.p50 <= 0.0 || head.p50 <= 0.0 {
        // Ratios of non-positive medians mean nothing; say so rather than guess.
        return Judgement {
            verdict: if base.p50 == head.p50 {
                Verdict::Same
            } else {
                Verdict::Uncertain
            },
            ratio: None,
            ci_overlap,
        };
    }
    let ratio = head.p50 / base.p50;
    let effect = (ratio - 1.0).abs();
    let verdict = if !ci_overlap {
        if effect < min_effect {
            Verdict::Same
        } else {
            let head_higher = hl > bh;
            match (head_higher, direction) {
                (true, Direction::LowerIsBetter) | (false, Direction::HigherIsBetter) => {
                    Verdict::Slower
                }
                _ => Verdict::Faster,
            }
        }
    } else {
        let plausible = if bl > 0.0 && hl > 0.0 {
            (hh / bl).max(bh / hl) - 1.0
        } else {
            f64::INFINITY
        };
        if plausible < min_effect {
            Verdict::Same
        } else {
            Verdict::Uncertain
        }
    };
    Judgement {
        verdict,
        ratio: Some(ratio),
        ci_overlap,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(p50: f64, lo: f64, hi: f64) -> StatBrief {
        StatBrief {
            n: 100,
            p5: lo,
            p50,
            p95: hi,
            median_ci95: [lo, hi],
        }
    }

    #[test]
    fn the_same_data_twice_is_same_however_wide_its_interval() {
        let wide = block(100.0, 10.0, 900.0);
        let j = judge(&wide, &wide, Direction::LowerIsBetter, 0.03);
        assert_eq!((j.verdict, j.ratio), (Verdict::Same, Some(1.0)));
    }

    #[test]
    fn each_branch_of_the_rule() {
        let t = Direction::LowerIsBetter;
        let base = block(100.0, 99.5, 100.5);
        // Disjoint and 10% higher time: slower; 10% lower: faster.
        let j = judge(&base, &block(110.0, 109.5, 110.5), t, 0.03);
        assert_eq!(j.verdict, Verdict::Slower);
        assert!(!j.ci_overlap);
        assert!((j.ratio.unwrap() - 1.1).abs() < 1e-12);
        assert_eq!(
            judge(&base, &block(90.0, 89.5, 90.5), t, 0.03).verdict,
            Verdict::Faster
        );
        // Disjoint but only 1% apart: a real, negligible difference.
        assert_eq!(
            judge(&base, &block(101.0, 100.8, 101.2), t, 0.03).verdict,
            Verdict::Same
        );
        // Overlapping, narrow: nothing of 3% is plausible.
        assert_eq!(
            judge(&base, &block(100.2, 99.7, 100.7), t, 0.03).verdict,
            Verdict::Same
        );
        // Overlapping, wide: a 3% change cannot be ruled out.
        assert_eq!(
            judge(
                &block(100.0, 95.0, 105.0),
                &block(104.0, 99.0, 109.0),
                t,
                0.03
            )
            .verdict,
            Verdict::Uncertain
        );
        // A fixed ratio alone never decides: 20% apart but overlapping intervals.
        assert_eq!(
            judge(
                &block(100.0, 70.0, 130.0),
                &block(120.0, 90.0, 150.0),
                t,
                0.03
            )
            .verdict,
            Verdict::Uncertain
        );
        // Rates: higher is better.
        let r = Direction::of_stat("tokens_per_s");
        assert_eq!(r, Direction::HigherIsBetter);
        assert_eq!(
            judge(&base, &block(110.0, 109.5, 110.5), r, 0.03).verdict,
            Verdict::Faster
        );
        assert_eq!(Direction::of_stat("decode_step_ms"), t);
        // The minimum effect is a parameter.
        assert_eq!(
            judge(&base, &block(110.0, 109.5, 110.5), t, 0.2).verdict,
            Verdict::Same
        );
    }
}
