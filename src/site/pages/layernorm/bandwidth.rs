//! "Achieved bandwidth vs the copy ceiling": GB/s of each point under each GPU's copy line,
//! one panel per dtype and L2 mode.

use super::fields::{gbps, hover};
use super::rows::LnRows;
use crate::site::chart::{pt_cat, ChartView, HLine, TraceSet};
use crate::site::fmt;
use crate::site::measured;
use crate::site::names;
use crate::site::palette::{self, Palette};
use crate::site::points::Point;

/// One chart per dtype and L2 mode.
pub fn charts(rows: &LnRows, pal: &Palette) -> Vec<ChartView> {
    rows.panels(|panel| chart(rows, panel, pal))
}

fn chart(rows: &LnRows, panel: &[Point], pal: &Palette) -> ChartView {
    let mut bw = ChartView::new(
        "ln-bandwidth",
        "Achieved bandwidth vs the copy ceiling",
        "Bars: bytes read + written per second at the P50 time (metrics.gbps). Red line: the \
         device-to-device copy bandwidth measured in the same run (ceilings.copy_gbps).",
        "shape (rows×cols)",
        "GB/s",
    );
    bw.x_order = rows.shape_order(panel);
    let mut seen_gpu: Vec<String> = Vec::new();
    for p in panel {
        let g = p.gpu();
        if let (false, Some(c)) = (seen_gpu.contains(&g), p.artifact().ceilings.copy_gbps) {
            bw.hlines.push(HLine {
                y: c,
                label: format!("copy ceiling {} GB/s · {g}", fmt::num(c)),
                color: palette::CEILING.into(),
                f: [("gpu".to_string(), g.clone())].into_iter().collect(),
            });
            seen_gpu.push(g);
        }
    }
    let mut set = TraceSet::default();
    for p in panel {
        let Some(v) = gbps(p) else { continue };
        let pct = names::metric(p.row, names::PCT_COPY)
            .or_else(|| Some(100.0 * v / p.artifact().ceilings.copy_gbps?));
        let extra = vec![format!(
            "{} GB/s{}",
            fmt::num(v),
            pct.map(|c| format!(" = {} of copy", fmt::pct(c)))
                .unwrap_or_default()
        )];
        let lab = rows.shape_lab(p);
        let pt = pt_cat(&lab, v, hover(p, &rows.lab(p), &extra), p.dims());
        rows.push(&mut set, p, pal, pt);
    }
    bw.traces = set.into_vec();
    bw.measured(panel, measured::AT_MEDIAN)
        .finish("No point carries GB/s or the bytes and time to compute it.")
}
