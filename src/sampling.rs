//! Noise-stopped sampling, the harness's loop: take timed samples until the median's 95%
//! interval is within a target of the median, a time budget runs out, or a sample cap is
//! reached; record which.
//!
//! The loop is pure over an [`Executor`] (one timed sample per call), so it runs on the CPU
//! against a mock in tests and on the GPU against CUDA events in `gpu::timing`. It sits below
//! both `gpu` and `harness` (which re-exports it), so neither imports the other in a circle.
//!
//! Clocks: a sample is *throttled* when NVML reported a clock-throttle reason, or an SM clock
//! below the board's top clock, while it ran. When at least [`RECOVER_FRACTION`] of the first
//! samples are throttled (tensor-core products under the power cap are, back to back), the
//! point is measured again with every sample taken after the clocks recovered (the executor
//! waits until NVML shows no throttle reason, then warms up and times one sample): the time of
//! the code at the board's top clock, which is the same on every board of a model, where the
//! power-capped steady state differs from board to board. The back-to-back median is kept as
//! `sustained_p50_us`. A point whose clocks did not recover for [`MIN_FOR_SPREAD`] samples is
//! `throttled`: it keeps its times, and `compare` never calls it FASTER or SLOWER.
//! docs/notes/harness.md has the measurements behind this rule.

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
    /// Whether a mostly throttled point is measured again after the clocks recover (see the
    /// module header); off for fixed counts.
    pub recover_throttled: bool,
}

/// Share of the first samples that must be throttled for a point to be measured again after
/// the clocks recover. Below it the median (robust to that share of outliers) stands.
pub const RECOVER_FRACTION: f64 = 0.2;

/// Whether `throttled` of `taken` samples is at least [`RECOVER_FRACTION`] of them: a point
/// measured back to back that reads so is measured again after the clocks recover, or, where
/// it cannot be (recovery off, or timed by a peer script), is `throttled`.
pub fn mostly_throttled(throttled: usize, taken: usize) -> bool {
    throttled as f64 >= RECOVER_FRACTION * taken as f64
}

/// Longest wait for the clocks to recover before one sample.
pub const MAX_RECOVERY_WAIT: Duration = Duration::from_millis(250);

/// Total waiting one point may spend on recoveries; past it the point stops as it stands.
pub const RECOVERY_BUDGET: Duration = Duration::from_secs(6);

