//! Pieces every detail page uses: sections, point labels, peer look-ups, the failed-points table.

use super::super::chart::{ChartView, Dims, TableRow, TableView};
use super::super::filters::FilterView;
use super::super::fmt;
use super::super::names;
use super::super::points::Point;
use super::{Empty, PageContext};
use crate::artifact::Status;
use serde::Serialize;
use std::collections::HashMap;

/// A titled group of charts and tables.
#[derive(Debug, Clone, Serialize)]
pub struct Section {
    pub id: String,
    pub title: String,
    pub intro: String,
    pub charts: Vec<ChartView>,
    pub tables: Vec<NamedTable>,
}

impl Section {
    pub fn new(id: &str, title: &str, intro: &str) -> Self {
        Section {
            id: id.into(),
            title: title.into(),
            intro: intro.into(),
            charts: Vec::new(),
            tables: Vec::new(),
        }
    }
}

/// A table that is not a chart's data.
#[derive(Debug, Clone, Serialize)]
pub struct NamedTable {
    pub id: String,
    pub title: String,
    pub caption: String,
    pub table: TableView,
}

/// The "no data yet" page body for a kind.
pub fn empty_kind(page: &mut PageContext, what: &str, bin: &str) {
    page.empty = Some(Empty {
        message: format!(
            "No {what} artifacts in {} yet. Run the benchmark on a GPU machine, put its JSON \
             under the artifacts folder, then render the site again.",
            page.site.artifacts_dir
        ),
        command: format!(
            "cargo run --release --features cuda --bin {bin} && cargo run --release --bin dashboard"
        ),
    });
}

/// Whether the points come from more than one GPU (then series names carry the GPU).
pub fn multi_gpu(points: &[Point]) -> bool {
    let mut it = points.iter().map(|p| p.gpu());
    match it.next() {
        Some(first) => it.any(|g| g != first),
        None => false,
    }
}

/// Series name: the implementation, plus the GPU when several are present.
pub fn series(imp: &str, p: &Point, multi: bool) -> String {
    if multi {
        format!("{imp} · {}", p.gpu())
    } else {
        imp.to_string()
    }
}

/// A bar pattern per GPU after the first, so colors stay per implementation.
pub fn gpu_pattern(p: &Point, gpus: &[String]) -> Option<String> {
    const PATTERNS: [&str; 4] = ["/", "x", ".", "+"];
    let i = gpus.iter().position(|g| *g == p.gpu())?;
    (i > 0).then(|| PATTERNS[(i - 1) % PATTERNS.len()].to_string())
}

/// The distinct GPU names, in first-seen order.
pub fn gpus(points: &[Point]) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for p in points {
        let g = p.gpu();
        if !v.contains(&g) {
            v.push(g);
        }
    }
    v
}

/// Key of "the same point measured by another implementation": GPU and the point's problem
/// (`crate::identity`: kind, benchmark, problem parameters; settings such as a kernel's
/// launch configuration are not part of it, so they do not keep peers apart).
pub fn peer_key(p: &Point) -> String {
    format!("{}\u{1f}{}", p.gpu(), p.identity().problem())
}

/// Index: (peer key, implementation) -> point, for ok points.
pub fn peer_index<'a>(
    points: &[Point<'a>],
    key: impl Fn(&Point) -> String,
) -> HashMap<(String, String), Point<'a>> {
    points
        .iter()
        .filter(|p| p.ok())
        .map(|p| ((key(p), p.imp().to_string()), *p))
        .collect()
}

/// Label suffixes for points that would otherwise share a category with another point of the
/// same implementation, keyed by row address (see `distinguishing`).
pub type Distinguishing = HashMap<usize, String>;

fn row_id(p: &Point) -> usize {
    p.row as *const crate::artifact::ResultRow as usize
}

