//! The kernel summary of Nsight Systems' `cuda_gpu_kern_sum` report: per kernel name
//! (demangled, nsys' default), the share of all kernel time, total, instances, mean, median,
//! min, max and sample standard deviation of the durations (ns), by total time descending.

use super::names::demangled;
use super::record::Activity;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// One row of the summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelStat {
    /// Demangled name (nsys' `demangledName`).
    pub name: String,
    /// total / the summed duration of every kernel, in percent.
    pub time_pct: f64,
    pub total_ns: u64,
    pub instances: u64,
    pub avg_ns: f64,
    /// Median; the mean of the two middle values for an even count.
    pub med_ns: f64,
    pub min_ns: u64,
    pub max_ns: u64,
    /// Sample standard deviation (n - 1); 0 for one instance.
    pub stddev_ns: f64,
    /// The instances' durations in µs as the project's statistics block (percentiles, the
    /// median's 95% interval), so `compare` can judge a kernel between two traces. None when
    /// every instance lasted 0 ns (no timer would give that; only hand-made records do).
    pub time_us: Option<crate::stats::Summary>,
}

/// The summary of `kernels` (activities that are not kernels are the caller's to leave out).
pub fn kernel_summary<'a>(kernels: impl IntoIterator<Item = &'a Activity>) -> Vec<KernelStat> {
    // Group by the recorded name first (cheap), then by demangled name: two mangled names can
    // demangle alike, and nsys groups by the demangled one.
    let mut by_raw: HashMap<&str, Vec<u64>> = HashMap::new();
    for k in kernels {
        by_raw.entry(k.name.as_str()).or_default().push(k.dur_ns());
    }
    let mut by_name: HashMap<String, Vec<u64>> = HashMap::new();
    for (raw, durs) in by_raw {
        by_name.entry(demangled(raw)).or_default().extend(durs);
    }
    let all: u64 = by_name.values().flatten().sum();
    let mut out: Vec<KernelStat> = by_name
        .into_iter()
        .map(|(name, mut d)| {
            d.sort_unstable();
            let n = d.len();
            let total: u64 = d.iter().sum();
            let avg = total as f64 / n as f64;
            let med = if n % 2 == 1 {
                d[n / 2] as f64
            } else {
                (d[n / 2 - 1] + d[n / 2]) as f64 / 2.0
            };
            let stddev = if n > 1 {
                let ss: f64 = d.iter().map(|&x| (x as f64 - avg).powi(2)).sum();
                (ss / (n - 1) as f64).sqrt()
            } else {
                0.0
            };
            let time_us = if d[n - 1] == 0 {
                None
            } else {
                let us: Vec<f64> = d.iter().map(|&x| x as f64 / 1e3).collect();
                crate::stats::summarize(&us).ok()
            };
            KernelStat {
                time_us,
                name,
                time_pct: if all == 0 {
                    0.0
                } else {
                    100.0 * total as f64 / all as f64
                },
                total_ns: total,
                instances: n as u64,
                avg_ns: avg,
                med_ns: med,
                min_ns: d[0],
                max_ns: d[n - 1],
                stddev_ns: stddev,
            }
        })
        .collect();
    out.sort_by(|a, b| b.total_ns.cmp(&a.total_ns).then(a.name.cmp(&b.name)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(name: &str, start: u64, dur: u64) -> Activity {
        Activity::kernel(name, start, start + dur)
    }

    #[test]
    fn the_summary_matches_hand_computed_columns() {
        // gemm: 10, 20, 30, 60 ns; relu: 5, 15 ns; one instance of "solo": 0 ns.
        let ks = vec![
            k("gemm", 0, 10),
            k("relu", 10, 5),
            k("gemm", 20, 20),
            k("gemm", 50, 30),
            k("relu", 90, 15),
            k("gemm", 110, 60),
            k("solo", 200, 0),
        ];
        let s = kernel_summary(&ks);
        assert_eq!(s.len(), 3);
        let g = &s[0];
        assert_eq!(g.name, "gemm");
        assert_eq!(
            (g.total_ns, g.instances, g.min_ns, g.max_ns),
            (120, 4, 10, 60)
        );
        assert_eq!(g.avg_ns, 30.0);
        assert_eq!(g.med_ns, 25.0); // (20 + 30) / 2
                                    // deviations -20, -10, 0, 30: squares 400 + 100 + 0 + 900 = 1400, / 3, sqrt.
        assert!((g.stddev_ns - (1400.0f64 / 3.0).sqrt()).abs() < 1e-9);
        // 120 of 140 ns.
        assert!((g.time_pct - 100.0 * 120.0 / 140.0).abs() < 1e-9);
        let r = &s[1];
        assert_eq!((r.name.as_str(), r.total_ns, r.med_ns), ("relu", 20, 10.0));
        assert!((r.stddev_ns - 50f64.sqrt()).abs() < 1e-9);
        let solo = &s[2];
        assert_eq!(
            (solo.instances, solo.stddev_ns, solo.time_pct),
            (1, 0.0, 0.0)
        );
    }

    #[test]
    fn mangled_names_are_grouped_by_their_demangled_name() {
        let ks = vec![k("_Z6kernelPf", 0, 4), k("_Z6kernelPf", 10, 6)];
        let s = kernel_summary(&ks);
        assert_eq!(s[0].name, "kernel(float*)");
        assert_eq!(s[0].instances, 2);
        assert!(kernel_summary(&[]).is_empty());
    }
}
