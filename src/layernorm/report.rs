//! Result rows of the `layernorm` artifact, the speedups between them, and the tables and
//! bar checks printed at the end of a run (or from a committed artifact with `--table`).

use super::plan::LaunchPlan;
use super::{Dtype, Shape};
use crate::artifact::{Artifact, Correctness, ResultRow, Status, Timing};
use crate::stats::Summary;

pub const KIND: &str = "layernorm";
pub const BENCHMARK: &str = "layernorm_forward";
pub const CANDLE: &str = "candle";
pub const OPBENCH: &str = "opbench";

/// A row with the point's coordinates: shape, rows, cols, dtype, mode ("warm"/"cold"), eps.
pub fn point_row(
    implementation: &str,
    shape: &Shape,
    dtype: Dtype,
    mode: &str,
    eps: f32,
) -> ResultRow {
    // Through the shortest decimal text, so 1e-5f32 reads 0.00001 and not 9.99999974e-6.
    let eps: f64 = eps
        .to_string()
        .parse()
        .expect("an f32 prints as a valid f64");
    ResultRow::new(BENCHMARK, implementation)
        .param("shape", shape.to_string())
        .param("rows", shape.rows())
        .param("cols", shape.cols())
        .param("dtype", dtype.name())
        .param("mode", mode)
        .param("eps", eps)
}

/// Our kernel's launch configuration as params.
pub fn with_plan(row: ResultRow, p: &LaunchPlan) -> ResultRow {
    row.param("variant", p.variant_name())
        .param("kernel", p.kernel.as_str())
        .param("block_threads", p.block_threads)
        .param("rows_per_block", p.rows_per_block)
        .param("threads_per_row", p.threads_per_row)
        .param("vec_width", p.vec_width)
        .param("vectors_per_thread", p.vectors_per_thread)
        .param("grid", p.grid.name())
        .param("grid_blocks", p.grid_blocks)
        .param("stages", p.stages)
        .param("smem_bytes", p.smem_bytes)
}

/// Fills a checked row's timing: `time_us`, GB/s from the median, % of the copy ceiling.
pub fn timed(
    mut row: ResultRow,
    correctness: Correctness,
    time_us: Summary,
    timing: Timing,
    bytes: usize,
    copy_gbps: Option<f64>,
) -> ResultRow {
    let gbps = bytes as f64 / (time_us.p50 * 1e-6) / 1e9;
    row.metrics.insert("gbps".into(), gbps);
    if let Some(c) = copy_gbps {
        row.metrics
            .insert("pct_of_copy_bw".into(), 100.0 * gbps / c);
    }
    row.stats.insert("time_us".into(), time_us);
    row.timing = Some(timing);
    row.correctness = Some(correctness);
    row.status = Status::Ok;
    row
}

/// Adds `speedup_vs_candle_p50` / `_p95` (candle time / our time) when both were timed.
pub fn add_speedups(ours: &mut ResultRow, candle: &ResultRow) {
    if ours.status != Status::Ok || candle.status != Status::Ok {
        return;
    }
    if let (Some(o), Some(c)) = (ours.stats.get("time_us"), candle.stats.get("time_us")) {
        ours.metrics
            .insert("speedup_vs_candle_p50".into(), c.p50 / o.p50);
        ours.metrics
            .insert("speedup_vs_candle_p95".into(), c.p95 / o.p95);
    }
}

/// Adds `same_size_copy_gbps` (a device-to-device copy of x into y, timed the same way) and
/// `pct_of_same_size_copy` (our GB/s over it) to a timed row.
pub fn add_same_size_copy(row: &mut ResultRow, bytes: usize, copy_p50_us: f64) {
    add_copy_reference(row, "same_size_copy", bytes, copy_p50_us);
}

/// Adds `same_size_kernel_copy_gbps` (kernels/copy_probe.cu copying x into y, timed the same
/// way: what a plain kernel moving these bytes reaches) and `pct_of_same_size_kernel_copy`.
pub fn add_same_size_kernel_copy(row: &mut ResultRow, bytes: usize, copy_p50_us: f64) {
    add_copy_reference(row, "same_size_kernel_copy", bytes, copy_p50_us);
}

/// `<name>_gbps` and `pct_of_<name>` from a copy of `bytes` that took `copy_p50_us`.
fn add_copy_reference(row: &mut ResultRow, name: &str, bytes: usize, copy_p50_us: f64) {
    if row.status != Status::Ok || copy_p50_us.is_nan() || copy_p50_us <= 0.0 {
        return;
    }
    let copy_gbps = bytes as f64 / (copy_p50_us * 1e-6) / 1e9;
    row.metrics.insert(format!("{name}_gbps"), copy_gbps);
    if let Some(g) = row.metrics.get("gbps").copied() {
        row.metrics
            .insert(format!("pct_of_{name}"), 100.0 * g / copy_gbps);
    }
}

