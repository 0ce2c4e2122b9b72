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

/// A tail percentile needs samples beyond it: P95 is shown from this many samples on...
pub const MIN_SAMPLES_P95: usize = 20;
/// ...and P99 from this many (with fewer, it is the max or an interpolation next to it).
pub const MIN_SAMPLES_P99: usize = 100;

/// "P50 1.2 ms (P5 1.1, P95 1.4, P99 1.9, n=635)", the tail percentiles only where there are
/// samples enough for them (`MIN_SAMPLES_P95`, `MIN_SAMPLES_P99`); min and max otherwise.
pub fn stat_line(k: &str, s: &crate::stats::Summary) -> String {
    let u = names::unit_label(k);
    let mut parts = Vec::new();
    if s.n >= MIN_SAMPLES_P95 {
        parts.push(format!("P5 {}", fmt::num(s.p5)));
        parts.push(format!("P95 {}", fmt::num(s.p95)));
    } else {
        parts.push(format!("min {}", fmt::num(s.min)));
        parts.push(format!("max {}", fmt::num(s.max)));
    }
    if s.n >= MIN_SAMPLES_P99 {
        parts.push(format!("P99 {}", fmt::num(s.p99)));
    }
    parts.push(format!("n={}", s.n));
    format!("P50 {} {u} ({})", fmt::num(s.p50), parts.join(", "))
}
