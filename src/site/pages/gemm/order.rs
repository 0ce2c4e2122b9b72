//! The order of the GEMM page's kernels: the ladder first, cuBLAS last.

use crate::site::names;
use crate::site::points::Point;
use std::collections::{BTreeSet, HashMap};

/// Kernels in ladder order, then the rest by name, cuBLAS last.
pub fn kernel_order(points: &[Point]) -> Vec<String> {
    let imps: BTreeSet<&str> = points.iter().map(|p| p.imp()).collect();
    let mut v: Vec<&str> = imps.into_iter().collect();
    // A kernel's ladder and step, when the rows record them (impl_kind, ladder_step).
    let mut step: HashMap<&str, (String, f64)> = HashMap::new();
    for p in points {
        if let Some(s) = names::param_f64(p.row, names::LADDER_STEP) {
            let kind = names::param_str(p.row, names::IMPL_KIND).unwrap_or_default();
            step.insert(p.imp(), (kind, s));
        }
    }
    v.sort_by(|a, b| {
        let key = |i: &str| {
            let (kind, s) = step.get(i).cloned().unwrap_or((String::new(), f64::MAX));
            let pos = names::GEMM_LADDER.iter().position(|l| *l == i);
            (
                names::is_cublas(i),
                i == "candle",
                kind,
                s,
                pos.unwrap_or(usize::MAX),
            )
        };
        let (ka, kb) = (key(a), key(b));
        ka.0.cmp(&kb.0)
            .then(ka.1.cmp(&kb.1))
            .then(ka.2.cmp(&kb.2))
            .then(ka.3.total_cmp(&kb.3))
            .then(ka.4.cmp(&kb.4))
            .then(a.cmp(b))
    });
    v.into_iter().map(String::from).collect()
}
