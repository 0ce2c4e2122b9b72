//! The idle share of each traced step: a bar chart and the per-step table.

use super::rows::{m, p_str, TraceRows, TRACED};
use crate::site::chart::{pt_cat, ChartView, Dims, Trace};
use crate::site::fmt;
use crate::site::pages::common::NamedTable;
use crate::site::pages::plain_table;

pub fn chart(rows: &TraceRows) -> ChartView {
    let mut c = ChartView::new(
        "trace-idle",
        "Idle share of each traced step",
        "y: idle_pct = (wall − busy) / wall of each traced step, from trace_step; hover: \
         the busy and wall times, kernel count and the gap P50.",
        "step",
        "idle (% of wall)",
    );
    c.compact = true;
    let mut t = Trace::new("idle share", "#6b7280", "bar");
    for p in &rows.steps {
        let Some(v) = m(p, "idle_pct") else { continue };
        let x = p_str(p, "step");
        let hover = format!(
            "{x}\nidle {} ({} µs of {} µs wall)\nbusy {} µs, {} kernels, gap P50 {} µs, \
             {} µs of wall per kernel",
            fmt::pct(v),
            fmt::num(m(p, "idle_us").unwrap_or(f64::NAN)),
            fmt::num(m(p, "wall_us").unwrap_or(f64::NAN)),
            fmt::num(m(p, "busy_us").unwrap_or(f64::NAN)),
            fmt::count(m(p, "kernels").unwrap_or(0.0)),
            fmt::num(m(p, "gap_p50_us").unwrap_or(f64::NAN)),
            fmt::num(m(p, "wall_us_per_kernel").unwrap_or(f64::NAN)),
        );
        t.points.push(pt_cat(&x, v, hover, Dims::new()));
    }
    c.traces = vec![t];
    c.measured(rows.points, TRACED)
        .finish("No trace_step rows in the artifact.")
}

/// "Per traced step": wall, busy, idle and gap figures; `None` without `trace_step` rows.
pub fn steps_table(rows: &TraceRows) -> Option<NamedTable> {
    let step_rows = rows
        .steps
        .iter()
        .map(|p| {
            let v = |k: &str| m(p, k).map(fmt::num).unwrap_or_else(|| "—".into());
            (
                vec![
                    p_str(p, "step"),
                    m(p, "idle_pct").map(fmt::pct).unwrap_or_else(|| "—".into()),
                    v("wall_us"),
                    v("busy_us"),
                    v("idle_us"),
                    v("kernels"),
                    v("memcpys"),
                    v("gap_p50_us"),
                    v("gap_p95_us"),
                    v("gap_max_us"),
                    v("wall_us_per_kernel"),
                ],
                Dims::new(),
            )
        })
        .collect::<Vec<_>>();
    if step_rows.is_empty() {
        return None;
    }
    Some(NamedTable {
        id: "trace-steps".into(),
        title: "Per traced step".into(),
        caption: "wall: host window of the step; busy: union of GPU activity; idle = wall − \
                  busy; gaps: idle time between consecutive activities."
            .into(),
        table: plain_table(
            &[
                "step",
                "idle share",
                "wall (µs)",
                "busy (µs)",
                "idle (µs)",
                "kernels",
                "memcpys",
                "gap P50 (µs)",
                "gap P95 (µs)",
                "gap max (µs)",
                "wall per kernel (µs)",
            ],
            step_rows,
        ),
    })
}
