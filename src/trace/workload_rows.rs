//! Artifact rows of a traced workload (kind `trace`), one benchmark name per analysis:
//! `trace_process`, `trace_temporal`, `trace_kernel` (the top kernels by total time),
//! `trace_graph` (whole graph executions, graph-level tracing), `trace_class`,
//! `trace_stream_idle`, `trace_launch`, `trace_range` and `trace_processes` (totals over every
//! process). Every row's implementation is the workload's name; processes are numbered by pid
//! order (`process`), the pid kept as `pid`. A command of many processes keeps the rows of
//! [`TOP_PROCESSES`] of them (the incomplete first, then by kernels): trace.sqlite holds every
//! process, `trace_processes` their totals.

use super::report::WorkloadAnalysis;
use crate::artifact::ResultRow;
use std::collections::{HashMap, HashSet};

/// Kernel rows kept in the artifact (the SQLite file holds every kernel).
pub const TOP_KERNELS: usize = 100;
/// Range rows kept in the artifact.
pub const TOP_RANGES: usize = 200;
/// Processes whose rows (`trace_process`, `trace_temporal`, `trace_stream_idle`) are kept.
pub const TOP_PROCESSES: usize = 100;

/// The pids whose per-process rows are kept: all of them up to [`TOP_PROCESSES`], else the
/// incomplete ones first, then those with the most kernels.
pub fn shown_pids(a: &WorkloadAnalysis) -> HashSet<u32> {
    let mut v: Vec<_> = a.processes.iter().collect();
    v.sort_by_key(|p| (p.complete, std::cmp::Reverse(p.kernels), p.pid));
    v.iter().take(TOP_PROCESSES).map(|p| p.pid).collect()
}

fn us(ns: f64) -> f64 {
    ns / 1e3
}

fn row(benchmark: &str, workload: &str, metrics: &[(&str, f64)]) -> ResultRow {
    let mut r = ResultRow::new(benchmark, workload);
    for (k, v) in metrics {
        r.metrics.insert((*k).to_string(), *v);
    }
    r
}

/// Text params are names: at most 256 characters (`artifact::limits`).
fn name_param(s: &str) -> String {
    crate::text::elide_to(s, crate::artifact::limits::NAME_MAX_CHARS).into_owned()
}

/// `trace_processes`: every process's totals, and how many have rows of their own.
fn processes_row(a: &WorkloadAnalysis, workload: &str, shown: usize) -> ResultRow {
    let sum = |f: &dyn Fn(&super::report::ProcessSummary) -> u64| {
        a.processes.iter().fold(0u64, |t, p| t.saturating_add(f(p))) as f64
    };
    row(
        "trace_processes",
        workload,
        &[
            ("processes", a.processes.len() as f64),
            ("processes_shown", shown as f64),
            ("complete", sum(&|p| p.complete as u64)),
            ("kernels", sum(&|p| p.kernels as u64)),
            ("api_calls", sum(&|p| p.api_calls as u64)),
            ("nvtx_ranges", sum(&|p| p.nvtx_ranges as u64)),
            ("dropped_records", sum(&|p| p.dropped_records)),
            ("records_not_kept", sum(&|p| p.records_not_kept)),
        ],
    )
}

