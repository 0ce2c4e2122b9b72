//! The LLM kernel-trace page (`llm_bench --trace`, kind `llm_trace`): a timeline of the
//! prefill and of one decode step from the compact trace beside the artifact, the time per
//! operation class and per layer, and the idle share of each step.

mod activity;
mod by_class;
mod classes;
mod file;
mod idle;
mod layers;
mod rows;
mod short_name;
mod timeline;

use super::common::{empty_kind, not_ok_table, Section};
use super::PageContext;
use crate::site::chart::Dims;
use crate::site::points::Point;
use rows::TraceRows;

pub fn build(page: &mut PageContext, points: &[Point]) {
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
    let rows = TraceRows::new(points);
    page.intro = rows.intro();
    let s_tl = timeline::section(&rows, &page.site.artifacts_dir);
    let mut s_cls = Section::new(
        "classes",
        "Time per operation class",
        "GPU time of each operation class per phase, stacked, plus the idle time, so the \
         whole bar is the step's traced wall time.",
    );
    s_cls.charts.push(by_class::chart(points));
    s_cls.charts.push(idle::chart(&rows));
    s_cls.tables.extend(idle::steps_table(&rows));
    let mut s_layer = Section::new(
        "layers",
        "Time per layer",
        "GPU time per layer (embedding, decoder layers, head), stacked by operation class.",
    );
    s_layer.charts = layers::charts(points);
    let d: Vec<Dims> = [&s_tl, &s_cls, &s_layer]
        .iter()
        .flat_map(|s| &s.charts)
        .flat_map(|c| {
            c.traces
                .iter()
                .flat_map(|t| t.points.iter().map(|p| p.f.clone()))
        })
        .collect();
    page.filters = crate::site::filters::collect(d.iter(), &["class"]);
    let mut sections = vec![s_tl, s_cls, s_layer];
    if let Some(t) = not_ok_table(points) {
        let mut s = Section::new("failed", "Failed and skipped points", "");
        s.tables.push(t);
        sections.push(s);
    }
    page.sections = sections;
}
