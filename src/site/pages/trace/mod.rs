//! The LLM kernel-trace page (`llm_bench --trace`, kind `llm_trace`): each traced
//! implementation (candle, opbench) side by side: kernels per step and idle share, the time per
//! operation class and per layer, and timelines of one decode step and of the prefill from the
//! compact trace beside the artifact.

mod activity;
mod by_class;
pub mod classes;
mod compare;
mod file;
mod idle;
mod layers;
mod rows;
mod short_name;
mod timeline;

use super::common::{empty_kind, not_ok_table, Section};
use super::PageContext;
use crate::site::chart::Dims;
use crate::site::palette::Palette;
use crate::site::points::Point;
use rows::TraceRows;

pub fn build(page: &mut PageContext, points: &[Point], palette: &Palette) {
    if points.is_empty() {
        empty_kind(
            page,
            "LLM kernel-trace (llm_bench --trace)",
            "llm_bench -- --trace",
        );
        page.intro = "Where a decode step's time goes, kernel by kernel: recorded with \
                      `llm_bench --trace` (CUPTI)."
            .into();
        return;
    }
    let rows = TraceRows::new(points, palette);
    page.intro = rows.intro();
    let mut s_steps = Section::new(
        "steps",
        "Kernels per step and idle share",
        "Each implementation's traced steps side by side: how many kernels a step launches and \
         how much of the step's wall time the GPU ran nothing.",
    );
    s_steps.tables = compare::tables(&rows);
    s_steps.charts.push(idle::kernels_chart(&rows));
    s_steps.charts.push(idle::chart(&rows));
    s_steps.tables.extend(idle::steps_table(&rows));
    let mut s_cls = Section::new(
        "classes",
        "Time per operation class",
        "Per phase, each implementation's GPU time per operation class, stacked, plus the idle \
         time, so a bar is the step's traced wall time.",
    );
    s_cls.charts = by_class::charts(&rows);
    let mut s_layer = Section::new(
        "layers",
        "Time per layer",
        "GPU time per layer (embedding, decoder layers, head): the implementations side by \
         side, then each stacked by operation class.",
    );
    s_layer.charts = layers::charts(&rows);
    let s_tl = timeline::section(&rows, &page.site.artifacts_dir);
    let d: Vec<Dims> = [&s_steps, &s_cls, &s_layer, &s_tl]
        .iter()
        .flat_map(|s| &s.charts)
        .flat_map(|c| {
            c.traces
                .iter()
                .flat_map(|t| t.points.iter().map(|p| p.f.clone()))
        })
        .collect();
    page.filters = crate::site::filters::collect(d.iter(), &["impl", "class"]);
    let mut sections = vec![s_steps, s_cls, s_layer, s_tl];
    if let Some(t) = not_ok_table(points) {
        let mut s = Section::new("failed", "Failed and skipped points", "");
        s.tables.push(t);
        sections.push(s);
    }
    page.sections = sections;
}
