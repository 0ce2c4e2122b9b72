//! The GEMM page: roofline with measured ceilings, heatmaps, split charts, speedup against a
//! chosen baseline, and the kernel ladder as % of cuBLAS.

pub mod figures;
mod heatmap;
mod mn_heatmap;
mod order;
mod per_kernel;
mod roofline;
mod rows;
mod speedup;
pub mod vs_cublas;

use super::common::{empty_kind, facets, filters, not_ok_table, per_gpu, per_gpu_by, Section};
use super::PageContext;
use crate::site::names;
use crate::site::palette::Palette;
use crate::site::points::Point;
use rows::GemmRows;

/// "square shapes", "model shapes": a heatmap's shape set.
fn shape_set(p: &Point) -> String {
    match names::param_str(p.row, names::SHAPE_SET) {
        Some(s) => format!("{s} shapes"),
        None => String::new(),
    }
}

pub fn build(page: &mut PageContext, points: &[Point], pal: &Palette) {
    page.intro = "Matrix multiply: cuBLAS, candle and each hand-written kernel of the ladder, \
                  as achieved TFLOP/s against the memory and compute ceilings measured in the \
                  same run."
        .into();
    if points.is_empty() {
        empty_kind(page, "GEMM", "gemm_bench");
        return;
    }
    page.filters = filters(
        points,
        &["gpu", "dtype", "impl", "shape_set", "model", "b_layout"],
    );
    let rows = GemmRows::new(points);
    let mut s1 = Section::new(
        "roofline",
        "Roofline",
        "Where each kernel sits against the machine's measured limits.",
    );
    s1.charts
        .extend(facets(points, figures::dtype_family, |pts| {
            let r = GemmRows::new(pts);
            roofline::chart(&r.ok, &r.figs, pal)
        }));
    let mut s2 = Section::new("heatmaps", "Heatmaps", "");
    s2.charts.extend(per_gpu_by(points, shape_set, |pts| {
        heatmap::chart(&GemmRows::new(pts))
    }));
    s2.charts.extend(mn_heatmap::charts(&rows.ok, &rows.figs));
    let mut s3 = Section::new(
        "split",
        "Intensity and performance per kernel",
        "The roofline's two axes, one kernel at a time.",
    );
    s3.charts.push(per_kernel::intensity(&rows));
    s3.charts.push(per_kernel::performance(&rows));
    let mut s4 = Section::new("comparison", "Speedup and the ladder", "");
    s4.charts
        .extend(per_gpu(points, |pts| speedup::chart(&GemmRows::new(pts))));
    s4.charts
        .push(vs_cublas::ladder_chart(&rows.ok, &rows.figs, pal));
    s4.tables.extend(not_ok_table(points));
    page.sections = vec![s1, s2, s3, s4];
}
