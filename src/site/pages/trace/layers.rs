//! "GPU time per layer": one chart per shown phase, each layer's time stacked by class.

use super::classes::{class_color, class_rank};
use super::rows::{m, p_str, phase_label, shown, TRACED};
use crate::site::chart::{pt_cat, ChartView, Dims, Trace};
use crate::site::fmt;
use crate::site::pages::common::ordered_categories;
use crate::site::points::Point;

/// One chart per phase with `trace_layer` rows, ids `trace-layers-0`, `trace-layers-1`, ...
pub fn charts(points: &[Point]) -> Vec<ChartView> {
    let mut phases: Vec<String> = Vec::new();
    for p in points
        .iter()
        .filter(|p| p.row.benchmark == "trace_layer" && shown(p))
    {
        let x = phase_label(p);
        if !phases.contains(&x) {
            phases.push(x);
        }
    }
    phases
        .iter()
        .enumerate()
        .map(|(pi, phase)| chart(points, pi, phase))
        .collect()
}

/// The hover of one class's share of a layer.
fn hover(p: &Point, layer: &str, class: &str, v: f64) -> String {
    let mut hover = format!(
        "layer {layer}\n{class}: {} µs (layer total {} µs, {} of busy)",
        fmt::num(v),
        fmt::num(m(p, "time_us").unwrap_or(f64::NAN)),
        fmt::pct(m(p, "pct_of_busy").unwrap_or(f64::NAN))
    );
    if let (Some(g), Some(pc)) = (
        m(p, "matmul_floor_gbps"),
        m(p, "matmul_floor_pct_of_copy_bw"),
    ) {
        hover += &format!(
            "\nmatmul must-move bytes / time: {} GB/s ({} of copy bandwidth)",
            fmt::num(g),
            fmt::pct(pc)
        );
    }
    hover
}

fn chart(points: &[Point], pi: usize, phase: &str) -> ChartView {
    let mut c = ChartView::new(
        &format!("trace-layers-{pi}"),
        &format!("GPU time per layer: {phase}"),
        "x: layer; y: µs of GPU time in that layer, stacked by class (the trace_layer \
         <class>_time_us metrics); hover: the matmuls' must-move bytes / time.",
        "layer",
        "GPU time (µs)",
    );
    c.stacked = true;
    let mut traces: Vec<Trace> = Vec::new();
    let mut cats: Vec<(Vec<f64>, String)> = Vec::new();
    for p in points.iter().filter(|p| {
        p.ok() && p.row.benchmark == "trace_layer" && shown(p) && phase_label(p) == *phase
    }) {
        let layer = p_str(p, "layer");
        let key = match layer.as_str() {
            "embedding" => -1.0,
            "head" => 1e6,
            l => l.parse().unwrap_or(1e5),
        };
        cats.push((vec![key], layer.clone()));
        for (k, v) in &p.row.metrics {
            let Some(class) = k.strip_suffix("_time_us") else {
                continue;
            };
            let mut f = Dims::new();
            f.insert("class".into(), class.to_string());
            let i = match traces.iter().position(|t| t.name == class) {
                Some(i) => i,
                None => {
                    traces.push(Trace::new(class, class_color(class), "bar"));
                    traces.len() - 1
                }
            };
            traces[i]
                .points
                .push(pt_cat(&layer, *v, hover(p, &layer, class, *v), f));
        }
    }
    traces.sort_by_key(|t| class_rank(&t.name));
    c.x_order = ordered_categories(cats);
    c.traces = traces;
    c.measured(points, TRACED)
        .finish("No trace_layer rows with class times.")
}
