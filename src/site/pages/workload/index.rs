//! The Traces index: one row per traced workload (its newest run) with the figures a reader
//! sorts by (processes, kernels, GPU busy %, top kernel, tracing overhead), each linking to the
//! workload's page; the navigation bar links here instead of to every workload.

use super::rows::{m, m0, p_str, WorkloadRows};
use super::workloads;
use crate::site::fmt;
use crate::site::pages::{Empty, PageContext};
use crate::site::points::Point;
use serde::Serialize;

/// One cell: the text shown and the key the table sorts by (a number for numeric columns, so
/// "9" sorts before "10").
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Cell {
    pub text: String,
    pub sort: String,
}

/// One workload's row.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Row {
    pub workload: String,
    /// The workload's page.
    pub file: String,
    pub cells: Vec<Cell>,
}

/// The index table: columns after the workload's name, and one row per workload.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Index {
    pub columns: Vec<String>,
    /// Which columns sort as numbers.
    pub numeric: Vec<bool>,
    pub rows: Vec<Row>,
}

/// The figures of one workload's newest trace, as the index shows them.
#[derive(Debug, Clone, PartialEq)]
pub struct Figures {
    pub gpu: String,
    pub commit: String,
    pub date: String,
    pub processes: f64,
    pub kernels: f64,
    /// GPU activity over the traced span, all processes' spans together; `None` without
    /// trace_temporal rows.
    pub busy_pct: Option<f64>,
    /// The longest process's traced span (first to last GPU activity); `None` without
    /// trace_temporal rows.
    pub span_us: Option<f64>,
    /// Stream idle time spent waiting for the host to launch (all streams together); `None`
    /// without trace_stream_idle rows.
    pub host_wait_us: Option<f64>,
    /// Stream idle time of any cause (all streams together), the whole `host_wait_us` is of.
    pub stream_idle_us: Option<f64>,
    /// Streams those two sum over.
    pub streams: usize,
    /// (demangled name, % of kernel time) of the kernel with the most total time.
    pub top_kernel: Option<(String, f64)>,
    /// `trace --overhead`'s wall-time slowdown; `None` when not measured.
    pub overhead_pct: Option<f64>,
}

/// The figures of `rows` (one workload's points).
pub fn figures(rows: &WorkloadRows) -> Figures {
    let run = &rows.points[0].artifact().run;
    let procs = rows.of("trace_process");
    let totals = rows.of("trace_processes").into_iter().next();
    let (processes, kernels) = match totals {
        Some(t) => (m0(t, "processes"), m0(t, "kernels")),
        None => (
            procs.len() as f64,
            procs.iter().map(|p| m0(p, "kernels")).sum(),
        ),
    };
    let temporal = rows.of("trace_temporal");
    let span: f64 = temporal.iter().map(|p| m0(p, "span_us")).sum();
    let idle: f64 = temporal.iter().map(|p| m0(p, "idle_us")).sum();
    let busy_pct = (span > 0.0).then(|| 100.0 * (span - idle) / span);
    let span_us = temporal
        .iter()
        .map(|p| m0(p, "span_us"))
        .max_by(f64::total_cmp);
    let streams = rows.of("trace_stream_idle");
    let stream_sum =
        |k: &str| (!streams.is_empty()).then(|| streams.iter().map(|p| m0(p, k)).sum::<f64>());
    let top_kernel = rows
        .of("trace_kernel")
        .into_iter()
        .max_by(|a, b| m0(a, "total_us").total_cmp(&m0(b, "total_us")))
        .map(|p| (p_str(p, "kernel"), m0(p, "time_pct")));
    let overhead_pct = rows
        .of("trace_overhead")
        .into_iter()
        .next()
        .and_then(|o| m(o, "slowdown_pct"));
    Figures {
        gpu: rows.gpu.trim_start_matches("NVIDIA ").to_string(),
        commit: fmt::commit(run.git_commit.as_deref(), run.git_dirty),
        date: run.started_utc.chars().take(10).collect(),
        processes,
        kernels,
        busy_pct,
        span_us,
        host_wait_us: stream_sum("host_wait_us"),
        stream_idle_us: stream_sum("idle_us"),
        streams: streams.len(),
        top_kernel,
        overhead_pct,
    }
}

/// A name cut to `max` characters, with an ellipsis when cut.
pub fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max - 1).collect();
        t.push('…');
        t
    }
}

const COLUMNS: [(&str, bool); 8] = [
    ("GPU", false),
    ("commit", false),
    ("date", false),
    ("processes", true),
    ("kernels", true),
    ("GPU busy", true),
    ("top kernel (share of kernel time)", false),
    ("tracing overhead", true),
];

