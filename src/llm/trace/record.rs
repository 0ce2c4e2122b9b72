//! The traced generation: CUPTI switched on only inside the wanted steps (a `StepObserver` on
//! candle's or opbench's generate loop), the records checked against the step windows, and each
//! step analysed under its implementation's layout.

use super::{ImplTrace, TraceOptions};
use crate::llm::backend::Backend;
use crate::llm::generate::{generate, StepObserver};
use crate::llm::model::Model;
use crate::trace::{analyze_step, ImplSteps, Layout, Phase, StepAnalysis, StepWindow, Trace};
use anyhow::{bail, Context, Result};

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

/// Runs `generation(new_tokens, observer)` with CUPTI recording prefill and the wanted decode
/// steps of a prompt of `prompt_len` tokens; returns the trace once every window holds records.
fn record(
    t: &TraceOptions,
    prompt_len: usize,
    generation: impl FnOnce(usize, &mut dyn StepObserver) -> Result<()>,
) -> Result<Trace> {
    let (now, on) = cupti_hooks()?;
    let last = t.decode_steps.iter().copied().max().unwrap_or(0);
    let mut wanted = vec![0];
    wanted.extend(t.decode_steps.iter().copied());
    let mut tracer = Tracer {
        wanted,
        prompt_len,
        open: None,
        windows: Vec::new(),
        error: None,
        now,
        on,
    };
    generation(last + 1, &mut tracer).context("the traced generation")?;
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
    let in_windows: Vec<usize> = trace
        .steps
        .iter()
        .map(|w| trace.step_activities(w).len())
        .collect();
    if in_windows.contains(&0) {
        let starts = trace.activities.iter().map(|a| a.start_ns);
        let (lo, hi) = (starts.clone().min().unwrap_or(0), starts.max().unwrap_or(0));
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
    let kernels = |w: &StepWindow| {
        trace
            .step_activities(w)
            .iter()
            .filter(|a| a.kind == crate::trace::ActivityKind::Kernel)
            .count()
    };
    if let Some(w) = trace.steps.iter().find(|w| kernels(w) == 0) {
        bail!(
            "CUPTI recorded no kernel in {} ({} records in its window): its kernels were not \
             traced",
            w.label(),
            trace.step_activities(w).len()
        );
    }
    Ok(trace)
}

/// Analyses every step of `trace` under `layout(phase)`, with the console lines.
fn analyze(
    imp: &str,
    trace: &Trace,
    layout: impl Fn(Phase) -> Layout,
    untraced: (Option<f64>, Option<f64>),
) -> ImplTrace {
    let steps: Vec<StepAnalysis> = trace
        .steps
        .iter()
        .map(|w| analyze_step(trace, w, &layout(w.phase)))
        .collect();
    let mut lines = Vec::new();
    for s in &steps {
        lines.push(format!(
            "trace {imp:<8} {:<10} wall {:8.3} ms  busy {:7.3} ms  idle {:5.1}%  kernels {:4}  \
             anchors {}/{}",
            s.window.label(),
            s.wall_ns as f64 / 1e6,
            s.busy_ns as f64 / 1e6,
            s.idle_pct(),
            s.kernels,
            s.anchors.found,
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
    let in_windows: usize = steps.iter().map(|s| s.attributed.len()).sum();
    lines.push(format!(
        "CUPTI records ({imp}): {} collected, {in_windows} in the traced windows, {} dropped",
        trace.activities.len(),
        trace.dropped_records
    ));
    ImplTrace {
        method: layout(Phase::Decode).method(),
        steps: ImplSteps {
            implementation: imp.to_string(),
            steps,
        },
        untraced_step_p50_ms: untraced.0,
        untraced_ttft_p50_ms: untraced.1,
        dropped_records: trace.dropped_records,
        lines,
    }
}

/// Traces one generation of `prompt` with candle's Llama. `untraced`: the point's decode step
/// and TTFT p50 (ms) from its timed repeats. Errors say why no trace was made (CPU device,
/// CUPTI missing or refusing).
pub fn trace_candle(
    model: &Model,
    backend: &Backend,
    prompt: &[Vec<u32>],
    t: &TraceOptions,
    untraced: (Option<f64>, Option<f64>),
) -> Result<ImplTrace> {
    if !backend.is_cuda() {
        bail!("--trace records GPU kernels with CUPTI: the run is on the CPU");
    }
    let trace = record(t, prompt[0].len(), |n, obs| {
        generate(model, backend, prompt, n, None, false, Some(obs)).map(|_| ())
    })?;
    let layers = model.arch.num_hidden_layers;
    Ok(analyze(
        "candle",
        &trace,
        |_| Layout::NormAnchors { layers },
        untraced,
    ))
}

/// Traces one generation of `prompt` on the opbench engine (its decode steps are CUDA-graph
/// replays), placing kernels in layers by the engine's launch plan.
#[cfg(feature = "cuda")]
pub fn trace_opbench(
    engine: &mut crate::llm::fast::engine::Engine,
    prompt: &[Vec<u32>],
    t: &TraceOptions,
    untraced: (Option<f64>, Option<f64>),
) -> Result<ImplTrace> {
    use crate::llm::fast::{generate::generate_observed, trace_layout::trace_layout};
    use crate::trace::cupti;
    // The graph was instantiated before CUPTI was on: instantiate it again while activity
    // recording is on, so its kernel nodes are recorded on replay; that capture's records go.
    cupti::init()?;
    cupti::enable()?;
    let captured = engine.recapture();
    cupti::disable()?;
    captured?;
    cupti::take()?;
    let dims = *engine.dims();
    let trace = record(t, prompt[0].len(), |n, obs| {
        generate_observed(engine, prompt, n, Some(obs)).map(|_| ())
    })?;
    Ok(analyze(
        "opbench",
        &trace,
        |phase| trace_layout(&dims, phase),
        untraced,
    ))
}