impl Sampling {
    /// Exactly `n` samples (ceilings, estimates, a `--samples` given on the command line).
    pub fn fixed(n: usize) -> Self {
        Sampling {
            min_samples: n.max(1),
            max_samples: n.max(1),
            target_rel: 0.0,
            budget: Duration::MAX,
            recover_throttled: false,
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
        let recovery = if self.recover_throttled {
            format!(
                "; a measurement with at least {:.0}% of its samples throttled (a clock-throttle \
                 reason, or an SM clock below the top clock) is measured again, each sample \
                 after the clocks recovered (timing.sampling.clocks: recovered; the back-to-back \
                 median is sustained_p50_us)",
                RECOVER_FRACTION * 100.0
            )
        } else {
            "; throttled measurements are not measured again (clocks: throttled)".to_string()
        };
        format!(
            "sampling: each measurement takes samples until the 95% interval of its median lies \
             within +-{}% of the median (checked from {} samples on), at most {} samples{budget}; \
             each row's timing.sampling says what ended it and how many samples were throttled\
             {recovery}",
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

/// How the executor is to take the next sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prepare {
    /// Right after the previous one.
    BackToBack,
    /// After waiting (at most the given time) for NVML to show no clock-throttle reason, then
    /// an untimed warm-up launch; [`Sample::recovered`] says whether the wait succeeded.
    Recover(Duration),
}

/// One timed sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// Time per launch, microseconds.
    pub us: f64,
    /// Host wall time the sample took (queueing, waiting, reading the events), the recovery
    /// wait excluded.
    pub wall: Duration,
    /// Whether the GPU reported a clock-throttle reason or an SM clock below its top clock at
    /// the latest reading (readings are at most 20 ms apart, see `Gpu::clocks_recently`).
    pub throttled: bool,
    /// With [`Prepare::Recover`]: whether the clocks were free of throttle reasons before the
    /// sample, and how long the wait took.
    pub recovered: Option<(bool, Duration)>,
}

impl Sample {
    /// A back-to-back sample.
    pub fn timed(us: f64, wall: Duration, throttled: bool) -> Self {
        Sample {
            us,
            wall,
            throttled,
            recovered: None,
        }
    }
}

/// Takes one timed sample (the GPU's event pair, or a mock in tests).
pub trait Executor {
    fn sample(&mut self, prepare: Prepare) -> Result<Sample>;
}

impl<F: FnMut(Prepare) -> Result<Sample>> Executor for F {
    fn sample(&mut self, prepare: Prepare) -> Result<Sample> {
        self(prepare)
    }
}

/// How the clocks went during a measurement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clocks {
    /// Fewer than [`RECOVER_FRACTION`] of the samples throttled: measured back to back.
    Steady,
    /// Measured again, each sample after the clocks recovered.
    Recovered,
    /// Throttled, and the clocks did not recover for enough samples (or recovery was off).
    Throttled,
}

impl Clocks {
    /// The artifact's `timing.sampling.clocks`.
    pub fn name(self) -> &'static str {
        match self {
            Clocks::Steady => "steady",
            Clocks::Recovered => "recovered",
            Clocks::Throttled => "throttled",
        }
    }
}

/// The samples of one measurement and why they stopped.
#[derive(Debug, Clone, PartialEq)]
pub struct Sampled {
    /// The samples the point reports (with recovery: those taken after the clocks recovered).
    pub samples_us: Vec<f64>,
    pub stop: Stop,
    /// Throttled samples among every sample taken (both phases).
    pub throttled: usize,
    /// The median interval's relative half-width when sampling stopped.
    pub halfwidth_rel: f64,
    pub clocks: Clocks,
    /// With recovery: the median of the back-to-back samples (the power-capped steady state).
    pub sustained_p50_us: Option<f64>,
    /// Samples taken in all, those left out of `samples_us` included.
    pub taken: usize,
    /// Host time spent waiting for the clocks to recover.
    pub recovery_wait: Duration,
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
            clocks: Some(self.clocks.name().into()),
            samples_taken: Some(self.taken),
            sustained_p50_us: self.sustained_p50_us,
            recovery_wait_ms: (self.recovery_wait > Duration::ZERO)
                .then_some(self.recovery_wait.as_secs_f64() * 1e3),
        }
    }
}

/// One phase of sampling: its samples, why it stopped, what the clocks did.
struct Phase {
    kept_us: Vec<f64>,
    stop: Stop,
    throttled: usize,
    taken: usize,
    halfwidth_rel: f64,
    waited: Duration,
    unrecovered: usize,
}

