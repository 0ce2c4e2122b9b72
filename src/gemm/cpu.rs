//! `--device cpu`: candle's CPU matmul over the planned points, checked against the float64
//! reference and timed with the host clock. It exercises the whole artifact path without a GPU.

use super::args::GemmArgs;
use super::check::{compare, gather_rows, judge, reference_rows_f64, sample_rows};
use super::dtype::Dtype;
use super::impls::Impl;
use super::plan::progress_steps;
use super::plan::{sample_plan, Point};
use super::record::{base_row, skipped_row, Recorder};
use crate::artifact::{Status, Timing};
use crate::env::Env;
use crate::progress::Progress;
use crate::stats::summarize;
use anyhow::{Context, Result};
use candle_core::{DType, Device, Tensor};
use std::time::Instant;

/// candle's dtype for a GEMM dtype (tf32 is stored as f32).
pub fn candle_dtype(d: Dtype) -> DType {
    d.candle()
        .expect("every GEMM dtype (super::dtype::GEMM_DTYPES) has a candle storage type")
}

/// Random N(0, 1) inputs rounded to the dtype, and their values as f32 (exact for 16-bit).
pub fn random_inputs(
    dev: &Device,
    m: usize,
    n: usize,
    k: usize,
    d: Dtype,
) -> Result<(Tensor, Tensor)> {
    let a = Tensor::randn(0f32, 1f32, (m, k), dev)?.to_dtype(candle_dtype(d))?;
    let b = Tensor::randn(0f32, 1f32, (k, n), dev)?.to_dtype(candle_dtype(d))?;
    Ok((a, b))
}

/// A tensor's values as a flat f32 vector on the host.
pub fn to_host_f32(t: &Tensor) -> Result<Vec<f32>> {
    Ok(t.to_dtype(DType::F32)?.flatten_all()?.to_vec1::<f32>()?)
}

/// Checks every point against the available host memory, then runs the sweep.
pub fn run(args: &GemmArgs, points: &[Point]) -> Result<()> {
    if let Some(available) = crate::env::available_memory_bytes() {
        for p in points {
            super::memory::check_fits_host(p, available)?;
        }
    }
    let mut w = crate::harness::start_artifact(
        "gemm",
        &args.out,
        Env::cpu(),
        args.overwrite,
        None,
        ["device cpu: candle's CPU matmul only, timed with the host clock (it returns when done)"
            .to_string()],
    )
    .with_context(|| format!("starting the artifact {}", args.out.display()))?;
    let mut rec = Recorder::new(&args.report_path());
    let progress = Progress::new(progress_steps(points));
    for p in points {
        let (m, n, k) = (p.shape.m, p.shape.n, p.shape.k);
        let mut rows = Vec::new();
        let (a, b) = random_inputs(&Device::Cpu, m, n, k, p.dtype)
            .with_context(|| format!("random inputs for {}", p.shape.label()))?;
        let check_rows = sample_rows(m, args.check_rows);
        let a_host = to_host_f32(&a)?;
        let reference = reference_rows_f64(
            &gather_rows(&a_host, k, &check_rows),
            &to_host_f32(&b)?,
            n,
            k,
        );
        for planned in &p.impls {
            if let Some(why) = &planned.skip {
                rows.push(skipped_row(&p.shape, p.dtype, planned.imp, why));
                continue;
            }
            debug_assert_eq!(planned.imp, Impl::Candle);
            progress.start(p.progress_label(planned.imp));
            let mut row = base_row(&p.shape, p.dtype, planned.imp);
            let c = a.matmul(&b).context("candle CPU matmul")?;
            let got = gather_rows(&to_host_f32(&c)?, n, &check_rows);
            let corr = judge(
                &compare(&got, &reference),
                super::dtype::tolerance(p.dtype),
                "cpu_f64_rows",
            );
            let passed = corr.passed;
            row.correctness = Some(corr);
            if !passed {
                row.status = Status::Failed;
            } else {
                let t0 = Instant::now();
                a.matmul(&b)?;
                let plan = sample_plan(
                    t0.elapsed().as_secs_f64() * 1e6,
                    args.sampling.point_budget_ms,
                );
                for _ in 0..plan.warmup {
                    a.matmul(&b)?;
                }
                let mut samples = Vec::with_capacity(plan.samples);
                for _ in 0..plan.samples {
                    let t = Instant::now();
                    for _ in 0..plan.batch {
                        a.matmul(&b)?;
                    }
                    samples.push(t.elapsed().as_secs_f64() * 1e6 / plan.batch as f64);
                }
                row.stats.insert("time_us".into(), summarize(&samples)?);
                row.timing = Some(Timing {
                    method: "host_clock".into(),
                    warmup: plan.warmup,
                    launches_per_sample: plan.batch,
                    l2_cleared: false,
                    sampling: None,
                });
                super::metrics::fill_point_metrics(&mut row, m, n, k, p.dtype.size_bytes());
            }
            progress.step();
            progress.row(&row);
            rows.push(row);
        }
        rec.push_group(&mut w, rows)?;
    }
    progress.finish();
    let (path, text) = rec.finish(
        w,
        "candle",
        "matmul_tflops: best candle CPU matmul rate per dtype in this run".into(),
    )?;
    println!("{text}");
    eprintln!(
        "wrote {} and {}",
        path.display(),
        args.report_path().display()
    );
    Ok(())
}
