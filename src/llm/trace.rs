//! `llm_bench --trace`: one extra, untimed generation of the first point recorded kernel by
//! kernel with CUPTI (prefill and a few decode steps), attributed to operation classes and
//! layers, written as an `llm_trace` artifact, a compact kernel list and a Chrome trace.

use super::backend::Backend;
use super::configs::Arch;
use super::generate::{generate, StepObserver};
use super::model::Model;
use crate::artifact::{write_json_atomic, ArtifactWriter, Param};
use crate::trace::rows::{trace_rows, ModelBytes};
use crate::trace::{analyze_step, Phase, StepAnalysis, StepWindow, Trace};
use anyhow::{bail, Context, Result};
use std::path::PathBuf;

/// Where the trace goes and which steps it records.
#[derive(Debug, Clone)]
pub struct TraceOptions {
    /// 1-based decode steps to record (prefill is always recorded).
    pub decode_steps: Vec<usize>,
    /// The `llm_trace` artifact.
    pub out: PathBuf,
    /// Chrome trace-event JSON (Perfetto).
    pub chrome: PathBuf,
    /// Compact kernel list (one row per activity, names interned).
    pub compact: PathBuf,
    /// Replace `out` even when it holds a trace from another GPU (`--overwrite`).
    pub overwrite: bool,
}

/// The bytes each class must move, from the architecture.
pub fn model_bytes(arch: &Arch, dtype_bytes: usize, batch: usize) -> ModelBytes {
    let size = |name: &str| -> u64 {
        arch.tensors()
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, s)| s.iter().product::<usize>() as u64)
            .sum()
    };
    let layer: u64 = arch
        .tensors()
        .iter()
        .filter(|(n, _)| n.starts_with("model.layers.0.") && !n.ends_with("norm.weight"))
        .map(|(_, s)| s.iter().product::<usize>() as u64)
        .sum();
    let head = if arch.tie_word_embeddings {
        size("model.embed_tokens.weight")
    } else {
        size("lm_head.weight")
    };
    ModelBytes {
        layers: arch.num_hidden_layers,
        layer_weight_bytes: layer * dtype_bytes as u64,
        head_weight_bytes: head * dtype_bytes as u64,
        kv_bytes_per_position_layer: (2 * arch.num_key_value_heads * arch.head_dim() * dtype_bytes)
            as u64,
        dtype_bytes,
        batch,
    }
}

/// CUPTI's clock and its on/off switch (function pointers, so the observer needs no feature).
type Hooks = (fn() -> Result<u64>, fn(bool) -> Result<()>);

/// Records the wanted steps' windows and switches CUPTI on only inside them.
struct Tracer {
    wanted: Vec<usize>,
    prompt_len: usize,
    open: Option<(usize, u64)>,
    windows: Vec<StepWindow>,
    error: Option<anyhow::Error>,
    now: fn() -> Result<u64>,
    on: fn(bool) -> Result<()>,
}

impl Tracer {
    fn fail(&mut self, e: anyhow::Error) {
        if self.error.is_none() {
            self.error = Some(e);
        }
    }
}

impl StepObserver for Tracer {
    fn begin(&mut self, step: usize) {
        if self.error.is_some() || !self.wanted.contains(&step) {
            return;
        }
        if let Err(e) = (self.on)(true) {
            return self.fail(e);
        }
        match (self.now)() {
            Ok(t) => self.open = Some((step, t)),
            Err(e) => self.fail(e),
        }
    }

    fn end(&mut self, step: usize) {
        let Some((s, start)) = self.open.take() else {
            return;
        };
        let end = (self.now)();
        if let Err(e) = (self.on)(false) {
            return self.fail(e);
        }
        match end {
            Ok(end_ns) if s == step => self.windows.push(StepWindow {
                phase: if step == 0 {
                    Phase::Prefill
                } else {
                    Phase::Decode
                },
                step,
                tokens: if step == 0 { self.prompt_len } else { 1 },
                context_len: self.prompt_len + step,
                start_ns: start,
                end_ns,
            }),
            Ok(_) => self.fail(anyhow::anyhow!("step {s} began but step {step} ended")),
            Err(e) => self.fail(e),
        }
    }
}

