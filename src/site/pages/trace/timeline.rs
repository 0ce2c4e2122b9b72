//! The timelines: the first traced decode step and the prefill of each implementation, activity
//! by activity, from the compact trace beside the artifact.

use super::activity::{activity, Columns, Tables};
use super::classes::{class_color, class_rank};
use super::file::find_trace;
use super::rows::{dims, TraceRows, TRACED};
use crate::site::chart::{pt_num, ChartKind, ChartView, Trace};
use crate::site::fmt;
use crate::site::pages::common::Section;
use serde_json::Value;
use std::path::Path;

/// The "Timelines" section: the charts of the trace found beside the artifact, or why none.
pub fn section(rows: &TraceRows, artifacts_dir: &str) -> Section {
    let mut s = Section::new(
        "timeline",
        "Timelines",
        "The first traced decode step and the prefill of each implementation, kernel by kernel.",
    );
    let points = rows.points;
    let Some((path, t)) = find_trace(Path::new(artifacts_dir), &points[0].loaded.file) else {
        s.intro = "No compact kernel trace (*.trace.json with format \
                   opbench_kernel_trace) beside the artifact: run llm_bench --trace \
                   with --trace-compact DIR/llm_kernels.trace.json to draw the \
                   timelines."
            .into();
        return s;
    };
    let steps_json = t
        .get("steps")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let first = |phase: &str, imp: &str| {
        steps_json.iter().position(|s| {
            s.get("phase").and_then(Value::as_str) == Some(phase) && step_impl(s) == imp
        })
    };
    let mut impls: Vec<&str> = Vec::new();
    for st in &steps_json {
        if !impls.contains(&step_impl(st)) {
            impls.push(step_impl(st));
        }
    }
    for phase in ["decode", "prefill"] {
        for imp in &impls {
            let id = format!("tl-{phase}-{}", crate::site::pages::slug(imp));
            if let Some(c) = first(phase, imp).and_then(|i| timeline(&t, i, &id, imp, &rows.gpu)) {
                s.charts.push(c.measured(points, TRACED));
            }
        }
    }
    s.intro = format!(
        "From {} (the compact trace: one row per activity; each implementation's times start \
         at its own first traced step). The first traced decode step and the prefill of each \
         implementation are drawn; the other decode steps are in the file and in the per-step \
         table below. The filters keep one operation class or implementation.",
        path.file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default()
    );
    // Version 1 holds one attribution text (candle's), version 2 one per implementation.
    match t.get("attribution") {
        Some(Value::String(a)) => s.intro += &format!(" Attribution: {a}"),
        Some(Value::Object(per)) => {
            for (imp, a) in per {
                if let Some(a) = a.as_str() {
                    s.intro += &format!(" Attribution of {imp}: {a}");
                }
            }
        }
        _ => {}
    }
    s
}

/// The implementation of a compact-trace step; version 1 files hold candle's steps only.
fn step_impl(step: &Value) -> &str {
    step.get("impl").and_then(Value::as_str).unwrap_or("candle")
}

/// One step's timeline from the compact trace; `None` when the trace lacks the step.
fn timeline(t: &Value, step_index: usize, id: &str, imp: &str, gpu: &str) -> Option<ChartView> {
    let step = t.get("steps")?.as_array()?.get(step_index)?;
    let label = step.get("label")?.as_str()?.to_string();
    let s0 = step.get("start_ns")?.as_f64()?;
    let s1 = step.get("end_ns")?.as_f64()?;
    let strings = |key: &str| -> Option<Vec<&str>> {
        Some(
            t.get(key)?
                .as_array()?
                .iter()
                .filter_map(Value::as_str)
                .collect(),
        )
    };
    let tables = Tables {
        names: strings("names")?,
        classes: strings("classes")?,
        kinds: t.get("kinds"),
    };
    let cols = Columns::of(t)?;
    let mut per_class: Vec<Trace> = Vec::new();
    let mut n = 0usize;
    for r in t.get("rows")?.as_array()? {
        let Some(r) = r.as_array() else { continue };
        let Some(a) = activity(r, &cols, &tables, step_index, s0) else {
            continue;
        };
        let f = dims(imp, Some(a.class));
        let tr = match per_class.iter_mut().position(|t| t.name == a.class) {
            Some(i) => &mut per_class[i],
            None => {
                per_class.push(Trace::new(a.class, class_color(a.class), "bar"));
                per_class.last_mut().expect("pushed")
            }
        };
        tr.points.push(pt_num(a.x, a.w, a.hover, f));
        n += 1;
    }
    per_class.sort_by_key(|t| class_rank(&t.name));
    let wall = (s1 - s0) / 1000.0;
    let mut c = ChartView::new(
        id,
        &format!(
            "Timeline of {imp} {label} ({n} activities, {} µs wall)",
            fmt::num(wall)
        ),
        &format!(
            "Each bar is one kernel, memcpy or memset on the GPU ({gpu}, CUPTI device \
             timestamps), from its start to its end; x = µs since the step's window opened. \
             The top lane holds every activity, so its white gaps are the time the GPU ran \
             nothing; below, one lane per operation class. Dotted frame: the step's wall \
             window (host: before the first launch to after the synchronize). With more than \
             150 activities the chart opens on the densest run of 150 from the first kernel \
             on (at full width, 2 µs kernels and 4 µs gaps merge into one block): the \
             autoscale button of the chart's mode bar shows the whole step; drag to zoom, \
             double-click to come back."
        ),
        "time since the step started (µs)",
        "duration (µs)",
    );
    c.kind = ChartKind::Timeline;
    c.traces = per_class;
    c.traces.push(Trace::window_frame("step window", wall));
    Some(c.finish("The trace has no activity in this step."))
}
