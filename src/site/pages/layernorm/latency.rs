//! "Latency per shape": P50 kernel time of each implementation with its P5–P95 whiskers, one
//! panel per dtype and L2 mode.
use super::fields::hover;
use super::rows::LnRows;
use crate::site::chart::{pt_cat, ChartView, TraceSet};
use crate::site::measured;
use crate::site::names;
use crate::site::palette::Palette;
use crate::site::points::Point;

/// One chart per dtype and L2 mode.
pub fn charts(rows: &LnRows, pal: &Palette) -> Vec<ChartView> {
    rows.panels(|panel| chart(rows, panel, pal))
}

/// The chart of one panel's ok rows: dots on a log axis (times span decades), the
/// implementations side by side at each shape.
fn chart(rows: &LnRows, panel: &[Point], pal: &Palette) -> ChartView {
    let mut lat = ChartView::new(
        "ln-latency",
        "Latency per shape: baseline vs ours",
        "Dots: P50 kernel time; whiskers: P5 to P95 of the samples (stats.time_us), side by \
         side per implementation at each shape. Log scale.",
        "shape (rows×cols)",
        "time (µs)",
    );
    lat.log_y = true;
    lat.offset_markers = true;
    lat.x_order = rows.shape_order(panel);
    let mut set = TraceSet::default();
    for p in panel {
        let Some((k, s)) = names::primary_stat(p.row) else {
            continue;
        };
        let f = names::to_us(k);
        let lab = rows.shape_lab(p);
        let mut pt = pt_cat(&lab, s.p50 * f, hover(p, &rows.lab(p), &[]), p.dims());
        pt.lo = Some(s.p5 * f);
        pt.hi = Some(s.p95 * f);
        rows.push_dot(&mut set, p, pal, pt);
    }
    lat.traces = set.into_vec();
    lat.measured(panel, measured::MEDIAN_P5_P95)
        .finish("No timed LayerNorm point carries a time statistic.")
}
