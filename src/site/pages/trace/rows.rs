//! The trace page's context: its rows, the traced steps, and the look-ups every chart shares.

use crate::site::fmt;
use crate::site::names;
use crate::site::points::Point;

/// What the trace charts draw: CUPTI activity times of the traced steps, not repeats.
pub const TRACED: &str = "CUPTI activity times of the traced steps (one run, no repeats)";

/// The rows of one traced generation.
pub struct TraceRows<'a, 'p> {
    pub points: &'p [Point<'a>],
    /// The ok `trace_step` rows: one per traced step, plus the decode mean.
    pub steps: Vec<&'p Point<'a>>,
    pub gpu: String,
}

impl<'a, 'p> TraceRows<'a, 'p> {
    /// `points` must not be empty.
    pub fn new(points: &'p [Point<'a>]) -> Self {
        TraceRows {
            points,
            steps: points
                .iter()
                .filter(|p| p.ok() && p.row.benchmark == "trace_step")
                .collect(),
            gpu: points[0].gpu(),
        }
    }

    /// The page intro: the model, each shown step's idle share, and the untraced note.
    pub fn intro(&self) -> String {
        let points = self.points;
        let untraced = points[0]
            .artifact()
            .notes
            .iter()
            .find(|n| n.contains("untraced"))
            .cloned();
        let headline: Vec<String> = self
            .steps
            .iter()
            .filter(|p| p_str(p, "scope") == "decode_mean" || p_str(p, "phase") == "prefill")
            .filter_map(|p| {
                Some(format!(
                    "{}: idle {} of {} µs wall ({} kernels, busy {} µs)",
                    p_str(p, "step"),
                    fmt::pct(m(p, "idle_pct")?),
                    fmt::num(m(p, "wall_us")?),
                    fmt::count(m(p, "kernels").unwrap_or(0.0)),
                    fmt::num(m(p, "busy_us").unwrap_or(0.0)),
                ))
            })
            .collect();
        let gpu = &self.gpu;
        format!(
            "One traced generation of {} on {gpu} (llm_bench --trace, CUPTI activity API). {}. \
             The walls are traced (CUPTI adds launch cost){}",
            p_str(&points[0], "model"),
            headline.join("; "),
            untraced
                .map(|u| format!("; {u}."))
                .unwrap_or_else(|| ".".into())
        )
    }
}

pub fn p_str(p: &Point, k: &str) -> String {
    names::param_str(p.row, &[k]).unwrap_or_default()
}

pub fn m(p: &Point, k: &str) -> Option<f64> {
    names::metric(p.row, &[k])
}

/// The x label of a row: its step ("prefill", "decode mean", ...).
pub fn phase_label(p: &Point) -> String {
    p_str(p, "step")
}

/// Whether a row is drawn in the per-class and per-layer charts: the prefill and the decode
/// mean.
pub fn shown(p: &Point) -> bool {
    p_str(p, "phase") == "prefill" || p_str(p, "scope") == "decode_mean"
}
