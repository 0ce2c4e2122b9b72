//! The LLM page's vocabulary: the phases it charts, a configuration's label and sort key, and
//! a stat's hover line.

use crate::site::fmt;
use crate::site::names;
use crate::site::pages::common::{rank, DTYPE_ORDER};
use crate::site::points::Point;

/// The phases this page charts, each found by its stat: a row of benchmark "prefill",
/// "decode" or "e2e" has one, a "generate" row all three.
pub struct Phase {
    pub benchmark: &'static str,
    pub label: &'static str,
    pub stat: &'static [&'static str],
}

pub const PHASES: &[Phase] = &[
    Phase {
        benchmark: "prefill",
        label: "prefill (TTFT)",
        stat: names::TTFT,
    },
    Phase {
        benchmark: "decode",
        label: "decode step",
        stat: names::DECODE_STEP,
    },
    Phase {
        benchmark: "e2e",
        label: "end to end",
        stat: names::E2E,
    },
];

/// Whether a row has anything this page charts.
pub fn is_charted(p: &Point) -> bool {
    PHASES
        .iter()
        .any(|ph| names::stat(p.row, ph.stat).is_some())
        || names::decode_tps(p.row).is_some()
        || names::prefill_tps(p.row).is_some()
}

/// "TinyLlama-1.1B f16 b1 128+128": model, dtype, batch, prompt + new tokens.
pub fn base_config(p: &Point) -> String {
    let r = p.row;
    let mut parts = vec![names::param_str(r, names::MODEL).unwrap_or_else(|| "model?".into())];
    parts.extend(p.dtype());
    if let Some(b) = names::param_str(r, names::BATCH) {
        parts.push(format!("b{b}"));
    }
    match (
        names::param_str(r, names::PROMPT_LEN),
        names::param_str(r, names::NEW_TOKENS),
    ) {
        (Some(a), Some(b)) => parts.push(format!("{a}+{b}")),
        (Some(a), None) => parts.push(format!("prompt {a}")),
        _ => {}
    }
    if let Some(w) = names::param_str(r, names::WEIGHTS) {
        if w != "random" {
            parts.push(w);
        }
    }
    parts.join(" ")
}

pub fn config_key(p: &Point) -> Vec<f64> {
    let r = p.row;
    vec![
        names::param_f64(r, names::PARAMS_COUNT).unwrap_or(0.0),
        rank(&p.dtype().unwrap_or_default(), DTYPE_ORDER),
        names::param_f64(r, names::BATCH).unwrap_or(0.0),
        names::param_f64(r, names::PROMPT_LEN).unwrap_or(0.0),
        names::param_f64(r, names::NEW_TOKENS).unwrap_or(0.0),
    ]
}

pub fn stat_line(k: &str, s: &crate::stats::Summary) -> String {
    let u = names::unit_label(k);
    format!(
        "P50 {} {u} (P5 {}, P95 {}, P99 {}, n={})",
        fmt::num(s.p50),
        fmt::num(s.p5),
        fmt::num(s.p95),
        fmt::num(s.p99),
        s.n
    )
}
