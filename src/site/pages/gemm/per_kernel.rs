//! The roofline's two axes one kernel at a time: arithmetic intensity and TFLOP/s per kernel,
//! one marker per shape.

use super::figures::Figures;
use super::rows::GemmRows;
use crate::site::chart::{pt_cat, ChartView, TraceSet};
use crate::site::measured;
use crate::site::pages::common::series;
use crate::site::palette::Palette;

/// One marker per row of the figure `pick` takes, on a log axis by kernel.
fn chart(
    rows: &GemmRows,
    pal: &Palette,
    (id, title, caption, y, stat): (&str, &str, &str, &str, &str),
    pick: &dyn Fn(&Figures) -> Option<f64>,
) -> ChartView {
    let mut c = ChartView::new(id, title, caption, "kernel", y);
    c.log_y = true;
    c.compact = true;
    c.x_order = rows.kernels.clone();
    let mut set = TraceSet::default();
    for (p, f) in rows.ok.iter().zip(&rows.figs) {
        let Some(v) = pick(f) else { continue };
        let name = series(p.imp(), p, rows.multi);
        set.get(&name, || rows.new_trace(&name, p, "markers", pal))
            .points
            .push(pt_cat(p.imp(), v, f.hover.clone(), p.dims()));
    }
    c.traces = set.into_vec();
    c.measured(&rows.ok, stat)
        .finish("No point carries this figure.")
}

pub fn intensity(rows: &GemmRows, pal: &Palette) -> ChartView {
    chart(
        rows,
        pal,
        (
            "gemm-intensity",
            "Arithmetic intensity per kernel",
            "FLOPs per byte of A, B and C (metrics.intensity_flop_per_byte), one marker per \
             shape and dtype the kernel ran; hover names the shape. Left of the ridge point a \
             kernel is memory-bound.",
            "FLOP/byte",
            "FLOPs over the bytes of A, B and C of each shape (no timing)",
        ),
        &|f| f.intensity,
    )
}

pub fn performance(rows: &GemmRows, pal: &Palette) -> ChartView {
    chart(
        rows,
        pal,
        (
            "gemm-performance",
            "Performance per kernel",
            "Achieved TFLOP/s at the P50 time, one marker per shape and dtype the kernel ran.",
            "TFLOP/s",
            measured::AT_MEDIAN,
        ),
        &|f| f.tflops,
    )
}
