//! Artifact rows of a trace (kind `llm_trace`): one `trace_step` row per step, `trace_class`
//! rows per step and operation class, `trace_layer` rows per step and layer, and the same
//! averaged over the decode steps (param `scope`: "step" or "decode_mean"), each row under its
//! implementation (the row's `implementation`: "candle", "opbench").

use super::analyze::{pct, ImplSteps, StepAnalysis};
use super::classify::{Layer, OpClass};
use super::record::Phase;
use crate::artifact::{Param, ResultRow};
use std::collections::BTreeMap;

/// What the model's weights and KV cache weigh: the bytes a class must move at least.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelBytes {
    pub layers: usize,
    /// Weight bytes of one decoder layer's matmuls (Q, K, V, O, gate, up, down).
    pub layer_weight_bytes: u64,
    /// lm_head weight bytes.
    pub head_weight_bytes: u64,
    /// K and V bytes of one position in one layer (per sequence).
    pub kv_bytes_per_position_layer: u64,
    pub dtype_bytes: usize,
    pub batch: usize,
}

fn us(ns: u64) -> f64 {
    ns as f64 / 1e3
}

/// Adds `floor_gbps` and `floor_pct_of_copy_bw` for `bytes` moved in `time_ns`: the busy time
/// the kernels add, not their summed durations, which count twice where kernels overlap
/// (a programmatic dependent launch starts before its predecessor ends).
fn rate(m: &mut BTreeMap<String, f64>, bytes: u64, time_ns: u64, copy_gbps: Option<f64>) {
    if time_ns == 0 {
        return;
    }
    let gbps = bytes as f64 / time_ns as f64;
    m.insert("floor_bytes".into(), bytes as f64);
    m.insert("floor_gbps".into(), gbps);
    if let Some(c) = copy_gbps {
        m.insert("floor_pct_of_copy_bw".into(), 100.0 * gbps / c);
    }
}

fn step_metrics(s: &StepAnalysis) -> BTreeMap<String, f64> {
    let mut m = BTreeMap::new();
    let gaps: Vec<f64> = s.gaps.iter().map(|&g| us(g)).collect();
    m.insert("wall_us".into(), us(s.wall_ns));
    m.insert("busy_us".into(), us(s.busy_ns));
    m.insert("idle_us".into(), us(s.idle_ns));
    m.insert("idle_pct".into(), s.idle_pct());
    m.insert("busy_pct".into(), pct(s.busy_ns, s.wall_ns));
    m.insert("span_us".into(), us(s.span_ns));
    m.insert("gap_us".into(), us(s.gap_ns));
    m.insert("gap_pct_of_span".into(), pct(s.gap_ns, s.span_ns));
    m.insert("lead_us".into(), us(s.lead_ns));
    m.insert("tail_us".into(), us(s.tail_ns));
    m.insert("kernels".into(), s.kernels as f64);
    m.insert("memcpys".into(), s.memcpys as f64);
    m.insert("memsets".into(), s.memsets as f64);
    m.insert("gaps".into(), gaps.len() as f64);
    if let Ok(g) = crate::stats::summarize(&gaps) {
        m.insert("gap_p50_us".into(), g.p50);
        m.insert("gap_p95_us".into(), g.p95);
        m.insert("gap_max_us".into(), g.max);
    }
    if s.kernels > 0 {
        let kt: u64 = s
            .attributed
            .iter()
            .filter(|(a, _)| a.kind == super::record::ActivityKind::Kernel)
            .map(|(a, _)| a.dur_ns())
            .sum();
        m.insert("kernel_time_us".into(), us(kt));
        m.insert("mean_kernel_us".into(), us(kt) / s.kernels as f64);
        m.insert(
            "wall_us_per_kernel".into(),
            us(s.wall_ns) / s.kernels as f64,
        );
    }
    m
}

