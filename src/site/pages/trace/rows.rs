//! The trace page's context: its rows, the traced implementations and steps, and the look-ups
//! every chart shares.

use crate::site::chart::Dims;
use crate::site::fmt;
use crate::site::names;
use crate::site::palette::Palette;
use crate::site::points::Point;

/// What the trace charts draw: CUPTI activity times of the traced steps, not repeats.
pub const TRACED: &str = "CUPTI activity times of the traced steps (one run, no repeats)";

/// The phases the class and layer charts compare, in display order: the decode mean first.
pub const PHASES: [&str; 2] = ["decode", "prefill"];

/// The rows of the traced generations (one per implementation, same point).
pub struct TraceRows<'a, 'p> {
    pub points: &'p [Point<'a>],
    /// The ok `trace_step` rows: one per traced step and implementation, plus the decode means.
    pub steps: Vec<&'p Point<'a>>,
    /// The traced implementations in the artifact's order (rows of old artifacts say "candle").
    pub impls: Vec<String>,
    pub gpu: String,
    pub palette: &'p Palette,
}

impl<'a, 'p> TraceRows<'a, 'p> {
    /// `points` must not be empty.
    pub fn new(points: &'p [Point<'a>], palette: &'p Palette) -> Self {
        let mut impls: Vec<String> = Vec::new();
        for p in points {
            if !impls.iter().any(|i| i == p.imp()) {
                impls.push(p.imp().to_string());
            }
        }
        TraceRows {
            points,
            steps: points
                .iter()
                .filter(|p| p.ok() && p.row.benchmark == "trace_step")
                .collect(),
            impls,
            gpu: points[0].gpu(),
            palette,
        }
    }

    /// The shown `trace_step` row of `imp` in `phase` ("decode": the decode mean).
    pub fn step_row(&self, imp: &str, phase: &str) -> Option<&'p Point<'a>> {
        self.steps
            .iter()
            .copied()
            .find(|p| p.imp() == imp && shown(p) && phase_of(p) == phase)
    }

    /// The page intro: the model, each implementation's idle shares, and the untraced steps.
    pub fn intro(&self) -> String {
        let points = self.points;
        let per_impl: Vec<String> = self
            .impls
            .iter()
            .map(|imp| {
                let parts: Vec<String> = PHASES
                    .iter()
                    .filter_map(|ph| {
                        let p = self.step_row(imp, ph)?;
                        Some(format!(
                            "{}: {} kernels, idle {} of {} µs traced wall{}",
                            p_str(p, "step"),
                            fmt::count(m(p, "kernels").unwrap_or(0.0)),
                            fmt::pct(m(p, "idle_pct")?),
                            fmt::num(m(p, "wall_us")?),
                            untraced_text(p)
                        ))
                    })
                    .collect();
                format!("{imp}: {}", parts.join("; "))
            })
            .collect();
        // Artifacts written before the untraced metrics existed carry it as a note.
        let old_note = if self.steps.iter().any(|p| untraced_us(p).is_some()) {
            None
        } else {
            points[0]
                .artifact()
                .notes
                .iter()
                .find(|n| n.contains("untraced"))
                .cloned()
        };
        format!(
            "One traced generation per implementation of {} on {} (llm_bench --trace, CUPTI \
             activity API), same batch, prompt and steps. {}. The walls are traced (CUPTI adds \
             launch cost){}",
            p_str(&points[0], "model"),
            self.gpu,
            per_impl.join(". "),
            old_note
                .map(|u| format!("; {u}."))
                .unwrap_or_else(|| ".".into())
        )
    }
}

/// The untraced step (decode mean) or TTFT (prefill) of the same point, µs.
pub fn untraced_us(p: &Point) -> Option<f64> {
    m(p, "untraced_step_us").or_else(|| m(p, "untraced_ttft_us"))
}

/// ", untraced 1,000 µs (GPU busy 45%)" when the row has the untraced time.
fn untraced_text(p: &Point) -> String {
    match (untraced_us(p), m(p, "untraced_busy_pct")) {
        (Some(u), Some(b)) => format!(
            " (untraced {} µs, GPU busy {} of it)",
            fmt::num(u),
            fmt::pct(b)
        ),
        _ => String::new(),
    }
}

pub fn p_str(p: &Point, k: &str) -> String {
    names::param_str(p.row, &[k]).unwrap_or_default()
}

pub fn m(p: &Point, k: &str) -> Option<f64> {
    names::metric(p.row, &[k])
}

/// The GPU time a `trace_class` or `trace_layer` row accounts for: the busy time its kernels
/// add (`busy_us`, which sums to the step's busy time when kernels overlap), or their summed
/// durations (`time_us`) in artifacts written before `busy_us` existed.
pub fn gpu_us(p: &Point) -> Option<f64> {
    m(p, "busy_us").or_else(|| m(p, "time_us"))
}

/// Must-move bytes (`<prefix>floor_bytes`) over the busy time the row's kernels add
/// (`<prefix>busy_us`): (GB/s, % of the artifact's copy bandwidth). Computed from those two
/// rather than read from `floor_gbps`, which some artifacts took over summed kernel
/// durations, counting overlapping kernels twice.
pub fn floor_rate(p: &Point, prefix: &str) -> Option<(f64, Option<f64>)> {
    let bytes = m(p, &format!("{prefix}floor_bytes"))?;
    let busy_us = m(p, &format!("{prefix}busy_us")).filter(|t| *t > 0.0)?;
    let gbps = bytes / (busy_us * 1e3);
    let pct = p
        .artifact()
        .ceilings
        .copy_gbps
        .filter(|c| *c > 0.0)
        .map(|c| 100.0 * gbps / c);
    Some((gbps, pct))
}

/// A `trace_layer` row's time per class, from `<class>_busy_us` (or `<class>_time_us` in older
/// artifacts), in the row's metric order.
pub fn layer_classes(p: &Point) -> Vec<(String, f64)> {
    let split = p.row.metrics.keys().any(|k| k.ends_with("_busy_us"));
    let suffix = if split { "_busy_us" } else { "_time_us" };
    p.row
        .metrics
        .iter()
        .filter_map(|(k, v)| Some((k.strip_suffix(suffix)?.to_string(), *v)))
        .filter(|(c, _)| !c.is_empty())
        .collect()
}

/// "prefill" or "decode" (a decode step or the decode mean).
pub fn phase_of(p: &Point) -> String {
    p_str(p, "phase")
}

/// Whether a row is drawn in the per-class and per-layer charts: the prefill and the decode
/// mean.
pub fn shown(p: &Point) -> bool {
    p_str(p, "phase") == "prefill" || p_str(p, "scope") == "decode_mean"
}

/// Filter coordinates of a point of `imp` (and of `class`, when given).
pub fn dims(imp: &str, class: Option<&str>) -> Dims {
    let mut f = Dims::new();
    f.insert("impl".into(), imp.to_string());
    if let Some(c) = class {
        f.insert("class".into(), c.to_string());
    }
    f
}
