//! "candle and transformers side by side": decode tokens/s of every implementation of one
//! problem in one x category, so peers stand next to each other.

use super::config::base_config;
use super::config::config_key;
use crate::identity;
use crate::site::chart::{pt_cat, ChartView, Trace, TraceSet};
use crate::site::fmt;
use crate::site::measured;
use crate::site::names;
use crate::site::pages::common::{gpu_pattern, gpus, multi_gpu, ordered_categories, series};
use crate::site::palette::Palette;
use crate::site::points::Point;
use std::collections::HashMap;

/// The chart. The x label is built from problem parameters only (`base_config`), never from
/// run settings, so every implementation of one problem lands in the same category. Where a
/// run holds several rows of one identity and GPU (the same decode with and without memory
/// sampling), the first is drawn, as the history does; the hover names its settings.
pub fn chart(decode: &[Point], pal: &Palette) -> ChartView {
    let mut c = ChartView::new(
        "llm-peer",
        "candle and transformers side by side",
        "Decode tokens/s of each implementation on the same problem (model, dtype, batch, \
         prompt + new tokens); hover gives the ratio to each peer and the run settings.",
        "configuration",
        "decode tokens/s",
    );
    let multi = multi_gpu(decode);
    let gpu_list = gpus(decode);
    let mut first: HashMap<(String, String, String), Point> = HashMap::new();
    let mut drawn: Vec<Point> = Vec::new();
    for p in decode.iter().filter(|p| names::decode_tps(p.row).is_some()) {
        let key = (p.gpu(), p.identity().problem(), p.imp().to_string());
        if let std::collections::hash_map::Entry::Vacant(e) = first.entry(key) {
            e.insert(*p);
            drawn.push(*p);
        }
    }
    let tps_of = |gpu: &str, problem: &str, imp: &str| {
        first
            .get(&(gpu.to_string(), problem.to_string(), imp.to_string()))
            .and_then(|q| names::decode_tps(q.row))
    };
    let mut imps: Vec<&str> = drawn.iter().map(|p| p.imp()).collect();
    imps.sort_unstable();
    imps.dedup();
    let mut cats = Vec::new();
    let mut set = TraceSet::default();
    for p in &drawn {
        let v = names::decode_tps(p.row).unwrap_or(f64::NAN);
        let x = base_config(p);
        cats.push((config_key(p), x.clone()));
        let (gpu, problem) = (p.gpu(), p.identity().problem());
        let mut lines = vec![
            format!("{} · {}", p.imp(), p.row.benchmark),
            x.clone(),
            format!("{} tokens/s", fmt::num(v)),
        ];
        for other in imps.iter().filter(|i| **i != p.imp()) {
            if let Some(o) = tps_of(&gpu, &problem, other) {
                lines.push(format!("{} of {other}", fmt::times(v / o)));
            }
        }
        let settings = identity::settings_text(&p.artifact().kind, &p.row.params);
        if !settings.is_empty() {
            lines.push(format!("settings: {settings}"));
        }
        lines.push(gpu.clone());
        let name = series(p.imp(), p, multi);
        set.get(&name, || {
            let mut t = Trace::new(&name, pal.of(p.imp()), "bar");
            t.pattern = gpu_pattern(p, &gpu_list);
            t
        })
        .points
        .push(pt_cat(&x, v, lines.join("\n"), p.dims()));
    }
    c.x_order = ordered_categories(cats);
    c.traces = set.into_vec();
    c.measured(decode, measured::MEDIAN_RATE)
        .finish("No decode point carries tokens/s.")
}