/// PyTorch F.layer_norm, H200, cold: the project's target figures (dtype, shape, microseconds).
pub const TORCH_COLD_US_H200: [(&str, &str, f64); 5] = [
    ("f32", "4096x1024", 19.7),
    ("f32", "4096x4096", 53.2),
    ("f32", "4096x8192", 116.2),
    ("f16", "4096x1024", 14.3),
    ("f16", "4096x8192", 64.3),
];

fn find<'a>(
    a: &'a Artifact,
    imp: &str,
    shape: &str,
    dtype: &str,
    mode: &str,
) -> Option<&'a ResultRow> {
    a.results.iter().find(|r| {
        r.implementation == imp
            && r.param_str("shape").as_deref() == Some(shape)
            && r.param_str("dtype").as_deref() == Some(dtype)
            && r.param_str("mode").as_deref() == Some(mode)
    })
}

fn us(r: Option<&ResultRow>, f: impl Fn(&Summary) -> f64) -> String {
    match r {
        Some(r) if r.status == Status::Ok => r
            .stats
            .get("time_us")
            .map(|s| format!("{:.1}", f(s)))
            .unwrap_or("-".into()),
        Some(_) => "failed".into(),
        None => "-".into(),
    }
}

fn metric(r: Option<&ResultRow>, key: &str, digits: usize) -> String {
    r.and_then(|r| r.metrics.get(key))
        .map(|v| format!("{v:.digits$}"))
        .unwrap_or_else(|| "-".into())
}

fn err(r: Option<&ResultRow>) -> String {
    match r.and_then(|r| r.correctness.as_ref()) {
        // Older artifacts stored a NaN error as f64::MAX.
        Some(c) if c.non_finite > 0 || c.rel_err == f64::MAX => "NaN".into(),
        Some(c) => format!("{:.1e}", c.rel_err),
        None => "-".into(),
    }
}

/// The points of an artifact in run order: (shape, dtype, mode).
fn points(a: &Artifact) -> Vec<(String, String, String)> {
    let mut seen = Vec::new();
    for r in &a.results {
        let key = (
            r.param_str("shape").unwrap_or_default(),
            r.param_str("dtype").unwrap_or_default(),
            r.param_str("mode").unwrap_or_default(),
        );
        if !seen.contains(&key) {
            seen.push(key);
        }
    }
    seen
}

/// A Markdown table: per point, candle and our median/P95, speedups, bandwidth, errors.
pub fn markdown_table(a: &Artifact) -> String {
    let mut s = String::from(
        "| shape | dtype | mode | candle p50 us | ours p50 us | ours p95 us | speedup p50 | speedup p95 | ours GB/s | ours % of copy | same-size copy GB/s | ours % of same-size copy | same-size kernel copy GB/s | rel err candle / ours | our kernel |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for (shape, dtype, mode) in points(a) {
        let c = find(a, CANDLE, &shape, &dtype, &mode);
        let o = find(a, OPBENCH, &shape, &dtype, &mode);
        s.push_str(&format!(
            "| {shape} | {dtype} | {mode} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} / {} | {} |\n",
            us(c, |s| s.p50),
            us(o, |s| s.p50),
            us(o, |s| s.p95),
            metric(o, "speedup_vs_candle_p50", 2),
            metric(o, "speedup_vs_candle_p95", 2),
            metric(o, "gbps", 0),
            metric(o, "pct_of_copy_bw", 1),
            metric(o, "same_size_copy_gbps", 0),
            metric(o, "pct_of_same_size_copy", 1),
            metric(o, "same_size_kernel_copy_gbps", 0),
            err(c),
            err(o),
            o.and_then(|r| r.param_str("variant"))
                .unwrap_or_else(|| "-".into()),
        ));
    }
    s
}