/// The row of one workload.
fn row(workload: &str, file: &str, f: &Figures) -> Row {
    let text = |t: String| Cell {
        sort: t.clone(),
        text: t,
    };
    let number = |v: Option<f64>, shown: String| Cell {
        text: shown,
        // Absent figures sort below every measured one.
        sort: v.map_or("-1e300".into(), |v| format!("{v}")),
    };
    let cells = vec![
        text(f.gpu.clone()),
        text(f.commit.clone()),
        text(f.date.clone()),
        number(Some(f.processes), fmt::count(f.processes)),
        number(Some(f.kernels), fmt::count(f.kernels)),
        number(f.busy_pct, f.busy_pct.map_or("-".into(), fmt::pct)),
        match &f.top_kernel {
            Some((name, share)) => Cell {
                text: format!("{} ({})", cut(name, 60), fmt::pct(*share)),
                sort: name.clone(),
            },
            None => text("-".into()),
        },
        number(
            f.overhead_pct,
            f.overhead_pct
                .map_or("not measured".into(), |v| format!("{v:+.1}%")),
        ),
    ];
    Row {
        workload: workload.to_string(),
        file: file.to_string(),
        cells,
    }
}

/// The index of `points` (every workload's trace rows); `files` maps a workload to its page.
pub fn index(points: &[Point], files: &[(String, String)]) -> Index {
    let rows = workloads(points)
        .into_iter()
        .filter_map(|w| {
            let file = files.iter().find(|(n, _)| *n == w)?.1.clone();
            let mine: Vec<Point> = points.iter().filter(|p| p.imp() == w).copied().collect();
            let f = figures(&WorkloadRows::new(&w, &mine));
            Some(row(&w, &file, &f))
        })
        .collect();
    Index {
        columns: COLUMNS.iter().map(|c| c.0.to_string()).collect(),
        numeric: COLUMNS.iter().map(|c| c.1).collect(),
        rows,
    }
}

/// The Traces page.
pub fn build(page: &mut PageContext, points: &[Point], files: &[(String, String)]) {
    page.template = "traces.html".into();
    page.intro = "Every workload traced with `trace`, its newest run: one row each, linking to \
                  its page. Click a column head to sort. GPU busy is the share of the traced \
                  span with a kernel, copy or memset running, all processes together; the top \
                  kernel's share is of all kernel time; tracing overhead is `trace --overhead`'s \
                  wall-time slowdown."
        .into();
    let ix = index(points, files);
    if ix.rows.is_empty() {
        page.empty = Some(Empty {
            message: "No traced workloads yet. Trace a command on a GPU machine (it writes \
                      artifacts/traces/<name>/trace.json), then render the site again."
                .into(),
            command: "cargo run --release --bin trace -- --out artifacts/traces/my-job -- python3 train.py"
                .into(),
        });
    }
    page.traces = Some(ix);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figs(busy: Option<f64>, overhead: Option<f64>) -> Figures {
        Figures {
            gpu: "H200".into(),
            commit: "06976cd".into(),
            date: "2026-12-02".into(),
            processes: 2.0,
            kernels: 1010.0,
            busy_pct: busy,
            span_us: Some(1500.0),
            host_wait_us: Some(20.0),
            stream_idle_us: Some(40.0),
            streams: 2,
            top_kernel: Some(("ampere_sgemm_128x64_nn".into(), 47.25)),
            overhead_pct: overhead,
        }
    }

    #[test]
    fn numeric_cells_sort_by_value_and_absent_figures_sort_last() {
        let r = row("job", "trace-job.html", &figs(Some(47.3), None));
        assert_eq!(r.cells.len(), COLUMNS.len());
        assert_eq!(r.cells[4].sort, "1010");
        assert_eq!(r.cells[5].text, fmt::pct(47.3));
        assert_eq!(r.cells[7].text, "not measured");
        assert!(r.cells[7].sort.parse::<f64>().unwrap() < -1e299);
        let measured = row("job", "trace-job.html", &figs(None, Some(3.2)));
        assert_eq!(measured.cells[7].text, "+3.2%");
        assert_eq!(measured.cells[5].text, "-");
    }

    #[test]
    fn long_kernel_names_are_cut_with_an_ellipsis() {
        let long = "k".repeat(200);
        assert_eq!(cut(&long, 60).chars().count(), 60);
        assert!(cut(&long, 60).ends_with('…'));
        assert_eq!(cut("short", 60), "short");
    }
}
