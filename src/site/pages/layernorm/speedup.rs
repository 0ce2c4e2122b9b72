//! "Speedup over candle": the baseline's P50 over each other implementation's at the same
//! point, one panel per dtype and L2 mode.

use super::fields::hover;
use super::rows::LnRows;
use crate::site::chart::{pt_cat, ChartView, HLine, TraceSet};
use crate::site::fmt;
use crate::site::measured;
use crate::site::names;
use crate::site::pages::common::{p50_us, peer_key};
use crate::site::palette::{self, Palette};
use crate::site::points::Point;

/// One chart per dtype and L2 mode.
pub fn charts(rows: &LnRows, pal: &Palette) -> Vec<ChartView> {
    rows.panels(|panel| chart(rows, panel, pal))
}

fn chart(rows: &LnRows, panel: &[Point], pal: &Palette) -> ChartView {
    let baseline = names::LN_BASELINE[0];
    let mut sp = ChartView::new(
        "ln-speedup",
        &format!("Speedup over {baseline}"),
        &format!(
            "P50 time of {baseline} divided by P50 time of each other implementation at the \
             same shape, dtype, mode and GPU (metrics.speedup_vs_candle when recorded). Above \
             the dashed line at 1× is faster."
        ),
        "shape (rows×cols)",
        &format!("speedup over {baseline} (×)"),
    );
    sp.x_order = rows.shape_order(panel);
    sp.hlines.push(HLine {
        y: 1.0,
        label: format!("{baseline} (1×)"),
        color: palette::GUIDE.into(),
        f: Default::default(),
    });
    let mut set = TraceSet::default();
    for p in panel.iter().filter(|p| p.imp() != baseline) {
        let base = rows
            .peers
            .get(&(peer_key(p), baseline.to_string()))
            .and_then(p50_us);
        let v = names::metric(p.row, names::SPEEDUP_LN)
            .or_else(|| Some(base? / p50_us(p)?))
            .filter(|v| v.is_finite());
        let Some(v) = v else { continue };
        let extra = vec![
            format!("speedup {}", fmt::times(v)),
            match base {
                Some(b) => format!("{baseline} P50 {} µs", fmt::num(b)),
                None => format!("{baseline} time not in the artifacts"),
            },
        ];
        let lab = rows.shape_lab(p);
        let pt = pt_cat(&lab, v, hover(p, &rows.lab(p), &extra), p.dims());
        rows.push(&mut set, p, pal, pt);
    }
    sp.traces = set.into_vec();
    sp.measured(panel, measured::RATIO_OF_MEDIANS)
        .finish(&format!(
            "No point has both a {baseline} time and another implementation's time."
        ))
}
