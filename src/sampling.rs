//! Noise-stopped sampling, the harness's loop: take timed samples until the median's 95%
//! interval is within a target of the median, a time budget runs out, or a sample cap is
//! reached; record which.
//!
//! The loop is pure over an [`Executor`] (one timed sample per call), so it runs on the CPU
//! against a mock in tests and on the GPU against CUDA events in `gpu::timing`. It sits below
//! both `gpu` and `harness` (which re-exports it), so neither imports the other in a circle.

use crate::artifact::SamplingRecord;
use crate::stats::median_ci_halfwidth_rel;
use anyhow::{bail, Result};
use std::time::Duration;

/// Samples the time budget may stop a measurement at, at the fewest: enough for a spread.
pub const MIN_FOR_SPREAD: usize = 5;

/// When a measurement stops taking samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sampling {
    /// Samples taken before the interval may stop the loop.
    pub min_samples: usize,
    /// Samples taken at the most.
    pub max_samples: usize,
    /// Stop once the median's 95% interval lies within +-this fraction of the median
    /// (0.0025 = +-0.25%); 0 never stops on the interval.
    pub target_rel: f64,
    /// Host wall time of the samples after which the loop stops (once it has
    /// [`MIN_FOR_SPREAD`] samples), warm-up excluded.
    pub budget: Duration,
}

impl Sampling {
    /// Exactly `n` samples (ceilings, estimates, a `--samples` given on the command line).
    pub fn fixed(n: usize) -> Self {
        Sampling {
            min_samples: n.max(1),
            max_samples: n.max(1),
            target_rel: 0.0,
            budget: Duration::MAX,
        }
    }

    /// Whether this always takes the same number of samples.
    pub fn is_fixed(&self) -> bool {
        self.target_rel == 0.0 && self.budget == Duration::MAX
    }

    /// The artifact note on how GPU measurements were sampled.
    pub fn describe(&self) -> String {
        if self.is_fixed() {
            return format!(
                "sampling: {} timed samples per measurement (a fixed count)",
                self.max_samples
            );
        }
        let budget = if self.budget == Duration::MAX {
            String::new()
        } else {
            format!(
                ", or {:.0} ms of samples (at least {MIN_FOR_SPREAD} kept)",
                self.budget.as_secs_f64() * 1e3
            )
        };
        format!(
            "sampling: each measurement takes samples until the 95% interval of its median lies              within +-{}% of the median (checked from {} samples on), at most {} samples{budget};              each row's timing.sampling says what ended it and how many samples NVML reported              a clock-throttle reason for",
            self.target_rel * 100.0,
            self.min_samples,
            self.max_samples,
        )
    }

    /// Refuses settings that cannot work, naming the flag to change.
    pub fn check(&self) -> Result<()> {
        if self.max_samples == 0 || self.min_samples == 0 {
            bail!("--min-samples and --max-samples must be at least 1");
        }
        if self.min_samples > self.max_samples {
            bail!(
                "--min-samples {} is above --max-samples {}: lower the first or raise the second",
                self.min_samples,
                self.max_samples
            );
        }
        if !(0.0..1.0).contains(&self.target_rel) {
            bail!(
                "--ci-target-pct {}: give a percentage from 0 (never stop on noise) to under 100",
                self.target_rel * 100.0
            );
        }
        Ok(())
    }
}

/// What ended a measurement's sampling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The median's interval reached the target.
    Interval,
    /// The time budget ran out first.
    Budget,
    /// The sample cap was reached first.
    MaxSamples,
    /// A fixed count was asked for and taken.
    Fixed,
}

impl Stop {
    /// The artifact's `timing.sampling.stopped_by`.
    pub fn name(self) -> &'static str {
        match self {
            Stop::Interval => "median_interval",
            Stop::Budget => "time_budget",
            Stop::MaxSamples => "max_samples",
            Stop::Fixed => "fixed_count",
        }
    }
}

