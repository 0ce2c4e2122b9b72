//! One flat row per result for summary.csv and for tables: identity columns plus named extras.
//!
//! Text cells go through [`csv_cell`]: a name such as `=HYPERLINK(...)` would otherwise run as
//! a formula when the CSV is opened in a spreadsheet. Numbers are written as they are.

use crate::artifact::Loaded;
use crate::artifact::Param;
use crate::text::csv_cell;
use std::collections::BTreeMap;

/// Identity columns, always present, in this order.
pub const FIXED_COLUMNS: [&str; 11] = [
    "kind",
    "file",
    "run_id",
    "benchmark",
    "implementation",
    "status",
    "device",
    "gpu",
    "git_commit",
    "finished_utc",
    "notes",
];

/// A result flattened: `fixed` follows FIXED_COLUMNS; `extra` holds `param.*`, `stat.*.*`,
/// `metric.*` and `correctness.*` columns.
#[derive(Debug, Clone)]
pub struct FlatRow {
    pub fixed: [String; 11],
    pub extra: BTreeMap<String, String>,
}

fn num(v: f64) -> String {
    // Shortest text that reads back as the same f64; exponent form for very large/small values.
    if v != 0.0 && !(1e-6..1e15).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// Flattens every result of one artifact.
pub fn flatten(l: &Loaded) -> Vec<FlatRow> {
    let a = &l.artifact;
    let gpu = a
        .env
        .gpu
        .as_ref()
        .map(|g| g.name.clone())
        .unwrap_or_default();
    a.results
        .iter()
        .map(|r| {
            let status = serde_json::to_value(r.status)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default();
            let text = |s: &str| csv_cell(s).into_owned();
            let fixed = [
                text(&a.kind),
                text(&l.file),
                text(&a.run.id),
                text(&r.benchmark),
                text(&r.implementation),
                status,
                text(&a.env.device),
                text(&gpu),
                text(a.run.git_commit.as_deref().unwrap_or_default()),
                text(&a.run.finished_utc),
                text(&r.notes.join("; ")),
            ];
            let mut extra = BTreeMap::new();
            for (k, p) in &r.params {
                let cell = match p {
                    Param::Text(t) => text(t),
                    number_or_bool => number_or_bool.to_string(),
                };
                extra.insert(format!("param.{k}"), cell);
            }
            for (k, s) in &r.stats {
                for (field, v) in [
                    ("n", s.n as f64),
                    ("p50", s.p50),
                    ("p95", s.p95),
                    ("p99", s.p99),
                    ("min", s.min),
                    ("max", s.max),
                    ("mean", s.mean),
                    ("stdev", s.stdev),
                ] {
                    extra.insert(format!("stat.{k}.{field}"), num(v));
                }
            }
            for (k, v) in &r.metrics {
                extra.insert(format!("metric.{k}"), num(*v));
            }
            if let Some(c) = &r.correctness {
                extra.insert("correctness.passed".into(), c.passed.to_string());
                extra.insert("correctness.rel_err".into(), num(c.rel_err));
                extra.insert("correctness.max_abs_err".into(), num(c.max_abs_err));
            }
            FlatRow { fixed, extra }
        })
        .collect()
}
