//! The user-kernel card: the fastest of the kernels measured with kernel_bench against the
//! baseline (the slowest kernel overall, as the speedup chart's default), as the median over
//! parameter sets of baseline P50 / kernel P50, each kernel at its fastest block.

use super::cards::{gpu_dims, link};
use crate::site::fmt;
use crate::site::pages::kernels::fastest;
use crate::site::pages::kernels::fields::p50;
use crate::site::pages::spread::Spread;
use crate::site::pages::Card;
use crate::site::points::Point;
use std::collections::BTreeMap;

/// The card of one GPU's kernel points.
pub fn card(gpu: &str, pts: &[Point], _all: &[Point]) -> Option<Card> {
    let ok: Vec<Point> = pts.iter().filter(|p| p.ok()).copied().collect();
    let best = fastest(&ok);
    // Per kernel: its P50 per parameter set, and its total over all of them.
    let mut by: BTreeMap<&str, BTreeMap<&str, f64>> = BTreeMap::new();
    for ((_, pset, _), p) in &best {
        if let Some(t) = p50(p) {
            by.entry(p.imp()).or_default().insert(pset.as_str(), t);
        }
    }
    if by.len() < 2 {
        return None;
    }
    let total = |m: &BTreeMap<&str, f64>| m.values().sum::<f64>();
    let (baseline, base) = by.iter().max_by(|a, b| total(a.1).total_cmp(&total(b.1)))?;
    // Each other kernel's ratios at the parameter sets it shares with the baseline; the one
    // with the highest median wins (a kernel run at fewer sets is not favoured).
    let (winner, s) = by
        .iter()
        .filter(|(k, _)| *k != baseline)
        .filter_map(|(k, m)| {
            let v: Vec<f64> = m
                .iter()
                .filter_map(|(pset, t)| Some(base.get(pset)? / t))
                .collect();
            Some((*k, Spread::of(&v)?))
        })
        .max_by(|a, b| a.1.median.total_cmp(&b.1.median))?;
    Some(Card {
        title: format!("Your kernels: {winner} vs {baseline}"),
        value: fmt::times(s.median),
        stat: format!(
            "median over {} parameter sets of the P50-time ratio, each kernel at its fastest \
             block; {}",
            s.n,
            s.interval(fmt::times)
        ),
        details: vec![format!("{} kernels measured", by.len()), gpu.to_string()],
        link: link("kernels.html", "kern-speedup", gpu),
        f: gpu_dims(gpu),
        muted: false,
    })
}
