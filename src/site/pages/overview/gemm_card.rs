//! The GEMM card: one of our kernels against cuBLAS on one GPU, as the median % of cuBLAS over
//! the shapes it ran with its P5–P95 spread (the ladder chart's bar), for the dtype measured
//! at the most shapes; the other dtypes' kernels in one line. Every GPU's card names the same
//! kernel over the same shapes.

use super::cards::{gpu_dims, link};
use crate::site::fmt;
use crate::site::names;
use crate::site::pages::common::gpus;
use crate::site::pages::gemm::figures::shape;
use crate::site::pages::gemm::vs_cublas::{pct_of_rows, per_kernel, KernelVsCublas};
use crate::site::pages::Card;
use crate::site::points::Point;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Per dtype, the kernel whose median is highest on its weakest GPU, among kernels measured on
/// every GPU of the kind (`gpus` of them); the dtype with the most shapes first.
fn best_per_dtype(groups: &[KernelVsCublas], gpus: usize) -> Vec<(String, String)> {
    let mut by: BTreeMap<(String, String), Vec<&KernelVsCublas>> = BTreeMap::new();
    for g in groups {
        by.entry((g.dtype.clone(), g.kernel.clone()))
            .or_default()
            .push(g);
    }
    let mut best: BTreeMap<String, (f64, usize, String)> = BTreeMap::new();
    for ((dtype, kernel), gs) in by.into_iter().filter(|(_, gs)| gs.len() == gpus) {
        let weakest = gs
            .iter()
            .map(|g| g.spread.median)
            .fold(f64::INFINITY, f64::min);
        let shapes = gs.iter().map(|g| g.spread.n).max().unwrap_or(0);
        let e = best
            .entry(dtype)
            .or_insert((f64::NEG_INFINITY, 0, String::new()));
        if weakest > e.0 {
            *e = (weakest, shapes, kernel);
        }
    }
    let mut v: Vec<(usize, String, String)> =
        best.into_iter().map(|(d, (_, n, k))| (n, d, k)).collect();
    v.sort_by_key(|(n, _, _)| std::cmp::Reverse(*n));
    v.into_iter().map(|(_, d, k)| (d, k)).collect()
}

/// The rows of kernels at problems every GPU of `all` measured for that kernel, and every
/// cuBLAS row (the reference): so the cards of two GPUs compare one kernel over one set of
/// shapes.
fn common_rows<'a>(all: &[Point<'a>]) -> Vec<Point<'a>> {
    let n = gpus(all).len();
    let key = |p: &Point| {
        format!(
            "{}\u{1f}{}\u{1f}{}",
            p.imp(),
            shape(p),
            p.dtype().unwrap_or_default()
        )
    };
    let mut on: HashMap<String, BTreeSet<String>> = HashMap::new();
    for p in all.iter().filter(|p| p.ok()) {
        on.entry(key(p)).or_default().insert(p.gpu());
    }
    all.iter()
        .filter(|p| p.ok())
        .filter(|p| names::is_cublas(p.imp()) || on.get(&key(p)).is_some_and(|g| g.len() == n))
        .copied()
        .collect()
}

/// The card of one GPU's GEMM points (`pts`), the kernel chosen over every GPU's (`all`).
pub fn card(gpu: &str, _pts: &[Point], all: &[Point]) -> Option<Card> {
    let ok = common_rows(all);
    let pct = pct_of_rows(&ok);
    let mut groups = per_kernel(&ok, |i| pct[i]);
    groups.retain(|g| !crate::identity::is_library(&g.kernel));
    let picks = best_per_dtype(&groups, gpus(all).len());
    let mine = |(d, k): &(String, String)| {
        groups
            .iter()
            .find(|g| g.gpu == gpu && g.dtype == *d && g.kernel == *k)
    };
    let head = mine(picks.first()?)?;
    let s = head.spread;
    let mut details = Vec::new();
    let others: Vec<String> = picks[1..]
        .iter()
        .filter_map(mine)
        .map(|b| format!("{} {}: {}", b.dtype, b.kernel, fmt::pct(b.spread.median)))
        .collect();
    if !others.is_empty() {
        details.push(format!("other dtypes: {}", others.join("; ")));
    }
    details.push(format!(
        "the same kernel and shapes on every GPU: the one whose median is highest on its \
         weakest GPU; {gpu}"
    ));
    Some(Card {
        title: format!("GEMM: {} ({}) vs cuBLAS", head.kernel, head.dtype),
        value: format!("{} of cuBLAS", fmt::pct(s.median)),
        stat: format!(
            "median over {} shapes of the P50-time ratio; {}",
            s.n,
            s.interval(fmt::pct)
        ),
        details,
        link: link("gemm.html", "gemm-ladder", gpu),
        f: gpu_dims(gpu),
        muted: false,
    })
}
