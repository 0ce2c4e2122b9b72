//! The LayerNorm card: our kernel's speedup over candle, the median over every point measured
//! on one GPU with its P5–P95 spread.

use super::cards::{gpu_dims, link};
use crate::site::fmt;
use crate::site::names;
use crate::site::pages::common::{p50_us, peer_index, peer_key};
use crate::site::pages::layernorm::peers_table;
use crate::site::pages::spread::Spread;
use crate::site::pages::Card;
use crate::site::points::Point;
use std::collections::BTreeMap;

/// Each of our points with its speedup over the baseline at the same point (the ratio of the
/// two P50 times; the artifact's own figure when recorded).
fn speedups<'a>(pts: &[Point<'a>], base: &str) -> Vec<(f64, Point<'a>)> {
    let peers = peer_index(pts, peer_key);
    pts.iter()
        .filter(|p| p.ok() && !crate::identity::is_library(p.imp()))
        .filter_map(|p| {
            let v = names::metric(p.row, names::SPEEDUP_LN).or_else(|| {
                let b = peers
                    .get(&(peer_key(p), base.to_string()))
                    .and_then(p50_us)?;
                Some(b / p50_us(p)?)
            })?;
            v.is_finite().then_some((v, *p))
        })
        .collect()
}

/// The card of one GPU's LayerNorm points: the implementation of ours measured at the most
/// points.
pub fn card(gpu: &str, pts: &[Point], _all: &[Point]) -> Option<Card> {
    let base = names::LN_BASELINE[0];
    let mut by_imp: BTreeMap<&str, Vec<(f64, Point)>> = BTreeMap::new();
    for (v, p) in speedups(pts, base) {
        by_imp.entry(p.imp()).or_default().push((v, p));
    }
    let (imp, sp) = by_imp.into_iter().max_by_key(|(_, v)| v.len())?;
    let values: Vec<f64> = sp.iter().map(|(v, _)| *v).collect();
    let s = Spread::of(&values)?;
    let faster = values.iter().filter(|v| **v > 1.0).count();
    let mut details = vec![format!("faster than {base} at {faster} of {} points", s.n)];
    // Against the copy ceiling where data comes from DRAM: the cold-L2 points, the median
    // per dtype, as the history page's LayerNorm charts draw it.
    let mut pct: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for (_, p) in sp
        .iter()
        .filter(|(_, p)| names::param_str(p.row, names::MODE).as_deref() == Some("cold"))
    {
        if let Some(v) = names::metric(p.row, names::PCT_COPY) {
            pct.entry(p.dtype().unwrap_or_else(|| "-".into()))
                .or_default()
                .push(v);
        }
    }
    let per_dtype: Vec<String> = pct
        .iter()
        .filter_map(|(d, v)| Some(format!("{d} {}", fmt::pct(Spread::of(v)?.median))))
        .collect();
    if !per_dtype.is_empty() {
        details.push(format!(
            "cold L2, median % of the copy bandwidth: {}",
            per_dtype.join(", ")
        ));
    }
    // Against the strongest peer of the same run where bandwidth decides: 64 MiB and more.
    let ok: Vec<Point> = pts.iter().filter(|p| p.ok()).copied().collect();
    let large = peers_table::against_fastest_peer(&ok);
    if let Some(t) = peers_table::tally(&large).get(gpu) {
        details.push(format!(
            "ahead of the fastest of its peers (torch, torch.compile, Triton, candle) at {} of \
             64 MiB and more{}",
            t.text(),
            t.left_out()
        ));
    }
    details.push(gpu.to_string());
    Some(Card {
        title: format!("LayerNorm speedup: {imp} vs {base}"),
        value: fmt::times(s.median),
        stat: format!(
            "median over {} shapes, dtypes and L2 modes of the P50-time ratio; {}",
            s.n,
            s.interval(fmt::times)
        ),
        details,
        link: link("layernorm.html", "ln-speedup", gpu),
        f: gpu_dims(gpu),
        muted: false,
    })
}
