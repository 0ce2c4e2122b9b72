//! "Speedup against the baseline kernel": each kernel at its fastest block, per parameter set.

use super::fields::{hover, p50, pset_text, sweep};
use crate::site::chart::{pt_cat, ChartKind, ChartView, Dims, HLine, Trace, TraceSet};
use crate::site::measured;
use crate::site::pages::common::{ordered_categories, series};
use crate::site::palette::Palette;
use crate::site::points::Point;
use std::collections::BTreeMap;

/// The fastest block of each (GPU, parameter set, kernel).
pub fn fastest<'a>(ok: &[Point<'a>]) -> BTreeMap<(String, String, String), Point<'a>> {
    let mut best: BTreeMap<(String, String, String), Point> = BTreeMap::new();
    for p in ok {
        let key = (p.gpu(), pset_text(p, &[]), p.imp().to_string());
        let better = best
            .get(&key)
            .is_none_or(|q| p50(p).unwrap_or(f64::MAX) < p50(q).unwrap_or(f64::MAX));
        if better {
            best.insert(key, *p);
        }
    }
    best
}

pub fn chart(ok: &[Point], multi: bool, pal: &Palette) -> ChartView {
    let best = fastest(ok);
    let mut c = ChartView::new(
        "kern-speedup",
        "Speedup against the baseline kernel",
        "y: P50(baseline) / P50(kernel) at the same parameter set and GPU, each kernel at \
         its fastest block; the table holds the P50 times.",
        "parameter set",
        "speedup (×)",
    );
    c.kind = ChartKind::Speedup;
    // Baseline default: the slowest kernel overall (the seed's naive kernel).
    let mut total: BTreeMap<&str, f64> = BTreeMap::new();
    for p in best.values() {
        *total.entry(p.imp()).or_default() += p50(p).unwrap_or(0.0);
    }
    let mut bl: Vec<(&str, f64)> = total.into_iter().collect();
    bl.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
    c.baselines = bl.iter().map(|(k, _)| k.to_string()).collect();
    let mut set = TraceSet::default();
    let mut cats: Vec<(Vec<f64>, String)> = Vec::new();
    for p in best.values() {
        let label = pset_text(p, &[]);
        cats.push((sweep(p).iter().map(|(_, v)| *v).collect(), label.clone()));
        let mut pt = pt_cat(&label, p50(p).unwrap_or(f64::NAN), hover(p), p.dims());
        pt.g = Some(format!("{}\u{1f}{label}", p.gpu()));
        let name = series(p.imp(), p, multi);
        set.get(&name, || Trace::new(&name, pal.of(p.imp()), "bar"))
            .points
            .push(pt);
    }
    c.x_order = ordered_categories(cats);
    c.traces = set.into_vec();
    c.hlines.push(HLine {
        y: 1.0,
        label: "same as baseline".into(),
        color: "#6b7280".into(),
        f: Dims::new(),
    });
    c.measured(ok, measured::RATIO_OF_MEDIANS)
        .finish("No timed points to compare.")
}
