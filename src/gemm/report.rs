//! The text report beside the JSON (`gemm_report.txt`): per shape and dtype, implementations
//! sorted by median time with speedups, like KernelBenchmarker's; the two bars on top.

use crate::artifact::{Artifact, ResultRow, Status};
use std::fmt::Write;

/// The performance bars the report checks, at M = N = K = `BAR_SIZE`.
pub const BAR_SIZE: i64 = 4096;
/// (dtype, impl_kind of our kernels, required % of cuBLAS).
pub const BARS: [(&str, &str, f64); 2] = [
    ("f32", "simt_ladder", 80.0),
    ("bf16", "tensor_core_ladder", 50.0),
];

/// The heading of a row's (shape, B layout, dtype) group.
fn group_key(r: &ResultRow) -> String {
    let p = |k: &str| r.param_str(k).unwrap_or_default();
    let model = match r.param_str("layer_op") {
        Some(op) => format!(" ({} {op}, {} tokens)", p("model"), p("tokens")),
        None => format!(" ({})", p("shape_set")),
    };
    let layout = match r.param_str("b_layout").as_deref() {
        Some("nk") => " B[N,K]",
        _ => "",
    };
    format!(
        "{}x{}x{}{layout} {}{model}",
        p("m"),
        p("n"),
        p("k"),
        p("dtype")
    )
}

/// Rows of one (shape, B layout, dtype) group, in first-appearance order of groups.
fn groups(rows: &[ResultRow]) -> Vec<(String, Vec<&ResultRow>)> {
    let mut out: Vec<(String, Vec<&ResultRow>)> = Vec::new();
    for r in rows {
        let key = group_key(r);
        match out.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(r),
            None => out.push((key, vec![r])),
        }
    }
    out
}

/// A figure with sensible precision: 1234.5, 12.34, 0.0123 (three significant digits below 1).
pub fn fmt_num(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 || a == 0.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        let decimals = (2 - a.log10().floor() as i32).clamp(3, 12) as usize;
        format!("{v:.decimals$}")
    }
}

fn metric(r: &ResultRow, k: &str) -> String {
    r.metrics
        .get(k)
        .map_or_else(|| "-".to_string(), |v| fmt_num(*v))
}

/// The best `pct_of_cublas` of our kernels of `kind` at `dtype`, M = N = K = BAR_SIZE.
pub fn bar_value(rows: &[ResultRow], dtype: &str, kind: &str) -> Option<(f64, String)> {
    rows.iter()
        .filter(|r| r.status == Status::Ok)
        .filter(|r| r.param_str("dtype").as_deref() == Some(dtype))
        .filter(|r| r.param_str("impl_kind").as_deref() == Some(kind))
        .filter(|r| r.param_str("b_layout").is_none())
        .filter(|r| {
            ["m", "n", "k"]
                .iter()
                .all(|k| r.params.get(*k) == Some(&BAR_SIZE.into()))
        })
        .filter_map(|r| {
            r.metrics
                .get("pct_of_cublas")
                .map(|v| (*v, r.implementation.clone()))
        })
        .max_by(|a, b| a.0.total_cmp(&b.0))
}

