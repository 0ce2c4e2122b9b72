//! The LayerNorm page's context: the rows, their labels in order, the peers, the panels (one
//! per dtype and L2 mode) and the series helpers the charts share.

use super::fields::{label, panel, shape, sort_key};
use crate::site::chart::{ChartView, Dims, Pt, Trace, TraceSet};
use crate::site::pages::common::{
    distinguishing, facets, gpu_pattern, gpus, multi_gpu, ordered_categories, peer_index, peer_key,
    series, with_extra, Distinguishing,
};
use crate::site::palette::Palette;
use crate::site::points::Point;
use crate::site::rules::gpu_symbol;
use std::collections::HashMap;

pub struct LnRows<'a, 'p> {
    pub points: &'p [Point<'a>],
    pub ok: Vec<Point<'a>>,
    /// Labels by dtype, L2 mode and size.
    pub x_order: Vec<String>,
    /// (peer key, implementation) -> ok point.
    pub peers: HashMap<(String, String), Point<'a>>,
    /// More than one GPU: series names carry the GPU.
    pub multi: bool,
    gpu_list: Vec<String>,
    extras: Distinguishing,
}

impl<'a, 'p> LnRows<'a, 'p> {
    pub fn new(points: &'p [Point<'a>]) -> Self {
        let mut rows = LnRows {
            points,
            ok: points.iter().filter(|p| p.ok()).copied().collect(),
            x_order: Vec::new(),
            peers: peer_index(points, peer_key),
            multi: multi_gpu(points),
            gpu_list: gpus(points),
            extras: distinguishing(points, label),
        };
        rows.x_order =
            ordered_categories(points.iter().map(|p| (sort_key(p), rows.lab(p))).collect());
        rows
    }

    /// A row's label, with what tells it apart from a same-label row.
    pub fn lab(&self, p: &Point) -> String {
        with_extra(label(p), p, &self.extras)
    }

    /// A row's label inside its panel (the panel names the dtype and L2 mode): the shape, with
    /// what tells it apart from a same-label row.
    pub fn shape_lab(&self, p: &Point) -> String {
        with_extra(shape(p), p, &self.extras)
    }

    /// The shapes of `points` in order, for a panel's x axis.
    pub fn shape_order(&self, points: &[Point]) -> Vec<String> {
        ordered_categories(
            points
                .iter()
                .map(|p| (sort_key(p), self.shape_lab(p)))
                .collect(),
        )
    }

    /// `build` once per dtype and L2 mode with that panel's ok rows (dtypes in their order,
    /// warm before cold), half width so two panels sit side by side; each panel carries its
    /// dtype and mode as chart-wide filter coordinates, so picking one hides the other panels.
    pub fn panels(&self, build: impl Fn(&[Point<'a>]) -> ChartView) -> Vec<ChartView> {
        let mut ok = self.ok.clone();
        ok.sort_by(|a, b| {
            let (ka, kb) = (sort_key(a), sort_key(b));
            ka[0].total_cmp(&kb[0]).then(ka[1].total_cmp(&kb[1]))
        });
        facets(&ok, panel, |rows| {
            let mut c = build(rows);
            c.compact = true;
            if let Some(p) = rows.first() {
                let dims = p.dims();
                let mut f = Dims::new();
                for k in ["dtype", "mode"] {
                    let all_same = rows.iter().all(|q| q.dims().get(k) == dims.get(k));
                    if let (true, Some(v)) = (all_same, dims.get(k)) {
                        f.insert(k.to_string(), v.clone());
                    }
                }
                c.f.extend(f);
            }
            c
        })
    }

    /// Adds `pt` to the row's bar series, created in the implementation's colour with a fill
    /// pattern per GPU after the first.
    pub fn push(&self, set: &mut TraceSet, p: &Point, pal: &Palette, pt: Pt) {
        let name = series(p.imp(), p, self.multi);
        set.get(&name, || {
            let mut t = Trace::new(&name, pal.of(p.imp()), "bar");
            t.pattern = gpu_pattern(p, &self.gpu_list);
            t
        })
        .points
        .push(pt);
    }

    /// Adds `pt` to the row's dot series, created in the implementation's colour with a marker
    /// symbol per GPU (for log axes, where a bar's length would mean nothing).
    pub fn push_dot(&self, set: &mut TraceSet, p: &Point, pal: &Palette, pt: Pt) {
        let name = series(p.imp(), p, self.multi);
        let i = self
            .gpu_list
            .iter()
            .position(|g| *g == p.gpu())
            .unwrap_or(0);
        set.get(&name, || {
            let mut t = Trace::new(&name, pal.of(p.imp()), "markers");
            t.symbol = Some(gpu_symbol(i).to_string());
            t
        })
        .points
        .push(pt);
    }
}
