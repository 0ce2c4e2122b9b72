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

/// Writes a traced workload as Chrome trace-event JSON, streamed (a million kernels would not
/// fit comfortably in a `serde_json::Value`): per process, a host process (its real pid) with
/// one track per thread holding its API calls and NVTX ranges, and one GPU process per device
/// (pid `GPU_PID_BASE * (device + 1) + pid`) with a track per stream. Times are µs from the
/// earliest record of the workload.
pub fn write_workload_chrome(
    w: &super::workload::Workload,
    meta: &Value,
    out: &mut impl std::io::Write,
) -> std::io::Result<()> {
    let t0 = w
        .processes
        .iter()
        .flat_map(|p| {
            p.activities
                .iter()
                .map(|a| a.start_ns)
                .chain(p.api.iter().map(|c| c.start_ns))
                .chain(p.ranges.iter().map(|r| r.start_ns))
                .chain(p.graphs.iter().map(|g| g.start_ns))
        })
        .min()
        .unwrap_or(0);
    let rel = |ns: u64| us(ns.saturating_sub(t0));
    let q = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"?\"".into());
    write!(
        out,
        "{{\"displayTimeUnit\":\"ns\",\"otherData\":{meta},\"traceEvents\":["
    )?;
    let mut first = true;
    let mut sep = |out: &mut dyn std::io::Write| -> std::io::Result<()> {
        if !std::mem::take(&mut first) {
            out.write_all(b",\n")?;
        }
        Ok(())
    };
    for p in &w.processes {
        sep(out)?;
        write!(
            out,
            "{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{},\"tid\":0,\"args\":{{\"name\":\"pid {} host (API calls, NVTX)\"}}}}",
            p.pid, p.pid
        )?;
        let devices: BTreeSet<(u32, u32)> = p
            .activities
            .iter()
            .map(|a| (a.device, a.stream))
            .chain(p.graphs.iter().map(|g| (g.device, g.stream)))
            .collect();
        let mut named = BTreeSet::new();
        for &(d, st) in &devices {
            let gpid = GPU_PID_BASE * (d as u64 + 1) + p.pid as u64;
            if named.insert(d) {
                sep(out)?;
                write!(
                    out,
                    "{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{gpid},\"tid\":0,\"args\":{{\"name\":\"pid {} GPU {d}\"}}}}",
                    p.pid
                )?;
            }
            sep(out)?;
            write!(
                out,
                "{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{gpid},\"tid\":{st},\"args\":{{\"name\":\"stream {st}\"}}}}"
            )?;
        }
        for a in &p.activities {
            let gpid = GPU_PID_BASE * (a.device as u64 + 1) + p.pid as u64;
            sep(out)?;
            let cat = match a.kind {
                ActivityKind::Kernel => "kernel",
                ActivityKind::Memcpy => "memcpy",
                ActivityKind::Memset => "memset",
            };
            write!(
                out,
                "{{\"ph\":\"X\",\"pid\":{gpid},\"tid\":{},\"cat\":\"{cat}\",\"name\":{},\"ts\":{},\"dur\":{},\"args\":{{\"correlation\":{}",
                a.stream,
                q(&a.name),
                rel(a.start_ns),
                us(a.dur_ns()),
                a.correlation_id
            )?;
            match a.kind {
                ActivityKind::Kernel => write!(
                    out,
                    ",\"grid\":[{},{},{}],\"block\":[{},{},{}],\"registers\":{},\"graph\":{}}}}}",
                    a.grid[0],
                    a.grid[1],
                    a.grid[2],
                    a.block[0],
                    a.block[1],
                    a.block[2],
                    a.registers_per_thread,
                    a.graph_id
                )?,
                _ => write!(out, ",\"bytes\":{}}}}}", a.bytes)?,
            }
        }
        for g in &p.graphs {
            let gpid = GPU_PID_BASE * (g.device as u64 + 1) + p.pid as u64;
            sep(out)?;
            write!(
                out,
                "{{\"ph\":\"X\",\"pid\":{gpid},\"tid\":{},\"cat\":\"graph\",\"name\":\"CUDA graph {}\",\"ts\":{},\"dur\":{},\"args\":{{\"correlation\":{}}}}}",
                g.stream,
                g.graph_id,
                rel(g.start_ns),
                us(g.end_ns.saturating_sub(g.start_ns)),
                g.correlation_id
            )?;
        }
        for c in &p.api {
            sep(out)?;
            write!(
                out,
                "{{\"ph\":\"X\",\"pid\":{},\"tid\":{},\"cat\":\"{}\",\"name\":{},\"ts\":{},\"dur\":{},\"args\":{{\"correlation\":{}}}}}",
                p.pid,
                c.tid,
                if c.driver { "driver" } else { "runtime" },
                q(&c.name),
                rel(c.start_ns),
                us(c.dur_ns()),
                c.correlation_id
            )?;
        }
        for r in &p.ranges {
            sep(out)?;
            write!(
                out,
                "{{\"ph\":\"X\",\"pid\":{},\"tid\":{},\"cat\":\"nvtx\",\"name\":{},\"ts\":{},\"dur\":{}}}",
                p.pid,
                r.tid,
                q(&r.name),
                rel(r.start_ns),
                us(r.end_ns.saturating_sub(r.start_ns))
            )?;
        }
    }
    out.write_all(b"]}\n")
}

/// GPU tracks get pids above any real one: `GPU_PID_BASE * (device + 1) + pid`.
pub const GPU_PID_BASE: u64 = 1 << 32;
