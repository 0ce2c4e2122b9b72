//! What tracing costs a command (`trace --overhead N`): the command runs N times untraced and
//! N times traced, alternately (untraced first), so a drift of the machine meets both sides
//! alike; each run's wall time from start to exit is kept. The slowdown is the median traced
//! run against the median untraced one. Whole runs include start-up (Python imports, CUDA
//! context), which tracing barely touches: a program's own per-step times, where it prints
//! them, say what tracing costs its steady state.

use crate::artifact::ResultRow;
use crate::stats::percentile_sorted;
use anyhow::{Context, Result};
use std::ffi::OsString;
use std::process::{Command, ExitStatus};
use std::time::Instant;

/// Most pairs `--overhead` takes: each pair runs the command twice.
pub const PAIRS_MAX: u32 = 100;

/// Wall times (s) of the untraced and traced runs, in the order they ran.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overhead {
    pub untraced_s: Vec<f64>,
    pub traced_s: Vec<f64>,
}

fn sorted(v: &[f64]) -> Vec<f64> {
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    s
}

fn median(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| percentile_sorted(&sorted(v), 50.0))
}

impl Overhead {
    /// Median traced over median untraced wall time, minus one, in percent (None until both
    /// sides have a run).
    pub fn slowdown_pct(&self) -> Option<f64> {
        let (u, t) = (median(&self.untraced_s)?, median(&self.traced_s)?);
        (u > 0.0).then(|| (t / u - 1.0) * 100.0)
    }

    /// The `trace_overhead` row: pairs, median/min/max wall time of each side, slowdown.
    pub fn row(&self, workload: &str) -> Option<ResultRow> {
        let slowdown = self.slowdown_pct()?;
        let (u, t) = (sorted(&self.untraced_s), sorted(&self.traced_s));
        let mut r = ResultRow::new("trace_overhead", workload);
        let pairs = self.untraced_s.len().min(self.traced_s.len());
        for (k, v) in [
            ("pairs", pairs as f64),
            ("untraced_median_s", percentile_sorted(&u, 50.0)),
            ("untraced_min_s", u[0]),
            ("untraced_max_s", u[u.len() - 1]),
            ("traced_median_s", percentile_sorted(&t, 50.0)),
            ("traced_min_s", t[0]),
            ("traced_max_s", t[t.len() - 1]),
            ("slowdown_pct", slowdown),
        ] {
            r.metrics.insert(k.to_string(), v);
        }
        Some(r)
    }

    /// One line for stderr and the artifact's notes.
    pub fn describe(&self) -> Option<String> {
        let s = self.slowdown_pct()?;
        Some(format!(
            "tracing overhead: {} untraced and {} traced runs, alternately: median wall time \
             {:.3} s untraced, {:.3} s traced ({s:+.1}%); whole runs, start-up included",
            self.untraced_s.len(),
            self.traced_s.len(),
            median(&self.untraced_s)?,
            median(&self.traced_s)?,
        ))
    }
}

/// Runs `cmd` once without tracing (no injection variables: the environment trace was given,
/// less CUDA_INJECTION64_PATH and NVTX_INJECTION64_PATH); its exit status and wall time (s).
pub fn run_untraced(cmd: &[OsString]) -> Result<(ExitStatus, f64)> {
    let (prog, args) = cmd
        .split_first()
        .context("no command to run: give it after `--`")?;
    let start = Instant::now();
    let mut c = Command::new(prog);
    super::tool::as_the_user_had_it(&mut c);
    let status = c
        .args(args)
        .env_remove("CUDA_INJECTION64_PATH")
        .env_remove("NVTX_INJECTION64_PATH")
        .status()
        .with_context(|| format!("--overhead: running {prog:?} untraced"))?;
    Ok((status, start.elapsed().as_secs_f64()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slowdown_is_median_traced_over_median_untraced() {
        let o = Overhead {
            untraced_s: vec![1.0, 3.0, 2.0],
            traced_s: vec![2.2, 9.0, 2.4],
        };
        let s = o.slowdown_pct().unwrap();
        assert!((s - 20.0).abs() < 1e-9, "{s}");
        let r = o.row("w").unwrap();
        assert_eq!(r.benchmark, "trace_overhead");
        assert_eq!(r.metrics["pairs"], 3.0);
        assert_eq!(r.metrics["untraced_median_s"], 2.0);
        assert_eq!(r.metrics["traced_max_s"], 9.0);
        assert!(o.describe().unwrap().contains("+20.0%"));
    }

    #[test]
    fn no_row_until_both_sides_ran() {
        let o = Overhead {
            untraced_s: vec![1.0],
            traced_s: vec![],
        };
        assert_eq!(o.slowdown_pct(), None);
        assert!(o.row("w").is_none());
    }

    #[test]
    fn an_untraced_run_reports_its_exit_and_time() {
        let (s, t) = run_untraced(&["sh".into(), "-c".into(), "exit 3".into()]).unwrap();
        assert_eq!(s.code(), Some(3));
        assert!(t >= 0.0);
    }
}