pub fn workload_rows(a: &WorkloadAnalysis, workload: &str) -> Vec<ResultRow> {
    let mut out = Vec::new();
    let index: HashMap<u32, usize> = a
        .processes
        .iter()
        .enumerate()
        .map(|(i, p)| (p.pid, i))
        .collect();
    let shown = shown_pids(a);
    out.push(processes_row(a, workload, shown.len()));
    for (i, p) in a.processes.iter().enumerate() {
        if !shown.contains(&p.pid) {
            continue;
        }
        let mut r = row(
            "trace_process",
            workload,
            &[
                ("kernels", p.kernels as f64),
                ("memcpys", p.memcpys as f64),
                ("memsets", p.memsets as f64),
                ("graph_execs", p.graph_execs as f64),
                ("api_calls", p.api_calls as f64),
                ("syncs", p.syncs as f64),
                ("nvtx_ranges", p.nvtx_ranges as f64),
                ("dropped_records", p.dropped_records as f64),
                ("complete", p.complete as u8 as f64),
                ("flushed", p.flushed as u8 as f64),
            ],
        )
        .param("process", i)
        .param("pid", p.pid as usize);
        // Only where recording stopped early: seconds after the process's first record.
        if let Some(t) = p.lost_after_ns {
            r.metrics.insert("lost_after_s".into(), t as f64 / 1e9);
        }
        // Only where `--max-records` cut the process's records.
        if p.records_not_kept > 0 {
            r.metrics
                .insert("records_not_kept".into(), p.records_not_kept as f64);
        }
        // Only where the program paused recording.
        if p.paused_spans > 0 {
            r.metrics
                .insert("paused_spans".into(), p.paused_spans as f64);
        }
        out.push(r);
    }
    for t in a.temporal.iter().filter(|t| shown.contains(&t.pid)) {
        let s = t.span_ns as f64;
        let pct = |x: u64| if s == 0.0 { 0.0 } else { 100.0 * x as f64 / s };
        out.push(
            row(
                "trace_temporal",
                workload,
                &[
                    ("span_us", us(s)),
                    ("compute_us", us(t.compute_ns as f64)),
                    ("communication_us", us(t.communication_ns as f64)),
                    ("memory_us", us(t.memory_ns as f64)),
                    ("idle_us", us(t.idle_ns as f64)),
                    ("compute_pct", pct(t.compute_ns)),
                    ("communication_pct", pct(t.communication_ns)),
                    ("memory_pct", pct(t.memory_ns)),
                    ("idle_pct", pct(t.idle_ns)),
                    ("communication_all_us", us(t.communication_all_ns as f64)),
                    (
                        "communication_overlap_pct",
                        if t.communication_all_ns == 0 {
                            0.0
                        } else {
                            100.0 * t.communication_overlapped_ns as f64
                                / t.communication_all_ns as f64
                        },
                    ),
                ],
            )
            .param("process", index.get(&t.pid).copied().unwrap_or(0))
            .param("pid", t.pid as usize)
            .param("device", t.device as usize),
        );
    }
    for (rank, k) in a.kernels.iter().take(TOP_KERNELS).enumerate() {
        out.push(
            row(
                "trace_kernel",
                workload,
                &[
                    ("time_pct", k.time_pct),
                    ("total_us", us(k.total_ns as f64)),
                    ("instances", k.instances as f64),
                    ("avg_us", us(k.avg_ns)),
                    ("med_us", us(k.med_ns)),
                    ("min_us", us(k.min_ns as f64)),
                    ("max_us", us(k.max_ns as f64)),
                    ("stddev_us", us(k.stddev_ns)),
                ],
            )
            .param("kernel", name_param(&k.name))
            .param("rank", rank + 1),
        );
        if let (Some(t), Some(r)) = (&k.time_us, out.last_mut()) {
            r.stats.insert("time_us".into(), t.clone());
        }
    }
    for g in &a.graphs {
        let mut r = row(
            "trace_graph",
            workload,
            &[
                ("time_pct", g.time_pct),
                ("total_us", us(g.total_ns as f64)),
                ("instances", g.instances as f64),
                ("avg_us", us(g.avg_ns)),
                ("med_us", us(g.med_ns)),
                ("min_us", us(g.min_ns as f64)),
                ("max_us", us(g.max_ns as f64)),
                ("stddev_us", us(g.stddev_ns)),
            ],
        )
        .param("graph", g.name.as_str());
        if let Some(t) = &g.time_us {
            r.stats.insert("time_us".into(), t.clone());
        }
        out.push(r);
    }
    for c in &a.classes {
        out.push(
            row(
                "trace_class",
                workload,
                &[
                    ("count", c.count as f64),
                    ("time_us", us(c.time_ns as f64)),
                    ("time_pct", c.time_pct),
                ],
            )
            .param("class", c.class.as_str()),
        );
    }
    for s in a.idle.iter().filter(|s| shown.contains(&s.pid)) {
        out.push(
            row(
                "trace_stream_idle",
                workload,
                &[
                    ("activities", s.activities as f64),
                    ("span_us", us(s.span_ns as f64)),
                    ("idle_us", us(s.idle_ns as f64)),
                    ("host_wait_us", us(s.host_wait_ns as f64)),
                    ("kernel_wait_us", us(s.kernel_wait_ns as f64)),
                    ("other_wait_us", us(s.other_ns as f64)),
                ],
            )
            .param("process", index.get(&s.pid).copied().unwrap_or(0))
            .param("pid", s.pid as usize)
            .param("device", s.device as usize)
            .param("stream", s.stream as usize),
        );
    }
    let l = &a.launch;
    out.push(row(
        "trace_launch",
        workload,
        &[
            ("kernels", l.kernels as f64),
            ("launched", l.launched as f64),
            ("graph_kernels", l.graph_kernels as f64),
            ("graph_launches", l.graph_launches as f64),
            ("graph_execs", l.graph_execs as f64),
            ("unmatched", l.unmatched as f64),
            ("launch_delay_p50_us", us(l.delay_p50_ns)),
            ("launch_delay_p95_us", us(l.delay_p95_ns)),
            ("launch_delay_max_us", us(l.delay_max_ns)),
            ("launch_delay_mean_us", us(l.delay_mean_ns)),
            ("launch_call_mean_us", us(l.call_mean_ns)),
            ("short_kernels", l.short_kernels as f64),
            ("long_delay_kernels", l.long_delay_kernels as f64),
        ],
    ));
    for (rank, r) in a.ranges.iter().take(TOP_RANGES).enumerate() {
        out.push(
            row(
                "trace_range",
                workload,
                &[
                    ("instances", r.instances as f64),
                    ("range_time_us", us(r.range_time_ns as f64)),
                    ("kernels", r.kernels as f64),
                    ("kernel_time_us", us(r.kernel_time_ns as f64)),
                    ("self_kernels", r.self_kernels as f64),
                    ("self_kernel_time_us", us(r.self_kernel_time_ns as f64)),
                    ("window_kernels", r.window_kernels as f64),
                    ("window_kernel_time_us", us(r.window_kernel_time_ns as f64)),
                ],
            )
            .param("range", name_param(&r.name))
            .param("rank", rank + 1),
        );
    }
    out
}
