//! Launch statistics (Holistic Trace Analysis: launch delay, short kernels) and the idle time
//! of each stream split into host wait, kernel wait and other.

use super::rows::{dims, m0, p_str, WorkloadRows};
use crate::site::fmt;
use crate::site::pages::common::NamedTable;
use crate::site::pages::plain_table;

/// One row per figure of trace_launch.
pub fn table(rows: &WorkloadRows) -> Option<NamedTable> {
    let l = *rows.of("trace_launch").first()?;
    let us = |k: &str| format!("{} µs", fmt::num(m0(l, k)));
    let n = |k: &str| fmt::count(m0(l, k));
    let body: Vec<(Vec<String>, _)> = [
        ("kernels recorded", n("kernels")),
        ("launched by a kernel launch call", n("launched")),
        ("graph node kernels", n("graph_kernels")),
        ("graph launches", n("graph_launches")),
        (
            "whole-graph executions (graph-level tracing)",
            n("graph_execs"),
        ),
        ("kernels without their launch call", n("unmatched")),
        ("launch delay P50", us("launch_delay_p50_us")),
        ("launch delay P95", us("launch_delay_p95_us")),
        ("launch delay max", us("launch_delay_max_us")),
        ("launch delay mean", us("launch_delay_mean_us")),
        ("launch call, mean CPU time", us("launch_call_mean_us")),
        (
            "short kernels (GPU time < launch call CPU time)",
            n("short_kernels"),
        ),
        ("long delays (> 100 µs)", n("long_delay_kernels")),
    ]
    .into_iter()
    .map(|(k, v)| (vec![k.to_string(), v], dims(&rows.workload, None)))
    .collect();
    Some(NamedTable {
        id: "wt-launch".into(),
        title: "Launch statistics".into(),
        caption: "Launch delay = kernel start − start of its launch call (graph node kernels \
                  apart: they wait for the graph). A short kernel runs for less GPU time than \
                  its launch call took on the CPU, so launches, not the GPU, bound it. From \
                  trace_launch."
            .into(),
        table: plain_table(&["figure", "value"], body),
    })
}

/// Idle time per stream: host wait / kernel wait / other.
pub fn idle_table(rows: &WorkloadRows) -> NamedTable {
    let body = rows
        .of("trace_stream_idle")
        .into_iter()
        .map(|p| {
            let cells = vec![
                format!("pid {} GPU {}", p_str(p, "pid"), p_str(p, "device")),
                p_str(p, "stream"),
                fmt::count(m0(p, "activities")),
                fmt::num(m0(p, "span_us")),
                fmt::num(m0(p, "idle_us")),
                fmt::num(m0(p, "host_wait_us")),
                fmt::num(m0(p, "kernel_wait_us")),
                fmt::num(m0(p, "other_wait_us")),
            ];
            (cells, dims(&rows.workload, None))
        })
        .collect();
    NamedTable {
        id: "wt-idle".into(),
        title: "Idle time per stream".into(),
        caption: "The gaps between a stream's activities (Holistic Trace Analysis): host wait \
                  when the next activity's launch call started after the gap opened (the CPU \
                  was late), kernel wait for gaps of at most 30 ns, other for the rest. Times \
                  in µs, from trace_stream_idle."
            .into(),
        table: plain_table(
            &[
                "process",
                "stream",
                "activities",
                "span (µs)",
                "idle (µs)",
                "host wait (µs)",
                "kernel wait (µs)",
                "other (µs)",
            ],
            body,
        ),
    }
}
