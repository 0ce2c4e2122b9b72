//! The LayerNorm page's context: the rows, their labels in order, the peers, and the series
//! helper the bar charts share.

use super::fields::{label, sort_key};
use crate::site::chart::{Pt, Trace, TraceSet};
use crate::site::pages::common::{
    distinguishing, gpu_pattern, gpus, multi_gpu, ordered_categories, peer_index, peer_key, series,
    with_extra, Distinguishing,
};
use crate::site::palette::Palette;
use crate::site::points::Point;
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
}