#[cfg(feature = "cuda")]
fn cupti_hooks() -> Result<Hooks> {
    use crate::trace::cupti;
    cupti::init()?;
    // Drop anything recorded before (nothing is enabled yet, so normally empty); a refusal
    // here shows again, with its reason, when recording is enabled.
    let _ = cupti::take();
    fn on(b: bool) -> Result<()> {
        if b {
            cupti::enable()
        } else {
            cupti::disable()
        }
    }
    Ok((cupti::now_ns, on))
}

#[cfg(feature = "cuda")]
fn collect() -> Result<(Vec<crate::trace::Activity>, u64)> {
    crate::trace::cupti::take()
}

#[cfg(not(feature = "cuda"))]
fn cupti_hooks() -> Result<Hooks> {
    bail!("this llm_bench was built without the `cuda` feature (CUPTI comes with it)")
}

#[cfg(not(feature = "cuda"))]
fn collect() -> Result<(Vec<crate::trace::Activity>, u64)> {
    bail!("built without the `cuda` feature")
}

/// What the trace run produced, for the console.
pub struct TraceSummary {
    pub steps: Vec<StepAnalysis>,
    pub lines: Vec<String>,
}

/// Runs one traced generation of `prompt` and writes the three outputs. Errors say why no
/// trace was made (CPU device, CUPTI missing or refusing); the caller carries on without it.
#[allow(clippy::too_many_arguments)]
pub fn trace_point(
    model: &Model,
    label: &str,
    backend: &mut Backend,
    prompt: &[Vec<u32>],
    t: &TraceOptions,
    copy_gbps: f64,
    untraced_step_p50_ms: Option<f64>,
    untraced_ttft_p50_ms: Option<f64>,
) -> Result<TraceSummary> {
    if !backend.is_cuda() {
        bail!("--trace records GPU kernels with CUPTI: the run is on the CPU");
    }
    let (now, on) = cupti_hooks()?;
    let last = t.decode_steps.iter().copied().max().unwrap_or(0);
    let mut wanted = vec![0];
    wanted.extend(t.decode_steps.iter().copied());
    let p = prompt[0].len();
    let b = prompt.len();
    let mut tracer = Tracer {
        wanted,
        prompt_len: p,
        open: None,
        windows: Vec::new(),
        error: None,
        now,
        on,
    };
    generate(
        model,
        backend,
        prompt,
        last + 1,
        None,
        false,
        Some(&mut tracer),
    )
    .context("the traced generation")?;
    if let Some(e) = tracer.error {
        return Err(e.context("CUPTI during the traced generation"));
    }
    let (activities, dropped) = collect()?;
    if activities.is_empty() {
        bail!("CUPTI delivered no activity records (another profiler attached?)");
    }
    let trace = Trace {
        steps: tracer.windows,
        activities,
        dropped_records: dropped,
    };
    let in_windows = trace
        .steps
        .iter()
        .map(|w| trace.step_activities(w).len())
        .collect::<Vec<_>>();
    if in_windows.contains(&0) {
        let lo = trace
            .activities
            .iter()
            .map(|a| a.start_ns)
            .min()
            .unwrap_or(0);
        let hi = trace
            .activities
            .iter()
            .map(|a| a.start_ns)
            .max()
            .unwrap_or(0);
        let ws: Vec<String> = trace
            .steps
            .iter()
            .map(|w| format!("{}: {}..{}", w.label(), w.start_ns, w.end_ns))
            .collect();
        bail!(
            "a traced step holds no activity: {} records with starts {lo}..{hi} ns, step windows \
             (cuptiGetTimestamp) {}; activities per window {in_windows:?}",
            trace.activities.len(),
            ws.join(", ")
        );
    }
    let layers = model.arch.num_hidden_layers;
    let steps: Vec<StepAnalysis> = trace
        .steps
        .iter()
        .map(|w| analyze_step(&trace, w, layers))
        .collect();
    let mb = model_bytes(&model.arch, model.dtype.size_in_bytes(), b);
    let params: Vec<(&str, Param)> = vec![
        ("model", label.into()),
        ("dtype", super::model::dtype_name(model.dtype).into()),
        ("weights", model.weights.into()),
        ("batch", b.into()),
        ("prompt_len", p.into()),
        ("layers", layers.into()),
    ];
    let env = backend.env();
    let meta = serde_json::json!({
        "model": label, "batch": b, "prompt_len": p, "layers": layers,
        "gpu": env.gpu.as_ref().map(|g| g.name.clone()),
        "command_line": std::env::args().collect::<Vec<_>>(),
        "source": "CUPTI activity API (concurrent kernel, memcpy, memset), in-process",
    });
    let mut w =
        ArtifactWriter::start("llm_trace", &t.out, env, t.overwrite).context("--trace-out")?;
    w.artifact.ceilings.copy_gbps = Some(copy_gbps);
    w.artifact.ceilings.method.push(
        "copy_gbps: cuMemcpyDtoD of 1 GiB, (read + write bytes) / median time, same process".into(),
    );
    let n = &mut w.artifact.notes;
    n.push(format!(
        "one extra, untimed generation of {label} (batch {b}, prompt {p}) after the timed \
         repeats, recorded with CUPTI's activity API in-process (kernels, memcpy, memset; device \
         timestamps); CUPTI is enabled only inside the traced steps: prefill and decode steps {:?}",
        t.decode_steps
    ));
    n.push(
        "wall = host window from before the step's first operation is issued to after the \
         device synchronize (token upload, forward, argmax, token download); busy = union of \
         activity intervals; idle = wall - busy; gap = idle time between the first and last \
         activity (span - busy); lead = window start to first activity; tail = last activity \
         to window end"
            .into(),
    );
    n.push(format!("attribution: {}", crate::trace::classify::METHOD));
    n.push(
        "floor_bytes: matmul = every weight matrix read once (decoder layers + lm_head); \
         attention = the KV cache read once at the step's context; floor_gbps = floor_bytes / \
         class time, floor_pct_of_copy_bw against copy_gbps"
            .into(),
    );
    if let Some(s) = untraced_step_p50_ms {
        n.push(format!(
            "untraced decode step p50 in the same process (timed repeats): {s:.3} ms; \
             untraced TTFT p50: {} ms (CUPTI's per-launch cost inflates the traced walls)",
            untraced_ttft_p50_ms.map_or("n/a".into(), |t| format!("{t:.3}"))
        ));
    }
    if trace.dropped_records > 0 {
        n.push(format!(
            "CUPTI dropped {} records: the trace is incomplete",
            trace.dropped_records
        ));
    }
    n.push(format!(
        "raw trace: {} (compact, one row per activity) and {} (Chrome trace events, Perfetto)",
        t.compact.display(),
        t.chrome.display()
    ));
    for r in trace_rows(&steps, &mb, Some(copy_gbps), &params) {
        w.push(r)?;
    }
    w.finish()?;
    write_json_atomic(
        &t.compact,
        &crate::trace::compact::compact_json(&steps, meta.clone()),
    )?;
    write_json_atomic(&t.chrome, &crate::trace::chrome::chrome_trace(&steps, meta))?;
    let mut lines = Vec::new();
    for s in &steps {
        lines.push(format!(
            "trace {:<10} wall {:8.3} ms  busy {:7.3} ms  idle {:5.1}%  kernels {:4}  anchors {}/{}",
            s.window.label(),
            s.wall_ns as f64 / 1e6,
            s.busy_ns as f64 / 1e6,
            s.idle_pct(),
            s.kernels,
            s.anchors.rmsnorm_kernels,
            s.anchors.expected
        ));
        let mut cls: Vec<_> = s.by_class.iter().collect();
        cls.sort_by_key(|c| std::cmp::Reverse(c.1.time_ns));
        lines.push(format!(
            "      {}",
            cls.iter()
                .take(6)
                .map(|(c, a)| format!("{} {:.0}us/{}", c.as_str(), a.time_ns as f64 / 1e3, a.count))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    lines.push(format!(
        "CUPTI records: {} collected, {} in the traced windows, {} dropped",
        trace.activities.len(),
        in_windows.iter().sum::<usize>(),
        trace.dropped_records
    ));
    lines.push(format!(
        "wrote {}, {}, {}",
        t.out.display(),
        t.compact.display(),
        t.chrome.display()
    ));
    Ok(TraceSummary { steps, lines })
}
