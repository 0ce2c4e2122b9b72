//! The overview's table of headline figures: one row per benchmark, implementation and GPU,
//! with its best headline figure and the point it was measured at. A median over all points
//! would mix shapes three orders of magnitude apart (a 1-token GEMM and 8192^3), so the table
//! names one point; the benchmark pages chart the rest.

use super::cards::gpu_dims;
use crate::artifact::Status;
use crate::site::chart::{TableRow, TableView};
use crate::site::fmt;
use crate::site::names;
use crate::site::points::{Point, Store};
use std::collections::BTreeMap;

/// The headline figure of a (kind, benchmark): (label, metric lookups, higher is better).
fn headline(kind: &str, benchmark: &str) -> Option<(&'static str, &'static [&'static str])> {
    match (kind, benchmark) {
        ("layernorm", _) => Some(("GB/s", names::GBPS)),
        ("gemm", _) | ("kernels", _) => Some(("TFLOP/s", names::TFLOPS)),
        ("comm", _) => Some(("GB/s bus bandwidth", &["busbw_gbps"])),
        (_, "prefill") => Some((
            "prefill tokens/s",
            &["prefill_tokens_per_s", "tokens_per_s"],
        )),
        (_, "decode") => Some(("decode tokens/s", &["decode_tokens_per_s", "tokens_per_s"])),
        (_, "e2e") => Some(("tokens/s", names::E2E_TPS)),
        (_, "generate") => Some(("decode tokens/s", names::DECODE_TPS)),
        _ => None,
    }
}

/// The point in a few words: "16384x8192 bf16 cold", "8192x8192x8192 f16 nk",
/// "tinyllama-1.1b batch 4".
fn where_measured(p: &Point) -> String {
    let text = |k: &str| names::param_str(p.row, &[k]);
    let mut parts: Vec<String> = Vec::new();
    if let Some(c) = text("collective") {
        parts.push(c.replace('_', "-"));
        parts.extend(names::param_f64(p.row, &["bytes"]).map(fmt::bytes_binary));
        parts.extend(text("world_size").map(|n| format!("{n} GPUs")));
    } else if let Some(shape) = text("shape") {
        parts.push(shape);
    } else if let (Some(m), Some(n), Some(k)) = (text("m"), text("n"), text("k")) {
        parts.push(format!("{m}x{n}x{k}"));
    } else if let Some(model) = text("model") {
        parts.push(model);
    }
    parts.extend(p.dtype());
    for k in ["b_layout", "mode", "batch"] {
        if let Some(v) = text(k) {
            parts.push(if k == "batch" {
                format!("batch {v}")
            } else {
                v
            });
        }
    }
    if parts.is_empty() {
        return p.identity().params;
    }
    parts.join(" ")
}

/// A metric key in words: "distinct_kernels" -> "distinct kernels", "algbw_gbps" -> "algbw
/// GB/s".
fn metric_words(key: &str) -> String {
    const UNITS: [(&str, &str); 6] = [
        ("_gbps", " GB/s"),
        ("_tflops", " TFLOP/s"),
        ("_pct", " %"),
        ("_us", " µs"),
        ("_ms", " ms"),
        ("_s", " s"),
    ];
    let (stem, unit) = UNITS
        .iter()
        .find_map(|(suffix, unit)| key.strip_suffix(suffix).map(|s| (s, *unit)))
        .unwrap_or((key, ""));
    format!("{}{unit}", stem.replace('_', " "))
}

/// The kind as its page names it ("Collectives"), or as written.
fn kind_title(kind: &str) -> String {
    crate::site::pages::KIND_PAGES
        .iter()
        .find(|(k, _, _)| *k == kind)
        .map_or(kind.to_string(), |(_, _, t)| t.to_string())
}

/// One row per benchmark, implementation and GPU (traced workloads are in the Traces index).
pub fn table(store: &Store) -> TableView {
    let mut groups: BTreeMap<(String, String, String, String), Vec<Point>> = BTreeMap::new();
    for p in store.points.iter().filter(|p| p.artifact().kind != "trace") {
        groups
            .entry((
                p.artifact().kind.clone(),
                p.row.benchmark.clone(),
                p.imp().to_string(),
                p.gpu(),
            ))
            .or_default()
            .push(*p);
    }
    let mut rows = Vec::new();
    for ((kind, bench, imp, gpu), pts) in groups {
        let count = |s: Status| pts.iter().filter(|p| p.row.status == s).count();
        let ok: Vec<&Point> = pts.iter().filter(|p| p.ok()).collect();
        let (label, keys): (String, Vec<String>) = match headline(&kind, &bench) {
            Some((l, k)) => (l.to_string(), k.iter().map(|s| s.to_string()).collect()),
            None => match ok.iter().find_map(|p| p.row.metrics.keys().next()) {
                Some(k) => (metric_words(k), vec![k.clone()]),
                None => (String::new(), vec![]),
            },
        };
        let key_refs: Vec<&str> = keys.iter().map(|s| s.as_str()).collect();
        let best = ok
            .iter()
            .filter_map(|p| names::metric(p.row, &key_refs).map(|v| (v, *p)))
            .max_by(|a, b| a.0.total_cmp(&b.0));
        let headline = match best {
            Some((v, p)) => format!("{} {label} at {}", fmt::num(v), where_measured(p)),
            None => "—".into(),
        };
        let p50s: Vec<(String, f64)> = ok
            .iter()
            .filter_map(|p| names::primary_stat(p.row).map(|(k, s)| (k.to_string(), s.p50)))
            .collect();
        let p50 = match (
            p50s.iter().map(|x| x.1).reduce(f64::min),
            p50s.iter().map(|x| x.1).reduce(f64::max),
        ) {
            (Some(lo), Some(hi)) => {
                let k = &p50s[0].0;
                let unit = names::unit_label(k);
                if lo == hi {
                    format!("{} {unit} ({k})", fmt::num(lo))
                } else {
                    format!("{} – {} {unit} ({k})", fmt::num(lo), fmt::num(hi))
                }
            }
            _ => "—".into(),
        };
        let checked: Vec<bool> = pts
            .iter()
            .filter_map(|p| p.row.correctness.as_ref().map(|c| c.passed))
            .collect();
        let failed_checks = checked.iter().filter(|b| !**b).count();
        let correctness = match (checked.len(), failed_checks) {
            (0, _) => "not checked".into(),
            (n, 0) => format!("all {n} passed"),
            (n, f) => format!("{f} of {n} FAILED"),
        };
        let mut f = gpu_dims(&gpu);
        f.insert("impl".into(), imp.clone());
        rows.push(TableRow {
            cells: vec![
                kind_title(&kind),
                bench.replace('_', " "),
                imp,
                format!(
                    "{} ok · {} failed · {} skipped",
                    count(Status::Ok),
                    count(Status::Failed),
                    count(Status::Skipped)
                ),
                headline,
                p50,
                correctness,
                gpu,
            ],
            f,
            raw: Vec::new(),
        });
    }
    TableView {
        columns: [
            "kind",
            "benchmark",
            "implementation",
            "points",
            "headline: best point",
            "P50 range",
            "correctness",
            "GPU",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
        rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metric_keys_read_as_words_with_units() {
        assert_eq!(metric_words("distinct_kernels"), "distinct kernels");
        assert_eq!(metric_words("algbw_gbps"), "algbw GB/s");
        assert_eq!(metric_words("pct_of_bound_pct"), "pct of bound %");
        assert_eq!(kind_title("comm"), "Collectives");
        assert_eq!(kind_title("mine"), "mine");
    }
}
