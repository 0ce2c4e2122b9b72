//! The small lookup lists that map artifact field names to what the pages show.
//!
//! Benchmarks name their params, stats and metrics by convention (`docs/artifacts.md`); where
//! a producer might use a close variant, each list below names the accepted spellings in order
//! of preference. A missing key is never an error: the page leaves that figure out.

use crate::artifact::{Param, ResultRow};
use crate::stats::Summary;

// Coordinates.
pub const MODEL: &[&str] = &["model", "config", "model_name"];
pub const BATCH: &[&str] = &["batch", "batch_size"];
pub const DTYPE: &[&str] = &["dtype"];
pub const MODE: &[&str] = &["mode", "l2"];
pub const ROWS: &[&str] = &["rows"];
pub const COLS: &[&str] = &["cols", "hidden", "hidden_size"];
pub const PROMPT_LEN: &[&str] = &["prompt_len", "prompt_tokens"];
pub const NEW_TOKENS: &[&str] = &["new_tokens", "gen_tokens", "max_new_tokens"];
pub const WEIGHTS: &[&str] = &["weights"];
pub const PARAMS_COUNT: &[&str] = &["params_count", "param_count", "parameters", "n_params"];
pub const LAYERS: &[&str] = &["layers", "num_layers", "num_hidden_layers"];
pub const HIDDEN: &[&str] = &["hidden_size", "hidden", "d_model"];
pub const HEADS: &[&str] = &["heads", "num_heads", "num_attention_heads"];
pub const GEMM_M: &[&str] = &["m"];
pub const GEMM_N: &[&str] = &["n"];
pub const GEMM_K: &[&str] = &["k"];
pub const SHAPE_SET: &[&str] = &["shape_set"];
pub const LAYER_OP: &[&str] = &["layer_op", "op"];
/// "nk" when B is stored [N, K] (a linear layer's weight); absent for [K, N].
pub const B_LAYOUT: &[&str] = &["b_layout"];
pub const TOKENS: &[&str] = &["tokens"];
/// GEMM: position of a kernel on its ladder, and which ladder (`simt_ladder`, ...).
pub const LADDER_STEP: &[&str] = &["ladder_step"];
pub const IMPL_KIND: &[&str] = &["impl_kind"];

// Sampled quantities (stats), by meaning.
pub const TIME: &[&str] = &["time_us", "kernel_time_us", "time_ms"];
pub const TTFT: &[&str] = &["ttft_ms", "prefill_ms", "prefill_time_ms"];
pub const DECODE_STEP: &[&str] = &["decode_step_ms", "decode_ms", "step_ms"];
pub const E2E: &[&str] = &["e2e_ms", "total_ms", "generate_ms"];

// Derived figures (metrics).
pub const GBPS: &[&str] = &["gbps", "achieved_gbps"];
pub const PCT_COPY: &[&str] = &["pct_of_copy_bw", "pct_of_copy", "pct_of_copy_gbps"];
pub const SPEEDUP_LN: &[&str] = &[
    "speedup_vs_candle_p50",
    "speedup_vs_candle",
    "speedup_vs_baseline",
    "speedup",
];
pub const TFLOPS: &[&str] = &["tflops"];
pub const INTENSITY: &[&str] = &[
    "intensity_flop_per_byte",
    "arithmetic_intensity_flop_per_byte",
    "intensity",
];
pub const BYTES_MOVED: &[&str] = &["bytes_moved", "min_bytes", "bytes"];
pub const PCT_CEILING: &[&str] = &["pct_of_ceiling", "pct_of_roofline", "pct_of_peak"];
pub const PCT_CUBLAS: &[&str] = &["pct_of_cublas"];
/// Decode tokens/s; a row of benchmark "decode" may also call it `tokens_per_s` (see `decode_tps`).
pub const DECODE_TPS: &[&str] = &["decode_tokens_per_s"];
pub const PREFILL_TPS: &[&str] = &["prefill_tokens_per_s"];
pub const E2E_TPS: &[&str] = &["e2e_tokens_per_s", "tokens_per_s"];
pub const BOUND_TPS: &[&str] = &["bandwidth_bound_tokens_per_s", "decode_bound_tokens_per_s"];
pub const PCT_BOUND: &[&str] = &["pct_of_bandwidth_bound"];
pub const PEAK_MEMORY: &[&str] = &["peak_memory_bytes"];
/// Peak device memory during a run (NVML's used memory), else the framework allocator's peak.
pub const PEAK_DEVICE_MEMORY: &[&str] = &["peak_device_mem_bytes", "peak_memory_bytes"];
pub const PEAK_ALLOCATOR: &[&str] = &["peak_allocator_bytes"];

// Implementations, by role.
/// LayerNorm's baseline (the speedups are measured against it).
pub const LN_BASELINE: &[&str] = &["candle"];
/// The vendor library every GEMM kernel is compared with.
pub fn is_cublas(imp: &str) -> bool {
    imp.to_ascii_lowercase().starts_with("cublas")
}
/// LLM peers: HF transformers in any mode.
pub fn is_llm_peer(imp: &str) -> bool {
    let i = imp.to_ascii_lowercase();
    i.starts_with("transformers") || i.starts_with("hf") || i.starts_with("torch")
}
/// GEMM kernels in ladder order (Boehm's worklog, then tensor-core kernels); others sort after.
pub const GEMM_LADDER: &[&str] = &[
    "naive",
    "coalesced",
    "smem_tiled",
    "blocktile_1d",
    "blocktile_2d",
    "vectorized",
    "warptile",
    "mma_sync_bf16",
    "wgmma_bf16",
    "wgmma_tma_bf16",
];

