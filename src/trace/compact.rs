//! The compact raw trace (one row per activity, kernel names and classes interned), written
//! next to the artifact as `*.trace.json` (summarize skips those files). Steps of several
//! implementations share one file; each step names its implementation.

use super::analyze::ImplSteps;
use super::classify::OpClass;
use super::record::ActivityKind;
use serde_json::{json, Value};
use std::collections::HashMap;

/// Column names of `rows`, in order.
pub const COLUMNS: [&str; 11] = [
    "step", "kind", "name", "class", "layer", "start_ns", "dur_ns", "stream", "grid", "block",
    "bytes",
];

/// The format's version: 2 added the steps' `impl`, `anchors`, `anchors_expected` and
/// `anchor_rule` (version 1 had `rmsnorm_anchors` and held candle's steps only).
pub const VERSION: u32 = 2;

/// The compact trace of the analysed steps of each implementation, in order. Times are ns
/// relative to the start of the first step of the same implementation. `attribution` maps each
/// implementation to its attribution rules; `meta` is stored as is (model, GPU, command line).
pub fn compact_json(traced: &[ImplSteps], attribution: Value, meta: Value) -> Value {
    let mut names: Vec<String> = Vec::new();
    let mut ids: HashMap<String, usize> = HashMap::new();
    let mut rows = Vec::new();
    let mut step_list = Vec::new();
    for t in traced {
        let t0 = t.steps.iter().map(|s| s.window.start_ns).min().unwrap_or(0);
        for s in &t.steps {
            let si = step_list.len();
            step_list.push(json!({
                "impl": t.implementation,
                "label": s.window.label(),
                "phase": s.window.phase.as_str(),
                "step": s.window.step,
                "tokens": s.window.tokens,
                "context_len": s.window.context_len,
                "start_ns": s.window.start_ns.saturating_sub(t0),
                "end_ns": s.window.end_ns.saturating_sub(t0),
                "anchor_rule": s.anchors.rule,
                "anchors": s.anchors.found,
                "anchors_expected": s.anchors.expected,
                "layers_assigned": s.anchors.layers_assigned,
            }));
            for (a, at) in &s.attributed {
                let id = *ids.entry(a.name.clone()).or_insert_with(|| {
                    names.push(a.name.clone());
                    names.len() - 1
                });
                let kind = match a.kind {
                    ActivityKind::Kernel => "k",
                    ActivityKind::Memcpy => "c",
                    ActivityKind::Memset => "s",
                };
                let class = OpClass::ALL
                    .iter()
                    .position(|c| *c == at.class)
                    .unwrap_or(0);
                rows.push(json!([
                    si,
                    kind,
                    id,
                    class,
                    at.layer.map(|l| l.label()),
                    a.start_ns.saturating_sub(t0),
                    a.dur_ns(),
                    a.stream,
                    a.grid,
                    a.block,
                    a.bytes
                ]));
            }
        }
    }
    json!({
        "format": "opbench_kernel_trace",
        "version": VERSION,
        "time_unit": "ns",
        "meta": meta,
        "attribution": attribution,
        "kinds": {"k": "kernel", "c": "memcpy", "s": "memset"},
        "classes": OpClass::ALL.iter().map(|c| c.as_str()).collect::<Vec<_>>(),
        "names": names,
        "columns": COLUMNS,
        "steps": step_list,
        "rows": rows,
    })
}
