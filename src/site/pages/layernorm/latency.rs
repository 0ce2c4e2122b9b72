//! "Latency per shape": P50 kernel time of each implementation with its P5–P95 whiskers.

use super::fields::hover;
use super::rows::LnRows;
use crate::site::chart::{pt_cat, ChartView, TraceSet};
use crate::site::measured;
use crate::site::names;
use crate::site::palette::Palette;

pub fn chart(rows: &LnRows, pal: &Palette) -> ChartView {
    let mut lat = ChartView::new(
        "ln-latency",
        "Latency per shape: baseline vs ours",
        "Bars: P50 kernel time; whiskers: P5 to P95 of the samples (stats.time_us). Log scale.",
        "shape · dtype · L2 mode",
        "time (µs)",
    );
    lat.log_y = true;
    lat.x_order = rows.x_order.clone();
    let mut set = TraceSet::default();
    for p in &rows.ok {
        let Some((k, s)) = names::primary_stat(p.row) else {
            continue;
        };
        let f = names::to_us(k);
        let lab = rows.lab(p);
        let mut pt = pt_cat(&lab, s.p50 * f, hover(p, &lab, &[]), p.dims());
        pt.lo = Some(s.p5 * f);
        pt.hi = Some(s.p95 * f);
        rows.push(&mut set, p, pal, pt);
    }
    lat.traces = set.into_vec();
    lat.measured(&rows.ok, measured::MEDIAN_P5_P95)
        .finish("No timed LayerNorm point carries a time statistic.")
}
