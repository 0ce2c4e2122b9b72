//! "GPU time per layer": per phase, the implementations' layer totals side by side, then each
//! implementation's layers stacked by class.

use super::classes::{class_color, class_rank};
use super::rows::{
    dims, floor_rate, gpu_us, layer_classes, p_str, phase_of, shown, TraceRows, PHASES, TRACED,
};
use crate::site::chart::{pt_cat, ChartView, Trace};
use crate::site::fmt;
use crate::site::pages::common::ordered_categories;
use crate::site::points::Point;

/// The shown `trace_layer` rows of `phase` (all implementations).
fn layer_rows<'p, 'a>(rows: &TraceRows<'a, 'p>, phase: &str) -> Vec<&'p Point<'a>> {
    rows.points
        .iter()
        .filter(|p| p.ok() && p.row.benchmark == "trace_layer" && shown(p) && phase_of(p) == phase)
        .collect()
}

/// "embedding", "0".."n", "head" in model order.
fn layer_order(pts: &[&Point]) -> Vec<String> {
    let mut cats: Vec<(Vec<f64>, String)> = Vec::new();
    for p in pts {
        let layer = p_str(p, "layer");
        let key = match layer.as_str() {
            "embedding" => -1.0,
            "head" => 1e6,
            l => l.parse().unwrap_or(1e5),
        };
        if !cats.iter().any(|(_, l)| *l == layer) {
            cats.push((vec![key], layer));
        }
    }
    ordered_categories(cats)
}

/// Per phase (decode first): the comparison chart (`trace-layers-cmp-<phase>`, with two or
/// more implementations), then one stacked chart per implementation (`trace-layers-0`, ...).
pub fn charts(rows: &TraceRows) -> Vec<ChartView> {
    let mut out = Vec::new();
    let mut n = 0;
    for phase in PHASES {
        let pts = layer_rows(rows, phase);
        if pts.is_empty() {
            continue;
        }
        let label = p_str(pts[0], "step");
        if rows.impls.len() > 1 {
            out.push(compare(rows, phase, &label, &pts));
        }
        for imp in &rows.impls {
            let mine: Vec<&Point> = pts.iter().copied().filter(|p| p.imp() == imp).collect();
            if !mine.is_empty() {
                let mut c = stacked(rows, n, imp, &label, &mine);
                // Half width, so the implementations' stacks of a phase sit side by side.
                c.compact = rows.impls.len() > 1;
                out.push(c);
                n += 1;
            }
        }
    }
    out
}

/// The hover of one class's share of a layer.
fn hover(p: &Point, layer: &str, class: &str, v: f64) -> String {
    let mut hover = format!(
        "{} layer {layer}\n{class}: {} µs (layer total {} µs)",
        p.imp(),
        fmt::num(v),
        fmt::num(gpu_us(p).unwrap_or(f64::NAN)),
    );
    if let Some((g, pc)) = floor_rate(p, "matmul_") {
        hover += &format!(
            "\nmatmul must-move bytes / busy time: {} GB/s{}",
            fmt::num(g),
            pc.map(|pc| format!(" ({} of copy bandwidth)", fmt::pct(pc)))
                .unwrap_or_default()
        );
    }
    hover
}

/// Each implementation's total GPU time per layer as grouped bars.
fn compare(rows: &TraceRows, phase: &str, label: &str, pts: &[&Point]) -> ChartView {
    let mut c = ChartView::new(
        &format!("trace-layers-cmp-{phase}"),
        &format!("GPU time per layer, side by side: {label}"),
        "x: layer; y: µs of GPU busy time in that layer (trace_layer busy_us: what its \
         kernels add to the step's busy time), one bar per implementation; hover: the layer's \
         classes.",
        "layer",
        "GPU time (µs)",
    );
    for imp in &rows.impls {
        let mut t = Trace::new(imp.as_str(), rows.palette.of(imp), "bar");
        for p in pts.iter().filter(|p| p.imp() == imp) {
            let Some(v) = gpu_us(p) else { continue };
            let layer = p_str(p, "layer");
            let mut parts = layer_classes(p);
            parts.sort_by_key(|(c, _)| class_rank(c));
            let mut h = format!("{imp} layer {layer}: {} µs", fmt::num(v));
            for (class, t) in parts {
                h += &format!("\n{class}: {} µs", fmt::num(t));
            }
            t.points.push(pt_cat(&layer, v, h, dims(imp, None)));
        }
        c.traces.push(t);
    }
    c.x_order = layer_order(pts);
    c.measured(rows.points, TRACED)
        .finish("No trace_layer rows with layer times.")
}

/// One implementation's layers, each stacked by class.
fn stacked(rows: &TraceRows, n: usize, imp: &str, label: &str, pts: &[&Point]) -> ChartView {
    let mut c = ChartView::new(
        &format!("trace-layers-{n}"),
        &format!("GPU time per layer by class: {imp}, {label}"),
        "x: layer; y: µs of GPU busy time in that layer, stacked by class (the trace_layer \
         <class>_busy_us metrics); hover: the matmuls' must-move bytes / time.",
        "layer",
        "GPU time (µs)",
    );
    c.stacked = true;
    let mut traces: Vec<Trace> = Vec::new();
    for p in pts {
        let layer = p_str(p, "layer");
        for (class, v) in layer_classes(p) {
            let i = match traces.iter().position(|t| t.name == class) {
                Some(i) => i,
                None => {
                    traces.push(Trace::new(&class, class_color(&class), "bar"));
                    traces.len() - 1
                }
            };
            traces[i].points.push(pt_cat(
                &layer,
                v,
                hover(p, &layer, &class, v),
                dims(imp, Some(&class)),
            ));
        }
    }
    traces.sort_by_key(|t| class_rank(&t.name));
    c.x_order = layer_order(pts);
    c.traces = traces;
    c.measured(rows.points, TRACED)
        .finish("No trace_layer rows with class times.")
}
