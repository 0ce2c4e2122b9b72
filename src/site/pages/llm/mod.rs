//! The LLM page: latency, throughput, percentiles, prefill vs decode, architectures,
//! efficiency, the transformers peer side by side, and decode against its bandwidth bound.

use super::super::chart::{pt_cat, ChartView, Pt, Trace, TraceSet};
use super::super::fmt;
use super::super::measured;
use super::super::names;
use super::super::palette::{self, Palette};
use super::super::points::Point;
use super::common::*;
use super::PageContext;

mod arch;
mod latency;
mod peer;
mod throughput;
use std::collections::HashMap;

/// The phases this page charts, each found by its stat: a row of benchmark "prefill",
/// "decode" or "e2e" has one, a "generate" row all three.
struct Phase {
    benchmark: &'static str,
    label: &'static str,
    stat: &'static [&'static str],
}

const PHASES: &[Phase] = &[
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
fn is_charted(p: &Point) -> bool {
    PHASES
        .iter()
        .any(|ph| names::stat(p.row, ph.stat).is_some())
        || names::decode_tps(p.row).is_some()
        || names::prefill_tps(p.row).is_some()
}

/// "TinyLlama-1.1B f16 b1 128+128": model, dtype, batch, prompt + new tokens.
fn base_config(p: &Point) -> String {
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

fn config_key(p: &Point) -> Vec<f64> {
    let r = p.row;
    vec![
        names::param_f64(r, names::PARAMS_COUNT).unwrap_or(0.0),
        rank(&p.dtype().unwrap_or_default(), DTYPE_ORDER),
        names::param_f64(r, names::BATCH).unwrap_or(0.0),
        names::param_f64(r, names::PROMPT_LEN).unwrap_or(0.0),
        names::param_f64(r, names::NEW_TOKENS).unwrap_or(0.0),
    ]
}

fn stat_line(k: &str, s: &crate::stats::Summary) -> String {
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

pub fn build(page: &mut PageContext, points: &[Point], pal: &Palette) {
    page.intro = "LLM inference with candle against HF transformers (eager) on the same \
                  configurations: time to first token, decode step time and tokens/s, and how \
                  far decode is from the bound set by reading every weight once per step."
        .into();
    if points.is_empty() {
        empty_kind(page, "LLM", "llm_bench");
        return;
    }
    page.filters = filters(points, &["gpu", "model", "dtype", "batch", "impl"]);
    let multi = multi_gpu(points);
    let gpu_list = gpus(points);
    let ok: Vec<Point> = points.iter().filter(|p| p.ok()).copied().collect();
    let charted: Vec<Point> = ok.iter().filter(|p| is_charted(p)).copied().collect();
    let extras = distinguishing(&charted, base_config);
    let config = |p: &Point| with_extra(base_config(p), p, &extras);
    let hover = |p: &Point, extra: &[String]| -> String {
        let mut lines = vec![format!("{} · {}", p.imp(), p.row.benchmark), config(p)];
        lines.extend(extra.iter().cloned());
        lines.push(p.gpu());
        lines.join("\n")
    };
    let configs = ordered_categories(charted.iter().map(|p| (config_key(p), config(p))).collect());
    let decode: Vec<Point> = charted
        .iter()
        .filter(|p| names::decode_tps(p.row).is_some())
        .copied()
        .collect();
    let push = |set: &mut TraceSet, name: &str, p: &Point, mode: &str, pt: Pt| {
        set.get(name, || {
            let mut t = Trace::new(name, pal.of(p.imp()), mode);
            t.pattern = gpu_pattern(p, &gpu_list);
            t
        })
        .points
        .push(pt);
    };

    let lat = latency::latency(&charted, pal);

    let thr = throughput::chart(&decode, pal);

    let pct_charts = latency::distributions(&charted, pal);

    // Prefill vs decode tokens/s.
    let mut pd = ChartView::new(
        "llm-prefill-decode",
        "Prefill vs decode",
        "Tokens per second in each phase: prefill processes the whole prompt at once \
         (compute-bound), decode one token per sequence per step (bandwidth- or \
         overhead-bound). Log scale.",
        "configuration",
        "tokens/s",
    );
    pd.log_y = true;
    pd.x_order = configs.clone();
    let mut set = TraceSet::default();
    for (p, (phase, v)) in charted.iter().flat_map(|p| {
        [
            ("prefill", names::prefill_tps(p.row)),
            ("decode", names::decode_tps(p.row)),
        ]
        .into_iter()
        .filter_map(move |(ph, v)| Some((p, (ph, v?))))
    }) {
        let name = format!("{} · {phase}", series(p.imp(), p, multi));
        let pt = pt_cat(
            &config(p),
            v,
            hover(p, &[format!("{} tokens/s", fmt::num(v))]),
            p.dims(),
        );
        set.get(&name, || {
            let mut t = Trace::new(&name, pal.of(p.imp()), "bar");
            t.pattern = if phase == "prefill" {
                Some("/".into())
            } else {
                gpu_pattern(p, &gpu_list)
            };
            t
        })
        .points
        .push(pt);
    }
    pd.traces = set.into_vec();
    let pd = pd
        .measured(&charted, measured::MEDIAN_RATE)
        .finish("No prefill or decode point carries tokens/s.");

    let arch = arch::chart(points);

    // Efficiency: decode tokens/s per layer and per billion parameters.
    let efficiency = |id: &str, title: &str, caption: &str, y: &str, keys: &[&str], scale: f64| {
        let mut c = ChartView::new(id, title, caption, "configuration", y);
        c.compact = true;
        c.x_order = configs.clone();
        let mut set = TraceSet::default();
        for p in &decode {
            let (Some(v), Some(d)) = (
                names::decode_tps(p.row),
                names::param_f64(p.row, keys).filter(|d| *d > 0.0),
            ) else {
                continue;
            };
            let y_val = v / (d / scale);
            let h = hover(p, &[format!("{} {y}", fmt::num(y_val))]);
            let name = series(p.imp(), p, multi);
            push(
                &mut set,
                &name,
                p,
                "bar",
                pt_cat(&config(p), y_val, h, p.dims()),
            );
        }
        c.traces = set.into_vec();
        c.measured(&decode, measured::MEDIAN_RATE)
            .finish("No decode point carries tokens/s with this model size.")
    };
    let eff_layer = efficiency(
        "llm-eff-layer",
        "Efficiency per layer",
        "Decode tokens/s divided by the number of transformer layers.",
        "tokens/s per layer",
        names::LAYERS,
        1.0,
    );
    let eff_params = efficiency(
        "llm-eff-params",
        "Efficiency per parameter",
        "Decode tokens/s divided by the parameter count in billions.",
        "tokens/s per B params",
        names::PARAMS_COUNT,
        1e9,
    );

    let side = peer::chart(&decode, pal);

    // Decode against the bandwidth bound.
    let mut bound = ChartView::new(
        "llm-bound",
        "Decode against its bandwidth bound",
        "Bars: measured decode tokens/s. Red dashes: the bound if every step only read the \
         weights once at the measured copy bandwidth (metrics.bandwidth_bound_tokens_per_s); \
         hover gives the fraction reached.",
        "configuration",
        "decode tokens/s",
    );
    bound.log_y = true;
    bound.x_order = configs.clone();
    let mut set = TraceSet::default();
    let mut bound_seen: HashMap<String, ()> = HashMap::new();
    for p in &decode {
        let v = names::decode_tps(p.row);
        let b = names::metric(p.row, names::BOUND_TPS);
        let pct = names::metric(p.row, names::PCT_BOUND).or_else(|| Some(100.0 * v? / b?));
        if let Some(v) = v {
            let mut extra = vec![format!("{} tokens/s", fmt::num(v))];
            if let (Some(b), Some(pc)) = (b, pct) {
                extra.push(format!(
                    "{} of the {} tokens/s bound",
                    fmt::pct(pc),
                    fmt::num(b)
                ));
            }
            let name = series(p.imp(), p, multi);
            push(
                &mut set,
                &name,
                p,
                "bar",
                pt_cat(&config(p), v, hover(p, &extra), p.dims()),
            );
        }
        if let Some(b) = b {
            // One bound marker per configuration and GPU, whatever the implementation.
            let key = format!("{}\u{1f}{}", config(p), p.gpu());
            if bound_seen.insert(key, ()).is_none() {
                let name = if multi {
                    format!("bandwidth bound · {}", p.gpu())
                } else {
                    "bandwidth bound".to_string()
                };
                let mut dims = p.dims();
                dims.remove("impl");
                let h = format!("{}\nbound {} tokens/s\n{}", config(p), fmt::num(b), p.gpu());
                let t = set.get(&name, || {
                    let mut t = Trace::new(&name, palette::CEILING, "markers");
                    t.symbol = Some("line-ew-open".into());
                    t
                });
                t.points.push(pt_cat(&config(p), b, h, dims));
            }
        }
    }
    bound.traces = set.into_vec();
    let bound = bound
        .measured(&decode, measured::MEDIAN_RATE)
        .finish("No decode point carries tokens/s.");

    let mut s1 = Section::new("latency", "Latency", "");
    s1.charts.push(lat);
    s1.charts.extend(pct_charts);
    let mut s2 = Section::new("throughput", "Throughput", "");
    s2.charts.push(thr);
    s2.charts.push(pd);
    s2.charts.push(side);
    s2.charts.push(bound);
    let mut s3 = Section::new("models", "Models and efficiency", "");
    s3.charts.push(arch);
    s3.charts.push(eff_layer);
    s3.charts.push(eff_params);
    let others: Vec<Point> = points
        .iter()
        .filter(|p| p.ok() && !is_charted(p))
        .copied()
        .collect();
    s3.tables.extend(other_rows_table(
        "llm-other",
        "Other LLM results (parity checks and more)",
        &others,
    ));
    s3.tables.extend(not_ok_table(points));
    page.sections = vec![s1, s2, s3];
}
