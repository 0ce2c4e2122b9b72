//! `--device cuda`: the GPU sweep. Measures the ceilings, then for every (shape, dtype) point
//! draws fresh inputs, checks every implementation (float64 rows, full matrix against cuBLAS)
//! and times the ones that pass, writing each group of rows as it finishes.

mod cublas;
mod kernels;
mod operands;
mod tma;

pub use cublas::Cublas;
pub use kernels::Kernels;
pub use operands::{DevMat, Elem, OutBuf};

use super::args::GemmArgs;
use super::check::{compare, compare_f32, gather_rows, judge, reference_rows_f64, sample_rows};
use super::cpu::{b_kn_host, random_inputs, to_host_f32, Inputs};
use super::dtype::Dtype;
use super::impls::Impl;
use super::memory::{device_bytes_needed, host_bytes_needed};
use super::metrics::{fill_point_metrics, flop, tflops};
use super::plan::progress_steps;
use super::plan::{sample_plan, Point};
use super::record::{base_row, skipped_row, Recorder};
use super::shapes::{BLayout, Shape, ShapeSet};
use crate::artifact::{ResultRow, Status};
use crate::gpu::{measure, Gpu, TimingConfig, TimingMode};
use crate::harness::{Sampling, Session, SessionSpec};
use crate::progress::Progress;
use anyhow::{Context, Result};
use candle_core::Tensor;

/// Everything a point needs on the GPU.
struct Ctx {
    s: Session,
    kernels: Kernels,
    blas: Cublas,
}

impl Ctx {
    /// One launch of `imp` into `c` (candle allocates its own output and drops it).
    fn launch(
        &self,
        imp: Impl,
        d: Dtype,
        layout: BLayout,
        t: (&Tensor, &Tensor),
        m: (&DevMat, &DevMat, &DevMat),
    ) -> Result<()> {
        launch_on(&self.s.gpu, &self.kernels, &self.blas, imp, d, layout, t, m)
    }
}

/// One launch of `imp`: cuBLAS and our kernels read the stored B (`layout`), candle multiplies
/// by `tb`, B as a K x N tensor (a transposed view of the stored [N, K] B for nk).
#[allow(clippy::too_many_arguments)]
fn launch_on(
    gpu: &Gpu,
    kernels: &Kernels,
    blas: &Cublas,
    imp: Impl,
    d: Dtype,
    layout: BLayout,
    (ta, tb): (&Tensor, &Tensor),
    (a, b, c): (&DevMat, &DevMat, &DevMat),
) -> Result<()> {
    match imp {
        Impl::Cublas => blas.gemm(d, a, b, layout, c),
        Impl::Candle => ta.matmul(tb).map(|_| ()).context("candle matmul"),
        k => kernels.launch(gpu, k, d, a, (b, layout), c),
    }
}

const GIB: f64 = (1u64 << 30) as f64;

