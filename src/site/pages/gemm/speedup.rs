//! "Speedup against a chosen baseline": the browser divides the baseline's P50 by each
//! kernel's at the same shape, dtype and GPU; one marker per shape, a symbol per dtype, the
//! kernels along x (one chart per GPU).

use super::rows::GemmRows;
use crate::site::chart::{pt_cat, ChartKind, ChartView, Trace, TraceSet};
use crate::site::measured;
use crate::site::pages::common::{p50_us, peer_key};
use crate::site::palette;

const DTYPE_SYMBOLS: &[&str] = &["circle", "diamond", "square", "triangle-up", "cross"];

pub fn chart(rows: &GemmRows) -> ChartView {
    let mut sp = ChartView::new(
        "gemm-speedup",
        "Speedup against a chosen baseline",
        "P50 time of the baseline divided by each kernel's P50 time at the same shape, dtype \
         and GPU: one marker per shape, its symbol the dtype (hover names the shape). Pick \
         the baseline above the chart; above 1× is faster than it.",
        "kernel",
        "speedup (×)",
    );
    sp.kind = ChartKind::Speedup;
    sp.log_y = true;
    sp.x_order = rows.kernels.clone();
    sp.baselines = rows.kernels.iter().rev().cloned().collect();
    let mut set = TraceSet::default();
    let mut dtypes: Vec<String> = Vec::new();
    for (p, f) in rows.ok.iter().zip(&rows.figs) {
        let Some(t) = p50_us(p) else { continue };
        let dt = p.dtype().unwrap_or_else(|| "dtype?".into());
        if !dtypes.contains(&dt) {
            dtypes.push(dt.clone());
        }
        let i = dtypes.iter().position(|d| *d == dt).unwrap_or(0);
        let mut pt = pt_cat(p.imp(), t, f.hover.clone(), p.dims());
        pt.g = Some(peer_key(p));
        set.get(&dt, || {
            let mut tr = Trace::new(&dt, palette::GUIDE, "markers");
            tr.symbol = Some(DTYPE_SYMBOLS[i % DTYPE_SYMBOLS.len()].into());
            tr
        })
        .points
        .push(pt);
    }
    sp.traces = set.into_vec();
    sp.measured(&rows.ok, measured::RATIO_OF_MEDIANS)
        .finish("No GEMM point carries a time.")
}
