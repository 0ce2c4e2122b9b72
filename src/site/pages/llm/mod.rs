//! The LLM page: latency, throughput, percentiles, prefill vs decode, architectures,
//! efficiency, the transformers peer side by side, and decode against its bandwidth bound.

mod arch;
mod bound;
mod config;
mod efficiency;
mod headline;
mod latency;
mod peer;
mod prefill_decode;
mod rows;
mod throughput;

use super::common::{empty_kind, filters, not_ok_table, other_rows_table, per_gpu, Section};
use super::PageContext;
use crate::site::chart::ChartView;
use crate::site::palette::Palette;
use crate::site::points::Point;
use config::is_charted;
use rows::LlmRows;

pub fn build(page: &mut PageContext, points: &[Point], pal: &Palette) {
    page.intro = "LLM inference on the same configurations and weights: candle, our own decode \
                  path (opbench) and the peers run in the same call (HF transformers eager, \
                  PyTorch with the decode step in a CUDA graph): time to first token, decode \
                  step time and tokens/s, and how far decode is from the bound set by reading \
                  every weight once per step."
        .into();
    if points.is_empty() {
        empty_kind(page, "LLM", "llm_bench");
        return;
    }
    page.filters = filters(points, &["gpu", "model", "dtype", "batch", "impl"]);
    let rows = LlmRows::new(points);
    // Each GPU its own panel: the configurations of one GPU fit on one axis, and a colour
    // stays one implementation.
    let gpu_rows =
        |build: &dyn Fn(&LlmRows) -> ChartView| per_gpu(points, |pts| build(&LlmRows::new(pts)));
    let mut s0 = Section::new(
        "headline",
        "Headline",
        "Per GPU, model and batch: each implementation's decode rate, time to first token, \
         decode step, % of the bandwidth bound and peak memory.",
    );
    s0.tables.extend(headline::table(&rows.charted));
    let mut s1 = Section::new("latency", "Latency", "");
    s1.charts
        .extend(gpu_rows(&|r| latency::latency(&r.charted, pal)));
    for ph in config::PHASES {
        s1.charts
            .extend(gpu_rows(&|r| latency::distribution(&r.charted, ph, pal)));
    }
    let mut s2 = Section::new("throughput", "Throughput", "");
    s2.charts.push(throughput::chart(&rows.decode, pal));
    s2.charts
        .extend(gpu_rows(&|r| prefill_decode::chart(r, pal)));
    s2.charts.extend(gpu_rows(&|r| peer::chart(&r.decode, pal)));
    s2.charts.extend(gpu_rows(&|r| bound::chart(r, pal)));
    let mut s3 = Section::new("models", "Models and efficiency", "");
    s3.charts.push(arch::chart(points));
    s3.charts
        .extend(gpu_rows(&|r| efficiency::per_layer(r, pal)));
    s3.charts
        .extend(gpu_rows(&|r| efficiency::per_param(r, pal)));
    let others: Vec<Point> = points
        .iter()
        .filter(|p| p.ok() && !is_charted(p))
        .copied()
        .collect();
    s3.tables.extend(other_rows_table(
        "llm-other",
        "Other LLM results (parity checks and more)",
        &others,
    ));
    s3.tables.extend(not_ok_table(points));
    page.sections = vec![s0, s1, s2, s3];
}
