//! The GEMM card: our best kernel against cuBLAS on one GPU, as the median % of cuBLAS over
//! the shapes it ran with its P5–P95 spread (the ladder chart's bar), for the dtype measured
//! at the most shapes; the other dtypes' best kernels in one line.

use super::cards::{gpu_dims, link};
use crate::site::fmt;
use crate::site::names;
use crate::site::pages::gemm::vs_cublas::{pct_of_rows, per_kernel, KernelVsCublas};
use crate::site::pages::Card;
use crate::site::points::Point;

/// The kernel with the highest median of each dtype, the dtype with the most shapes first.
fn best_per_dtype<'a, 'b>(groups: &'b [KernelVsCublas<'a>]) -> Vec<&'b KernelVsCublas<'a>> {
    let mut best: Vec<&KernelVsCublas> = Vec::new();
    for g in groups {
        match best.iter_mut().find(|b| b.dtype == g.dtype) {
            Some(b) if g.spread.median > b.spread.median => *b = g,
            Some(_) => {}
            None => best.push(g),
        }
    }
    let shapes = |dtype: &str| {
        groups
            .iter()
            .filter(|g| g.dtype == dtype)
            .map(|g| g.spread.n)
            .max()
            .unwrap_or(0)
    };
    best.sort_by_key(|b| std::cmp::Reverse(shapes(&b.dtype)));
    best
}

/// The card of one GPU's GEMM points.
pub fn card(gpu: &str, pts: &[Point]) -> Option<Card> {
    let ok: Vec<Point> = pts.iter().filter(|p| p.ok()).copied().collect();
    let pct = pct_of_rows(&ok);
    let mut groups = per_kernel(&ok, |i| pct[i]);
    groups.retain(|g| !names::NOT_OURS.contains(&g.kernel.as_str()));
    let best = best_per_dtype(&groups);
    let head = best.first()?;
    let s = head.spread;
    let mut details = Vec::new();
    let others: Vec<String> = best[1..]
        .iter()
        .map(|b| format!("{} {}: {}", b.dtype, b.kernel, fmt::pct(b.spread.median)))
        .collect();
    if !others.is_empty() {
        details.push(format!("best of other dtypes: {}", others.join("; ")));
    }
    details.push(gpu.to_string());
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