fn class_metrics(
    s: &StepAnalysis,
    c: OpClass,
    mb: &ModelBytes,
    copy_gbps: Option<f64>,
) -> BTreeMap<String, f64> {
    let a = s.by_class[&c];
    let mut m = BTreeMap::new();
    m.insert("count".into(), a.count as f64);
    m.insert("time_us".into(), us(a.time_ns));
    m.insert("pct_of_busy".into(), pct(a.time_ns, s.busy_ns));
    m.insert("busy_us".into(), us(a.busy_ns));
    m.insert("busy_share_pct".into(), pct(a.busy_ns, s.busy_ns));
    m.insert("pct_of_wall".into(), pct(a.time_ns, s.wall_ns));
    match c {
        OpClass::Matmul => {
            let w = mb.layers as u64 * mb.layer_weight_bytes + mb.head_weight_bytes;
            rate(&mut m, w, a.busy_ns, copy_gbps);
            if a.busy_ns > 0 {
                let tokens = (mb.batch * s.window.tokens) as f64;
                let flops = 2.0 * (w as f64 / mb.dtype_bytes as f64) * tokens;
                m.insert("tflops".into(), flops / a.busy_ns as f64 / 1e3);
            }
        }
        OpClass::Attention => {
            let kv = mb.batch as u64
                * s.window.context_len as u64
                * mb.kv_bytes_per_position_layer
                * mb.layers as u64;
            rate(&mut m, kv, a.busy_ns, copy_gbps);
        }
        OpClass::Memcpy | OpClass::Memset => {
            m.insert("bytes".into(), a.bytes as f64);
        }
        _ => {}
    }
    m
}

fn layer_metrics(
    s: &StepAnalysis,
    l: Layer,
    mb: &ModelBytes,
    copy_gbps: Option<f64>,
) -> BTreeMap<String, f64> {
    let a = s.by_layer[&l];
    let mut m = BTreeMap::new();
    m.insert("count".into(), a.count as f64);
    m.insert("time_us".into(), us(a.time_ns));
    m.insert("pct_of_busy".into(), pct(a.time_ns, s.busy_ns));
    m.insert("busy_us".into(), us(a.busy_ns));
    for c in OpClass::ALL {
        if let Some(x) = s.by_layer_class.get(&(l, c)) {
            m.insert(format!("{}_time_us", c.as_str()), us(x.time_ns));
            m.insert(format!("{}_busy_us", c.as_str()), us(x.busy_ns));
        }
    }
    if let Some(mm) = s.by_layer_class.get(&(l, OpClass::Matmul)) {
        let w = match l {
            Layer::Block(_) => mb.layer_weight_bytes,
            Layer::Head => mb.head_weight_bytes,
            Layer::Embedding => 0,
        };
        if w > 0 {
            let mut r = BTreeMap::new();
            rate(&mut r, w, mm.busy_ns, copy_gbps);
            for (k, v) in r {
                m.insert(format!("matmul_{k}"), v);
            }
        }
    }
    m
}

fn base(
    bench: &str,
    imp: &str,
    s: &StepAnalysis,
    params: &[(&str, Param)],
    scope: &str,
) -> ResultRow {
    let mut r = ResultRow::new(bench, imp)
        .param("scope", scope)
        .param("phase", s.window.phase.as_str())
        .param("step", s.window.label())
        .param("tokens", s.window.tokens)
        .param("context_len", s.window.context_len);
    for (k, v) in params {
        r.params.insert((*k).to_string(), v.clone());
    }
    r
}

/// Mean of each metric key over maps (only keys every map has).
fn mean_maps(maps: &[BTreeMap<String, f64>]) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    let Some(first) = maps.first() else {
        return out;
    };
    for k in first.keys() {
        if maps.iter().all(|m| m.contains_key(k)) {
            let v = maps.iter().map(|m| m[k]).sum::<f64>() / maps.len() as f64;
            out.insert(k.clone(), v);
        }
    }
    out
}

