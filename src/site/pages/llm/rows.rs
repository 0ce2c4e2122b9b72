//! The LLM page's context: the charted rows, their configuration labels and the hover and
//! series helpers the bar charts share.

use super::config::{base_config, config_key, is_charted};
use crate::site::chart::{Pt, Trace, TraceSet};
use crate::site::names;
use crate::site::pages::common::{
    distinguishing, gpu_pattern, gpus, multi_gpu, ordered_categories, with_extra, Distinguishing,
};
use crate::site::palette::Palette;
use crate::site::points::Point;

pub struct LlmRows<'a> {
    /// The ok rows with something this page charts.
    pub charted: Vec<Point<'a>>,
    /// The charted rows with a decode rate.
    pub decode: Vec<Point<'a>>,
    /// Configuration labels in order: model size, dtype, batch, prompt, new tokens.
    pub configs: Vec<String>,
    /// More than one GPU: series names carry the GPU.
    pub multi: bool,
    pub gpu_list: Vec<String>,
    extras: Distinguishing,
}

impl<'a> LlmRows<'a> {
    pub fn new(points: &[Point<'a>]) -> Self {
        let charted: Vec<Point> = points
            .iter()
            .filter(|p| p.ok() && is_charted(p))
            .copied()
            .collect();
        let extras = distinguishing(&charted, base_config);
        let mut rows = LlmRows {
            decode: charted
                .iter()
                .filter(|p| names::decode_tps(p.row).is_some())
                .copied()
                .collect(),
            configs: Vec::new(),
            multi: multi_gpu(points),
            gpu_list: gpus(points),
            extras,
            charted,
        };
        rows.configs = ordered_categories(
            rows.charted
                .iter()
                .map(|p| (config_key(p), rows.config(p)))
                .collect(),
        );
        rows
    }

    /// A row's configuration label, with what tells it apart from a same-label row.
    pub fn config(&self, p: &Point) -> String {
        with_extra(base_config(p), p, &self.extras)
    }

    /// Implementation and benchmark, configuration, the `extra` lines, GPU.
    pub fn hover(&self, p: &Point, extra: &[String]) -> String {
        let mut lines = vec![format!("{} · {}", p.imp(), p.row.benchmark), self.config(p)];
        lines.extend(extra.iter().cloned());
        lines.push(p.gpu());
        lines.join("\n")
    }

    /// Adds `pt` to the series `name`, created in the implementation's colour with a fill
    /// pattern per GPU after the first.
    pub fn push(&self, set: &mut TraceSet, name: &str, p: &Point, pal: &Palette, pt: Pt) {
        set.get(name, || {
            let mut t = Trace::new(name, pal.of(p.imp()), "bar");
            t.pattern = gpu_pattern(p, &self.gpu_list);
            t
        })
        .points
        .push(pt);
    }

    /// Adds `pt` to the dot series `name` (for log axes, where a bar's length would mean
    /// nothing), in the implementation's colour with a marker symbol per GPU.
    pub fn push_dot(&self, set: &mut TraceSet, name: &str, p: &Point, pal: &Palette, pt: Pt) {
        let i = self
            .gpu_list
            .iter()
            .position(|g| *g == p.gpu())
            .unwrap_or(0);
        set.get(name, || {
            let mut t = Trace::new(name, pal.of(p.imp()), "markers");
            t.symbol = Some(crate::site::rules::gpu_symbol(i).to_string());
            t
        })
        .points
        .push(pt);
    }
}
