//! "P50 time over X × Y": one heatmap per GPU, kernel and block over the two main parameters.

use super::fields::{block, dims, hover, num_label, p50, param_of};
use crate::site::chart::{Cell, ChartKind, ChartView};
use crate::site::fmt;
use crate::site::measured;
use crate::site::pages::common::slug;
use crate::site::points::Point;
use crate::site::rules::short_gpu;
use std::collections::BTreeMap;

/// One heatmap per (kernel, block) of the timed points `ok`, ids `kern-heat-0`, ...; none
/// unless two parameters are swept.
/// `ok` is one GPU's; with `multi` (several GPUs on the page) ids and titles name it and each
/// chart carries it as a filter coordinate.
pub fn charts(ok: &[Point], axes: &[String], multi: bool) -> Vec<ChartView> {
    if axes.len() < 2 {
        return Vec::new();
    }
    let mut groups: BTreeMap<(String, String), Vec<Point>> = BTreeMap::new();
    for p in ok {
        groups
            .entry((p.imp().to_string(), block(p)))
            .or_default()
            .push(*p);
    }
    groups
        .iter()
        .enumerate()
        .map(|(i, ((imp, blk), pts))| {
            let mut c = chart(i, imp, blk, pts, &axes[0], &axes[1]);
            if let (true, Some(p)) = (multi, pts.first()) {
                let short = short_gpu(&p.gpu());
                c.id = format!("{}-{}", c.id, slug(&short));
                c.title = format!("{short}: {}", c.title);
                c.f.insert("gpu".into(), p.gpu());
            }
            c
        })
        .collect()
}

fn chart(i: usize, imp: &str, blk: &str, pts: &[Point], ax: &str, ay: &str) -> ChartView {
    let mut c = ChartView::new(
        &format!("kern-heat-{i}"),
        &format!("{imp} (block {blk}): P50 time over {ax} × {ay}"),
        &format!(
            "Colour and label: P50 of time_us in µs (log colour scale) at each \
             ({ax}, {ay}). Where other parameters take several values, a cell shows \
             the slowest of them: narrow with the parameter set filter."
        ),
        ax,
        ay,
    );
    c.kind = ChartKind::Heatmap;
    c.z_title = "P50 time (µs)".into();
    c.log_z = true;
    c.compact = true;
    let mut xs: Vec<f64> = Vec::new();
    let mut ys: Vec<f64> = Vec::new();
    for p in pts {
        let (Some(x), Some(y), Some(t)) = (param_of(p, ax), param_of(p, ay), p50(p)) else {
            continue;
        };
        xs.push(x);
        ys.push(y);
        c.cells.push(Cell {
            x: num_label(x),
            y: num_label(y),
            z: t,
            label: fmt::num(t),
            hover: hover(p),
            f: dims(p),
        });
    }
    let order = |mut v: Vec<f64>| -> Vec<String> {
        v.sort_by(|a, b| a.total_cmp(b));
        v.dedup();
        v.into_iter().map(num_label).collect()
    };
    c.x_order = order(xs);
    c.y_order = order(ys);
    c.measured(pts, measured::MEDIAN)
        .finish("No timed point of this kernel.")
}
