//! A point's fields as table text: params, stats, metrics, correctness and status.

use crate::artifact::Status;
use crate::site::fmt;
use crate::site::points::Point;

/// `key=value` pairs of the params, for tables.
pub fn params_text(p: &Point) -> String {
    p.row
        .params
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A correctness cell: "pass (rel 3.1e-5 ≤ 1e-3)".
pub fn correctness_text(p: &Point) -> String {
    match &p.row.correctness {
        None => "not checked".into(),
        Some(c) => format!(
            "{} (rel {} vs tol {}, max abs {}, ref {})",
            if c.passed { "pass" } else { "FAIL" },
            fmt::num(c.rel_err),
            fmt::num(c.tolerance),
            fmt::num(c.max_abs_err),
            c.reference
        ),
    }
}

pub fn status_text(s: Status) -> &'static str {
    match s {
        Status::Ok => "ok",
        Status::Failed => "failed",
        Status::Skipped => "skipped",
    }
}

/// "time_us 12.3 (11.9 – 13.0) n=50" for each stat.
pub fn stats_text(p: &Point) -> String {
    p.row
        .stats
        .iter()
        .map(|(k, s)| {
            format!(
                "{k} {} ({} – {}) n={}",
                fmt::num(s.p50),
                fmt::num(s.p5),
                fmt::num(s.p95),
                s.n
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// "gbps=812.3; pct_of_copy_bw=19.4".
pub fn metrics_text(p: &Point) -> String {
    p.row
        .metrics
        .iter()
        .map(|(k, v)| format!("{k}={}", fmt::num(*v)))
        .collect::<Vec<_>>()
        .join("; ")
}
