//! The text report (KernelBenchmarker format): per parameter set, kernels sorted by time.
//!
//! A pure function of the artifact, so a committed report can be regenerated from its JSON.

use crate::artifact::{Artifact, ResultRow, Status};
use std::fmt::Write;

/// Metric keys the report reads (written by the runner and by `ncu::derived_metrics`).
const MEM_PCT: &str = "ncu_memory_throughput_pct";
const SM_PCT: &str = "ncu_compute_throughput_pct";

/// The problem a row measured (block shape and run settings such as `code` left out).
fn group_key(r: &ResultRow) -> String {
    r.params
        .iter()
        .filter(|(k, _)| k.as_str() != "block" && !crate::identity::is_setting("kernels", k))
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn opt(v: Option<f64>, prec: usize) -> String {
    v.map_or("-".into(), |x| format!("{x:.prec$}"))
}

/// Renders the report.
pub fn render(a: &Artifact) -> String {
    let mut s = String::new();
    let gpu = a.env.gpu.as_ref();
    let _ = writeln!(s, "opbench kernel_bench report");
    let _ = writeln!(
        s,
        "GPU: {}{}",
        a.env.label(),
        gpu.map_or(String::new(), |g| format!(
            " (compute capability {}, driver {}, CUDA {})",
            g.compute_capability, g.driver_version, g.cuda_driver_version
        ))
    );
    let _ = writeln!(
        s,
        "run: {} ({}), commit {}{}",
        a.run.id,
        a.run.started_utc,
        a.run.git_commit.as_deref().unwrap_or("unknown"),
        if a.run.git_dirty == Some(true) {
            " (dirty)"
        } else {
            ""
        }
    );
    let mut ceil = Vec::new();
    if let Some(c) = a.ceilings.copy_gbps {
        ceil.push(format!("copy {c:.0} GB/s"));
    }
    for (k, v) in &a.ceilings.matmul_tflops {
        ceil.push(format!("{k} matmul (cuBLAS) {v:.1} TFLOP/s"));
    }
    if !ceil.is_empty() {
        let _ = writeln!(s, "ceilings measured in this run: {}", ceil.join(", "));
    }
    if let Some(t) = a.results.iter().find_map(|r| r.timing.as_ref()) {
        let _ = writeln!(
            s,
            "timing: {}, {}, median (p50) and p95 per launch",
            t.method,
            if t.l2_cleared {
                "cold (L2 flushed before each launch)"
            } else {
                "warm (back-to-back launches, L2 not flushed)"
            }
        );
    }
    let _ = writeln!(
        s,
        "memory % / compute %: Nsight Compute memory and SM throughput, % of peak (\"-\": not profiled)"
    );
    for n in &a.notes {
        let _ = writeln!(s, "note: {n}");
    }

    let mut groups: Vec<(String, Vec<&ResultRow>)> = Vec::new();
    for r in &a.results {
        let k = group_key(r);
        match groups.iter_mut().find(|(g, _)| *g == k) {
            Some((_, rows)) => rows.push(r),
            None => groups.push((k, vec![r])),
        }
    }
    for (key, rows) in groups {
        let _ = writeln!(s, "\n== {key} ==");
        let mut ok: Vec<&ResultRow> = rows
            .iter()
            .copied()
            .filter(|r| r.status == Status::Ok && r.p50("time_us").is_some())
            .collect();
        ok.sort_by(|a, b| {
            a.p50("time_us")
                .unwrap()
                .total_cmp(&b.p50("time_us").unwrap())
        });
        let slowest = ok
            .iter()
            .filter_map(|r| r.p50("time_us"))
            .fold(0.0, f64::max);
        let name_w = rows
            .iter()
            .map(|r| r.implementation.len())
            .max()
            .unwrap_or(6)
            .max(6);
        let _ = writeln!(
            s,
            "  {:<name_w$}  {:>8}  {:>11}  {:>11}  {:>9}  {:>9}  {:>8}  {:>9}  {:>8}",
            "kernel",
            "block",
            "time_us p50",
            "p95",
            "TFLOP/s",
            "GB/s",
            "memory %",
            "compute %",
            "speedup"
        );
        for r in &ok {
            let t = r.p50("time_us").unwrap();
            let p95 = r.stats.get("time_us").map(|x| x.p95);
            let m = |k: &str| r.metrics.get(k).copied();
            let _ = writeln!(
                s,
                "  {:<name_w$}  {:>8}  {:>11.2}  {:>11}  {:>9}  {:>9}  {:>8}  {:>9}  {:>7.2}x",
                r.implementation,
                r.param_str("block").unwrap_or_default(),
                t,
                opt(p95, 2),
                opt(m("tflops"), 2),
                opt(m("gbps"), 0),
                opt(m(MEM_PCT), 1),
                opt(m(SM_PCT), 1),
                slowest / t,
            );
        }
        for r in rows.iter().filter(|r| r.status != Status::Ok) {
            let why = r
                .correctness
                .as_ref()
                .filter(|c| !c.passed)
                .map(|c| match c.non_finite {
                    0 => format!(
                        "correctness vs {}: rel_err {:.3e} > tolerance {:.1e}",
                        c.reference, c.rel_err, c.tolerance
                    ),
                    n => format!("correctness vs {}: {n} output(s) NaN/inf", c.reference),
                })
                .or_else(|| r.notes.first().cloned())
                .unwrap_or_default();
            let _ = writeln!(
                s,
                "  {:<name_w$}  {:>8}  {}: {why}",
                r.implementation,
                r.param_str("block").unwrap_or_default(),
                if r.status == Status::Failed {
                    "FAILED"
                } else {
                    "SKIPPED"
                },
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artifact::{Correctness, RunInfo, Timing};
    use crate::env::Env;
    use crate::stats::summarize;

    fn row(kernel: &str, n: i64, block: &str, t: f64, mem: Option<f64>) -> ResultRow {
        let mut r = ResultRow::new("user_kernel", kernel)
            .param("N", n)
            .param("block", block);
        r.stats.insert(
            "time_us".into(),
            summarize(&[t, t * 1.01, t * 0.99]).unwrap(),
        );
        r.metrics.insert("tflops".into(), 1.0 / t);
        if let Some(m) = mem {
            r.metrics.insert(MEM_PCT.into(), m);
            r.metrics.insert(SM_PCT.into(), 2.0 * m);
        }
        r.timing = Some(Timing {
            method: "cuda_events".into(),
            warmup: 5,
            launches_per_sample: 10,
            l2_cleared: false,
            sampling: None,
        });
        r
    }

    fn artifact(results: Vec<ResultRow>) -> Artifact {
        Artifact {
            schema_version: 1,
            kind: "kernels".into(),
            run: RunInfo {
                id: "20261122T000000Z-00000000".into(),
                started_utc: "2026-11-22T00:00:00Z".into(),
                finished_utc: "2026-11-22T00:00:01Z".into(),
                complete: true,
                git_commit: Some("abc".into()),
                git_dirty: Some(false),
                tool_version: "0.1.0".into(),
                command_line: vec![],
                synthetic: false,
            },
            env: Env::cpu(),
            ceilings: Default::default(),
            results,
            compiler: None,
            notes: vec![],
        }
    }

    #[test]
    fn groups_sort_by_time_and_speedup_is_against_the_slowest() {
        let mut failed = ResultRow::new("user_kernel", "matmul_tiled")
            .param("N", 256i64)
            .param("block", "32x8");
        failed.status = Status::Failed;
        failed.correctness = Some(Correctness {
            reference: "kernel:matmul_naive".into(),
            max_abs_err: 3.0,
            rel_err: 0.9,
            tolerance: 1e-4,
            passed: false,
            non_finite: 0,
        });
        let a = artifact(vec![
            row("matmul_naive", 256, "16x16", 40.0, Some(10.0)),
            row("matmul_tiled", 256, "16x16", 10.0, Some(20.0)),
            failed,
            row("matmul_naive", 512, "16x16", 300.0, None),
            row("matmul_2d", 512, "256", 30.0, None).param("code", "00ab"),
        ]);
        let text = render(&a);
        let g256 = text.find("== N=256 ==").unwrap();
        let g512 = text.find("== N=512 ==").unwrap();
        assert!(g256 < g512);
        assert!(!text.contains("code="), "a setting is no group:\n{text}");
        let first = &text[g256..g512];
        let tiled = first.find("matmul_tiled     16x16").unwrap();
        let naive = first.find("matmul_naive").unwrap();
        assert!(tiled < naive, "sorted by time:\n{first}");
        assert!(first.contains("4.00x"), "{first}");
        assert!(first.contains("1.00x"));
        assert!(first.contains("FAILED: correctness vs kernel:matmul_naive: rel_err 9.000e-1"));
        assert!(
            first.contains("    20.0       40.0"),
            "memory % then compute %:\n{first}"
        );
        let second = &text[g512..];
        assert!(second.contains("10.00x"));
        assert!(
            second.contains("        -          -"),
            "no profile metrics:\n{second}"
        );
        assert!(text.contains("warm (back-to-back launches, L2 not flushed)"));
    }
}
