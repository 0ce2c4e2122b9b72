//! What each traced process recorded and whether all of it arrived: the processes table, and
//! the page intro's completeness sentence.

use super::rows::{m, m0, p_str, WorkloadRows};
use crate::site::fmt;
use crate::site::pages::common::NamedTable;
use crate::site::pages::plain_table;

/// A time in s as "1.234 s" or, below a second, "12.3 ms".
fn after(t_s: f64) -> String {
    if t_s >= 1.0 {
        format!("{} s", fmt::num(t_s))
    } else {
        format!("{} ms", fmt::num(t_s * 1e3))
    }
}

/// The process's completeness in words: "complete", or what is missing.
fn completeness(p: &crate::site::points::Point) -> String {
    let mut missing = Vec::new();
    if let Some(t) = m(p, "lost_after_s") {
        missing.push(format!(
            "recording stopped {} after its first record (the program started its own CUPTI \
             profiler): everything later is missing",
            after(t)
        ));
    }
    if m0(p, "flushed") == 0.0 && m(p, "flushed").is_some() {
        missing.push("killed or crashed: its last ~1 s may be missing".into());
    }
    if m0(p, "dropped_records") > 0.0 {
        missing.push(format!(
            "CUPTI dropped {} records",
            fmt::count(m0(p, "dropped_records"))
        ));
    }
    if m0(p, "records_not_kept") > 0.0 {
        missing.push(format!(
            "{} records past --max-records not kept",
            fmt::count(m0(p, "records_not_kept"))
        ));
    }
    if missing.is_empty() && m0(p, "complete") == 0.0 {
        missing.push("ended without flushing its trace".into());
    }
    if missing.is_empty() {
        "complete".into()
    } else {
        format!("INCOMPLETE: {}", missing.join("; "))
    }
}

/// One row per traced process.
pub fn table(rows: &WorkloadRows) -> NamedTable {
    let body = rows
        .of("trace_process")
        .into_iter()
        .map(|p| {
            let cells = vec![
                p_str(p, "pid"),
                fmt::count(m0(p, "kernels")),
                fmt::count(m0(p, "memcpys") + m0(p, "memsets")),
                fmt::count(m0(p, "graph_execs")),
                fmt::count(m0(p, "api_calls")),
                fmt::count(m0(p, "nvtx_ranges")),
                completeness(p),
            ];
            (cells, super::rows::dims(&rows.workload, None))
        })
        .collect();
    NamedTable {
        id: "wt-processes".into(),
        title: "Traced processes".into(),
        caption:
            "One row per process of the command that initialised CUDA (children and \
                  ranks included): what it recorded, and whether all of it arrived (trace_process)."
                .into(),
        table: plain_table(
            &[
                "pid",
                "kernels",
                "copies + memsets",
                "graph executions",
                "API calls",
                "NVTX ranges",
                "completeness",
            ],
            body,
        ),
    }
}

/// Incomplete processes the intro names, each with why (the table lists the rest).
const NAMED_INCOMPLETE: usize = 3;

/// The intro's sentences on completeness (which processes are incomplete, and why) and on
/// what tracing cost (`trace --overhead`).
pub fn intro(rows: &WorkloadRows) -> String {
    let procs = rows.of("trace_process");
    let totals = rows.of("trace_processes").into_iter().next();
    let bad: Vec<String> = procs
        .iter()
        .filter(|p| m0(p, "complete") == 0.0)
        .map(|p| format!("pid {}: {}", p_str(p, "pid"), completeness(p)))
        .collect();
    let (count, kernels, complete) = match totals {
        Some(t) => (m0(t, "processes"), m0(t, "kernels"), m0(t, "complete")),
        None => (
            procs.len() as f64,
            procs.iter().map(|p| m0(p, "kernels")).sum(),
            procs.iter().map(|p| m0(p, "complete")).sum(),
        ),
    };
    let mut s = format!(
        "{} process(es), {} kernels recorded on {}.",
        fmt::count(count),
        fmt::count(kernels),
        rows.gpu
    );
    if complete == count {
        s += " Every process flushed its whole trace.";
    } else {
        let more = bad.len().saturating_sub(NAMED_INCOMPLETE);
        let mut named = bad[..bad.len().min(NAMED_INCOMPLETE)].join("; ");
        if more > 0 {
            named += &format!("; and {more} more in the table below");
        }
        s += &format!(
            " Not everything was recorded: {} of {} processes are incomplete{}{}.",
            fmt::count(count - complete),
            fmt::count(count),
            if bad.is_empty() { "" } else { ": " },
            named
        );
    }
    if (procs.len() as f64) < count {
        s += &format!(
            " The table lists {} of them (the incomplete first, then by kernels); trace.sqlite \
             beside the artifact holds every process.",
            procs.len()
        );
    }
    if let Some(o) = rows.of("trace_overhead").into_iter().next() {
        s += &format!(" {}", overhead_sentence(o));
    }
    s
}

/// What tracing cost, from the `trace_overhead` row.
pub fn overhead_sentence(o: &crate::site::points::Point) -> String {
    format!(
        "Tracing cost {}{} in wall time: the command ran in a median {} s untraced and {} s \
         traced ({} pairs of runs, alternately; whole runs, start-up included).",
        if m0(o, "slowdown_pct") >= 0.0 {
            "+"
        } else {
            ""
        },
        fmt::pct(m0(o, "slowdown_pct")),
        fmt::num(m0(o, "untraced_median_s")),
        fmt::num(m0(o, "traced_median_s")),
        fmt::count(m0(o, "pairs"))
    )
}