pub fn run(args: &GemmArgs, points: &[Point]) -> Result<()> {
    let gpu = Gpu::open(args.gpu)?;
    let seed = args.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
    });
    gpu.device
        .set_seed(seed)
        .context("seeding candle's CUDA generator")?;
    let mut wanted: Vec<Impl> = points.iter().flat_map(|p| p.runnable()).collect();
    wanted.sort();
    wanted.dedup();
    let kernels = Kernels::load(&gpu, &wanted)?;
    let blas = Cublas::new(&gpu)?;
    let s = Session::start(
        gpu,
        SessionSpec {
            kind: "gemm",
            out: &args.out,
            overwrite: args.overwrite,
            copy_ceiling: true,
            launch_interval: false,
        },
    )
    .with_context(|| format!("starting the artifact {}", args.out.display()))?;
    let mut ctx = Ctx { s, kernels, blas };
    let mut rec = Recorder::new(&args.report_path());
    let notes = &mut ctx.s.w.artifact.notes;
    notes.push(format!("inputs: N(0,1) from candle's CUDA generator, seed {seed}, fresh for every (shape, dtype) point and rounded to the dtype"));
    notes.push(format!(
        "correctness: every output poisoned with NaN, then compared with a float64 CPU product on {} sampled rows (correctness block) and, for non-cuBLAS rows, with cuBLAS on the whole matrix (metrics rel_err_vs_cublas); pass = all finite, rel_err <= tolerance (f32 1e-5, tf32/f16/bf16 1e-2) and max_abs_err <= {} x tolerance x max|ref|, in both checks",
        args.check_rows,
        super::check::MAX_ERR_FACTOR
    ));
    notes.push(args.sampling.sampling().describe());
    notes.push("timing: CUDA events, batches of >= 200 us per sample; L2 flushed before each launch (cold) for model shapes, back-to-back (warm) otherwise, unless --l2 says so: see each row's timing.l2_cleared".into());
    notes.push("candle allocates its output on every call, so its times include that; our kernels and cuBLAS write into a preallocated buffer".into());
    if let Ok(v) = std::env::var("NVIDIA_TF32_OVERRIDE") {
        notes.push(format!(
            "NVIDIA_TF32_OVERRIDE={v} was set in the environment"
        ));
    }
    let progress = Progress::new(progress_steps(points));
    if args.ceiling_size > 0 {
        let mut dtypes: Vec<Dtype> = points.iter().map(|p| p.dtype).collect();
        dtypes.sort();
        dtypes.dedup();
        for d in dtypes {
            let (size, tf) = measure_ceiling(&mut ctx, d, args.ceiling_size)
                .with_context(|| format!("measuring the cuBLAS {d} ceiling"))?;
            progress.note(&format!("{d} ceiling: cuBLAS {size}^3 at {tf:.1} TFLOP/s"));
            rec.matmul_tflops.insert(d.name().into(), tf);
        }
    }

    for p in points {
        let rows = run_point(&mut ctx, args, p, &progress)
            .with_context(|| format!("at {} {}", p.shape.label(), p.dtype))?;
        ctx.s.gpu.sample_clocks();
        rec.push_group(&mut ctx.s.w, rows)?;
    }
    progress.finish();
    rec.settle(
        &mut ctx.s.w.artifact,
        "cublas",
        format!(
            "matmul_tflops: best cuBLAS rate per dtype in this process: a {}^3 GEMM before the sweep (warm) and every cuBLAS point of the sweep",
            args.ceiling_size
        ),
    );
    let path = ctx.s.finish()?;
    let text = rec.write_final(&path)?;
    println!("{text}");
    eprintln!(
        "wrote {} and {}",
        path.display(),
        args.report_path().display()
    );
    Ok(())
}

/// cuBLAS at size^3 (halved until it fits): (size, TFLOP/s of the median).
fn measure_ceiling(ctx: &mut Ctx, d: Dtype, mut size: usize) -> Result<(usize, f64)> {
    let (free, _) = ctx.s.gpu.mem_info()?;
    let fits =
        |s: usize| device_bytes_needed(s, s, s, d.size_bytes()).is_some_and(|b| b <= free * 9 / 10);
    while size > 256 && !fits(size) {
        size /= 2;
    }
    let shape = Shape::new(size, size, size, ShapeSet::Square);
    let Inputs { a: ta, b: tb, .. } = random_inputs(&ctx.s.gpu.device, &shape, d)?;
    let a = DevMat::from_tensor(&ta, &ctx.s.gpu)?;
    let b = DevMat::from_tensor(&tb, &ctx.s.gpu)?;
    let out = OutBuf::new(&ctx.s.gpu, size, size, Elem::of(d))?;
    let c = out.mat(&ctx.s.gpu);
    let Ctx { s, kernels, blas } = ctx;
    let gpu = &mut s.gpu;
    let cfg = TimingConfig::fixed(5, 20, 3);
    let m = measure(gpu, cfg, TimingMode::Warm, |g| {
        launch_on(
            g,
            kernels,
            blas,
            Impl::Cublas,
            d,
            BLayout::Kn,
            (&ta, &tb),
            (&a, &b, &c),
        )
    })?;
    Ok((size, tflops(flop(size, size, size), m.time_us.p50)))
}

