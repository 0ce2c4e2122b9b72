//! The collectives card: our all-reduce against NCCL's for small messages (up to 256 KiB,
//! where latency decides), as the median over sizes of NCCL's P50 time over ours, measured in
//! the same run, at the largest world size both ran.

use super::cards::{gpu_dims, link};
use crate::site::fmt;
use crate::site::pages::comm::{comm_rows, CommRow, SMALL_MAX_BYTES};
use crate::site::pages::spread::Spread;
use crate::site::pages::Card;
use crate::site::points::Point;
use std::collections::BTreeMap;

/// Our all-reduce implementation's name in comm artifacts, and the reference it is held to.
const OURS: &str = "opbench";
const REFERENCE: &str = "nccl";

/// (run, world size, bytes, dtype): one measured problem of one run.
type Problem = (String, u64, u64, String);

fn problem(r: &CommRow) -> Problem {
    (
        r.p.artifact().run.id.clone(),
        r.ranks,
        r.bytes as u64,
        r.p.dtype().unwrap_or_default(),
    )
}

/// NCCL time / ours per problem both measured in one run, at the largest world size.
fn ratios(rows: &[CommRow]) -> Option<(u64, Vec<f64>)> {
    let small = |r: &&CommRow| r.collective == "all_reduce" && r.bytes <= SMALL_MAX_BYTES;
    let of = |name: &str| -> BTreeMap<Problem, f64> {
        rows.iter()
            .filter(small)
            .filter(|r| r.p.imp() == name)
            .map(|r| (problem(r), r.p50_us))
            .collect()
    };
    let (ours, reference) = (of(OURS), of(REFERENCE));
    let both: Vec<(&Problem, f64)> = ours
        .iter()
        .filter_map(|(k, o)| Some((k, reference.get(k)? / o)))
        .filter(|(_, r)| r.is_finite() && *r > 0.0)
        .collect();
    let ranks = both.iter().map(|(k, _)| k.1).max()?;
    let v = both
        .iter()
        .filter(|(k, _)| k.1 == ranks)
        .map(|(_, r)| *r)
        .collect();
    Some((ranks, v))
}

/// The card of one GPU's comm points.
pub fn card(gpu: &str, pts: &[Point], _all: &[Point]) -> Option<Card> {
    let rows = comm_rows(pts);
    let (ranks, v) = ratios(&rows)?;
    let s = Spread::of(&v)?;
    let ahead = v.iter().filter(|r| **r > 1.0).count();
    Some(Card {
        title: "All-reduce, small messages: ours vs NCCL".into(),
        value: format!("{} NCCL's speed", fmt::times(s.median)),
        stat: format!(
            "median over {} sizes (up to 256 KiB) and dtypes of NCCL's P50 time / ours; {}",
            s.n,
            s.interval(fmt::times)
        ),
        details: vec![
            format!("faster than NCCL at {ahead} of {} sizes and dtypes", s.n),
            format!("{ranks} GPUs, both in the same run"),
            gpu.to_string(),
        ],
        link: link("comm.html", "comm-small", gpu),
        f: gpu_dims(gpu),
        muted: false,
    })
}