/// Suffixes that tell apart points sharing a label and an implementation: a switch measured
/// both ways (`event_tracking=on` beside `off`) or runs with another setting
/// (`mem_sampled=true`). In each such group, a param that differs is shown on the points whose
/// value is not the default: no value when some point of the group lacks the param, else the
/// implementation's most common value. Points in no such group keep the plain label their
/// peers have too.
pub fn distinguishing(points: &[Point], label: impl Fn(&Point) -> String) -> Distinguishing {
    let mut groups: HashMap<(String, &str), Vec<&Point>> = HashMap::new();
    for p in points {
        groups.entry((label(p), p.imp())).or_default().push(p);
    }
    // Most common value of each (implementation, param) among the points that have it.
    let mut counts: HashMap<(&str, &str, String), usize> = HashMap::new();
    for p in points {
        for (k, v) in &p.row.params {
            *counts
                .entry((p.imp(), k.as_str(), v.to_string()))
                .or_default() += 1;
        }
    }
    let mut common: HashMap<(&str, &str), (usize, String)> = HashMap::new();
    for ((imp, k, v), n) in counts {
        let e = common.entry((imp, k)).or_insert((0, String::new()));
        if n > e.0 || (n == e.0 && v < e.1) {
            *e = (n, v);
        }
    }
    let mut out = Distinguishing::new();
    for ((_, imp), g) in groups.iter().filter(|(_, g)| g.len() >= 2) {
        let mut keys: Vec<&String> = g.iter().flat_map(|p| p.row.params.keys()).collect();
        keys.sort();
        keys.dedup();
        for k in keys {
            let vals: Vec<Option<String>> = g
                .iter()
                .map(|p| p.row.params.get(k).map(|v| v.to_string()))
                .collect();
            if vals.iter().all(|v| *v == vals[0]) {
                continue;
            }
            let default = if vals.iter().any(|v| v.is_none()) {
                None
            } else {
                common.get(&(*imp, k.as_str())).map(|c| c.1.clone())
            };
            for (p, v) in g.iter().zip(&vals) {
                if *v != default {
                    let shown = v.clone().unwrap_or_else(|| "—".into());
                    out.entry(row_id(p))
                        .or_default()
                        .push_str(&format!(" {k}={shown}"));
                }
            }
        }
    }
    out
}

/// `base` plus the point's suffix from `distinguishing`, if it has one.
pub fn with_extra(base: String, p: &Point, d: &Distinguishing) -> String {
    match d.get(&row_id(p)) {
        Some(sfx) => base + sfx,
        None => base,
    }
}

/// The P50 of the row's main timing, in microseconds.
pub fn p50_us(p: &Point) -> Option<f64> {
    names::primary_stat(p.row).map(|(k, s)| s.p50 * names::to_us(k))
}

/// `key=value` pairs of the params, for tables.
pub fn params_text(p: &Point) -> String {
    p.row
        .params
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Filters of a page from its points.
pub fn filters(points: &[Point], allowed: &[&str]) -> Vec<FilterView> {
    let dims: Vec<Dims> = points.iter().map(|p| p.dims()).collect();
    super::super::filters::collect(dims.iter(), allowed)
}

/// A correctness cell: "pass (rel 3.1e-5 ≤ 1e-3)".
pub fn correctness_text(p: &Point) -> String {
    match &p.row.correctness {
        None => "not checked".into(),
        Some(c) => format!(
            "{} (rel {} vs tol {}, max abs {}, ref {})",
            if c.passed { "pass" } else { "FAIL" },
            fmt::num(c.rel_err),
            fmt::num(c.tolerance),
            fmt::num(c.max_abs_err),
            c.reference
        ),
    }
}

fn status_text(s: Status) -> &'static str {
    match s {
        Status::Ok => "ok",
        Status::Failed => "failed",
        Status::Skipped => "skipped",
    }
}

