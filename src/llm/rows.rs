//! Turning repeats into artifact rows: latency distributions, throughputs, and the decode
//! bandwidth bound. Shared by candle's rows and the Python peer's, so both are computed alike.

use super::configs::Arch;
use super::generate::RepeatTimes;
use crate::artifact::{ResultRow, Timing};
use crate::stats::summarize;
use anyhow::{bail, Result};

/// The decode floor of one point: the bytes a step must read and the rate that allows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DecodeBound {
    /// Weights read once (all but the embedding table) plus the KV cache at the mean context.
    pub bytes_per_step: f64,
    /// batch / (bytes_per_step / copy bandwidth).
    pub tokens_per_s: f64,
}

/// The bandwidth bound of decode: every step reads the weights once and the KV cache of each
/// sequence (mean context over the T-1 steps: P + T/2 positions), at the copy bandwidth.
pub fn decode_bound(
    arch: &Arch,
    dtype_bytes: usize,
    batch: usize,
    prompt_len: usize,
    new_tokens: usize,
    copy_gbps: f64,
) -> DecodeBound {
    let weights = (arch.params_read_per_step() * dtype_bytes as u64) as f64;
    let mean_ctx = prompt_len as f64 + new_tokens as f64 / 2.0;
    let kv = batch as f64 * arch.kv_bytes_per_position(dtype_bytes) as f64 * mean_ctx;
    let bytes = weights + kv;
    DecodeBound {
        bytes_per_step: bytes,
        tokens_per_s: batch as f64 * copy_gbps * 1e9 / bytes,
    }
}

/// Fills a row's stats and metrics from its repeats (batch `b`, prompt `p` tokens).
pub fn fill_measured(
    row: &mut ResultRow,
    b: usize,
    p: usize,
    repeats: &[RepeatTimes],
) -> Result<()> {
    if repeats.is_empty() {
        bail!("no repeats to summarize");
    }
    let ttft: Vec<f64> = repeats.iter().map(|r| r.ttft_ms).collect();
    let e2e: Vec<f64> = repeats.iter().map(|r| r.e2e_ms).collect();
    let steps: Vec<f64> = repeats.iter().flat_map(|r| r.step_ms.clone()).collect();
    let enqueue: Vec<f64> = repeats.iter().flat_map(|r| r.enqueue_ms.clone()).collect();
    let ttft_s = summarize(&ttft)?;
    row.stats.insert("ttft_ms".into(), ttft_s.clone());
    row.stats.insert("e2e_ms".into(), summarize(&e2e)?);
    row.metrics.insert(
        "prefill_tokens_per_s".into(),
        (b * p) as f64 / (ttft_s.p50 / 1e3),
    );
    if !steps.is_empty() {
        row.stats
            .insert("decode_step_ms".into(), summarize(&steps)?);
        // Per repeat: tokens made by decode steps / time of those steps; then the median.
        let rates: Vec<f64> = repeats
            .iter()
            .filter(|r| !r.step_ms.is_empty())
            .map(|r| (b * r.step_ms.len()) as f64 / (r.step_ms.iter().sum::<f64>() / 1e3))
            .collect();
        let rate = summarize(&rates)?.p50;
        row.metrics.insert("decode_tokens_per_s".into(), rate);
        row.metrics
            .insert("decode_steps_per_s".into(), rate / b as f64);
    }
    if !enqueue.is_empty() {
        row.stats
            .insert("decode_enqueue_ms".into(), summarize(&enqueue)?);
    }
    if let Some(peak) = repeats.iter().filter_map(|r| r.peak_mem_bytes).max() {
        row.metrics
            .insert("peak_device_mem_bytes".into(), peak as f64);
    }
    Ok(())
}

/// Adds the bound and the achieved fraction of it (needs `decode_tokens_per_s`).
pub fn add_bound(row: &mut ResultRow, bound: DecodeBound) {
    row.metrics
        .insert("decode_bytes_per_step".into(), bound.bytes_per_step);
    row.metrics
        .insert("decode_bound_tokens_per_s".into(), bound.tokens_per_s);
    if let Some(rate) = row.metrics.get("decode_tokens_per_s").copied() {
        row.metrics.insert(
            "pct_of_bandwidth_bound".into(),
            100.0 * rate / bound.tokens_per_s,
        );
    }
}

/// How generate rows are timed.
pub fn host_timing(warmup: usize) -> Timing {
    Timing {
        method: "host_clock_synchronized".into(),
        warmup,
        launches_per_sample: 1,
        l2_cleared: false,
        sampling: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::configs::named;

    #[test]
    fn tinyllama_batch1_bound_is_weights_over_bandwidth() {
        let a = named("tinyllama-1.1b").unwrap();
        let b = decode_bound(&a, 2, 1, 128, 128, 3000.0);
        // 2.069 GB of weights + 22.5 KB x 192 positions of KV cache = 2.0734 GB.
        assert!(
            (b.bytes_per_step - 2_073_350_144.0).abs() < 1.0,
            "{}",
            b.bytes_per_step
        );
        assert!((b.tokens_per_s - 1447.0).abs() < 1.0, "{}", b.tokens_per_s);
        let b16 = decode_bound(&a, 2, 16, 128, 128, 3000.0);
        assert!(b16.tokens_per_s > 15.0 * b.tokens_per_s);
    }

    #[test]
    fn measured_metrics_follow_the_repeats() {
        let r = |ttft: f64, step: f64| RepeatTimes {
            ttft_ms: ttft,
            step_ms: vec![step; 9],
            enqueue_ms: vec![step / 2.0; 9],
            e2e_ms: ttft + 9.0 * step,
            peak_mem_bytes: Some(100),
        };
        let mut row = ResultRow::new("generate", "candle");
        fill_measured(
            &mut row,
            4,
            32,
            &[r(10.0, 10.0), r(20.0, 20.0), r(10.0, 10.0)],
        )
        .unwrap();
        assert_eq!(row.stats["decode_step_ms"].n, 27);
        assert_eq!(row.stats["ttft_ms"].p50, 10.0);
        // 4 sequences x 9 steps / 90 ms = 400 tokens/s (median repeat).
        assert!((row.metrics["decode_tokens_per_s"] - 400.0).abs() < 1e-9);
        assert!((row.metrics["prefill_tokens_per_s"] - 12800.0).abs() < 1e-9);
        add_bound(
            &mut row,
            DecodeBound {
                bytes_per_step: 1e9,
                tokens_per_s: 800.0,
            },
        );
        assert!((row.metrics["pct_of_bandwidth_bound"] - 50.0).abs() < 1e-9);
    }
}
