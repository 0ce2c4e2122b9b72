//! FLOP and byte counting for a GEMM, and the derived per-row figures (TFLOP/s, % of cuBLAS,
//! % of the dtype's ceiling, speedup against the slowest) filled in once a shape is done.

use crate::artifact::{ResultRow, Status};
use std::collections::BTreeMap;

/// 2*M*N*K: one multiply and one add per (m, n, k) triple.
pub fn flop(m: usize, n: usize, k: usize) -> f64 {
    2.0 * m as f64 * n as f64 * k as f64
}

/// The fewest bytes a GEMM must move through device memory: read A (M*K) and B (K*N) once,
/// write C (M*N) once.
pub fn min_bytes(m: usize, n: usize, k: usize, elem_bytes: usize) -> f64 {
    (m as f64 * k as f64 + k as f64 * n as f64 + m as f64 * n as f64) * elem_bytes as f64
}

/// Arithmetic intensity at the minimal traffic, FLOP per byte.
pub fn intensity(m: usize, n: usize, k: usize, elem_bytes: usize) -> f64 {
    flop(m, n, k) / min_bytes(m, n, k, elem_bytes)
}

/// TFLOP/s of `flop` done in `time_us` microseconds.
pub fn tflops(flop: f64, time_us: f64) -> f64 {
    flop / (time_us * 1e-6) / 1e12
}

/// The per-row metrics known as soon as a row is timed.
pub fn fill_point_metrics(row: &mut ResultRow, m: usize, n: usize, k: usize, elem_bytes: usize) {
    let f = flop(m, n, k);
    let bytes = min_bytes(m, n, k, elem_bytes);
    row.metrics.insert("flop".into(), f);
    row.metrics.insert("min_bytes".into(), bytes);
    row.metrics
        .insert("intensity_flop_per_byte".into(), f / bytes);
    if let Some(t) = row.p50("time_us") {
        row.metrics.insert("tflops".into(), tflops(f, t));
        row.metrics
            .insert("gbps_min_bytes".into(), bytes / (t * 1e-6) / 1e9);
    }
}

/// Fills `pct_of_cublas` and `speedup_vs_slowest` across the rows of one (shape, dtype) group.
/// Only measured rows take part; the cuBLAS row is found by its implementation name.
pub fn fill_group_metrics(rows: &mut [ResultRow]) {
    let time = |r: &ResultRow| (r.status == Status::Ok).then(|| r.p50("time_us")).flatten();
    let slowest = rows.iter().filter_map(time).fold(f64::NAN, f64::max);
    let cublas = rows
        .iter()
        .find(|r| r.implementation == "cublas")
        .and_then(time);
    for r in rows.iter_mut() {
        let Some(t) = time(r) else { continue };
        if slowest.is_finite() {
            r.metrics.insert("speedup_vs_slowest".into(), slowest / t);
        }
        if let Some(c) = cublas {
            r.metrics.insert("pct_of_cublas".into(), 100.0 * c / t);
        }
    }
}

/// Sets `pct_of_ceiling` = 100 * tflops / ceiling[dtype] on every timed row.
pub fn fill_ceiling_metrics(rows: &mut [ResultRow], ceilings: &BTreeMap<String, f64>) {
    for r in rows.iter_mut() {
        let (Some(tf), Some(dt)) = (r.metrics.get("tflops").copied(), r.param_str("dtype")) else {
            continue;
        };
        if let Some(c) = ceilings.get(&dt).filter(|c| **c > 0.0) {
            r.metrics.insert("pct_of_ceiling".into(), 100.0 * tf / c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::summarize;

    fn timed(imp: &str, us: f64) -> ResultRow {
        let mut r = ResultRow::new("gemm", imp).param("dtype", "bf16");
        r.stats
            .insert("time_us".into(), summarize(&[us, us, us]).unwrap());
        r
    }

    #[test]
    fn flop_and_bytes() {
        assert_eq!(flop(2, 3, 4), 48.0);
        // A 2x4 + B 4x3 + C 2x3 = 8 + 12 + 6 = 26 elements of 2 bytes.
        assert_eq!(min_bytes(2, 3, 4, 2), 52.0);
        assert!((intensity(4096, 4096, 4096, 2) - 4096.0 / 3.0).abs() < 1e-9);
        // One decode token: intensity ~ 1 FLOP/byte in bf16, memory-bound.
        assert!(intensity(1, 2048, 2048, 2) < 1.01);
        // 2 * 4096^3 FLOP in 1 ms = 137.4 TFLOP/s.
        assert!((tflops(flop(4096, 4096, 4096), 1000.0) - 137.438953472).abs() < 1e-6);
    }

    #[test]
    fn point_metrics_need_a_time() {
        let mut r = timed("x", 1000.0);
        fill_point_metrics(&mut r, 4096, 4096, 4096, 2);
        assert!((r.metrics["tflops"] - 137.438953472).abs() < 1e-6);
        assert!((r.metrics["gbps_min_bytes"] - 100.663296).abs() < 1e-6);
        let mut untimed = ResultRow::new("gemm", "x");
        fill_point_metrics(&mut untimed, 8, 8, 8, 4);
        assert!(!untimed.metrics.contains_key("tflops"));
        assert_eq!(untimed.metrics["min_bytes"], 768.0);
    }

    #[test]
    fn group_metrics_relative_to_cublas_and_slowest() {
        let mut failed = ResultRow::new("gemm", "broken").param("dtype", "bf16");
        failed.status = Status::Failed;
        let mut rows = vec![
            timed("cublas", 100.0),
            timed("mine", 200.0),
            timed("naive", 1000.0),
            failed,
        ];
        fill_group_metrics(&mut rows);
        assert_eq!(rows[0].metrics["pct_of_cublas"], 100.0);
        assert_eq!(rows[1].metrics["pct_of_cublas"], 50.0);
        assert_eq!(rows[0].metrics["speedup_vs_slowest"], 10.0);
        assert_eq!(rows[2].metrics["speedup_vs_slowest"], 1.0);
        assert!(rows[3].metrics.is_empty());
        for r in rows.iter_mut() {
            fill_point_metrics(r, 1024, 1024, 1024, 2);
        }
        let ceilings = BTreeMap::from([("bf16".to_string(), 2.0 * rows[0].metrics["tflops"])]);
        fill_ceiling_metrics(&mut rows, &ceilings);
        assert!((rows[0].metrics["pct_of_ceiling"] - 50.0).abs() < 1e-9);
        assert!(!rows[3].metrics.contains_key("pct_of_ceiling"));
    }

    #[test]
    fn no_cublas_row_means_no_pct_of_cublas() {
        let mut rows = vec![timed("candle", 10.0)];
        fill_group_metrics(&mut rows);
        assert!(!rows[0].metrics.contains_key("pct_of_cublas"));
        assert_eq!(rows[0].metrics["speedup_vs_slowest"], 1.0);
    }
}
