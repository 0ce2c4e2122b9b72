//! The LLM decode card: the largest model measured at the smallest batch, its median decode
//! rate with the P5–P95 of single decode steps, against the bandwidth bound and its peers.

use super::cards::{gpu_dims, link};
use crate::site::fmt;
use crate::site::names;
use crate::site::pages::common::peer_key;
use crate::site::pages::spread::Spread;
use crate::site::pages::Card;
use crate::site::points::Point;
use std::collections::BTreeMap;

/// Ours (not a peer such as transformers) at the smallest batch and the largest model there;
/// of several implementations, the one with the highest median rate.
fn headline<'a>(pts: &[Point<'a>]) -> Option<Point<'a>> {
    let decode: Vec<&Point> = pts
        .iter()
        .filter(|p| p.ok() && !names::is_llm_peer(p.imp()) && names::decode_tps(p.row).is_some())
        .collect();
    let min_batch = decode
        .iter()
        .filter_map(|p| names::param_f64(p.row, names::BATCH))
        .reduce(f64::min);
    let key = |p: &Point| {
        (
            names::param_f64(p.row, names::PARAMS_COUNT).unwrap_or(0.0),
            names::decode_tps(p.row).unwrap_or(0.0),
        )
    };
    decode
        .into_iter()
        .filter(|p| names::param_f64(p.row, names::BATCH) == min_batch)
        .max_by(|a, b| {
            let (ka, kb) = (key(a), key(b));
            ka.0.total_cmp(&kb.0).then(ka.1.total_cmp(&kb.1))
        })
        .copied()
}

/// "P5–P95 of single steps 793 – 890 tokens/s": batch / step time at the step's P95 and P5.
fn step_interval(p: &Point) -> Option<String> {
    let (k, s) = names::stat(p.row, names::DECODE_STEP)?;
    let batch = names::param_f64(p.row, names::BATCH).unwrap_or(1.0);
    let rate = |t: f64| batch * 1e6 / (t * names::to_us(k));
    let lo = rate(s.p95);
    let hi = rate(s.p5);
    Some(format!(
        "P5–P95 of single steps {} – {} tokens/s",
        fmt::num(lo),
        fmt::num(hi)
    ))
}

/// The card of one GPU's LLM points.
pub fn card(gpu: &str, pts: &[Point], _all: &[Point]) -> Option<Card> {
    let p = headline(pts)?;
    let r = p.row;
    let tps = names::decode_tps(r)?;
    let bound = names::metric(r, names::BOUND_TPS);
    let pct = names::metric(r, names::PCT_BOUND).or_else(|| Some(100.0 * tps / bound?));
    let mut details = vec![format!(
        "{} · {} {} batch {}",
        p.imp(),
        names::param_str(r, names::MODEL).unwrap_or_default(),
        p.dtype().unwrap_or_default(),
        names::param_str(r, names::BATCH).unwrap_or_else(|| "?".into())
    )];
    details.push(match (pct, bound) {
        (Some(pc), Some(b)) => format!(
            "{} of the bandwidth bound ({} tokens/s)",
            fmt::pct(pc),
            fmt::num(b)
        ),
        (Some(pc), None) => format!("{} of the bandwidth bound", fmt::pct(pc)),
        _ => "bandwidth bound not recorded".into(),
    });
    // Each peer's median rate at the same problem (several rows: the median of them), from
    // the headline's own run only: a peer measured in another run (another board, host or
    // day) is never shown as a ratio.
    let key = peer_key(&p);
    let run_id = &p.artifact().run.id;
    let mut peers: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for q in pts.iter().filter(|q| {
        q.ok()
            && names::is_llm_peer(q.imp())
            && peer_key(q) == key
            && &q.artifact().run.id == run_id
    }) {
        peers
            .entry(q.imp())
            .or_default()
            .extend(names::decode_tps(q.row));
    }
    for (imp, v) in peers {
        if let Some(s) = Spread::of(&v) {
            details.push(format!(
                "{imp}: {} tokens/s (ours {})",
                fmt::num(s.median),
                fmt::times(tps / s.median)
            ));
        }
    }
    details.push(gpu.to_string());
    let runs = names::stat(r, names::E2E).map(|(_, s)| s.n);
    Some(Card {
        title: "LLM decode".into(),
        value: format!("{} tokens/s", fmt::num(tps)),
        stat: format!(
            "median of {} runs' decode rates; {}",
            runs.map_or("the".into(), |n| n.to_string()),
            step_interval(&p).unwrap_or_else(|| "no step statistics".into())
        ),
        details,
        link: link("llm.html", "llm-bound", gpu),
        f: gpu_dims(gpu),
        muted: false,
    })
}
