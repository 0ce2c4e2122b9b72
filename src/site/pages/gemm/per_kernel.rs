//! The roofline's two axes one kernel at a time: arithmetic intensity and TFLOP/s per kernel,
//! one marker per shape, a marker symbol per GPU (the x axis names the kernel).

use super::figures::Figures;
use super::rows::GemmRows;
use crate::site::chart::{pt_cat, ChartView, Trace, TraceSet};
use crate::site::measured;
use crate::site::pages::common::gpus;
use crate::site::palette;
use crate::site::rules;

/// One marker per row of the figure `pick` takes, on a log axis by kernel.
fn chart(
    rows: &GemmRows,
    (id, title, caption, y, stat): (&str, &str, &str, &str, &str),
    pick: &dyn Fn(&Figures) -> Option<f64>,
) -> ChartView {
    let gpu_list = gpus(&rows.ok);
    let mut c = ChartView::new(id, title, caption, "kernel", y);
    c.log_y = true;
    c.compact = true;
    c.x_order = rows.kernels.clone();
    let mut set = TraceSet::default();
    for (p, f) in rows.ok.iter().zip(&rows.figs) {
        let Some(v) = pick(f) else { continue };
        let gi = gpu_list.iter().position(|g| *g == p.gpu()).unwrap_or(0);
        let name = rules::short_gpu(&p.gpu());
        set.get(&name, || {
            let mut t = Trace::new(&name, palette::GUIDE, "markers");
            t.symbol = Some(rules::gpu_symbol(gi).into());
            t
        })
        .points
        .push(pt_cat(p.imp(), v, f.hover.clone(), p.dims()));
    }
    c.traces = set.into_vec();
    c.measured(&rows.ok, stat)
        .finish("No point carries this figure.")
}

pub fn intensity(rows: &GemmRows) -> ChartView {
    chart(
        rows,
        (
            "gemm-intensity",
            "Arithmetic intensity per kernel",
            "FLOPs per byte of A, B and C (metrics.intensity_flop_per_byte), one marker per \
             shape and dtype the kernel ran, the marker's symbol its GPU; hover names the \
             shape. Left of the ridge point a kernel is memory-bound.",
            "FLOP/byte",
            "FLOPs over the bytes of A, B and C of each shape (no timing)",
        ),
        &|f| f.intensity,
    )
}

pub fn performance(rows: &GemmRows) -> ChartView {
    chart(
        rows,
        (
            "gemm-performance",
            "Performance per kernel",
            "Achieved TFLOP/s at the P50 time, one marker per shape and dtype the kernel ran, \
             the marker's symbol its GPU.",
            "TFLOP/s",
            measured::AT_MEDIAN,
        ),
        &|f| f.tflops,
    )
}
