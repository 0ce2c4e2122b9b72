//! Decode throughput across batch sizes: one line per implementation for each problem measured
//! at several batch sizes; a GPU is a filled or open marker (and a dotted line), not a legend
//! entry, and the parameters every line shares go into the caption.

use super::latency::{first_per_identity, gpu_key, gpu_symbol, hover};
use crate::site::chart::{pt_num, ChartView, Trace, TraceSet};
use crate::site::fmt;
use crate::site::measured;
use crate::site::names;
use crate::site::pages::common::gpus;
use crate::site::palette::Palette;
use crate::site::points::Point;
use crate::site::rules;
use std::collections::{BTreeMap, BTreeSet};

/// The problem without its batch size: "tinyllama-1.1b f16 128+128".
fn problem(p: &Point) -> String {
    let r = p.row;
    let mut parts = vec![names::param_str(r, names::MODEL).unwrap_or_else(|| "model?".into())];
    parts.extend(p.dtype());
    if let (Some(a), Some(b)) = (
        names::param_str(r, names::PROMPT_LEN),
        names::param_str(r, names::NEW_TOKENS),
    ) {
        parts.push(format!("{a}+{b}"));
    }
    parts.extend(names::param_str(r, names::WEIGHTS).filter(|w| w != "random"));
    parts.join(" ")
}

pub fn chart(decode: &[Point], pal: &Palette) -> ChartView {
    let pts = first_per_identity(decode);
    // A line needs two batch sizes: only implementations that ran a problem at several on
    // one GPU are drawn (single points are in the side-by-side chart).
    let line = |p: &Point| (p.imp().to_string(), problem(p), p.gpu());
    let mut batches: BTreeMap<(String, String, String), BTreeSet<String>> = BTreeMap::new();
    for p in &pts {
        if let Some(b) = names::param_str(p.row, names::BATCH) {
            batches.entry(line(p)).or_default().insert(b);
        }
    }
    let rows: Vec<Point> = pts
        .iter()
        .filter(|p| batches.get(&line(p)).is_some_and(|b| b.len() >= 2))
        .copied()
        .collect();
    let swept: BTreeSet<String> = rows.iter().map(problem).collect();
    let gpu_list = gpus(&rows);
    // Line names show only the problem parameters that vary; the shared ones are captioned.
    let parts: Vec<Vec<String>> = swept
        .iter()
        .map(|p| p.split(' ').map(str::to_string).collect())
        .collect();
    let (shown, common) = rules::varying(&parts);
    let label: BTreeMap<&String, String> = swept.iter().zip(shown).collect();
    let shared = match (swept.len(), common.is_empty()) {
        (1, _) => format!(
            " Every line: {}.",
            swept.iter().next().unwrap_or(&String::new())
        ),
        (_, false) => format!(" Every line: {}.", common.join(" ")),
        _ => String::new(),
    };
    let mut c = ChartView::new(
        "llm-throughput",
        "Decode throughput across batch sizes",
        &format!(
            "Generated tokens per second during decode (batch × steps per second), one line \
             per implementation that ran a problem at several batch sizes (single points are \
             in the side-by-side chart).{}{}",
            gpu_key(&gpu_list),
            shared
        ),
        "batch size",
        "decode tokens/s",
    );
    c.log_x = true;
    c.log_y = true;
    c.compact = true;
    let mut set = TraceSet::default();
    let mut named = BTreeSet::new();
    let mut sorted = rows.clone();
    sorted.sort_by(|a, b| {
        let batch = |p: &Point| names::param_f64(p.row, names::BATCH).unwrap_or(0.0);
        batch(a).total_cmp(&batch(b))
    });
    for p in &sorted {
        let (Some(b), Some(v)) = (
            names::param_f64(p.row, names::BATCH),
            names::decode_tps(p.row),
        ) else {
            continue;
        };
        let name = if swept.len() > 1 {
            format!("{} · {}", p.imp(), label[&problem(p)])
        } else {
            p.imp().to_string()
        };
        let gi = gpu_list.iter().position(|g| *g == p.gpu()).unwrap_or(0);
        let first = named.insert(name.clone());
        let t = set.get(&format!("{name}\u{1f}{gi}"), || {
            let mut t = Trace::new(&name, pal.of(p.imp()), "lines+markers");
            t.symbol = Some(gpu_symbol("circle", &gpu_list, p));
            t.dash = (gi > 0).then(|| "dot".to_string());
            t.no_legend = !first;
            t
        });
        let h = hover(p, &format!("{} tokens/s", fmt::num(v)));
        t.points.push(pt_num(b, v, h, p.dims()));
    }
    c.traces = set.into_vec();
    c.measured(&rows, measured::MEDIAN_RATE)
        .finish("No problem was measured at two batch sizes or more.")
}
