//! The LayerNorm page: baseline vs ours per shape, speedup, GB/s against the copy ceiling,
//! and the correctness of every point.

mod bandwidth;
mod correctness;
mod fields;
mod latency;
pub mod peers_table;
mod rows;
mod speedup;

use super::common::{empty_kind, filters, not_ok_table, Section};
use super::PageContext;
use crate::site::palette::Palette;
use crate::site::points::Point;
use rows::LnRows;

pub fn build(page: &mut PageContext, points: &[Point], pal: &Palette) {
    page.intro = "LayerNorm forward: opbench's kernel against candle's layer_norm (the \
                  baseline), torch's F.layer_norm, torch.compile and a one-pass Triton kernel, \
                  all timed the same way in the same call, at each shape, dtype and L2 mode, \
                  with the achieved bandwidth as a fraction of the device-to-device copy \
                  ceiling measured in the same run."
        .into();
    if points.is_empty() {
        empty_kind(page, "LayerNorm", "layernorm_bench");
        return;
    }
    page.filters = filters(points, &["gpu", "dtype", "impl", "mode"]);
    let rows = LnRows::new(points);
    let mut s1 = Section::new(
        "latency",
        "Latency and speedup",
        "Lower time is better; one panel per dtype and L2 mode, each dot or bar one shape.",
    );
    s1.charts.extend(latency::charts(&rows, pal));
    s1.charts.extend(speedup::charts(&rows, pal));
    let mut s2 = Section::new(
        "bandwidth",
        "Bandwidth",
        "LayerNorm reads x and writes y once: it is memory-bound, so the copy ceiling is its floor.",
    );
    s2.charts.extend(bandwidth::charts(&rows, pal));
    s2.tables.extend(peers_table::table(&rows));
    let mut s3 = Section::new("correctness", "Correctness", "");
    s3.charts.push(correctness::chart(&rows, pal));
    s3.tables.extend(not_ok_table(points));
    page.sections = vec![s1, s2, s3];
}