fn run_point(
    ctx: &mut Ctx,
    args: &GemmArgs,
    p: &Point,
    progress: &Progress,
) -> Result<Vec<ResultRow>> {
    let (m, n, k) = (p.shape.m, p.shape.n, p.shape.k);
    let d = p.dtype;
    // The plan refused shapes whose byte counts overflow; MAX here would still mean "no fit".
    let need = device_bytes_needed(m, n, k, d.size_bytes()).unwrap_or(usize::MAX);
    let host_need = host_bytes_needed(m, n, k, d.size_bytes()).unwrap_or(usize::MAX);
    let (free, _) = ctx.s.gpu.mem_info()?;
    let host_free = crate::env::available_memory_bytes().unwrap_or(u64::MAX);
    let why = if need > free {
        Some(format!(
            "does not fit: this {} shape needs about {:.1} GiB of device memory ({need} bytes), {:.1} GiB \
             free ({free} bytes)",
            super::memory::flag_of(&p.shape),
            need as f64 / GIB,
            free as f64 / GIB
        ))
    } else if host_need as u64 > host_free {
        Some(format!(
            "does not fit: this {} shape needs about {:.1} GiB of host memory for the checks ({host_need} \
             bytes), {:.1} GiB available ({host_free} bytes)",
            super::memory::flag_of(&p.shape),
            host_need as f64 / GIB,
            host_free as f64 / GIB
        ))
    } else {
        None
    };
    if let Some(why) = why {
        progress.note(&format!("{} {d}: {why}", p.shape.label()));
        return Ok(p
            .impls
            .iter()
            .map(|pl| skipped_row(&p.shape, d, pl.imp, &why))
            .collect());
    }
    let inputs = random_inputs(&ctx.s.gpu.device, &p.shape, d)?;
    let layout = p.shape.b_layout;
    // candle multiplies by B as K x N; cuBLAS and our kernels read B as stored.
    let (ta, tb) = (&inputs.a, &inputs.b_kn);
    let a = DevMat::from_tensor(ta, &ctx.s.gpu)?;
    let b = DevMat::from_tensor(&inputs.b, &ctx.s.gpu)?;
    let check_rows = sample_rows(m, args.check_rows);
    let reference = {
        let a_host = to_host_f32(ta)?;
        reference_rows_f64(
            &gather_rows(&a_host, k, &check_rows),
            &b_kn_host(&inputs)?,
            n,
            k,
        )
    };
    let out = OutBuf::new(&ctx.s.gpu, m, n, Elem::of(d))?;

    // Run one implementation once on a poisoned output and read the result back.
    let run_once = |ctx: &mut Ctx, imp: Impl| -> Result<Vec<f32>> {
        if imp == Impl::Candle {
            let c = ta.matmul(tb).context("candle matmul")?;
            return to_host_f32(&c);
        }
        out.poison_shared(&ctx.s.gpu)?;
        ctx.launch(imp, d, layout, (ta, tb), (&a, &b, &out.mat(&ctx.s.gpu)))?;
        ctx.s.gpu.synchronize()?;
        out.to_host_f32(&ctx.s.gpu)
    };

    // cuBLAS first: the whole-matrix reference for everyone else.
    let cublas_out = run_once(ctx, Impl::Cublas).context("cuBLAS reference run")?;
    let cublas_corr = judge(
        &compare(&gather_rows(&cublas_out, n, &check_rows), &reference),
        crate::gemm::dtype::tolerance(d),
        "cpu_f64_rows",
    );
    let cublas_ok = cublas_corr.passed;
    let mut rows = Vec::new();
    for planned in &p.impls {
        let imp = planned.imp;
        if let Some(why) = &planned.skip {
            rows.push(skipped_row(&p.shape, d, imp, why));
            continue;
        }
        progress.start(p.progress_label(imp));
        let mut row = base_row(&p.shape, d, imp);
        if imp != Impl::Cublas {
            crate::code_id::tag(&mut row, &kernels::modules_of(imp));
        }
        if let Some(plan) = ctx
            .kernels
            .split_plan(&ctx.s.gpu, imp, p.shape.m, p.shape.n, p.shape.k)
        {
            row = row
                .param("block_tile", plan.tile.name())
                .param("k_splits", plan.splits);
            if plan.splits > 1 {
                row = row.param("split_reduction", plan.reduction.name());
            }
        }
        let result = (|| -> Result<()> {
            let got = if imp == Impl::Cublas {
                cublas_out.clone()
            } else {
                run_once(ctx, imp)?
            };
            let mut corr = judge(
                &compare(&gather_rows(&got, n, &check_rows), &reference),
                crate::gemm::dtype::tolerance(d),
                "cpu_f64_rows",
            );
            if imp != Impl::Cublas {
                if cublas_ok {
                    let full = compare_f32(&got, &cublas_out);
                    row.metrics.insert("rel_err_vs_cublas".into(), full.rel_err);
                    row.metrics
                        .insert("max_abs_err_vs_cublas".into(), full.max_abs_err);
                    let fj = judge(&full, crate::gemm::dtype::tolerance(d), "cublas_full");
                    if !fj.passed {
                        corr.passed = false;
                        row.notes.push(format!(
                            "whole-matrix check against cuBLAS failed: rel_err {:.2e}, max_abs_err {:.2e} ({} non-finite)",
                            full.rel_err, full.max_abs_err, full.non_finite
                        ));
                    }
                } else {
                    row.notes.push(
                        "cuBLAS failed its own check here: only the float64 rows were compared"
                            .into(),
                    );
                }
            }
            let passed = corr.passed;
            row.correctness = Some(corr);
            if !passed {
                row.status = Status::Failed;
                return Ok(());
            }
            time_impl(
                ctx,
                (imp, d, layout),
                (ta, tb),
                (&a, &b, &out),
                p.cold,
                &args.sampling.sampling(),
                &mut row,
            )
        })();
        if let Err(e) = result {
            // A launch or copy error; a faulted kernel leaves the context unusable, so stop.
            row.status = Status::Failed;
            row.stats.clear();
            row.notes.push(format!("error: {e:#}"));
            progress.step();
            progress.row(&row);
            return Err(e.context(format!("{} failed", imp.name())));
        }
        fill_point_metrics(&mut row, m, n, k, d.size_bytes());
        progress.step();
        progress.row(&row);
        rows.push(row);
    }
    Ok(rows)
}

