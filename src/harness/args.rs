//! The sampling flags every benchmark shares (`--samples`, `--ci-target-pct`, `--min-samples`,
//! `--max-samples`, `--point-budget-ms`), one definition flattened into each binary's Args.
//! The CPU paths sample by the same flags as the GPU ones.

use crate::sampling::Sampling;
use clap::Args;
use std::time::Duration;

/// When a measurement stops taking samples.
#[derive(Debug, Clone, Args)]
pub struct SamplingArgs {
    /// Exactly this many timed samples per measurement, instead of sampling until the median
    /// settles (cannot be combined with the other sampling flags).
    #[arg(
        long,
        allow_negative_numbers = true,
        value_parser = crate::cli::at_least_two,
        conflicts_with_all = ["ci_target_pct", "min_samples", "max_samples", "point_budget_ms"]
    )]
    pub samples: Option<usize>,
    /// Stop sampling a measurement once the 95% interval of its median lies within +-this
    /// percentage of the median (0: never stop on noise; take --max-samples or the budget).
    #[arg(
        long,
        default_value_t = 0.25,
        value_name = "PCT",
        allow_negative_numbers = true,
        value_parser = ci_target_pct
    )]
    pub ci_target_pct: f64,
    /// Samples every measurement takes before the interval may stop it.
    #[arg(
        long,
        default_value_t = 20,
        allow_negative_numbers = true,
        value_parser = crate::cli::positive
    )]
    pub min_samples: usize,
    /// Samples a measurement takes at the most (2 or more: a spread needs two).
    #[arg(
        long,
        default_value_t = 2000,
        allow_negative_numbers = true,
        value_parser = crate::cli::at_least_two
    )]
    pub max_samples: usize,
    /// Host wall time per measurement for its timed samples, in milliseconds: a measurement
    /// whose median has not settled by then stops (at 5 samples at the least) and says so in
    /// timing.sampling.stopped_by.
    #[arg(
        long,
        alias = "budget-ms",
        default_value_t = 300.0,
        value_name = "MS",
        allow_negative_numbers = true,
        value_parser = crate::cli::budget_ms
    )]
    pub point_budget_ms: f64,
    /// Keep a mostly throttled measurement's back-to-back samples instead of measuring it
    /// again after the clocks recover (its row then says clocks "throttled" and `compare`
    /// does not judge it).
    #[arg(long)]
    pub no_clock_recovery: bool,
}

impl Default for SamplingArgs {
    fn default() -> Self {
        SamplingArgs {
            samples: None,
            ci_target_pct: 0.25,
            min_samples: 20,
            max_samples: 2000,
            point_budget_ms: 300.0,
            no_clock_recovery: false,
        }
    }
}

impl SamplingArgs {
    /// The policy these flags describe.
    pub fn sampling(&self) -> Sampling {
        if let Some(n) = self.samples {
            return Sampling::fixed(n);
        }
        Sampling {
            min_samples: self.min_samples,
            max_samples: self.max_samples,
            target_rel: self.ci_target_pct / 100.0,
            // The flag's parser bounds the budget; a value built in code past what a
            // Duration holds means no budget rather than a panic.
            budget: Duration::try_from_secs_f64(self.point_budget_ms / 1e3)
                .unwrap_or(Duration::MAX),
            recover_throttled: !self.no_clock_recovery,
        }
    }
}

fn ci_target_pct(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if (0.0..100.0).contains(&v) => Ok(v),
        _ => Err(format!(
            "{s:?} is not a percentage from 0 to under 100 (e.g. 0.25 for +-0.25% of the median)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        s: SamplingArgs,
    }

    #[test]
    fn defaults_and_the_budget_alias() {
        let c = Cli::try_parse_from(["x"]).unwrap();
        let d = SamplingArgs::default();
        assert_eq!(
            (
                c.s.ci_target_pct,
                c.s.min_samples,
                c.s.max_samples,
                c.s.point_budget_ms
            ),
            (
                d.ci_target_pct,
                d.min_samples,
                d.max_samples,
                d.point_budget_ms
            )
        );
        let p = c.s.sampling();
        assert_eq!(p.target_rel, 0.0025);
        assert_eq!(p.budget, Duration::from_millis(300));
        let c = Cli::try_parse_from(["x", "--budget-ms", "50", "--ci-target-pct", "0"]).unwrap();
        assert_eq!(c.s.point_budget_ms, 50.0);
        assert_eq!(c.s.sampling().target_rel, 0.0);
    }

    #[test]
    fn bad_values_name_the_flag() {
        let e = Cli::try_parse_from(["x", "--ci-target-pct", "-1"])
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("--ci-target-pct") && e.contains("percentage"),
            "{e}"
        );
        let e = Cli::try_parse_from(["x", "--min-samples", "0"])
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("--min-samples"), "{e}");
        let e = Cli::try_parse_from(["x", "--point-budget-ms", "1e308"])
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("--point-budget-ms") && e.contains("at most"),
            "{e}"
        );
        let e = Cli::try_parse_from(["x", "--samples", "1"])
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("--samples") && e.contains("2 or more"), "{e}");
        let e = Cli::try_parse_from(["x", "--max-samples", "99999999999999999999"])
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("too large") && !e.contains("negative"), "{e}");
    }

    #[test]
    fn a_fixed_count_excludes_the_other_sampling_flags() {
        let c = Cli::try_parse_from(["x", "--samples", "50"]).unwrap();
        assert_eq!(c.s.sampling(), Sampling::fixed(50));
        for other in [
            ["--max-samples", "10"],
            ["--min-samples", "3"],
            ["--point-budget-ms", "5"],
            ["--ci-target-pct", "1"],
        ] {
            let e = Cli::try_parse_from(["x", "--samples", "50", other[0], other[1]])
                .err()
                .unwrap()
                .to_string();
            assert!(e.contains("cannot be used with"), "{other:?}: {e}");
        }
        let huge = SamplingArgs {
            point_budget_ms: 1e308,
            ..SamplingArgs::default()
        };
        assert_eq!(huge.sampling().budget, Duration::MAX);
    }
}
