//! Chrome trace-event JSON (the "JSON Object Format": complete "X" events in µs) of analysed
//! steps: one track per CUDA stream with every kernel/copy, plus a host track with the step
//! windows, so idle gaps show as empty space. Opens in ui.perfetto.dev and chrome://tracing.

use super::analyze::StepAnalysis;
use super::record::ActivityKind;
use serde_json::{json, Value};
use std::collections::BTreeSet;

const GPU_PID: u32 = 1;
const HOST_PID: u32 = 2;

fn us(ns: u64) -> f64 {
    // µs with ns resolution.
    ns as f64 / 1e3
}

/// The trace-event document. `meta` goes to `otherData` (ignored by viewers).
pub fn chrome_trace(steps: &[StepAnalysis], meta: Value) -> Value {
    let t0 = steps.iter().map(|s| s.window.start_ns).min().unwrap_or(0);
    let mut ev = vec![
        json!({"ph": "M", "name": "process_name", "pid": GPU_PID, "tid": 0,
               "args": {"name": "GPU activity (CUPTI)"}}),
        json!({"ph": "M", "name": "process_name", "pid": HOST_PID, "tid": 0,
               "args": {"name": "host: step windows (issue to sync)"}}),
        json!({"ph": "M", "name": "thread_name", "pid": HOST_PID, "tid": 0,
               "args": {"name": "steps"}}),
    ];
    let streams: BTreeSet<u32> = steps
        .iter()
        .flat_map(|s| s.attributed.iter().map(|(a, _)| a.stream))
        .collect();
    for st in &streams {
        ev.push(
            json!({"ph": "M", "name": "thread_name", "pid": GPU_PID, "tid": st,
                       "args": {"name": format!("stream {st}")}}),
        );
    }
    for s in steps {
        let w = &s.window;
        ev.push(json!({
            "ph": "X", "pid": HOST_PID, "tid": 0, "cat": "step", "name": w.label(),
            "ts": us(w.start_ns - t0), "dur": us(w.wall_ns()),
            "args": {
                "kernels": s.kernels, "busy_us": us(s.busy_ns), "idle_us": us(s.idle_ns),
                "idle_pct": (s.idle_pct() * 10.0).round() / 10.0,
                "context_len": w.context_len,
            }
        }));
        for (a, at) in &s.attributed {
            let mut args = json!({
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
                "ph": "X", "pid": GPU_PID, "tid": a.stream, "cat": at.class.as_str(),
                "name": a.name, "ts": us(a.start_ns.saturating_sub(t0)), "dur": us(a.dur_ns()),
                "args": args,
            }));
        }
    }
    json!({"traceEvents": ev, "displayTimeUnit": "ns", "otherData": meta})
}
