//! Launch statistics, after Holistic Trace Analysis' kernel launch statistics: for each kernel
//! started by an API call (same correlation id), the launch delay (kernel start minus the call's
//! start), and the kernels that are *short* (ran for less time than the call that launched them
//! took on the CPU) or waited long for the GPU (delay above `LONG_DELAY_NS`). Kernels of a
//! CUDA graph share the graph launch's call, so they are counted apart and left out of the
//! delay figures.

use super::calls::CallIndex;
use super::workload::Workload;
use serde::{Deserialize, Serialize};

/// A launch delay above this is long (HTA's default threshold for the same figure: 100 µs).
pub const LONG_DELAY_NS: u64 = 100_000;

/// The launch figures of a workload (ns).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LaunchStats {
    pub kernels: usize,
    /// Kernels whose API call was recorded (not part of a graph).
    pub launched: usize,
    /// Kernels launched as nodes of a CUDA graph.
    pub graph_kernels: usize,
    /// Distinct graph launches (calls) that started them.
    pub graph_launches: usize,
    /// Whole graph executions recorded at graph level (their kernels are not in `kernels`).
    pub graph_execs: usize,
    /// Kernels with no recorded API call (records dropped, or API tracing off).
    pub unmatched: usize,
    pub delay_p50_ns: f64,
    pub delay_p95_ns: f64,
    pub delay_max_ns: f64,
    pub delay_mean_ns: f64,
    /// Kernels whose GPU time was shorter than their launch call's CPU time.
    pub short_kernels: usize,
    /// Kernels that started more than `LONG_DELAY_NS` after their call.
    pub long_delay_kernels: usize,
    /// Mean CPU time of the launch calls.
    pub call_mean_ns: f64,
}

/// Type-7 percentile of sorted values.
fn percentile(sorted: &[u64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let h = (sorted.len() - 1) as f64 * q;
    let (lo, hi) = (h.floor() as usize, h.ceil() as usize);
    sorted[lo] as f64 + (h - lo as f64) * (sorted[hi] as f64 - sorted[lo] as f64)
}

pub fn launch_stats(w: &Workload) -> LaunchStats {
    let mut s = LaunchStats::default();
    let mut delays: Vec<u64> = Vec::new();
    let mut call_total = 0u64;
    let mut graph_calls = std::collections::HashSet::new();
    for p in &w.processes {
        s.graph_execs += p.graphs.len();
        let calls = CallIndex::new(p);
        for k in p.kernels() {
            s.kernels += 1;
            let Some(c) = calls.get(k.correlation_id) else {
                if k.graph_id != 0 {
                    s.graph_kernels += 1;
                } else {
                    s.unmatched += 1;
                }
                continue;
            };
            if k.graph_id != 0 {
                s.graph_kernels += 1;
                graph_calls.insert((p.pid, c.correlation_id));
                continue;
            }
            s.launched += 1;
            let delay = k.start_ns.saturating_sub(c.start_ns);
            delays.push(delay);
            call_total += c.dur_ns();
            if k.dur_ns() < c.dur_ns() {
                s.short_kernels += 1;
            }
            if delay > LONG_DELAY_NS {
                s.long_delay_kernels += 1;
            }
        }
    }
    s.graph_launches = graph_calls.len();
    delays.sort_unstable();
    if !delays.is_empty() {
        s.delay_p50_ns = percentile(&delays, 0.5);
        s.delay_p95_ns = percentile(&delays, 0.95);
        s.delay_max_ns = *delays.last().unwrap_or(&0) as f64;
        s.delay_mean_ns = delays.iter().sum::<u64>() as f64 / delays.len() as f64;
        s.call_mean_ns = call_total as f64 / delays.len() as f64;
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::record::Activity;
    use crate::trace::workload::{ApiCall, ProcessTrace};

    fn call(corr: u32, s: u64, e: u64) -> ApiCall {
        ApiCall {
            driver: false,
            name: "cudaLaunchKernel".into(),
            start_ns: s,
            end_ns: e,
            tid: 1,
            correlation_id: corr,
            cbid: 211,
            return_value: 0,
        }
    }

    fn k(corr: u32, s: u64, e: u64, graph: u32) -> Activity {
        Activity {
            correlation_id: corr,
            graph_id: graph,
            ..Activity::kernel("k", s, e)
        }
    }

    #[test]
    fn delays_short_and_long_kernels_and_graphs_are_counted_by_hand() {
        // Call 1: 0-10, kernel 20-25 (delay 20, 5 ns < 10 ns call: short).
        // Call 2: 100-104, kernel 140-240 (delay 40). Call 3: 200-210, kernel 200_310-200_400
        // (delay 200_110 > 100 µs: long). Calls 4 (graph launch) start two graph kernels.
        // Kernel with correlation 9 has no call.
        let p = ProcessTrace {
            pid: 3,
            api: vec![
                call(1, 0, 10),
                call(2, 100, 104),
                call(3, 200, 210),
                call(4, 300, 320),
            ],
            activities: vec![
                k(1, 20, 25, 0),
                k(2, 140, 240, 0),
                k(3, 200_310, 200_400, 0),
                k(4, 400, 410, 7),
                k(4, 410, 420, 7),
                k(9, 500, 510, 0),
            ],
            ..Default::default()
        };
        let s = launch_stats(&Workload { processes: vec![p] });
        assert_eq!(
            (s.kernels, s.launched, s.graph_kernels, s.graph_launches),
            (6, 3, 2, 1)
        );
        assert_eq!(s.unmatched, 1);
        // Delays 20, 40, 200_110: median 40; p95 = 40 + 0.9 * (200_110 - 40).
        assert_eq!(s.delay_p50_ns, 40.0);
        assert!((s.delay_p95_ns - (40.0 + 0.9 * 200_070.0)).abs() < 1e-6);
        assert_eq!(s.delay_max_ns, 200_110.0);
        assert!((s.delay_mean_ns - (20.0 + 40.0 + 200_110.0) / 3.0).abs() < 1e-9);
        assert_eq!((s.short_kernels, s.long_delay_kernels), (1, 1));
        assert!((s.call_mean_ns - 8.0).abs() < 1e-9); // (10 + 4 + 10) / 3
    }
}
