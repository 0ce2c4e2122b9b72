//! The numbers a trace page opens on: span, GPU busy, host wait, top kernel, tracing overhead
//! and what was recorded, from the Traces index's `figures` (one definition of each).

use super::index::{cut, figures, Figures};
use super::rows::WorkloadRows;
use crate::site::fmt;
use crate::site::pages::common::NamedTable;
use crate::site::pages::plain_table;

/// A duration in µs as "812 µs", "12.3 ms" or "1.234 s".
fn duration(us: f64) -> String {
    if us >= 1e6 {
        format!("{} s", fmt::num(us / 1e6))
    } else if us >= 1e3 {
        format!("{} ms", fmt::num(us / 1e3))
    } else {
        format!("{} µs", fmt::num(us))
    }
}

/// (figure, value) rows of `f`.
fn cells(f: &Figures) -> Vec<[String; 2]> {
    let span = f.span_us.map_or("-".into(), duration);
    let busy = f.busy_pct.map_or("-".into(), |b| {
        format!("{} (idle {})", fmt::pct(b), fmt::pct(100.0 - b))
    });
    let wait = match (f.host_wait_us, f.stream_idle_us) {
        (Some(w), Some(idle)) if idle > 0.0 => format!(
            "{} over {} streams ({} of their idle time)",
            duration(w),
            f.streams,
            fmt::pct(100.0 * w / idle)
        ),
        (Some(w), _) => duration(w),
        _ => "-".into(),
    };
    let top = f.top_kernel.as_ref().map_or("-".into(), |(name, share)| {
        format!("{} ({} of kernel time)", cut(name, 40), fmt::pct(*share))
    });
    let overhead = f
        .overhead_pct
        .map_or("not measured".into(), |v| format!("{v:+.1}% wall time"));
    vec![
        ["span".into(), span],
        ["GPU busy".into(), busy],
        ["host wait".into(), wait],
        ["top kernel".into(), top],
        ["overhead".into(), overhead],
        [
            "recorded".into(),
            format!(
                "{} {}, {} kernels on {} (commit {}, {})",
                fmt::count(f.processes),
                if f.processes == 1.0 {
                    "process"
                } else {
                    "processes"
                },
                fmt::count(f.kernels),
                f.gpu,
                f.commit,
                f.date
            ),
        ],
    ]
}

/// The headline table of one workload.
pub fn table(rows: &WorkloadRows) -> NamedTable {
    let body = cells(&figures(rows))
        .into_iter()
        .map(|c| (c.to_vec(), super::rows::dims(&rows.workload, None)))
        .collect();
    NamedTable {
        id: "wt-headline".into(),
        title: "Where the time went".into(),
        caption: "Span: the longest process's, first to last GPU activity. GPU busy: share of \
                  the spans with a kernel, copy or memset running. Host wait: stream idle time \
                  before a launch the host had not yet called. Overhead: tracing's wall-time cost."
            .into(),
        table: plain_table(&["figure", "value"], body),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_pick_their_unit() {
        assert_eq!(duration(812.0), format!("{} µs", fmt::num(812.0)));
        assert_eq!(duration(12_300.0), format!("{} ms", fmt::num(12.3)));
        assert_eq!(duration(1_234_000.0), format!("{} s", fmt::num(1.234)));
    }

    #[test]
    fn host_wait_is_shown_as_a_share_of_the_idle_time() {
        let f = Figures {
            gpu: "H200".into(),
            commit: "06976cd".into(),
            date: "2026-12-02".into(),
            processes: 2.0,
            kernels: 10.0,
            busy_pct: Some(4.0),
            span_us: Some(1500.0),
            host_wait_us: Some(20.0),
            stream_idle_us: Some(40.0),
            streams: 2,
            top_kernel: None,
            overhead_pct: None,
        };
        let c = cells(&f);
        assert!(c[2][1].contains(&fmt::pct(50.0)), "{:?}", c[2]);
        assert!(c[1][1].contains(&fmt::pct(96.0)), "{:?}", c[1]);
        assert_eq!(c[4][1], "not measured");
    }
}