/// One timed sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// Time per launch, microseconds.
    pub us: f64,
    /// Host wall time the sample took (queueing, waiting, reading the events).
    pub wall: Duration,
    /// Whether the GPU reported a clock-throttle reason at the latest reading (readings are
    /// at most 20 ms apart, see `Gpu::throttled_recently`).
    pub throttled: bool,
}

/// Takes one timed sample (the GPU's event pair, or a mock in tests).
pub trait Executor {
    fn sample(&mut self) -> Result<Sample>;
}

impl<F: FnMut() -> Result<Sample>> Executor for F {
    fn sample(&mut self) -> Result<Sample> {
        self()
    }
}

/// The samples of one measurement and why they stopped.
#[derive(Debug, Clone, PartialEq)]
pub struct Sampled {
    pub samples_us: Vec<f64>,
    pub stop: Stop,
    pub throttled: usize,
    /// The median interval's relative half-width when sampling stopped.
    pub halfwidth_rel: f64,
}

impl Sampled {
    /// The artifact record of how this measurement was sampled.
    pub fn record(&self, s: &Sampling) -> SamplingRecord {
        SamplingRecord {
            stopped_by: self.stop.name().into(),
            target_median_ci_pct: s.target_rel * 100.0,
            min_samples: s.min_samples,
            max_samples: s.max_samples,
            budget_ms: (s.budget != Duration::MAX).then_some(s.budget.as_secs_f64() * 1e3),
            throttled_samples: self.throttled,
        }
    }
}

