//! "M × N at K": TFLOP/s over the (M, N) grid at one K, one heatmap per GPU and dtype, so a
//! cell never mixes two GPUs or two dtypes.

use super::figures::{mnk, Figures};
use crate::site::chart::{Cell, ChartKind, ChartView};
use crate::site::fmt;
use crate::site::points::Point;
use std::collections::{BTreeMap, BTreeSet};

/// What each cell draws: the fastest selected kernel, its rate at the median time.
const BEST_AT_MEDIAN: &str =
    "the fastest selected kernel at each cell, its rate at the median (P50) time";

/// At most this many heatmaps: the largest (M, N) grids first.
const MAX_CHARTS: usize = 4;

/// (K, GPU, dtype): one grid.
type Grid = (i64, String, String);

/// The heatmaps, ids `gemm-mn-k{K}-{n}`. A grid needs at least two Ms and two Ns. Within a
/// grid, a cell shows the best kernel at that (M, N) (hover names it; filter by
/// implementation to see one kernel).
pub fn charts(ok: &[Point], figs: &[Figures]) -> Vec<ChartView> {
    let mut grids: BTreeMap<Grid, (BTreeSet<i64>, BTreeSet<i64>)> = BTreeMap::new();
    for p in ok {
        if let (Some((m, n, k)), Some(dt)) = (mnk(p), p.dtype()) {
            let e = grids.entry((k as i64, p.gpu(), dt)).or_default();
            e.0.insert(m as i64);
            e.1.insert(n as i64);
        }
    }
    let mut ranked: Vec<(usize, &Grid)> = grids
        .iter()
        .filter(|(_, (ms, ns))| ms.len() >= 2 && ns.len() >= 2)
        .map(|(g, (ms, ns))| (ms.len() * ns.len(), g))
        .collect();
    // Largest grid first; equal sizes keep K, GPU, dtype order.
    ranked.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
    ranked
        .into_iter()
        .take(MAX_CHARTS)
        .enumerate()
        .map(|(i, (_, g))| one(i, g, &grids[g], ok, figs))
        .collect()
}

fn one(
    i: usize,
    (k, gpu, dtype): &Grid,
    (ms, ns): &(BTreeSet<i64>, BTreeSet<i64>),
    ok: &[Point],
    figs: &[Figures],
) -> ChartView {
    let mut c = ChartView::new(
        &format!("gemm-mn-k{k}-{i}"),
        &format!("M × N at K = {k}, {dtype}, {gpu}"),
        "Best TFLOP/s among the selected kernels at each (M, N), this GPU and dtype only; \
         hover names the kernel. Filter by implementation to see one kernel.",
        "N",
        "M",
    );
    c.kind = ChartKind::Heatmap;
    c.compact = true;
    c.z_title = "TFLOP/s".into();
    c.x_order = ns.iter().map(|v| v.to_string()).collect();
    c.y_order = ms.iter().map(|v| v.to_string()).collect();
    let mut rows: Vec<Point> = Vec::new();
    for (p, f) in ok.iter().zip(figs) {
        let (Some((m, n, kk)), Some(z)) = (mnk(p), f.tflops) else {
            continue;
        };
        if kk as i64 == *k && p.gpu() == *gpu && p.dtype().as_deref() == Some(dtype) {
            rows.push(*p);
            c.cells.push(Cell {
                x: (n as i64).to_string(),
                y: (m as i64).to_string(),
                z,
                label: fmt::num(z),
                hover: f.hover.clone(),
                f: p.dims(),
            });
        }
    }
    c.measured(&rows, BEST_AT_MEDIAN)
        .finish("No point at this K, GPU and dtype.")
}
