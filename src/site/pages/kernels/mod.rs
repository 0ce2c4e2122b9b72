//! The page for user CUDA kernels (`kernel_bench`, kind `kernels`): time heatmap over two
//! parameters, the comparison along one parameter, speedup against a chosen baseline kernel,
//! the ncu profiler metrics per kernel, and the roofline against the run's ceilings.

mod along;
pub mod fields;
mod heatmaps;
mod ncu_table;
mod profile;
mod roofline;
mod rows;
mod speedup;

pub use speedup::fastest;

use super::common::{
    empty_kind, not_ok_table, other_rows_table, per_gpu, per_gpu_by, split_by, Section,
};
use super::PageContext;
use crate::site::palette::Palette;
use crate::site::points::Point;
use rows::KernelRows;

pub fn build(page: &mut PageContext, points: &[Point], pal: &Palette) {
    if points.is_empty() {
        empty_kind(page, "user-kernel (kernel_bench)", "kernel_bench");
        page.intro = "Your own CUDA kernels, swept over their parameters with kernel_bench: \
                      time heatmaps, comparisons along one parameter, speedups, profiler \
                      metrics and the roofline."
            .into();
        return;
    }
    let rows = KernelRows::new(points);
    let (ok, multi) = (&rows.ok, rows.multi);
    page.intro = rows.intro();
    let mut s_time = Section::new(
        "time",
        "Execution time",
        "Each kernel's time over the parameter grid and along one parameter.",
    );
    // Each GPU its own panels: a heatmap cell or a line is one GPU's.
    for (_, gpu_rows) in split_by(ok, |p| p.gpu()) {
        s_time
            .charts
            .extend(heatmaps::charts(&gpu_rows, &rows.axes, multi));
    }
    if let Some(ax) = rows.axes.first() {
        let fixed = |p: &Point| fields::pset_text(p, &[ax.as_str()]);
        s_time
            .charts
            .extend(per_gpu_by(ok, fixed, |pts| along::chart(pts, ax, pal)));
    }
    page.filters = rows.filters(&s_time.charts);
    let mut s_speed = Section::new(
        "speedup",
        "Speedup against a baseline kernel",
        "Choose the baseline kernel: each bar is P50(baseline) / P50(kernel) at the same \
         parameter set, each kernel at its fastest block (above 1: faster than the baseline).",
    );
    s_speed
        .charts
        .extend(per_gpu(ok, |pts| speedup::chart(pts, false, pal)));
    let mut s_prof = Section::new(
        "profile",
        "Nsight Compute metrics",
        "From one extra profiled launch per point (ncu --clock-control none).",
    );
    let prof = rows.profiled();
    s_prof.charts.extend(profile::charts(&prof));
    s_prof.tables.extend(ncu_table::table(&prof));
    let mut s_roof = Section::new(
        "roofline",
        "Roofline",
        "Each point at its arithmetic intensity against the run's measured ceilings.",
    );
    s_roof
        .charts
        .extend(per_gpu(ok, |pts| roofline::chart(pts, false, pal)));
    let mut sections = vec![s_time, s_speed, s_prof, s_roof];
    if let Some(t) = not_ok_table(points) {
        let mut s = Section::new("failed", "Failed and skipped points", "");
        s.tables.push(t);
        sections.push(s);
    }
    let mut all = Section::new("all", "All results", "");
    all.tables
        .extend(other_rows_table("all-results", "Every result", points));
    sections.push(all);
    page.sections = sections;
}
