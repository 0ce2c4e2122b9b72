//! `llm_bench --trace`: one extra, untimed generation of the first point of each implementation
//! (candle's Llama, our opbench path) recorded kernel by kernel with CUPTI (prefill and a few
//! decode steps), attributed to operation classes and layers, and written together as one
//! `llm_trace` artifact, a compact kernel list and a Chrome trace.

mod outputs;
mod record;

pub use outputs::model_bytes;

use super::fast::Impl;
use crate::trace::ImplSteps;
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

/// The traced point: the same for every implementation.
#[derive(Debug, Clone, PartialEq)]
pub struct TracedPoint {
    pub model: String,
    pub batch: usize,
    pub prompt_len: usize,
}

/// One implementation's analysed trace and what the artifact says about it.
pub struct ImplTrace {
    pub steps: ImplSteps,
    /// How its kernels were attributed (`Layout::method`).
    pub method: String,
    /// The same point's untraced decode step and TTFT (timed repeats, same process).
    pub untraced_step_p50_ms: Option<f64>,
    pub untraced_ttft_p50_ms: Option<f64>,
    pub dropped_records: u64,
    /// Console lines (per step: wall, busy, idle, kernels, top classes).
    pub lines: Vec<String>,
}

/// The trace of one llm_bench run: which implementations are still to be traced and those
/// done. Each implementation is traced once, at the run's first point.
pub struct TraceRun {
    pub opts: TraceOptions,
    pending: Vec<Impl>,
    point: Option<TracedPoint>,
    done: Vec<ImplTrace>,
    /// Lines for the llm artifact's notes not yet taken.
    notes: Vec<String>,
}

impl TraceRun {
    /// A trace of each of `impls` (llm_bench's `--impl`).
    pub fn new(opts: TraceOptions, impls: &[Impl]) -> Self {
        TraceRun {
            opts,
            pending: impls.to_vec(),
            point: None,
            done: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// Whether `imp` is to be traced at `point`: every implementation is traced at the run's
    /// first point (the first point asked about), so all traces share model, batch and prompt.
    pub fn wants(&mut self, imp: Impl, point: &TracedPoint) -> bool {
        let first = self.point.get_or_insert_with(|| point.clone());
        self.pending.contains(&imp) && first == point
    }

    /// Records the outcome of `imp`'s trace at `point`, with a line for the llm artifact's
    /// notes (`take_notes`): where it went, or why no trace was made.
    pub fn finish_impl(&mut self, imp: Impl, point: &TracedPoint, r: anyhow::Result<ImplTrace>) {
        self.pending.retain(|&i| i != imp);
        let name = imp.label();
        let note = match r {
            Ok(t) => {
                self.done.push(t);
                format!(
                    "--trace: {name} {} (batch {}, prompt {}) traced into {}",
                    point.model,
                    point.batch,
                    point.prompt_len,
                    self.opts.out.display()
                )
            }
            Err(e) => format!("--trace: no {name} trace made, ran without it: {e:#}"),
        };
        self.notes.push(note);
    }

    /// The notes of the traces finished since the last call.
    pub fn take_notes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notes)
    }

    /// The implementations traced so far.
    pub fn done(&self) -> &[ImplTrace] {
        &self.done
    }

    /// The point every trace was made at (the run's first point).
    pub fn point(&self) -> Option<&TracedPoint> {
        self.point.as_ref()
    }

    /// Lines for the implementations never traced (their first point did not finish).
    pub fn missing(&self) -> Vec<String> {
        let at = self.point.as_ref().map_or(String::new(), |p| {
            format!(" ({} batch {} prompt {})", p.model, p.batch, p.prompt_len)
        });
        self.pending
            .iter()
            .map(|i| {
                format!(
                    "--trace: no {} trace made: its first point{at} did not finish",
                    i.label()
                )
            })
            .collect()
    }
}

pub use outputs::write_outputs;
pub use record::trace_candle;
#[cfg(feature = "cuda")]
pub use record::trace_opbench;