/// All rows of one implementation's analysed steps. `params` (model, batch, ...) go on every
/// row.
pub fn trace_rows(
    traced: &ImplSteps,
    mb: &ModelBytes,
    copy_gbps: Option<f64>,
    params: &[(&str, Param)],
) -> Vec<ResultRow> {
    let (imp, steps) = (traced.implementation.as_str(), &traced.steps);
    let mut rows = Vec::new();
    for s in steps {
        let mut r = base("trace_step", imp, s, params, "step");
        r.metrics = step_metrics(s);
        r.params
            .insert("layers_assigned".into(), s.anchors.layers_assigned.into());
        rows.push(r);
        for &c in s.by_class.keys() {
            let mut r = base("trace_class", imp, s, params, "step").param("class", c.as_str());
            r.metrics = class_metrics(s, c, mb, copy_gbps);
            rows.push(r);
        }
        for &l in s.by_layer.keys() {
            let mut r = base("trace_layer", imp, s, params, "step").param("layer", l.label());
            r.metrics = layer_metrics(s, l, mb, copy_gbps);
            rows.push(r);
        }
    }
    let dec: Vec<&StepAnalysis> = steps
        .iter()
        .filter(|s| s.window.phase == Phase::Decode)
        .collect();
    if let Some(first) = dec.first() {
        let label = format!(
            "decode mean of {} ({})",
            dec.len(),
            dec.iter()
                .map(|s| s.window.step.to_string())
                .collect::<Vec<_>>()
                .join(",")
        );
        let mk = |bench: &str| {
            let mut r = base(bench, imp, first, params, "decode_mean");
            r.params.insert("step".into(), label.clone().into());
            r
        };
        let mut r = mk("trace_step");
        r.metrics = mean_maps(&dec.iter().map(|s| step_metrics(s)).collect::<Vec<_>>());
        rows.push(r);
        for c in OpClass::ALL {
            if dec.iter().all(|s| s.by_class.contains_key(&c)) {
                let mut r = mk("trace_class").param("class", c.as_str());
                r.metrics = mean_maps(
                    &dec.iter()
                        .map(|s| class_metrics(s, c, mb, copy_gbps))
                        .collect::<Vec<_>>(),
                );
                rows.push(r);
            }
        }
        for &l in first.by_layer.keys() {
            if dec.iter().all(|s| s.by_layer.contains_key(&l)) {
                let mut r = mk("trace_layer").param("layer", l.label());
                r.metrics = mean_maps(
                    &dec.iter()
                        .map(|s| layer_metrics(s, l, mb, copy_gbps))
                        .collect::<Vec<_>>(),
                );
                rows.push(r);
            }
        }
    }
    rows
}

/// Adds the same point's untraced times (timed repeats, CUPTI off) to its `trace_step` rows:
/// `untraced_step_us` and `untraced_busy_pct` (busy / untraced step: the GPU's share of an
/// untraced step) on the decode mean, `untraced_ttft_us` and `untraced_busy_pct` on prefill.
pub fn add_untraced(rows: &mut [ResultRow], step_p50_ms: Option<f64>, ttft_p50_ms: Option<f64>) {
    for r in rows.iter_mut().filter(|r| r.benchmark == "trace_step") {
        let param = |k: &str| r.params.get(k).map(|p| p.to_string()).unwrap_or_default();
        let (key, ms) = if param("scope") == "decode_mean" {
            ("untraced_step_us", step_p50_ms)
        } else if param("phase") == "prefill" {
            ("untraced_ttft_us", ttft_p50_ms)
        } else {
            continue;
        };
        let Some(ms) = ms.filter(|v| v.is_finite() && *v > 0.0) else {
            continue;
        };
        let untraced_us = ms * 1e3;
        r.metrics.insert(key.into(), untraced_us);
        if let Some(&busy) = r.metrics.get("busy_us") {
            r.metrics
                .insert("untraced_busy_pct".into(), 100.0 * busy / untraced_us);
        }
    }
}
