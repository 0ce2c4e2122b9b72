//! A page for an artifact kind the dashboard has no dedicated charts for: P50 per point and
//! every result as a table.

use super::super::chart::{pt_cat, ChartView, Trace, TraceSet};
use super::super::fmt;
use super::super::measured;
use super::super::names;
use super::super::palette::Palette;
use super::super::points::Point;
use super::common::*;
use super::PageContext;

pub fn build(page: &mut PageContext, kind: &str, points: &[Point], pal: &Palette) {
    page.intro = format!(
        "Results of kind {kind:?}. This dashboard has no dedicated charts for this kind yet: \
         below, the main timing of every point and all recorded figures."
    );
    page.filters = filters(points, &["gpu", "model", "dtype", "batch", "impl", "mode"]);
    let multi = multi_gpu(points);
    let label = |p: &Point| format!("{} {}", p.row.benchmark, params_text(p));
    let mut c = ChartView::new(
        "generic-p50",
        "P50 of the main timing per point",
        "The median of each point's first time statistic (time_us when present), converted \
         to microseconds, as a dot; whiskers P5 to P95. Log scale.",
        "benchmark and params",
        "time (µs)",
    );
    c.log_y = true;
    let mut set = TraceSet::default();
    for p in points.iter().filter(|p| p.ok()) {
        let Some((k, s)) = names::primary_stat(p.row) else {
            continue;
        };
        let f = names::to_us(k);
        let hover = format!(
            "{}\n{}\n{k}: P50 {} (P5 {}, P95 {}, n={})\n{}",
            p.imp(),
            label(p),
            fmt::num(s.p50),
            fmt::num(s.p5),
            fmt::num(s.p95),
            s.n,
            p.gpu()
        );
        let mut pt = pt_cat(&label(p), s.p50 * f, hover, p.dims());
        pt.lo = Some(s.p5 * f);
        pt.hi = Some(s.p95 * f);
        let name = series(p.imp(), p, multi);
        set.get(&name, || Trace::new(&name, pal.of(p.imp()), "markers"))
            .points
            .push(pt);
    }
    c.traces = set.into_vec();
    let c = c
        .measured(points, measured::MEDIAN_P5_P95)
        .finish("No point of this kind carries a time statistic.");
    let mut s = Section::new("results", "Results", "");
    s.charts.push(c);
    s.tables
        .extend(other_rows_table("all-results", "Every result", points));
    page.sections = vec![s];
}