/// The LayerNorm performance bars, judged on this artifact: one line per check, "PASS"/"FAIL".
pub fn bar_report(a: &Artifact) -> Vec<String> {
    let mut lines = Vec::new();
    let copy = a.ceilings.copy_gbps;
    let gpu = a
        .env
        .gpu
        .as_ref()
        .map(|g| g.name.clone())
        .unwrap_or_else(|| "no GPU".into());
    lines.push(format!(
        "device: {gpu}; copy ceiling: {}",
        copy.map(|c| format!("{c:.0} GB/s"))
            .unwrap_or_else(|| "not measured".into())
    ));
    let mut methods: Vec<String> = Vec::new();
    for r in &a.results {
        if r.param_str("mode").as_deref() == Some("cold") {
            if let Some(t) = &r.timing {
                let m = format!("{} (l2_cleared: {})", t.method, t.l2_cleared);
                if !methods.contains(&m) {
                    methods.push(m);
                }
            }
        }
    }
    if !methods.is_empty() {
        lines.push(format!("cold rows timed by: {}", methods.join(", ")));
    }
    let mut fails = 0;
    for r in a.results.iter().filter(|r| r.implementation == OPBENCH) {
        let shape = r.param_str("shape").unwrap_or_default();
        let dtype = r.param_str("dtype").unwrap_or_default();
        let mode = r.param_str("mode").unwrap_or_default();
        let at = format!("{shape} {dtype} {mode}");
        if r.status != Status::Ok {
            lines.push(format!(
                "FAIL {at}: our kernel's point did not pass ({:?})",
                r.status
            ));
            fails += 1;
            continue;
        }
        match r.metrics.get("speedup_vs_candle_p50") {
            Some(&sp) if sp > 1.0 => {}
            Some(&sp) => {
                lines.push(format!("FAIL {at}: speedup over candle {sp:.2} <= 1"));
                fails += 1;
            }
            None => lines.push(format!("n/a  {at}: no candle timing to compare with")),
        }
        let elems: i64 = ["rows", "cols"]
            .iter()
            .filter_map(|k| r.param_str(k)?.parse::<i64>().ok())
            .product();
        let bytes = 2 * elems * if dtype == "f32" { 4 } else { 2 };
        if mode == "cold" && bytes >= 64 << 20 {
            // The same-size copy, timed the same way, beside the bar (not part of it).
            let same = r
                .metrics
                .get("same_size_copy_gbps")
                .zip(copy)
                .map(|(s, c)| format!("; a copy of the same bytes: {:.1}%", 100.0 * s / c))
                .unwrap_or_default();
            let bound = copy
                .zip(a.ceilings.launch_interval_us)
                .map(|(c, l)| {
                    let floor_us = bytes as f64 / (c * 1e3);
                    let pct = 100.0 * floor_us / (floor_us + l);
                    format!(
                        "; bytes at the copy rate plus one launch interval ({l:.2} us): {pct:.1}%"
                    )
                })
                .unwrap_or_default();
            let same = format!("{same}{bound}");
            match r.metrics.get("pct_of_copy_bw") {
                Some(&p) if p >= 90.0 => lines.push(format!(
                    "PASS {at}: {p:.1}% of copy bandwidth (>= 90%){same}"
                )),
                Some(&p) => {
                    lines.push(format!(
                        "FAIL {at}: {p:.1}% of copy bandwidth (< 90%){same}"
                    ));
                    fails += 1;
                }
                None => lines.push(format!("n/a  {at}: no copy ceiling")),
            }
        }
        if mode == "cold" {
            if let Some((_, _, t)) = TORCH_COLD_US_H200
                .iter()
                .find(|(d, s, _)| *d == dtype && *s == shape)
            {
                let ours = r.p50("time_us").unwrap_or(f64::MAX);
                let verdict = if ours < *t { "PASS" } else { "FAIL" };
                if ours >= *t {
                    fails += 1;
                }
                lines.push(format!(
                    "{verdict} {at}: {ours:.1} us vs PyTorch {t} us (H200, targets.md)"
                ));
            }
        }
    }
    if a.results.iter().any(|r| r.implementation == OPBENCH) {
        lines.push(format!("{fails} bar check(s) failed"));
    } else {
        lines.push("no opbench rows (a CPU run?): the GPU bars are not judged".into());
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artifact::{ArtifactWriter, Timing};
    use crate::env::Env;
    use crate::layernorm::plan::{plan, KernelChoice};
    use crate::stats::summarize;

    fn timing() -> Timing {
        Timing {
            method: "cuda_events".into(),
            warmup: 1,
            launches_per_sample: 1,
            l2_cleared: true,
            sampling: None,
        }
    }

    fn check(passed: bool) -> Correctness {
        Correctness {
            reference: "cpu_f64".into(),
            max_abs_err: 1e-6,
            rel_err: if passed { 1e-7 } else { 1.0 },
            tolerance: 1e-5,
            passed,
            non_finite: 0,
        }
    }

    /// A GPU-like artifact: one 4096x8192 f32 cold point, candle 100 us, ours `ours_us`.
    fn artifact(ours_us: f64, ours_ok: bool) -> Artifact {
        let dir = tempfile::tempdir().unwrap();
        let mut w =
            ArtifactWriter::start(KIND, &dir.path().join("a.json"), Env::cpu(), false).unwrap();
        w.artifact.ceilings.copy_gbps = Some(3000.0);
        let shape: Shape = "4096x8192".parse().unwrap();
        let bytes = shape.bytes_moved(Dtype::F32);
        let candle = timed(
            point_row(CANDLE, &shape, Dtype::F32, "cold", 1e-5),
            check(true),
            summarize(&[100.0, 100.0, 110.0]).unwrap(),
            timing(),
            bytes,
            Some(3000.0),
        );
        let p = plan(4096, 8192, Dtype::F32, None, KernelChoice::Regs).unwrap();
        let row = with_plan(point_row(OPBENCH, &shape, Dtype::F32, "cold", 1e-5), &p);
        let mut ours = if ours_ok {
            timed(
                row,
                check(true),
                summarize(&[ours_us, ours_us, ours_us * 1.1]).unwrap(),
                timing(),
                bytes,
                Some(3000.0),
            )
        } else {
            crate::harness::failed(row, Some(check(false)), "off the reference")
        };
        add_speedups(&mut ours, &candle);
        add_same_size_copy(&mut ours, bytes, 70.0);
        w.artifact.results = vec![candle, ours];
        crate::artifact::validate(&w.artifact).unwrap();
        w.artifact.clone()
    }

    #[test]
    fn rows_carry_coordinates_config_bandwidth_and_speedups() {
        let a = artifact(90.0, true);
        let ours = &a.results[1];
        assert_eq!(ours.param_str("rows").as_deref(), Some("4096"));
        assert_eq!(ours.param_str("eps").as_deref(), Some("0.00001"));
        assert_eq!(
            ours.param_str("variant").as_deref(),
            Some("regs_v4_n4_tpr512")
        );
        assert_eq!(ours.param_str("block_threads").as_deref(), Some("512"));
        let gbps = 2.0 * 4096.0 * 8192.0 * 4.0 / 90e-6 / 1e9;
        assert!((ours.metrics["gbps"] - gbps).abs() < 1e-6);
        assert!((ours.metrics["pct_of_copy_bw"] - 100.0 * gbps / 3000.0).abs() < 1e-6);
        assert!((ours.metrics["speedup_vs_candle_p50"] - 100.0 / 90.0).abs() < 1e-9);
        assert!(ours.metrics.contains_key("speedup_vs_candle_p95"));
    }

    #[test]
    fn a_failed_point_has_no_timing_and_no_speedup() {
        let a = artifact(90.0, false);
        let ours = &a.results[1];
        assert_eq!(ours.status, Status::Failed);
        assert!(ours.stats.is_empty() && ours.metrics.is_empty());
        assert!(markdown_table(&a).contains("| failed |"));
        assert!(bar_report(&a)
            .iter()
            .any(|l| l.starts_with("FAIL 4096x8192 f32 cold")));
    }

    #[test]
    fn bars_are_judged_on_copy_bandwidth_candle_and_pytorch() {
        // 268 MB in 90 us = 2982 GB/s = 99% of 3000; faster than candle and than PyTorch's 116 us.
        let lines = bar_report(&artifact(90.0, true));
        assert!(lines
            .iter()
            .any(|l| l.starts_with("PASS") && l.contains("of copy bandwidth")));
        assert!(lines
            .iter()
            .any(|l| l.starts_with("PASS") && l.contains("PyTorch")));
        assert_eq!(lines.last().unwrap(), "0 bar check(s) failed");
        // The same-size copy (268 MB in 70 us = 3835 GB/s = 127.8% of 3000) sits beside the bar.
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("PASS 4096x8192 f32 cold")
                    && l.ends_with("a copy of the same bytes: 127.8%")),
            "{lines:?}"
        );
        assert!(lines.contains(&"cold rows timed by: cuda_events (l2_cleared: true)".into()));
        // 105 us: still faster than candle, but 85% of copy.
        let lines = bar_report(&artifact(105.0, true));
        assert!(lines
            .iter()
            .any(|l| l.starts_with("FAIL") && l.contains("of copy bandwidth")));
        // 120 us: slower than candle and than PyTorch.
        let lines = bar_report(&artifact(120.0, true));
        assert_eq!(lines.last().unwrap(), "3 bar check(s) failed");
        let table = markdown_table(&artifact(120.0, true));
        assert!(
            table.contains("| 4096x8192 | f32 | cold | 100.0 | 120.0 |"),
            "{table}"
        );
        // GB/s, % of copy, same-size copy GB/s and our % of it: 2237, 74.6, 3835, 58.3.
        assert!(table.contains("| 2237 | 74.6 | 3835 | 58.3 |"), "{table}");
    }

    #[test]
    fn the_copy_bar_line_shows_the_bound_a_launch_interval_leaves() {
        let mut a = artifact(105.0, true);
        assert!(!bar_report(&a).iter().any(|l| l.contains("launch interval")));
        // 268 MB at 3000 GB/s is 89.5 us; with 10.5 us per launch the bound is 89.5%.
        a.ceilings.launch_interval_us = Some(10.5);
        let lines = bar_report(&a);
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("FAIL 4096x8192 f32 cold")
                    && l.ends_with("plus one launch interval (10.50 us): 89.5%")),
            "{lines:?}"
        );
    }
}
