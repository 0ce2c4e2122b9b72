//! What the LayerNorm charts read from a row: its label and sort key, GB/s and the hover.

use crate::site::fmt;
use crate::site::names;
use crate::site::pages::common::{p50_us, params_text, rank, DTYPE_ORDER};
use crate::site::points::Point;

/// "4096×8192 bf16 cold": the point's coordinates (implementation and GPU aside).
pub fn label(p: &Point) -> String {
    let mut parts = vec![shape(p)];
    parts.extend(p.dtype());
    parts.extend(names::param_str(p.row, names::MODE));
    parts.join(" ")
}

/// "4096×8192": the point's shape, its params where it has no rows and cols.
pub fn shape(p: &Point) -> String {
    let r = p.row;
    match (
        names::param_str(r, names::ROWS),
        names::param_str(r, names::COLS),
    ) {
        (Some(a), Some(b)) => format!("{a}×{b}"),
        _ => params_text(p),
    }
}

/// "bf16, cold L2": the panel a point is drawn in, one per dtype and L2 mode.
pub fn panel(p: &Point) -> String {
    let mode = names::param_str(p.row, names::MODE).map(|m| format!("{m} L2"));
    [p.dtype(), mode]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(", ")
}

pub fn sort_key(p: &Point) -> Vec<f64> {
    let r = p.row;
    let rows = names::param_f64(r, names::ROWS).unwrap_or(0.0);
    let cols = names::param_f64(r, names::COLS).unwrap_or(0.0);
    vec![
        rank(&p.dtype().unwrap_or_default(), DTYPE_ORDER),
        rank(
            &names::param_str(r, names::MODE).unwrap_or_default(),
            &["warm", "cold"],
        ),
        rows * cols,
        rows,
    ]
}

/// Achieved GB/s: the metric, else bytes moved over the P50 time, else 2·rows·cols·elt.
pub fn gbps(p: &Point) -> Option<f64> {
    if let Some(v) = names::metric(p.row, names::GBPS) {
        return Some(v);
    }
    let t = p50_us(p)?;
    let bytes = names::metric(p.row, names::BYTES_MOVED).or_else(|| {
        let r = p.row;
        Some(
            2.0 * names::param_f64(r, names::ROWS)?
                * names::param_f64(r, names::COLS)?
                * names::dtype_bytes(&p.dtype()?)?,
        )
    })?;
    Some(bytes / (t * 1e3))
}

pub fn hover(p: &Point, label: &str, extra: &[String]) -> String {
    let mut lines = vec![p.imp().to_string(), label.to_string()];
    if let Some((k, s)) = names::primary_stat(p.row) {
        let u = names::unit_label(k);
        lines.push(format!(
            "P50 {} {u} (P5 {}, P95 {}, n={})",
            fmt::num(s.p50),
            fmt::num(s.p5),
            fmt::num(s.p95),
            s.n
        ));
    }
    lines.extend(extra.iter().cloned());
    if let Some(t) = &p.row.timing {
        // Cold by rotation: each launch reads a buffer set the previous launches pushed out
        // of L2, with nothing flushed (`src/gpu/rotation.rs`).
        lines.push(if t.method.contains("rotating") {
            format!(
                "cold L2: buffer sets rotated so each launch finds its data out of L2, {} \
                 launches per sample",
                t.launches_per_sample
            )
        } else if t.l2_cleared {
            "L2 cleared before each launch".into()
        } else {
            format!("warm L2, {} launches per sample", t.launches_per_sample)
        });
    }
    lines.push(p.gpu());
    lines.join("\n")
}
