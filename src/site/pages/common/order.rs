//! Category order: numeric sort keys for labels, and the display order of text values.

/// Sorts category labels by a numeric key, keeping the first-seen label for each.
pub fn ordered_categories(mut v: Vec<(Vec<f64>, String)>) -> Vec<String> {
    v.sort_by(|a, b| {
        a.0.iter()
            .zip(&b.0)
            .map(|(x, y)| x.total_cmp(y))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| a.1.cmp(&b.1))
    });
    let mut seen = std::collections::HashSet::new();
    let mut out: Vec<String> = Vec::new();
    for (_, l) in v {
        if seen.insert(l.clone()) {
            out.push(l);
        }
    }
    out
}

/// A small numeric code for text values, so sorts group them (dtype and mode order).
pub fn rank(value: &str, order: &[&str]) -> f64 {
    order
        .iter()
        .position(|o| *o == value)
        .map(|i| i as f64)
        .unwrap_or(order.len() as f64)
}

/// Dtypes in display order.
pub const DTYPE_ORDER: &[&str] = &["f32", "tf32", "f16", "bf16", "f8"];