/// Runs `exec` until `s` says stop. The interval is re-checked at every sample up to 64 and
/// then every n/32 samples, so the checks cost O(n log n) over the whole loop. A mostly
/// throttled point is measured again after the clocks recover (module header).
pub fn sample_until(s: &Sampling, exec: &mut impl Executor) -> Result<Sampled> {
    s.check()?;
    let first = phase(s, exec, Prepare::BackToBack, 0)?;
    let mostly_throttled = mostly_throttled(first.throttled, first.taken);
    if first.throttled == 0 || !mostly_throttled || !s.recover_throttled {
        let clocks = if mostly_throttled {
            Clocks::Throttled
        } else {
            Clocks::Steady
        };
        return Ok(Sampled {
            samples_us: first.kept_us,
            stop: first.stop,
            throttled: first.throttled,
            halfwidth_rel: first.halfwidth_rel,
            clocks,
            sustained_p50_us: None,
            taken: first.taken,
            recovery_wait: Duration::ZERO,
        });
    }
    let sustained = crate::stats::summarize(&first.kept_us)?.p50;
    let second = phase(s, exec, Prepare::Recover(MAX_RECOVERY_WAIT), first.taken)?;
    let clocks = if second.kept_us.len() >= MIN_FOR_SPREAD.min(s.max_samples) {
        Clocks::Recovered
    } else {
        Clocks::Throttled
    };
    // Clocks that never recovered leave the back-to-back samples as the best there is.
    let (kept, stop, halfwidth_rel) = if clocks == Clocks::Recovered {
        (second.kept_us, second.stop, second.halfwidth_rel)
    } else {
        (first.kept_us, first.stop, first.halfwidth_rel)
    };
    Ok(Sampled {
        samples_us: kept,
        stop,
        throttled: first.throttled + second.throttled,
        halfwidth_rel,
        clocks,
        sustained_p50_us: Some(sustained),
        taken: first.taken + second.taken,
        recovery_wait: second.waited,
    })
}

