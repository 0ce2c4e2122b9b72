//! The filter bar: which dimensions a page can be filtered by, and their values.

use super::chart::Dims;
use serde::Serialize;
use std::collections::BTreeSet;

/// Filterable dimensions, in the order the bar shows them: (key, label).
pub const DIMS: &[(&str, &str)] = &[
    ("gpu", "GPU"),
    ("model", "model"),
    ("dtype", "dtype"),
    ("batch", "batch size"),
    ("impl", "implementation"),
    ("ranks", "GPUs per run"),
    ("mode", "L2 mode"),
    ("shape_set", "shape set"),
    ("b_layout", "B stored as"),
    ("kind", "benchmark kind"),
    ("block", "block"),
    ("pset", "parameter set"),
    ("fixed", "other parameters"),
    ("class", "operation class"),
];

/// One select box of the filter bar.
#[derive(Debug, Clone, Serialize)]
pub struct FilterView {
    pub dim: String,
    pub label: String,
    pub values: Vec<String>,
}

/// Filters for the dimensions among `allowed` that take at least two values in `points`.
pub fn collect<'a>(points: impl Iterator<Item = &'a Dims>, allowed: &[&str]) -> Vec<FilterView> {
    let mut seen: Vec<BTreeSet<String>> = vec![BTreeSet::new(); DIMS.len()];
    for d in points {
        for (i, (dim, _)) in DIMS.iter().enumerate() {
            if let Some(v) = d.get(*dim) {
                if !seen[i].contains(v) {
                    seen[i].insert(v.clone());
                }
            }
        }
    }
    DIMS.iter()
        .zip(seen)
        .filter(|((dim, _), vals)| allowed.contains(dim) && vals.len() >= 2)
        .map(|((dim, label), vals)| {
            let mut values: Vec<String> = vals.into_iter().collect();
            sort_natural(&mut values);
            FilterView {
                dim: dim.to_string(),
                label: label.to_string(),
                values,
            }
        })
        .collect()
}

/// Numbers by value, then text: 1, 4, 16, bf16, f16.
pub fn sort_natural(v: &mut [String]) {
    v.sort_by(|a, b| match (a.parse::<f64>(), b.parse::<f64>()) {
        (Ok(x), Ok(y)) => x.total_cmp(&y),
        (Ok(_), Err(_)) => std::cmp::Ordering::Less,
        (Err(_), Ok(_)) => std::cmp::Ordering::Greater,
        _ => a.cmp(b),
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_dimensions_with_two_values_get_a_filter() {
        let mk = |b: &str, g: &str| -> Dims {
            [("batch", b), ("gpu", g)]
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let pts = [mk("16", "A"), mk("4", "A"), mk("1", "A")];
        let f = collect(pts.iter(), &["gpu", "batch"]);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].dim, "batch");
        assert_eq!(f[0].values, ["1", "4", "16"]);
    }
}
