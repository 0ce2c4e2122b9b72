//! The compact raw trace (one row per activity, kernel names and classes interned), written
//! next to the artifact as `*.trace.json` (summarize skips those files).

use super::analyze::StepAnalysis;
use super::classify::{OpClass, METHOD};
use super::record::ActivityKind;
use serde_json::{json, Value};
use std::collections::HashMap;

/// Column names of `rows`, in order.
pub const COLUMNS: [&str; 11] = [
    "step", "kind", "name", "class", "layer", "start_ns", "dur_ns", "stream", "grid", "block",
    "bytes",
];

/// The compact trace of the analysed steps. Times are ns relative to the first step's start.
/// `meta` is stored as is (model, GPU, command line ...).
pub fn compact_json(steps: &[StepAnalysis], meta: Value) -> Value {
    let t0 = steps.iter().map(|s| s.window.start_ns).min().unwrap_or(0);
    let mut names: Vec<String> = Vec::new();
    let mut ids: HashMap<String, usize> = HashMap::new();
    let mut rows = Vec::new();
    for (si, s) in steps.iter().enumerate() {
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
    let step_list: Vec<Value> = steps
        .iter()
        .map(|s| {
            json!({
                "label": s.window.label(),
                "phase": s.window.phase.as_str(),
                "step": s.window.step,
                "tokens": s.window.tokens,
                "context_len": s.window.context_len,
                "start_ns": s.window.start_ns.saturating_sub(t0),
                "end_ns": s.window.end_ns.saturating_sub(t0),
                "rmsnorm_anchors": s.anchors.rmsnorm_kernels,
                "layers_assigned": s.anchors.layers_assigned,
            })
        })
        .collect();
    json!({
        "format": "opbench_kernel_trace",
        "version": 1,
        "time_unit": "ns",
        "meta": meta,
        "attribution": METHOD,
        "kinds": {"k": "kernel", "c": "memcpy", "s": "memset"},
        "classes": OpClass::ALL.iter().map(|c| c.as_str()).collect::<Vec<_>>(),
        "names": names,
        "columns": COLUMNS,
        "steps": step_list,
        "rows": rows,
    })
}