/// Samples until the interval, the budget or the cap stops it. With [`Prepare::Recover`],
/// only samples taken after the clocks recovered are kept, and the phase also stops once
/// [`RECOVERY_BUDGET`] of waiting is spent.
fn phase(s: &Sampling, exec: &mut impl Executor, prepare: Prepare, index0: usize) -> Result<Phase> {
    let mut p = Phase {
        kept_us: Vec::with_capacity(s.min_samples),
        stop: Stop::Fixed,
        throttled: 0,
        taken: 0,
        halfwidth_rel: f64::INFINITY,
        waited: Duration::ZERO,
        unrecovered: 0,
    };
    let mut spent = Duration::ZERO;
    let mut next_check = s.min_samples;
    p.stop = loop {
        let got = exec.sample(prepare)?;
        if !got.us.is_finite() {
            bail!(
                "sample {} is {}: the timer returned no valid time",
                index0 + p.taken,
                got.us
            );
        }
        p.taken += 1;
        spent += got.wall;
        let kept = match got.recovered {
            Some((ok, waited)) => {
                p.waited += waited;
                p.unrecovered += usize::from(!ok);
                p.throttled += usize::from(got.throttled || !ok);
                ok
            }
            None => {
                p.throttled += usize::from(got.throttled);
                true
            }
        };
        if kept {
            p.kept_us.push(got.us);
        }
        let n = p.kept_us.len();
        if kept && s.target_rel > 0.0 && n >= next_check {
            p.halfwidth_rel = median_ci_halfwidth_rel(&p.kept_us)?;
            if p.halfwidth_rel <= s.target_rel {
                break Stop::Interval;
            }
            next_check = n + if n < 64 { 1 } else { n / 32 };
        }
        if p.taken >= s.max_samples {
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
        if p.waited >= RECOVERY_BUDGET {
            break Stop::Budget;
        }
    };
    if !p.kept_us.is_empty() && (p.halfwidth_rel.is_infinite() || p.stop != Stop::Interval) {
        p.halfwidth_rel = median_ci_halfwidth_rel(&p.kept_us)?;
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A mock GPU: samples from a list (cycled), each taking `wall`.
    fn mock(
        values: Vec<f64>,
        wall_us: u64,
        throttled_every: usize,
    ) -> impl FnMut(Prepare) -> Result<Sample> {
        let mut i = 0usize;
        move |_| {
            let us = values[i % values.len()];
            i += 1;
            Ok(Sample::timed(
                us,
                Duration::from_micros(wall_us),
                throttled_every > 0 && i.is_multiple_of(throttled_every),
            ))
        }
    }

    /// A power-capped GPU: back to back every sample is throttled and takes `capped_us`; after
    /// a recovery the clocks are free `recovers` times in a row (then never) and a sample
    /// takes `top_us`.
    fn capped(
        capped_us: f64,
        top_us: f64,
        recovers: usize,
    ) -> impl FnMut(Prepare) -> Result<Sample> {
        let mut i = 0usize;
        let mut left = recovers;
        move |prepare| {
            i += 1;
            let jitter = (i % 3) as f64 * 0.001;
            Ok(match prepare {
                Prepare::BackToBack => {
                    Sample::timed(capped_us + jitter, Duration::from_micros(100), true)
                }
                Prepare::Recover(max) => {
                    let ok = left > 0;
                    left = left.saturating_sub(1);
                    Sample {
                        us: if ok { top_us + jitter } else { capped_us },
                        wall: Duration::from_micros(100),
                        throttled: false,
                        recovered: Some((ok, if ok { Duration::from_millis(30) } else { max })),
                    }
                }
            })
        }
    }

    fn policy(min: usize, max: usize, pct: f64, budget_ms: u64) -> Sampling {
        Sampling {
            min_samples: min,
            max_samples: max,
            target_rel: pct / 100.0,
            budget: Duration::from_millis(budget_ms),
            recover_throttled: true,
        }
    }

    #[test]
    fn a_mostly_throttled_point_is_measured_again_after_the_clocks_recover() {
        let r = sample_until(
            &policy(20, 1000, 0.25, 300),
            &mut capped(110.0, 100.0, 1000),
        )
        .unwrap();
        assert_eq!(r.clocks, Clocks::Recovered);
        assert!(
            r.samples_us.iter().all(|&us| us < 101.0),
            "{:?}",
            r.samples_us
        );
        assert_eq!(r.samples_us.len(), 20);
        assert!((r.sustained_p50_us.unwrap() - 110.0).abs() < 0.01);
        assert_eq!((r.taken, r.throttled), (40, 20));
        assert_eq!(r.recovery_wait, Duration::from_millis(600));
        let rec = r.record(&policy(20, 1000, 0.25, 300));
        assert_eq!(rec.clocks.as_deref(), Some("recovered"));
        assert_eq!(rec.samples_taken, Some(40));
        assert!(!rec.throttled(20));
    }

    #[test]
    fn clocks_that_never_recover_leave_a_throttled_point() {
        // Two recoveries only: too few for a spread, so the back-to-back samples stand.
        let r = sample_until(&policy(20, 1000, 0.25, 300), &mut capped(110.0, 100.0, 2)).unwrap();
        assert_eq!(r.clocks, Clocks::Throttled);
        assert!(r.samples_us.iter().all(|&us| us >= 110.0));
        assert!(r.recovery_wait >= RECOVERY_BUDGET);
        let rec = r.record(&policy(20, 1000, 0.25, 300));
        assert!(rec.throttled(r.samples_us.len()));
        // With recovery off the point is throttled at once.
        let mut off = policy(20, 1000, 0.25, 300);
        off.recover_throttled = false;
        let r = sample_until(&off, &mut capped(110.0, 100.0, 1000)).unwrap();
        assert_eq!((r.clocks, r.taken), (Clocks::Throttled, 20));
    }

    #[test]
    fn a_few_throttled_samples_keep_the_point_steady() {
        // One in ten throttled: under RECOVER_FRACTION, the median stands as measured.
        let mut m = mock(vec![99.9, 100.0, 100.1], 100, 10);
        let r = sample_until(&policy(20, 1000, 0.25, 1000), &mut m).unwrap();
        assert_eq!((r.clocks, r.throttled, r.taken), (Clocks::Steady, 2, 20));
        assert_eq!(r.sustained_p50_us, None);
        // Old records (no clocks field) are throttled when every sample was.
        let mut rec = r.record(&policy(20, 1000, 0.25, 1000));
        rec.clocks = None;
        assert!(!rec.throttled(20));
        rec.throttled_samples = 20;
        assert!(rec.throttled(20));
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
        assert_eq!(r.clocks, Clocks::Throttled);
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
