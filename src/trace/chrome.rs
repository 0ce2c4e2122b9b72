//! Chrome trace-event JSON (the "JSON Object Format": complete "X" events in µs) of analysed
//! steps: per implementation one GPU process with a track per CUDA stream holding every
//! kernel/copy, and one host process with the step windows, so idle gaps show as empty space.
//! Each implementation's times start at its first step, so their steps line up side by side.
//! Opens in ui.perfetto.dev and chrome://tracing.

use super::analyze::ImplSteps;
use super::record::ActivityKind;
use serde_json::{json, Value};
use std::collections::BTreeSet;

fn us(ns: u64) -> f64 {
    // µs with ns resolution.
    ns as f64 / 1e3
}

/// The process ids of implementation `i`: (GPU activity, host step windows).
fn pids(i: usize) -> (usize, usize) {
    (2 * i + 1, 2 * i + 2)
}

/// The trace-event document. `meta` goes to `otherData` (ignored by viewers).
pub fn chrome_trace(traced: &[ImplSteps], meta: Value) -> Value {
    let mut ev = Vec::new();
    for (i, t) in traced.iter().enumerate() {
        let imp = &t.implementation;
        let (gpu, host) = pids(i);
        ev.extend([
            json!({"ph": "M", "name": "process_name", "pid": gpu, "tid": 0,
                   "args": {"name": format!("{imp}: GPU activity (CUPTI)")}}),
            json!({"ph": "M", "name": "process_sort_index", "pid": gpu, "tid": 0,
                   "args": {"sort_index": gpu}}),
            json!({"ph": "M", "name": "process_name", "pid": host, "tid": 0,
                   "args": {"name": format!("{imp}: host step windows (issue to sync)")}}),
            json!({"ph": "M", "name": "process_sort_index", "pid": host, "tid": 0,
                   "args": {"sort_index": host}}),
            json!({"ph": "M", "name": "thread_name", "pid": host, "tid": 0,
                   "args": {"name": "steps"}}),
        ]);
        let streams: BTreeSet<u32> = t
            .steps
            .iter()
            .flat_map(|s| s.attributed.iter().map(|(a, _)| a.stream))
            .collect();
        for st in &streams {
            ev.push(
                json!({"ph": "M", "name": "thread_name", "pid": gpu, "tid": st,
                           "args": {"name": format!("stream {st}")}}),
            );
        }
        let t0 = t.steps.iter().map(|s| s.window.start_ns).min().unwrap_or(0);
        for s in &t.steps {
            let w = &s.window;
            ev.push(json!({
                "ph": "X", "pid": host, "tid": 0, "cat": "step", "name": w.label(),
                "ts": us(w.start_ns - t0), "dur": us(w.wall_ns()),
                "args": {
                    "impl": imp,
                    "kernels": s.kernels, "busy_us": us(s.busy_ns), "idle_us": us(s.idle_ns),
                    "idle_pct": (s.idle_pct() * 10.0).round() / 10.0,
                    "context_len": w.context_len,
                }
            }));
            for (a, at) in &s.attributed {
                let mut args = json!({
                    "impl": imp,
                    "class": at.class.as_str(),
                    "layer": at.layer.map(|l| l.label()),
                    "step": w.label(),
                });
                match a.kind {
                    ActivityKind::Kernel => {
                        args["grid"] = json!(a.grid);
                        args["block"] = json!(a.block);
                    }
                    _ => args["bytes"] = json!(a.bytes),
                }
                ev.push(json!({
                    "ph": "X", "pid": gpu, "tid": a.stream, "cat": at.class.as_str(),
                    "name": a.name, "ts": us(a.start_ns.saturating_sub(t0)),
                    "dur": us(a.dur_ns()), "args": args,
                }));
            }
        }
    }
    json!({"traceEvents": ev, "displayTimeUnit": "ns", "otherData": meta})
}
