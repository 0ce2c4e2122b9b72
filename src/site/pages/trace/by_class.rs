//! "Time per class": per phase, each implementation's class times stacked with its idle time,
//! the implementations side by side.

use super::classes::{class_color, class_rank};
use super::rows::{dims, floor_rate, gpu_us, m, p_str, phase_of, shown, TraceRows, PHASES, TRACED};
use crate::site::chart::{pt_cat, ChartView, Trace};
use crate::site::fmt;
use crate::site::points::Point;

/// A bar's series, height (µs) and extra hover line from a `trace_class` or `trace_step` row.
fn bar(p: &Point) -> Option<(String, f64, String)> {
    match p.row.benchmark.as_str() {
        "trace_class" => {
            let t = gpu_us(p)?;
            let mut extra = format!(
                "{} kernels, {} of busy; summed kernel durations {} µs",
                fmt::count(m(p, "count").unwrap_or(0.0)),
                fmt::pct(
                    m(p, "busy_share_pct")
                        .or(m(p, "pct_of_busy"))
                        .unwrap_or(f64::NAN)
                ),
                fmt::num(m(p, "time_us").unwrap_or(f64::NAN))
            );
            if let Some((g, pc)) = floor_rate(p, "") {
                extra += &format!(
                    "\nmust-move bytes / busy time: {} GB/s{}",
                    fmt::num(g),
                    pc.map(|pc| format!(" ({} of copy bandwidth)", fmt::pct(pc)))
                        .unwrap_or_default()
                );
            }
            Some((p_str(p, "class"), t, extra))
        }
        "trace_step" => {
            let t = m(p, "idle_us")?;
            Some((
                "idle".to_string(),
                t,
                format!(
                    "idle {} of {} µs wall; gap P50 {} µs",
                    fmt::pct(m(p, "idle_pct").unwrap_or(f64::NAN)),
                    fmt::num(m(p, "wall_us").unwrap_or(f64::NAN)),
                    fmt::num(m(p, "gap_p50_us").unwrap_or(f64::NAN))
                ),
            ))
        }
        _ => None,
    }
}

/// One chart per phase with rows, decode first: ids `trace-classes` (decode) and
/// `trace-classes-prefill`.
pub fn charts(rows: &TraceRows) -> Vec<ChartView> {
    PHASES
        .iter()
        .filter_map(|phase| chart(rows, phase))
        .collect()
}

fn chart(rows: &TraceRows, phase: &str) -> Option<ChartView> {
    let pts: Vec<&Point> = rows
        .points
        .iter()
        .filter(|p| p.ok() && shown(p) && phase_of(p) == phase)
        .collect();
    let label = p_str(pts.first()?, "step");
    let id = if phase == "decode" {
        "trace-classes".to_string()
    } else {
        format!("trace-classes-{phase}")
    };
    let mut c = ChartView::new(
        &id,
        &format!("Step time by operation class: {label}"),
        "x: implementation; y: µs per step; stacked: the GPU busy time of each class \
         (trace_class busy_us: what its kernels add to the busy time in start order, so an \
         opbench kernel launched early by programmatic dependent launch counts from its \
         predecessor's end) and the idle time (trace_step idle_us = wall − busy), so a bar is \
         the traced wall. Hover: the summed kernel durations (time_us).",
        "implementation",
        "time per step (µs)",
    );
    c.stacked = true;
    c.compact = true;
    let mut traces: Vec<Trace> = Vec::new();
    for p in pts {
        let Some((name, y, extra)) = bar(p) else {
            continue;
        };
        let x = p.imp();
        let hover = format!("{x} {label}\n{name}: {} µs\n{extra}", fmt::num(y));
        let color = if name == "idle" {
            "#d1d5db".to_string()
        } else {
            class_color(&name)
        };
        let i = match traces.iter().position(|t| t.name == name) {
            Some(i) => i,
            None => {
                traces.push(Trace::new(&name, color, "bar"));
                traces.len() - 1
            }
        };
        traces[i]
            .points
            .push(pt_cat(x, y, hover, dims(x, Some(&name))));
    }
    traces.sort_by_key(|t| {
        if t.name == "idle" {
            100
        } else {
            class_rank(&t.name)
        }
    });
    c.x_order = rows.impls.clone();
    c.traces = traces;
    Some(
        c.measured(rows.points, TRACED)
            .finish("No trace_class rows in the artifact."),
    )
}
