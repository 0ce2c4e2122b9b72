//! Per traced step, the implementations side by side: idle share and kernels per step as
//! grouped bars, and the per-step table.

use super::rows::{dims, m, p_str, TraceRows, TRACED};
use crate::site::chart::{pt_cat, ChartView, Trace};
use crate::site::fmt;
use crate::site::pages::common::NamedTable;
use crate::site::pages::plain_table;

/// The hover of one step row: its busy, wall and idle figures.
fn hover(p: &crate::site::points::Point) -> String {
    format!(
        "{} {}\nidle {} ({} µs of {} µs wall)\nbusy {} µs, {} kernels, gap P50 {} µs, \
         {} µs of wall per kernel",
        p.imp(),
        p_str(p, "step"),
        fmt::pct(m(p, "idle_pct").unwrap_or(f64::NAN)),
        fmt::num(m(p, "idle_us").unwrap_or(f64::NAN)),
        fmt::num(m(p, "wall_us").unwrap_or(f64::NAN)),
        fmt::num(m(p, "busy_us").unwrap_or(f64::NAN)),
        fmt::count(m(p, "kernels").unwrap_or(0.0)),
        fmt::num(m(p, "gap_p50_us").unwrap_or(f64::NAN)),
        fmt::num(m(p, "wall_us_per_kernel").unwrap_or(f64::NAN)),
    )
}

/// Grouped bars of `metric` per traced step, one bar per implementation.
fn per_step(
    rows: &TraceRows,
    id: &str,
    title: &str,
    caption: &str,
    y: &str,
    metric: &str,
) -> ChartView {
    let mut c = ChartView::new(id, title, caption, "step", y);
    c.compact = true;
    let mut xs: Vec<String> = Vec::new();
    for imp in &rows.impls {
        let mut t = Trace::new(imp.as_str(), rows.palette.of(imp), "bar");
        for p in rows.steps.iter().filter(|p| p.imp() == imp) {
            let Some(v) = m(p, metric) else { continue };
            let x = p_str(p, "step");
            if !xs.contains(&x) {
                xs.push(x.clone());
            }
            t.points.push(pt_cat(&x, v, hover(p), dims(imp, None)));
        }
        c.traces.push(t);
    }
    c.x_order = xs;
    c.measured(rows.points, TRACED)
        .finish("No trace_step rows in the artifact.")
}

/// "Idle share of each traced step", implementations side by side.
pub fn chart(rows: &TraceRows) -> ChartView {
    per_step(
        rows,
        "trace-idle",
        "Idle share of each traced step",
        "y: idle_pct = (wall − busy) / wall of each traced step, from trace_step, one bar per \
         implementation; hover: the busy and wall times, kernel count and the gap P50.",
        "idle (% of wall)",
        "idle_pct",
    )
}

/// "Kernels per step", implementations side by side.
pub fn kernels_chart(rows: &TraceRows) -> ChartView {
    per_step(
        rows,
        "trace-kernels",
        "Kernels per traced step",
        "y: kernels launched in the step (trace_step kernels; copies and memsets not counted), \
         one bar per implementation.",
        "kernels per step",
        "kernels",
    )
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
                    p.imp().to_string(),
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
                dims(p.imp(), None),
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
                "implementation",
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