/// The first of `keys` present in the row's params.
pub fn param<'a>(row: &'a ResultRow, keys: &[&str]) -> Option<&'a Param> {
    keys.iter().find_map(|k| row.params.get(*k))
}

/// A param as display text.
pub fn param_str(row: &ResultRow, keys: &[&str]) -> Option<String> {
    param(row, keys).map(|p| p.to_string())
}

/// A param as a number (ints, floats, and numeric text).
pub fn param_f64(row: &ResultRow, keys: &[&str]) -> Option<f64> {
    match param(row, keys)? {
        Param::Int(v) => Some(*v as f64),
        Param::Float(v) => Some(*v),
        Param::Text(t) => t.trim().parse().ok(),
        Param::Bool(_) => None,
    }
}

/// The first of `keys` present in the row's metrics.
pub fn metric(row: &ResultRow, keys: &[&str]) -> Option<f64> {
    keys.iter()
        .find_map(|k| row.metrics.get(*k))
        .copied()
        .filter(|v| v.is_finite())
}

/// Decode tokens/s of a row: `decode_tokens_per_s`, or `tokens_per_s` on a "decode" row.
pub fn decode_tps(row: &ResultRow) -> Option<f64> {
    metric(row, DECODE_TPS).or_else(|| {
        (row.benchmark == "decode")
            .then(|| metric(row, &["tokens_per_s"]))
            .flatten()
    })
}

/// Prefill tokens/s of a row: `prefill_tokens_per_s`, or `tokens_per_s` on a "prefill" row.
pub fn prefill_tps(row: &ResultRow) -> Option<f64> {
    metric(row, PREFILL_TPS).or_else(|| {
        (row.benchmark == "prefill")
            .then(|| metric(row, &["tokens_per_s"]))
            .flatten()
    })
}

/// The first of `keys` present in the row's stats, with the key (it carries the unit).
pub fn stat<'a>(row: &'a ResultRow, keys: &[&str]) -> Option<(&'a str, &'a Summary)> {
    keys.iter()
        .find_map(|k| row.stats.get_key_value(*k))
        .map(|(k, s)| (k.as_str(), s))
}

/// The row's main timing: a known time stat, else the first stat it has.
pub fn primary_stat(row: &ResultRow) -> Option<(&str, &Summary)> {
    stat(row, TIME)
        .or_else(|| stat(row, DECODE_STEP))
        .or_else(|| stat(row, TTFT))
        .or_else(|| stat(row, E2E))
        .or_else(|| row.stats.iter().next().map(|(k, s)| (k.as_str(), s)))
}

/// Factor from a stat's unit (its key's suffix) to microseconds.
pub fn to_us(stat_key: &str) -> f64 {
    if stat_key.ends_with("_us") {
        1.0
    } else if stat_key.ends_with("_ms") {
        1e3
    } else if stat_key.ends_with("_s") {
        1e6
    } else {
        1.0
    }
}

/// The unit suffix of a stat key, for axis titles: "time_us" -> "µs".
pub fn unit_label(stat_key: &str) -> &'static str {
    if stat_key.ends_with("_us") {
        "µs"
    } else if stat_key.ends_with("_ms") {
        "ms"
    } else if stat_key.ends_with("_s") {
        "s"
    } else {
        ""
    }
}

/// Bytes per element of a dtype name, for arithmetic intensity when a row does not carry it.
pub fn dtype_bytes(dtype: &str) -> Option<f64> {
    match dtype.to_ascii_lowercase().as_str() {
        "f64" | "fp64" | "float64" => Some(8.0),
        "f32" | "fp32" | "float32" | "tf32" => Some(4.0),
        "f16" | "fp16" | "float16" | "bf16" | "bfloat16" => Some(2.0),
        "f8" | "fp8" | "e4m3" | "e5m2" | "int8" | "i8" => Some(1.0),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups_take_the_first_present_key_and_skip_missing_ones() {
        let mut r = ResultRow::new("decode", "candle")
            .param("config", "tiny")
            .param("batch_size", 4usize);
        r.metrics.insert("tokens_per_s".into(), 90.0);
        assert_eq!(param_str(&r, MODEL).as_deref(), Some("tiny"));
        assert_eq!(param_f64(&r, BATCH), Some(4.0));
        assert_eq!(decode_tps(&r), Some(90.0));
        assert_eq!(prefill_tps(&r), None);
        assert_eq!(metric(&r, BOUND_TPS), None);
        assert!(primary_stat(&r).is_none());
    }

    #[test]
    fn units_convert_to_microseconds() {
        assert_eq!(to_us("decode_step_ms"), 1e3);
        assert_eq!(to_us("time_us"), 1.0);
        assert_eq!(unit_label("e2e_s"), "s");
    }
}