#[allow(clippy::too_many_arguments)]
fn time_impl(
    ctx: &mut Ctx,
    (imp, d, layout): (Impl, Dtype, BLayout),
    t: (&Tensor, &Tensor),
    (a, b, out): (&DevMat, &DevMat, &OutBuf),
    cold: bool,
    sampling: &Sampling,
    row: &mut ResultRow,
) -> Result<()> {
    let Ctx { s, kernels, blas } = ctx;
    let gpu = &mut s.gpu;
    let c = out.mat(gpu);
    let mut launch = |g: &Gpu| launch_on(g, kernels, blas, imp, d, layout, t, (a, b, &c));
    let est = measure(
        gpu,
        TimingConfig::fixed(0, 2, 1),
        TimingMode::Warm,
        &mut launch,
    )?;
    let plan = sample_plan(est.time_us.min, sampling.budget.as_secs_f64() * 1e3);
    let cfg = TimingConfig {
        warmup: plan.warmup,
        sampling: *sampling,
        batch: plan.batch,
    };
    let mode = if cold {
        TimingMode::Cold
    } else {
        TimingMode::Warm
    };
    let measured = measure(gpu, cfg, mode, &mut launch)?;
    row.stats.insert("time_us".into(), measured.time_us);
    row.timing = Some(measured.timing);
    Ok(())
}
