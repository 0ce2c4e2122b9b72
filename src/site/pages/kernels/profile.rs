//! "Profiler metrics per kernel": the ncu percentages of each kernel and block at the largest
//! parameter set, one chart per GPU so no two GPUs' bars share a spot.

use super::fields::{block, dims, hover, p50, pset_text, sweep};
use crate::site::chart::{pt_cat, ChartView, Trace, TraceSet};
use crate::site::fmt;
use crate::site::names;
use crate::site::pages::common::{gpus, ordered_categories};
use crate::site::palette::Palette;
use crate::site::points::Point;
use std::collections::HashMap;

/// The ncu percentages drawn, each its own bar series.
const PCT: &[(&str, &str)] = &[
    ("ncu_memory_throughput_pct", "memory throughput %"),
    ("ncu_compute_throughput_pct", "compute throughput %"),
    ("ncu_achieved_occupancy_pct", "achieved occupancy %"),
    ("ncu_sm_efficiency_pct", "SM efficiency %"),
];

/// What the bars draw: Nsight Compute's figures of one profiled launch per point.
const PROFILED: &str = "Nsight Compute metrics of one profiled launch per point";

/// One chart per GPU of the profiled points (`prof`), ids `kern-ncu`, `kern-ncu-1`, ...
pub fn charts(prof: &[Point]) -> Vec<ChartView> {
    let gpu_list = gpus(prof);
    if gpu_list.is_empty() {
        return vec![one("kern-ncu", None, &[], &HashMap::new())];
    }
    // One kernel order on every GPU's chart: the first GPU's P50 times, fastest first.
    let order: HashMap<String, f64> = prof
        .iter()
        .filter(|p| p.gpu() == gpu_list[0])
        .filter_map(|p| Some((group(p), p50(p)?)))
        .collect();
    gpu_list
        .iter()
        .enumerate()
        .map(|(i, g)| {
            let id = if i == 0 {
                "kern-ncu".to_string()
            } else {
                format!("kern-ncu-{i}")
            };
            let mine: Vec<Point> = prof.iter().filter(|p| p.gpu() == *g).copied().collect();
            let mut c = one(&id, Some(g), &mine, &order);
            if gpu_list.len() > 1 {
                c.f.insert("gpu".into(), g.clone());
            }
            c
        })
        .collect()
}

/// Grouped bars (never stacked: each bar is a percentage of its own ceiling) of one GPU.
/// "matmul_tiled 16x16": a bar group.
fn group(p: &Point) -> String {
    format!("{} {}", p.imp(), block(p))
}

fn one(id: &str, gpu: Option<&str>, prof: &[Point], order: &HashMap<String, f64>) -> ChartView {
    let mut c = ChartView::new(
        id,
        "Profiler metrics per kernel",
        "Grouped bars of the ncu percentages per kernel and block at the largest parameter \
         set, each out of 100 (the table below holds every point).",
        "kernel, block",
        "percent",
    );
    c.compact = true;
    // The largest parameter set (by the product of its parameters) of the profiled points.
    let size = |p: &Point| sweep(p).iter().map(|(_, v)| v.max(1.0).ln()).sum::<f64>();
    let largest = prof
        .iter()
        .max_by(|a, b| size(a).total_cmp(&size(b)))
        .map(|p| pset_text(p, &[]));
    c.title = match (&largest, gpu) {
        (Some(l), Some(g)) => format!("Profiler metrics per kernel at {l}, {g}"),
        (Some(l), None) => format!("Profiler metrics per kernel at {l}"),
        _ => c.title,
    };
    let mut cats: Vec<(Vec<f64>, String)> = Vec::new();
    let mut set = TraceSet::default();
    for (i, (key, label)) in PCT.iter().enumerate() {
        for p in prof.iter().filter(|p| Some(pset_text(p, &[])) == largest) {
            let Some(v) = names::metric(p.row, &[key]) else {
                continue;
            };
            let x = group(p);
            let mut k: Vec<f64> = sweep(p).iter().map(|(_, v)| *v).collect();
            k.insert(0, order.get(&x).copied().or(p50(p)).unwrap_or(0.0));
            cats.push((k, x.clone()));
            let h = format!("{label}: {}\n{}", fmt::num(v), hover(p));
            set.get(label, || Trace::new(*label, Palette::nth(i), "bar"))
                .points
                .push(pt_cat(&x, v, h, dims(p)));
        }
    }
    c.x_order = ordered_categories(cats);
    c.traces = set.into_vec();
    c.measured(prof, PROFILED).finish(
        "No point carries ncu metrics (run kernel_bench with --profile where ncu is installed).",
    )
}
