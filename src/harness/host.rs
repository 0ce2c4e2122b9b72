//! Host-clock sampling for the CPU paths: the same stop rules and flags as a GPU measurement,
//! each sample timed with `Instant` around `per_sample` calls.

use crate::sampling::{sample_until, Sample, Sampled, Sampling};
use anyhow::Result;
use std::time::Instant;

/// Samples `run` until `s` says stop; each sample is `per_sample` calls, its time divided by
/// that count. The CPU reports no clock-throttle reason.
pub fn sample_host(
    s: &Sampling,
    per_sample: usize,
    mut run: impl FnMut() -> Result<()>,
) -> Result<Sampled> {
    let per_sample = per_sample.max(1);
    // The CPU has no clocks to wait for: a recovery is taken like any other sample.
    let mut exec = |_| -> Result<Sample> {
        let t0 = Instant::now();
        for _ in 0..per_sample {
            run()?;
        }
        let wall = t0.elapsed();
        Ok(Sample::timed(
            wall.as_secs_f64() * 1e6 / per_sample as f64,
            wall,
            false,
        ))
    };
    sample_until(s, &mut exec)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sampling::Stop;
    use std::time::Duration;

    #[test]
    fn the_cap_the_fixed_count_and_the_budget_are_honoured() {
        let mut calls = 0;
        let capped = Sampling {
            min_samples: 2,
            max_samples: 2,
            target_rel: 0.0,
            budget: Duration::from_secs(60),
            recover_throttled: true,
        };
        let r = sample_host(&capped, 3, || {
            calls += 1;
            Ok(())
        })
        .unwrap();
        assert_eq!(
            (r.samples_us.len(), r.stop, calls),
            (2, Stop::MaxSamples, 6)
        );
        let r = sample_host(&Sampling::fixed(50), 1, || Ok(())).unwrap();
        assert_eq!((r.samples_us.len(), r.stop), (50, Stop::Fixed));
        // A budget far below one sample stops at the cap when the cap is under the spread minimum.
        let tiny = Sampling {
            min_samples: 2,
            max_samples: 4,
            target_rel: 0.0,
            budget: Duration::from_nanos(1),
            recover_throttled: true,
        };
        let r = sample_host(&tiny, 1, || {
            std::thread::sleep(Duration::from_micros(50));
            Ok(())
        })
        .unwrap();
        assert_eq!(r.samples_us.len(), 4);
    }
}
