//! Every analysis of a traced workload in one value: kernel summary, time per class, temporal
//! breakdown, idle
//! time per stream, launch statistics, NVTX range totals, and what each process recorded.

use super::breakdown::{temporal_breakdown, Temporal};
use super::by_class::{class_totals, ClassTotal};
use super::idle::{idle_by_stream, StreamIdle};
use super::kernsum::{kernel_summary, KernelStat};
use super::launch::{launch_stats, LaunchStats};
use super::ranges::{range_totals, RangeTotal};
use super::record::ActivityKind;
use super::workload::Workload;
use serde::{Deserialize, Serialize};

/// What one process recorded, and whether all of it arrived.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessSummary {
    pub pid: u32,
    pub cupti_version: u32,
    pub kernels: usize,
    pub memcpys: usize,
    pub memsets: usize,
    /// Whole graph executions (graph-level tracing).
    pub graph_execs: usize,
    pub api_calls: usize,
    pub syncs: usize,
    pub nvtx_ranges: usize,
    pub dropped_records: u64,
    /// Everything the process did was recorded (flushed, and recording never stopped early).
    pub complete: bool,
    /// The process flushed its trace at exit (false: killed or crashed).
    #[serde(default)]
    pub flushed: bool,
    /// Recording stopped this long after the process's first record, the process going on
    /// (`ProcessTrace::lost_after_ns`), and why.
    #[serde(default)]
    pub lost_after_ns: Option<u64>,
    #[serde(default)]
    pub lost_why: Option<String>,
    /// Spans in which the program had recording paused (`opbench_trace_pause`, or
    /// `trace --start-paused` until the first resume).
    #[serde(default)]
    pub paused_spans: usize,
    /// Records past `trace --max-records`, counted and not written.
    #[serde(default)]
    pub records_not_kept: u64,
    pub torn_tail: bool,
    pub warnings: Vec<String>,
}

impl ProcessSummary {
    /// What the program's pauses left out, in words (None: it never paused recording).
    pub fn paused_note(&self) -> Option<String> {
        (self.paused_spans > 0).then(|| {
            format!(
                "recording was paused {} time(s) by the program (opbench_trace_pause, or \
                 trace --start-paused until the first resume): what ran then is not in the \
                 trace, and spans and idle time leave it out",
                self.paused_spans
            )
        })
    }

    /// What is missing from this process's trace, in words (None: nothing).
    pub fn missing(&self) -> Vec<String> {
        let mut v = Vec::new();
        if let Some(t) = self.lost_after_ns {
            let after = if t >= 1_000_000_000 {
                format!("{:.3} s", t as f64 / 1e9)
            } else {
                format!("{:.3} ms", t as f64 / 1e6)
            };
            v.push(format!(
                "recording stopped {after} after its first record, the process going on: \
                 everything it did later is missing. Why: {}",
                self.lost_why.as_deref().unwrap_or("not said")
            ));
        }
        if !self.flushed {
            v.push(
                "the process ended without flushing its trace (killed or crashed): up to its \
                 last ~1 s of records may be missing"
                    .to_string(),
            );
        }
        if self.dropped_records > 0 {
            v.push(format!(
                "CUPTI dropped {} records (buffers full)",
                self.dropped_records
            ));
        }
        if self.records_not_kept > 0 {
            v.push(format!(
                "{} records past the --max-records limit were counted and not written",
                self.records_not_kept
            ));
        }
        v
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadAnalysis {
    pub processes: Vec<ProcessSummary>,
    pub kernels: Vec<KernelStat>,
    /// The same summary over whole graph executions ("CUDA graph 7"), graph-level tracing only.
    pub graphs: Vec<KernelStat>,
    pub classes: Vec<ClassTotal>,
    pub temporal: Vec<Temporal>,
    pub idle: Vec<StreamIdle>,
    pub launch: LaunchStats,
    pub ranges: Vec<RangeTotal>,
}

impl WorkloadAnalysis {
    pub fn kernel_count(&self) -> usize {
        self.processes.iter().map(|p| p.kernels).sum()
    }

    pub fn dropped_records(&self) -> u64 {
        // Saturating: each count is at most 2^53 (`input::COUNT_MAX`), their sum must not wrap.
        self.processes
            .iter()
            .fold(0u64, |t, p| t.saturating_add(p.dropped_records))
    }
}

pub fn analyze_workload(w: &Workload) -> WorkloadAnalysis {
    let processes = w
        .processes
        .iter()
        .map(|p| {
            let count = |k| p.activities.iter().filter(|a| a.kind == k).count();
            ProcessSummary {
                pid: p.pid,
                cupti_version: p.cupti_version,
                kernels: count(ActivityKind::Kernel),
                memcpys: count(ActivityKind::Memcpy),
                memsets: count(ActivityKind::Memset),
                graph_execs: p.graphs.len(),
                api_calls: p.api.len(),
                syncs: p.syncs.len(),
                nvtx_ranges: p.ranges.len(),
                dropped_records: p.dropped_records,
                complete: p.complete,
                flushed: p.flushed,
                lost_after_ns: p.lost_after_ns(),
                lost_why: p.lost_why.clone(),
                paused_spans: p.paused.len(),
                records_not_kept: p.records_not_kept,
                torn_tail: p.torn_tail,
                warnings: p.warnings.clone(),
            }
        })
        .collect();
    WorkloadAnalysis {
        processes,
        kernels: kernel_summary(w.kernels()),
        graphs: {
            let g: Vec<_> = w
                .processes
                .iter()
                .flat_map(|p| p.graphs.iter().map(|g| g.as_activity()))
                .collect();
            kernel_summary(&g)
        },
        classes: class_totals(w),
        temporal: temporal_breakdown(w),
        idle: idle_by_stream(w),
        launch: launch_stats(w),
        ranges: range_totals(w),
    }
}
