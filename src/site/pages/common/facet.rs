//! Small multiples: one chart per GPU (or per another key), so no chart mixes what it should
//! not, and the GPU filter hides the other GPUs' panels.

use crate::site::chart::ChartView;
use crate::site::points::Point;
use crate::site::rules::short_gpu;

/// The rows of each value of `key`, values in first-seen order.
pub fn split_by<'a>(
    points: &[Point<'a>],
    key: impl Fn(&Point) -> String,
) -> Vec<(String, Vec<Point<'a>>)> {
    let mut out: Vec<(String, Vec<Point<'a>>)> = Vec::new();
    for p in points {
        let k = key(p);
        match out.iter_mut().find(|(v, _)| *v == k) {
            Some((_, rows)) => rows.push(*p),
            None => out.push((k, vec![*p])),
        }
    }
    out
}

/// `build` once per value of `key` with that value's rows. With several values each chart's
/// id gains the value ("gemm-heatmap-h100") and its title names it; with one value the chart
/// is `build`'s as it is.
pub fn facets<'a>(
    points: &[Point<'a>],
    key: impl Fn(&Point) -> String,
    build: impl Fn(&[Point<'a>]) -> ChartView,
) -> Vec<ChartView> {
    let groups = split_by(points, key);
    if groups.len() < 2 {
        return vec![build(points)];
    }
    groups
        .into_iter()
        .map(|(k, rows)| {
            let mut c = build(&rows);
            c.id = format!("{}-{}", c.id, slug(&k));
            c.title = format!("{}: {k}", c.title);
            c
        })
        .collect()
}

/// One chart per GPU (`facets` by the GPU's short name); each panel carries its GPU as a
/// chart-wide filter coordinate, so picking a GPU hides the other panels.
pub fn per_gpu<'a>(
    points: &[Point<'a>],
    build: impl Fn(&[Point<'a>]) -> ChartView,
) -> Vec<ChartView> {
    per_gpu_by(points, |_| String::new(), build)
}

/// One chart per GPU and value of `key` ("H100 · square shapes"), the GPU as in `per_gpu`
/// (named only where there are several).
pub fn per_gpu_by<'a>(
    points: &[Point<'a>],
    key: impl Fn(&Point) -> String,
    build: impl Fn(&[Point<'a>]) -> ChartView,
) -> Vec<ChartView> {
    let several = super::multi_gpu(points);
    let name = |p: &Point| {
        let k = key(p);
        let g = short_gpu(&p.gpu());
        match (several, k.is_empty()) {
            (true, true) => g,
            (true, false) => format!("{g} · {k}"),
            (false, _) => k,
        }
    };
    facets(points, name, |rows| {
        let mut c = build(rows);
        if several {
            if let Some(p) = rows.first() {
                c.f.insert("gpu".into(), p.gpu());
            }
        }
        c
    })
}

/// Lower-case letters and digits, other runs as one "-": a DOM id part.
pub fn slug(s: &str) -> String {
    let mut out = String::new();
    for ch in s.chars() {
        if ch.is_ascii_alphanumeric() {
            out.push(ch.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_id_safe() {
        assert_eq!(slug("H100"), "h100");
        assert_eq!(slug("FIXTURE GPU A"), "fixture-gpu-a");
        assert_eq!(slug("</script>x"), "script-x");
    }
}