/// Runs `exec` until `s` says stop. The interval is re-checked at every sample up to 64 and
/// then every n/32 samples, so the checks cost O(n log n) over the whole loop.
pub fn sample_until(s: &Sampling, exec: &mut impl Executor) -> Result<Sampled> {
    s.check()?;
    let mut samples_us = Vec::with_capacity(s.min_samples);
    let mut spent = Duration::ZERO;
    let mut throttled = 0;
    let mut next_check = s.min_samples;
    let mut halfwidth_rel = f64::INFINITY;
    let stop = loop {
        let got = exec.sample()?;
        if !got.us.is_finite() {
            bail!(
                "sample {} is {}: the timer returned no valid time",
                samples_us.len(),
                got.us
            );
        }
        samples_us.push(got.us);
        spent += got.wall;
        throttled += usize::from(got.throttled);
        let n = samples_us.len();
        if s.target_rel > 0.0 && n >= next_check {
            halfwidth_rel = median_ci_halfwidth_rel(&samples_us)?;
            if halfwidth_rel <= s.target_rel {
                break Stop::Interval;
            }
            next_check = n + if n < 64 { 1 } else { n / 32 };
        }
        if n >= s.max_samples {
            break if s.is_fixed() {
                Stop::Fixed
            } else {
                Stop::MaxSamples
            };
        }
        // Stop before a sample that would end past the budget (the last one's wall predicts it).
        if n >= MIN_FOR_SPREAD.min(s.max_samples) && spent + got.wall > s.budget {
            break Stop::Budget;
        }
    };
    if halfwidth_rel.is_infinite() || stop != Stop::Interval {
        halfwidth_rel = median_ci_halfwidth_rel(&samples_us)?;
    }
    Ok(Sampled {
        samples_us,
        stop,
        throttled,
        halfwidth_rel,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A mock GPU: samples from a list (cycled), each taking `wall`.
    fn mock(
        values: Vec<f64>,
        wall_us: u64,
        throttled_every: usize,
    ) -> impl FnMut() -> Result<Sample> {
        let mut i = 0usize;
        move || {
            let us = values[i % values.len()];
            i += 1;
            Ok(Sample {
                us,
                wall: Duration::from_micros(wall_us),
                throttled: throttled_every > 0 && i.is_multiple_of(throttled_every),
            })
        }
    }

    fn policy(min: usize, max: usize, pct: f64, budget_ms: u64) -> Sampling {
        Sampling {
            min_samples: min,
            max_samples: max,
            target_rel: pct / 100.0,
            budget: Duration::from_millis(budget_ms),
        }
    }

    #[test]
    fn quiet_samples_stop_on_the_interval_at_the_minimum() {
        // +-0.1% around 100: every interval is within 0.25% as soon as the minimum is reached.
        let mut m = mock(vec![99.9, 100.0, 100.1], 100, 0);
        let r = sample_until(&policy(20, 1000, 0.25, 1000), &mut m).unwrap();
        assert_eq!(r.stop, Stop::Interval);
        assert_eq!(r.samples_us.len(), 20);
        assert!(r.halfwidth_rel <= 0.0025);
    }

    #[test]
    fn noisy_samples_need_more_and_converge_later() {
        // A deterministic spread of +-2% (uniform-like): needs far more than 20 samples.
        let vals: Vec<f64> = (0..97)
            .map(|i| 98.0 + 4.0 * ((i * 37) % 97) as f64 / 96.0)
            .collect();
        let mut m = mock(vals, 100, 0);
        let r = sample_until(&policy(20, 5000, 0.25, 10_000), &mut m).unwrap();
        assert_eq!(r.stop, Stop::Interval);
        assert!(r.samples_us.len() > 100, "{}", r.samples_us.len());
        assert!(r.halfwidth_rel <= 0.0025);
    }

    #[test]
    fn budget_ends_a_noisy_measurement_and_says_so() {
        // +-10% noise cannot reach 0.25% in 50 ms of 1 ms samples.
        let mut m = mock(vec![90.0, 110.0, 100.0, 95.0, 105.0], 1000, 0);
        let r = sample_until(&policy(20, 100_000, 0.25, 50), &mut m).unwrap();
        assert_eq!(r.stop, Stop::Budget);
        assert!(r.samples_us.len() <= 50 && r.samples_us.len() >= 45);
        assert!(r.halfwidth_rel > 0.0025);
    }

    #[test]
    fn cap_and_fixed_counts() {
        let mut m = mock(vec![90.0, 110.0], 10, 0);
        let r = sample_until(&policy(5, 30, 0.25, 60_000), &mut m).unwrap();
        assert_eq!((r.stop, r.samples_us.len()), (Stop::MaxSamples, 30));
        let mut m = mock(vec![1.0], 10, 0);
        let r = sample_until(&Sampling::fixed(7), &mut m).unwrap();
        assert_eq!((r.stop, r.samples_us.len()), (Stop::Fixed, 7));
    }

    #[test]
    fn budget_keeps_a_spread_of_slow_samples() {
        // One sample already outlasts the budget: the loop still takes MIN_FOR_SPREAD.
        let mut m = mock(vec![5e5, 5.1e5], 500_000, 0);
        let r = sample_until(&policy(20, 100, 0.25, 100), &mut m).unwrap();
        assert_eq!((r.stop, r.samples_us.len()), (Stop::Budget, MIN_FOR_SPREAD));
    }

    #[test]
    fn throttled_samples_are_counted() {
        let mut m = mock(vec![100.0], 10, 4);
        let r = sample_until(&Sampling::fixed(40), &mut m).unwrap();
        assert_eq!(r.throttled, 10);
        let rec = r.record(&Sampling::fixed(40));
        assert_eq!(rec.stopped_by, "fixed_count");
        assert_eq!(rec.throttled_samples, 10);
        assert_eq!(rec.budget_ms, None);
    }

    #[test]
    fn bad_settings_and_bad_samples_are_refused() {
        let mut m = mock(vec![1.0], 10, 0);
        let e = sample_until(&policy(50, 10, 0.25, 10), &mut m).unwrap_err();
        assert!(e.to_string().contains("--min-samples 50"), "{e}");
        let e = sample_until(&policy(5, 10, 150.0, 10), &mut m).unwrap_err();
        assert!(e.to_string().contains("--ci-target-pct"), "{e}");
        let mut nan = mock(vec![f64::NAN], 10, 0);
        assert!(sample_until(&Sampling::fixed(3), &mut nan).is_err());
    }
}
