//! Timed generation and the parity check of the opbench engine: the same loop and clock points
//! as candle's (`llm::generate`), and logits compared with candle's on the same weights and
//! inputs at prefill and at every decode step (candle's tokens fed to both, so one early
//! difference does not hide later ones).

use super::engine::Engine;
use super::parity::{compare_logits, ParityReport};
use crate::llm::backend::Backend;
use crate::llm::generate::{Generation, RepeatTimes, StepObserver};
use crate::llm::model::Model;
use anyhow::{bail, Context, Result};
use candle_core::{Tensor, D};
use std::time::Instant;

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// Prefill of `prompt`, then `new_tokens - 1` graph-replayed decode steps, each ending with the
/// new tokens on the host (as candle's loop does).
pub fn generate(engine: &mut Engine, prompt: &[Vec<u32>], new_tokens: usize) -> Result<Generation> {
    generate_observed(engine, prompt, new_tokens, None)
}

/// `generate`, telling `observer` where each step begins (before its first operation is
/// issued) and ends (after the tokens are on the host); step 0 is prefill. Used by `--trace`.
pub fn generate_observed(
    engine: &mut Engine,
    prompt: &[Vec<u32>],
    new_tokens: usize,
    mut observer: Option<&mut dyn StepObserver>,
) -> Result<Generation> {
    if new_tokens == 0 {
        bail!("generate needs at least one new token");
    }
    if engine.prompt_len + new_tokens - 1 > engine.max_ctx {
        bail!(
            "opbench: prompt {} + {new_tokens} new tokens exceed the engine's {} positions",
            engine.prompt_len,
            engine.max_ctx
        );
    }
    let mut mark = |step: usize, begin: bool| {
        if let Some(o) = observer.as_deref_mut() {
            if begin {
                o.begin(step)
            } else {
                o.end(step)
            }
        }
    };
    mark(0, true);
    let t0 = Instant::now();
    let first = engine.prefill(prompt)?;
    let ttft_ms = ms(t0);
    mark(0, false);
    let mut tokens: Vec<Vec<u32>> = first.iter().map(|&t| vec![t]).collect();
    let mut step_ms = Vec::with_capacity(new_tokens - 1);
    let mut enqueue_ms = Vec::with_capacity(new_tokens - 1);
    for step in 1..new_tokens {
        mark(step, true);
        let ts = Instant::now();
        engine.launch_step()?;
        enqueue_ms.push(ms(ts));
        let ids = engine.read_tokens()?;
        step_ms.push(ms(ts));
        mark(step, false);
        for (row, &t) in tokens.iter_mut().zip(&ids) {
            row.push(t);
        }
    }
    Ok(Generation {
        times: RepeatTimes {
            ttft_ms,
            step_ms,
            enqueue_ms,
            e2e_ms: ms(t0),
            peak_mem_bytes: None,
        },
        tokens,
    })
}

fn candle_logits(
    model: &Model,
    cache: &mut candle_transformers::models::llama::Cache,
    dev: &candle_core::Device,
    ids: &[Vec<u32>],
    pos: usize,
) -> Result<(Vec<f32>, Vec<u32>)> {
    let (b, n) = (ids.len(), ids[0].len());
    let input = Tensor::from_vec(ids.concat(), (b, n), dev)?;
    let logits = model
        .llama
        .forward(&input, pos, cache)
        .with_context(|| format!("candle forward at position {pos}"))?;
    let next: Vec<u32> = logits.argmax(D::Minus1)?.to_vec1()?;
    let flat: Vec<f32> = logits.flatten_all()?.to_vec1()?;
    Ok((flat, next))
}

/// Logits parity against candle at prefill and `steps` decode steps, and greedy agreement.
pub fn parity(
    model: &Model,
    backend: &Backend,
    engine: &mut Engine,
    prompt: &[Vec<u32>],
    steps: usize,
) -> Result<ParityReport> {
    let dev = backend.device();
    let vocab = model.arch.vocab_size;
    let mut cache = model.cache.clone();
    let (ref_logits, mut ref_next) = candle_logits(model, &mut cache, &dev, prompt, 0)?;
    let ours_next = engine.prefill(prompt)?;
    let ours = engine.logits()?;
    let mut report = ParityReport::new(compare_logits(&ours, &ref_logits)?);
    report.note_tokens(0, &ours_next, &ref_next, &ref_logits, vocab);
    let p = engine.prompt_len;
    for step in 1..=steps {
        // Both sides embed candle's previous tokens.
        let feed: Vec<Vec<u32>> = ref_next.iter().map(|&t| vec![t]).collect();
        let (ref_logits, next) = candle_logits(model, &mut cache, &dev, &feed, p + step - 1)?;
        engine.set_tokens(&ref_next)?;
        let ours_next = engine.step()?;
        let ours = engine.logits()?;
        report.push_decode(compare_logits(&ours, &ref_logits)?);
        report.note_tokens(step, &ours_next, &next, &ref_logits, vocab);
        ref_next = next;
    }
    Ok(report)
}