/// Renders the whole report.
pub fn render(a: &Artifact) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "GEMM report: C[M,N] = A[M,K] * B[K,N], row-major, f32 accumulation.\n\
         Device: {} | run {} | commit {}{} | complete: {}",
        a.env.label(),
        a.run.id,
        a.run.git_commit.as_deref().unwrap_or("unknown"),
        if a.run.git_dirty == Some(true) {
            " (dirty)"
        } else {
            ""
        },
        a.run.complete
    );
    let mut ceil = Vec::new();
    if let Some(c) = a.ceilings.copy_gbps {
        ceil.push(format!("copy {c:.0} GB/s"));
    }
    for (d, v) in &a.ceilings.matmul_tflops {
        ceil.push(format!("{d} {v:.1} TFLOP/s"));
    }
    if !ceil.is_empty() {
        let _ = writeln!(s, "Ceilings (measured in this run): {}", ceil.join(", "));
    }
    for (dtype, kind, need) in BARS {
        let line = match bar_value(&a.results, dtype, kind) {
            Some((v, who)) => format!(
                "{} best {kind} kernel at {BAR_SIZE}^3 {dtype}: {who} at {v:.1}% of cuBLAS (bar {need:.0}%)",
                if v >= need { "PASS" } else { "FAIL" }
            ),
            None => format!("n/a  no timed {kind} kernel at {BAR_SIZE}^3 {dtype} in this run (bar {need:.0}%)"),
        };
        let _ = writeln!(s, "{line}");
    }
    for note in &a.notes {
        let _ = writeln!(s, "note: {note}");
    }
    for (key, rows) in groups(&a.results) {
        let first = rows[0];
        let _ = writeln!(
            s,
            "\n== {key} ==  {:.3} GFLOP, min bytes {:.2} MB, intensity {} FLOP/B",
            first.metrics.get("flop").copied().unwrap_or(0.0) / 1e9,
            first.metrics.get("min_bytes").copied().unwrap_or(0.0) / 1e6,
            metric(first, "intensity_flop_per_byte"),
        );
        let _ = writeln!(
            s,
            "{:>4}  {:<24} {:>11} {:>11} {:>9} {:>8} {:>9} {:>9}",
            "rank",
            "implementation",
            "median_us",
            "p95_us",
            "TFLOP/s",
            "%cuBLAS",
            "%ceiling",
            "speedup"
        );
        let mut timed: Vec<&ResultRow> = rows
            .iter()
            .copied()
            .filter(|r| r.status == Status::Ok && r.stats.contains_key("time_us"))
            .collect();
        timed.sort_by(|x, y| {
            let t = |r: &ResultRow| r.p50("time_us").unwrap_or(f64::INFINITY);
            t(x).total_cmp(&t(y))
        });
        for (i, r) in timed.iter().enumerate() {
            let t = &r.stats["time_us"];
            let _ = writeln!(
                s,
                "{:>4}  {:<24} {:>11.2} {:>11.2} {:>9} {:>8} {:>9} {:>8}x",
                i + 1,
                r.implementation,
                t.p50,
                t.p95,
                metric(r, "tflops"),
                metric(r, "pct_of_cublas"),
                metric(r, "pct_of_ceiling"),
                r.metrics
                    .get("speedup_vs_slowest")
                    .map_or("-".into(), |v| format!("{v:.2}")),
            );
        }
        for r in rows.iter().filter(|r| r.status != Status::Ok) {
            let why = match &r.correctness {
                Some(c) if !c.passed => format!(
                    "rel_err {:.2e} (tolerance {:.0e}) vs {}",
                    c.rel_err, c.tolerance, c.reference
                ),
                _ => String::new(),
            };
            let status = if r.status == Status::Failed {
                "FAILED"
            } else {
                "skipped"
            };
            let mut reason = vec![why];
            reason.extend(r.notes.iter().cloned());
            reason.retain(|x| !x.is_empty());
            let _ = writeln!(
                s,
                "{:>4}  {:<24} {status}: {}",
                "--",
                r.implementation,
                reason.join("; ")
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artifact::{Ceilings, Correctness, RunInfo, SCHEMA_VERSION};
    use crate::env::Env;
    use crate::gemm::metrics::{fill_group_metrics, fill_point_metrics};
    use crate::stats::summarize;

    fn row(imp: &str, kind: &str, n: i64, us: Option<f64>) -> ResultRow {
        let mut r = ResultRow::new("gemm", imp)
            .param("m", n)
            .param("n", n)
            .param("k", n)
            .param("dtype", "bf16")
            .param("shape_set", "square")
            .param("impl_kind", kind);
        match us {
            Some(t) => {
                r.stats.insert(
                    "time_us".into(),
                    summarize(&[t, t * 1.01, t * 0.99]).unwrap(),
                );
            }
            None => {
                r.status = Status::Failed;
                r.correctness = Some(Correctness {
                    reference: "cpu_f64_rows".into(),
                    max_abs_err: 9.0,
                    rel_err: 0.5,
                    tolerance: 1e-2,
                    passed: false,
                    non_finite: 0,
                });
            }
        }
        fill_point_metrics(&mut r, n as usize, n as usize, n as usize, 2);
        r
    }

    fn artifact(rows: Vec<ResultRow>) -> Artifact {
        Artifact {
            schema_version: SCHEMA_VERSION,
            kind: "gemm".into(),
            run: RunInfo {
                id: "run-1".into(),
                started_utc: "2026-11-22T10:00:00Z".into(),
                finished_utc: "2026-11-22T10:01:00Z".into(),
                complete: true,
                git_commit: Some("abc123".into()),
                git_dirty: Some(false),
                tool_version: "0.1.0".into(),
                command_line: vec![],
                synthetic: false,
            },
            env: Env::cpu(),
            ceilings: Ceilings::default(),
            results: rows,
            compiler: None,
            notes: vec![],
        }
    }

    #[test]
    fn a_transposed_b_point_is_its_own_group_and_not_the_bar() {
        let nk = |r: ResultRow| r.param("b_layout", "nk");
        let rows = vec![
            row("cublas", "library", 4096, Some(200.0)),
            row("mma_smem", "tensor_core_ladder", 4096, Some(400.0)),
            nk(row("cublas", "library", 4096, Some(210.0))),
            nk(row(
                "tma_ws_splitk",
                "tensor_core_ladder",
                4096,
                Some(200.0),
            )),
        ];
        let mut rows = rows;
        fill_group_metrics(&mut rows[0..2]);
        fill_group_metrics(&mut rows[2..4]);
        let text = render(&artifact(rows.clone()));
        assert!(
            text.contains("== 4096x4096x4096 bf16 (square) =="),
            "{text}"
        );
        assert!(
            text.contains("== 4096x4096x4096 B[N,K] bf16 (square) =="),
            "{text}"
        );
        let (pct, imp) = bar_value(&rows, "bf16", "tensor_core_ladder").unwrap();
        assert_eq!((pct, imp.as_str()), (50.0, "mma_smem"));
    }

    #[test]
    fn groups_sorted_by_time_with_failures_listed() {
        let mut rows = vec![
            row("mma_smem", "tensor_core_ladder", 4096, Some(400.0)),
            row("cublas", "library", 4096, Some(200.0)),
            row("broken", "tensor_core_ladder", 4096, None),
            row("cublas", "library", 1024, Some(10.0)),
        ];
        fill_group_metrics(&mut rows[0..3]);
        let text = render(&artifact(rows));
        let cublas = text.find("   1  cublas").expect(&text);
        let mine = text.find("   2  mma_smem").expect(&text);
        assert!(cublas < mine);
        assert!(text.contains("FAILED: rel_err 5.00e-1"), "{text}");
        assert!(text.contains("== 4096x4096x4096 bf16 (square) =="));
        assert!(text.contains("== 1024x1024x1024 bf16 (square) =="));
        // mma_smem is at 50% of cuBLAS: exactly the bf16 bar.
        assert!(
            text.contains("PASS best tensor_core_ladder kernel at 4096^3 bf16: mma_smem at 50.0%"),
            "{text}"
        );
        assert!(text.contains("n/a  no timed simt_ladder kernel"), "{text}");
        assert!(text.contains("2.00x"), "{text}");
    }

    #[test]
    fn number_format() {
        assert_eq!(fmt_num(731.44), "731.4");
        assert_eq!(fmt_num(51.034), "51.03");
        assert_eq!(fmt_num(0.000312), "0.000312");
        assert_eq!(fmt_num(0.5), "0.500");
        assert_eq!(fmt_num(0.0), "0.0");
    }

    #[test]
    fn bar_fails_below_threshold() {
        let mut rows = vec![
            row("cublas", "library", 4096, Some(100.0)),
            row("slow", "tensor_core_ladder", 4096, Some(300.0)),
        ];
        fill_group_metrics(&mut rows);
        let (v, who) = bar_value(&rows, "bf16", "tensor_core_ladder").unwrap();
        assert_eq!(who, "slow");
        assert!((v - 100.0 / 3.0).abs() < 1e-9);
        assert!(render(&artifact(rows)).contains("FAIL best tensor_core_ladder"));
    }
}
