//! `--device cpu`: candle's CPU matmul over the planned points, checked against the float64
//! reference and timed with the host clock. It exercises the whole artifact path without a GPU.

use super::args::GemmArgs;
use super::check::{compare, gather_rows, judge, reference_rows_f64, sample_rows};
use super::dtype::Dtype;
use super::impls::Impl;
use super::plan::progress_steps;
use super::plan::{sample_plan, Point};
use super::record::{base_row, skipped_row, Recorder};
use super::shapes::{BLayout, Shape};
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

/// The operands of one point: A [M, K]; B as stored ([K, N] or [N, K], per the layout); and
/// B as the K x N operand candle multiplies by (a transposed view of the stored B for nk).
pub struct Inputs {
    pub a: Tensor,
    pub b: Tensor,
    pub b_kn: Tensor,
}

/// Random N(0, 1) inputs rounded to the dtype, B stored as `layout` says.
pub fn random_inputs(dev: &Device, shape: &Shape, d: Dtype) -> Result<Inputs> {
    let (m, n, k) = (shape.m, shape.n, shape.k);
    let a = Tensor::randn(0f32, 1f32, (m, k), dev)?.to_dtype(candle_dtype(d))?;
    let b = Tensor::randn(0f32, 1f32, shape.b_layout.stored_dims(n, k), dev)?
        .to_dtype(candle_dtype(d))?;
    let b_kn = match shape.b_layout {
        BLayout::Kn => b.clone(),
        BLayout::Nk => b.t()?,
    };
    Ok(Inputs { a, b, b_kn })
}

/// B's values as a row-major K x N f32 matrix on the host (what the float64 reference reads),
/// whichever layout B is stored in.
pub fn b_kn_host(inputs: &Inputs) -> Result<Vec<f32>> {
    to_host_f32(&inputs.b_kn.contiguous()?)
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
        let inputs = random_inputs(&Device::Cpu, &p.shape, p.dtype)
            .with_context(|| format!("random inputs for {}", p.shape.label()))?;
        let (a, b) = (&inputs.a, &inputs.b_kn);
        let check_rows = sample_rows(m, args.check_rows);
        let a_host = to_host_f32(a)?;
        let reference = reference_rows_f64(
            &gather_rows(&a_host, k, &check_rows),
            &b_kn_host(&inputs)?,
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
            let c = a.matmul(b).context("candle CPU matmul")?;
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
                a.matmul(b)?;
                let plan = sample_plan(
                    t0.elapsed().as_secs_f64() * 1e6,
                    args.sampling.point_budget_ms,
                );
                for _ in 0..plan.warmup {
                    a.matmul(b)?;
                }
                let sampling = args.sampling.sampling();
                let sampled = crate::harness::sample_host(&sampling, plan.batch, || {
                    a.matmul(b).map(drop).map_err(Into::into)
                })?;
                row.stats
                    .insert("time_us".into(), summarize(&sampled.samples_us)?);
                row.timing = Some(Timing {
                    method: "host_clock".into(),
                    warmup: plan.warmup,
                    launches_per_sample: plan.batch,
                    l2_cleared: false,
                    sampling: Some(sampled.record(&sampling)),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gemm::shapes::ShapeSet;

    #[test]
    fn a_transposed_b_is_stored_n_by_k_and_the_reference_reads_it_k_by_n() {
        let shape = Shape::new(3, 5, 4, ShapeSet::Axes).with_b_layout(BLayout::Nk);
        let inputs = random_inputs(&Device::Cpu, &shape, Dtype::F32).unwrap();
        assert_eq!(inputs.b.dims(), &[5, 4]);
        assert_eq!(inputs.b_kn.dims(), &[4, 5]);
        let stored = to_host_f32(&inputs.b).unwrap();
        let kn = b_kn_host(&inputs).unwrap();
        for kk in 0..4 {
            for j in 0..5 {
                assert_eq!(kn[kk * 5 + j], stored[j * 4 + kk]);
            }
        }
        assert!(stored.iter().any(|v| *v != 0.0));
        let kn_shape = Shape::new(3, 5, 4, ShapeSet::Axes);
        let plain = random_inputs(&Device::Cpu, &kn_shape, Dtype::F32).unwrap();
        assert_eq!(plain.b.dims(), &[4, 5]);
        assert_eq!(b_kn_host(&plain).unwrap(), to_host_f32(&plain.b).unwrap());
    }
}
