//! One timed generation: prefill of a batch of prompts, then greedy decode, with the device
//! synchronized before every clock read.

use super::backend::Backend;
use super::model::Model;
use anyhow::{bail, Context, Result};
use candle_core::{Tensor, D};
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// The times of one generation (one repeat). Also what the Python peer writes per repeat.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RepeatTimes {
    /// Prompt upload, prefill, first token's argmax, and that token on the host.
    pub ttft_ms: f64,
    /// Each decode step: upload the last tokens, forward, argmax, the new tokens on the host.
    pub step_ms: Vec<f64>,
    /// Host time to enqueue each decode step (before waiting for the GPU); empty if unknown.
    #[serde(default)]
    pub enqueue_ms: Vec<f64>,
    /// Start of the prompt upload to the last token on the host.
    pub e2e_ms: f64,
    /// Highest device memory in use seen at the sample points (bytes), when known.
    #[serde(default)]
    pub peak_mem_bytes: Option<u64>,
}

/// A generation's times and its tokens (`tokens[row]`: the new tokens of that sequence).
pub struct Generation {
    pub times: RepeatTimes,
    pub tokens: Vec<Vec<u32>>,
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// Runs prefill of `prompt` (batch x len tokens) and greedy decode up to `new_tokens` new
/// tokens per sequence. `profile_step`: wrap that decode step (1-based) in cuProfilerStart/Stop.
/// `sample_mem`: read the device's used memory (cuMemGetInfo) before each synchronize.
pub fn generate(
    model: &Model,
    backend: &Backend,
    prompt: &[Vec<u32>],
    new_tokens: usize,
    profile_step: Option<usize>,
    sample_mem: bool,
) -> Result<Generation> {
    let b = prompt.len();
    if b == 0 || new_tokens == 0 {
        bail!("generate needs at least one prompt and one new token");
    }
    let p = prompt[0].len();
    if p == 0 || prompt.iter().any(|r| r.len() != p) {
        bail!("every prompt of a batch must have the same positive length");
    }
    let max_pos = model.arch.max_position_embeddings;
    if p + new_tokens - 1 > max_pos {
        bail!(
            "prompt {p} + {new_tokens} new tokens needs {} positions, the model has {max_pos} \
             (max_position_embeddings)",
            p + new_tokens - 1
        );
    }
    let dev = backend.device();
    let mut cache = model.cache.clone();
    let mut peak = if sample_mem {
        backend.mem_used_bytes()
    } else {
        None
    };
    let note_mem = |peak: &mut Option<u64>| {
        if !sample_mem {
            return;
        }
        if let Some(m) = backend.mem_used_bytes() {
            *peak = Some(peak.map_or(m, |p| p.max(m)));
        }
    };
    backend.sync()?;
    let t0 = Instant::now();
    let input = Tensor::from_vec(prompt.concat(), (b, p), &dev)?;
    let logits = model
        .llama
        .forward(&input, 0, &mut cache)
        .context("prefill")?;
    let next = logits.argmax_keepdim(D::Minus1)?;
    note_mem(&mut peak);
    let mut ids: Vec<u32> = next.flatten_all()?.to_vec1()?;
    backend.sync()?;
    let ttft_ms = ms(t0);
    let mut tokens: Vec<Vec<u32>> = ids.iter().map(|&t| vec![t]).collect();
    let mut step_ms = Vec::with_capacity(new_tokens.saturating_sub(1));
    let mut enqueue_ms = Vec::with_capacity(new_tokens.saturating_sub(1));
    for step in 1..new_tokens {
        let profiling = profile_step == Some(step);
        if profiling {
            backend.profiler(true)?;
        }
        let ts = Instant::now();
        let input = Tensor::from_vec(ids, (b, 1), &dev)?;
        let logits = model
            .llama
            .forward(&input, p + step - 1, &mut cache)
            .with_context(|| format!("decode step {step}"))?;
        let next = logits.argmax_keepdim(D::Minus1)?;
        enqueue_ms.push(ms(ts));
        note_mem(&mut peak);
        ids = next.flatten_all()?.to_vec1()?;
        backend.sync()?;
        step_ms.push(ms(ts));
        if profiling {
            backend.profiler(false)?;
        }
        for (row, &t) in tokens.iter_mut().zip(&ids) {
            row.push(t);
        }
    }
    let e2e_ms = ms(t0);
    Ok(Generation {
        times: RepeatTimes {
            ttft_ms,
            step_ms,
            enqueue_ms,
            e2e_ms,
            peak_mem_bytes: peak,
        },
        tokens,
    })
}

/// Last-position logits of one prompt (batch 1), for the parity check.
pub fn prompt_logits(model: &Model, backend: &Backend, prompt: &[u32]) -> Result<Tensor> {
    let dev = backend.device();
    let mut cache = model.cache.clone();
    let input = Tensor::new(prompt, &dev)?.unsqueeze(0)?;
    let logits = model.llama.forward(&input, 0, &mut cache)?;
    Ok(logits.to_device(&candle_core::Device::Cpu)?)
}
