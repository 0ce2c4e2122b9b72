//! "Speedup against a chosen baseline": the browser divides the baseline's P50 by each
//! kernel's at the same shape, dtype and GPU.

use super::figures::shape_dtype;
use super::rows::GemmRows;
use crate::site::chart::{pt_cat, ChartKind, ChartView, TraceSet};
use crate::site::measured;
use crate::site::pages::common::{p50_us, peer_key, series};
use crate::site::palette::Palette;

pub fn chart(rows: &GemmRows, pal: &Palette) -> ChartView {
    let mut sp = ChartView::new(
        "gemm-speedup",
        "Speedup against a chosen baseline",
        "P50 time of the baseline divided by each kernel's P50 time at the same shape, dtype \
         and GPU. Pick the baseline above the chart; above 1× is faster than it.",
        "shape · dtype",
        "speedup (×)",
    );
    sp.kind = ChartKind::Speedup;
    sp.log_y = true;
    sp.x_order = rows.shapes.clone();
    sp.baselines = rows.kernels.iter().rev().cloned().collect();
    let mut set = TraceSet::default();
    for (p, f) in rows.ok.iter().zip(&rows.figs) {
        let Some(t) = p50_us(p) else { continue };
        let name = series(p.imp(), p, rows.multi);
        let mut pt = pt_cat(&shape_dtype(p), t, f.hover.clone(), p.dims());
        pt.g = Some(peer_key(p));
        set.get(&name, || rows.new_trace(&name, p, "markers", pal))
            .points
            .push(pt);
    }
    sp.traces = set.into_vec();
    sp.measured(&rows.ok, measured::RATIO_OF_MEDIANS)
        .finish("No GEMM point carries a time.")
}