/// Every failed or skipped point, with its notes; `None` when all points are ok.
pub fn not_ok_table(points: &[Point]) -> Option<NamedTable> {
    let rows: Vec<TableRow> = points
        .iter()
        .filter(|p| !p.ok())
        .map(|p| TableRow {
            cells: vec![
                p.row.benchmark.clone(),
                p.imp().to_string(),
                status_text(p.row.status).to_string(),
                params_text(p),
                correctness_text(p),
                p.row.notes.join("; "),
                p.gpu(),
            ],
            f: p.dims(),
        })
        .collect();
    (!rows.is_empty()).then(|| NamedTable {
        id: "not-ok".into(),
        title: "Failed and skipped points".into(),
        caption: "Points that were not timed: a failed correctness check is never timed, and \
                  a skipped point says why in its notes."
            .into(),
        table: TableView {
            columns: [
                "benchmark",
                "implementation",
                "status",
                "params",
                "correctness",
                "notes",
                "GPU",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect(),
            rows,
        },
    })
}

/// Rows of other benchmarks a page has no chart for, as a generic table.
pub fn other_rows_table(id: &str, title: &str, points: &[Point]) -> Option<NamedTable> {
    if points.is_empty() {
        return None;
    }
    let rows = points
        .iter()
        .map(|p| TableRow {
            cells: vec![
                p.row.benchmark.clone(),
                p.imp().to_string(),
                status_text(p.row.status).to_string(),
                params_text(p),
                stats_text(p),
                metrics_text(p),
                correctness_text(p),
                p.gpu(),
            ],
            f: p.dims(),
        })
        .collect();
    Some(NamedTable {
        id: id.into(),
        title: title.into(),
        caption: "Every result of these benchmarks as recorded, one row per point.".into(),
        table: TableView {
            columns: [
                "benchmark",
                "implementation",
                "status",
                "params",
                "P50 (P5 – P95)",
                "metrics",
                "correctness",
                "GPU",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect(),
            rows,
        },
    })
}

/// "time_us 12.3 (11.9 – 13.0) n=50" for each stat.
pub fn stats_text(p: &Point) -> String {
    p.row
        .stats
        .iter()
        .map(|(k, s)| {
            format!(
                "{k} {} ({} – {}) n={}",
                fmt::num(s.p50),
                fmt::num(s.p5),
                fmt::num(s.p95),
                s.n
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// "gbps=812.3; pct_of_copy_bw=19.4".
pub fn metrics_text(p: &Point) -> String {
    p.row
        .metrics
        .iter()
        .map(|(k, v)| format!("{k}={}", fmt::num(*v)))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Sorts category labels by a numeric key, keeping the first-seen label for each.
pub fn ordered_categories(mut v: Vec<(Vec<f64>, String)>) -> Vec<String> {
    v.sort_by(|a, b| {
        a.0.iter()
            .zip(&b.0)
            .map(|(x, y)| x.total_cmp(y))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| a.1.cmp(&b.1))
    });
    let mut seen = std::collections::HashSet::new();
    let mut out: Vec<String> = Vec::new();
    for (_, l) in v {
        if seen.insert(l.clone()) {
            out.push(l);
        }
    }
    out
}

/// A small numeric code for text values, so sorts group them (dtype and mode order).
pub fn rank(value: &str, order: &[&str]) -> f64 {
    order
        .iter()
        .position(|o| *o == value)
        .map(|i| i as f64)
        .unwrap_or(order.len() as f64)
}

/// Dtypes in display order.
pub const DTYPE_ORDER: &[&str] = &["f32", "tf32", "f16", "bf16", "f8"];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artifact::Loaded;
    use crate::artifact::{Artifact, Ceilings, ResultRow, RunInfo};
    use crate::env::Env;

    #[test]
    fn a_switch_measured_both_ways_marks_only_the_uncommon_value() {
        let row = |imp: &str, model: &str, et: Option<&str>| {
            let r = ResultRow::new("generate", imp).param("model", model);
            match et {
                Some(v) => r.param("event_tracking", v),
                None => r,
            }
        };
        let loaded = Loaded {
            file: "a.json".into(),
            artifact: Artifact {
                schema_version: 1,
                kind: "llm".into(),
                run: RunInfo {
                    id: "a".into(),
                    started_utc: "2026-01-01T00:00:00Z".into(),
                    finished_utc: "2026-01-01T00:00:00Z".into(),
                    complete: true,
                    git_commit: None,
                    git_dirty: None,
                    tool_version: "0".into(),
                    command_line: vec![],
                    synthetic: false,
                },
                env: Env::cpu(),
                ceilings: Ceilings::default(),
                results: vec![
                    row("candle", "a", Some("off")),
                    row("candle", "a", Some("on")),
                    row("candle", "b", Some("off")),
                    row("peer", "a", None),
                ],
                compiler: None,
                notes: vec![],
            },
        };
        let points: Vec<Point> = loaded
            .artifact
            .results
            .iter()
            .map(|r| Point {
                loaded: &loaded,
                row: r,
            })
            .collect();
        let label = |p: &Point| names::param_str(p.row, names::MODEL).unwrap_or_default();
        let keys = distinguishing(&points, label);
        let labels: Vec<String> = points
            .iter()
            .map(|p| with_extra(label(p), p, &keys))
            .collect();
        assert_eq!(labels, ["a", "a event_tracking=on", "b", "a"]);
    }
}
