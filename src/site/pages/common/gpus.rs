//! Telling GPUs apart on a chart: the GPU list, series names and bar patterns.

use crate::site::points::Point;

/// Whether the points come from more than one GPU (then series names carry the GPU).
pub fn multi_gpu(points: &[Point]) -> bool {
    let mut it = points.iter().map(|p| p.gpu());
    match it.next() {
        Some(first) => it.any(|g| g != first),
        None => false,
    }
}

/// Series name: the implementation, plus the GPU when several are present.
pub fn series(imp: &str, p: &Point, multi: bool) -> String {
    if multi {
        format!("{imp} · {}", p.gpu())
    } else {
        imp.to_string()
    }
}

/// A bar pattern per GPU after the first, so colors stay per implementation.
pub fn gpu_pattern(p: &Point, gpus: &[String]) -> Option<String> {
    const PATTERNS: [&str; 4] = ["/", "x", ".", "+"];
    let i = gpus.iter().position(|g| *g == p.gpu())?;
    (i > 0).then(|| PATTERNS[(i - 1) % PATTERNS.len()].to_string())
}

/// The distinct GPU names, in first-seen order.
pub fn gpus(points: &[Point]) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for p in points {
        let g = p.gpu();
        if !v.contains(&g) {
            v.push(g);
        }
    }
    v
}
