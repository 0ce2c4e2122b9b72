//! The GPU sweep: per point, fresh inputs, the f64 check of candle and of our kernel on the
//! same device tensors, then warm and cold CUDA-event timings of both, rows written as they come.

use super::kernel::LayerNormKernel;
use super::plan::plan;
use super::progress::Progress;
use super::reference::{compare, Inputs};
use super::report::{self, CANDLE, KIND, OPBENCH};
use super::{Dtype, Elem, Shape, SweepConfig};
use crate::artifact::{ArtifactWriter, ResultRow};
use crate::gpu::{copy_bandwidth_gbps, measure, Gpu, TimingConfig, TimingMode};
use anyhow::{bail, Context, Result};
use candle_core::cuda_backend::CudaDType;
use candle_core::{Storage, Tensor};
use cudarc::driver::{CudaSlice, DeviceRepr, ValidAsZeroBits};
use std::path::PathBuf;

/// Bytes of each copy-ceiling buffer: far beyond L2, like the large shapes.
const COPY_BYTES: usize = 1 << 30;

/// Runs the sweep on GPU 0 and writes the artifact; returns its path.
pub fn run(cfg: &SweepConfig) -> Result<PathBuf> {
    cfg.check()?;
    let mut gpu = Gpu::open(0)?;
    let (copy_gbps, method) = copy_bandwidth_gbps(&mut gpu, COPY_BYTES)?;
    eprintln!("copy ceiling: {copy_gbps:.0} GB/s ({method})");
    let mut w = ArtifactWriter::start(KIND, &cfg.out, gpu.env())?;
    w.artifact.ceilings.copy_gbps = Some(copy_gbps);
    w.artifact.ceilings.method.push(method);
    if let Some(e) = gpu.probe_error() {
        w.artifact
            .notes
            .push(format!("NVML unavailable, no gpu block: {e}"));
    }
    w.artifact.notes.push(format!(
        "inputs: fresh per point from seed {} + point index; x = offset + scale * N(0,1) per row, \
         gamma +-U[0.5,1.5), beta U[-1,1); checked against a float64 CPU reference; \
         our output poisoned (NaN) before the check and before timing, and the last timed \
         launch's output compared bit for bit with the checked one; candle allocates its own output",
        cfg.seed
    ));
    w.flush()?;
    let progress = Progress::new(cfg.points().len());
    for (i, shape, dtype) in cfg.points() {
        progress.start(&shape, dtype);
        let seed = cfg.seed + i as u64;
        let rows = match dtype {
            Dtype::F32 => point::<f32>(&mut gpu, cfg, &shape, seed, copy_gbps),
            Dtype::F16 => point::<half::f16>(&mut gpu, cfg, &shape, seed, copy_gbps),
            Dtype::Bf16 => point::<half::bf16>(&mut gpu, cfg, &shape, seed, copy_gbps),
        };
        // An error (a launch refused, a fault) fails this point and the sweep goes on; a fault
        // that breaks the CUDA context will fail the points after it as well.
        let rows = rows.unwrap_or_else(|e| {
            let why = format!("error: {e:#}");
            eprintln!("point --shape {shape} --dtype {dtype}: {why}");
            ["warm", "cold"]
                .iter()
                .map(|mode| {
                    let row = report::point_row(OPBENCH, &shape, dtype, mode, cfg.eps)
                        .param("device", "cuda");
                    report::failed(row, None, &why)
                })
                .collect()
        });
        for r in rows {
            progress.done(&r);
            w.push(r)?;
        }
        gpu.sample_clocks();
        progress.advance();
    }
    progress.finish();
    let (copy_end, _) = copy_bandwidth_gbps(&mut gpu, COPY_BYTES)?;
    w.artifact.ceilings.method.push(format!(
        "copy measured again after the sweep: {copy_end:.0} GB/s (the ceiling above is the first)"
    ));
    w.artifact.env = gpu.env();
    w.finish()
}

/// Hands our kernel the device buffers of candle's x, gamma and beta tensors.
fn with_slices<T: CudaDType, R>(
    x: &Tensor,
    g: &Tensor,
    b: &Tensor,
    f: impl FnOnce(&CudaSlice<T>, &CudaSlice<T>, &CudaSlice<T>) -> Result<R>,
) -> Result<R> {
    let (xs, xl) = x.storage_and_layout();
    let (gs, gl) = g.storage_and_layout();
    let (bs, bl) = b.storage_and_layout();
    for (name, l) in [("x", xl), ("gamma", gl), ("beta", bl)] {
        if !l.is_contiguous() || l.start_offset() != 0 {
            bail!("tensor {name} must be contiguous from offset 0 for our kernel");
        }
    }
    fn slice<'a, T: CudaDType>(s: &'a Storage, name: &str) -> Result<&'a CudaSlice<T>> {
        match s {
            Storage::Cuda(c) => Ok(c.as_cuda_slice::<T>()?),
            _ => bail!("tensor {name} is not on the GPU"),
        }
    }
    f(slice(&xs, "x")?, slice(&gs, "gamma")?, slice(&bs, "beta")?)
}

fn same_bits<T: Elem>(a: &[T], b: &[T]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(p, q)| p.to_f64().to_bits() == q.to_f64().to_bits())
}

fn point<T>(
    gpu: &mut Gpu,
    cfg: &SweepConfig,
    shape: &Shape,
    seed: u64,
    copy_gbps: f64,
) -> Result<Vec<ResultRow>>
where
    T: Elem + DeviceRepr + ValidAsZeroBits + CudaDType,
{
    let dtype = T::ELEM;
    let (rows, cols, eps) = (shape.rows(), shape.cols(), cfg.eps);
    let kernel = LayerNormKernel::load(
        gpu,
        plan(rows, cols, dtype, cfg.bytes_per_thread, cfg.kernel)?,
    )?;
    let inputs = Inputs::<T>::random(rows, cols, seed);
    let reference = inputs.reference(eps);
    let dev = gpu.device.clone();
    let x = Tensor::from_slice(&inputs.x, shape.0.as_slice(), &dev)?;
    let g = Tensor::from_slice(&inputs.gamma, cols, &dev)?;
    let b = Tensor::from_slice(&inputs.beta, cols, &dev)?;
    drop(inputs);
    let candle_fwd = || candle_nn::ops::layer_norm(&x, &g, &b, eps).context("candle layer_norm");

    let y_candle: Vec<T> = candle_fwd()?.flatten_all()?.to_vec1()?;
    let candle_check = compare(&y_candle, &reference, dtype);
    drop(y_candle);

    let mut y = gpu
        .stream
        .alloc_zeros::<T>(rows * cols)
        .context("allocating y")?;
    gpu.poison(&mut y)?;
    let stream = gpu.stream.clone();
    with_slices(&x, &g, &b, |xs, gs, bs| {
        kernel.forward(&stream, xs, gs, bs, &mut y, eps)
    })?;
    gpu.synchronize()?;
    let y_ours: Vec<T> = gpu.stream.clone_dtoh(&y).context("downloading y")?;
    let ours_check = compare(&y_ours, &reference, dtype);
    drop(reference);

    let bytes = shape.bytes_moved(dtype);
    let tc = TimingConfig {
        warmup: cfg.warmup,
        samples: cfg.samples,
        batch: cfg.batch,
    };
    let mut out = Vec::new();
    for (mode, name) in [(TimingMode::Warm, "warm"), (TimingMode::Cold, "cold")] {
        let row = report::point_row(CANDLE, shape, dtype, name, eps).param("device", "cuda");
        let candle_row = if candle_check.passed {
            let m = measure(gpu, tc, mode, |_| candle_fwd().map(drop))?;
            report::timed(
                row,
                candle_check.clone(),
                m.time_us,
                m.timing,
                bytes,
                Some(copy_gbps),
            )
        } else {
            report::failed(
                row,
                Some(candle_check.clone()),
                "candle's output is off the f64 reference: not timed",
            )
        };
        // The copy engine moving the same bytes (x into y) in the same mode: what this size
        // allows, launch and ramp-up included. y is poisoned again before our kernel runs.
        let copy = measure(gpu, tc, mode, |gp| {
            with_slices(&x, &g, &b, |xs, _, _| {
                gp.stream
                    .memcpy_dtod(xs, &mut y)
                    .context("cuMemcpyDtoD x -> y")
            })
        })?;
        let row = report::with_plan(
            report::point_row(OPBENCH, shape, dtype, name, eps),
            &kernel.plan,
        )
        .param("device", "cuda");
        let mut ours_row = if ours_check.passed {
            gpu.poison(&mut y)?;
            let m = measure(gpu, tc, mode, |gp| {
                with_slices(&x, &g, &b, |xs, gs, bs| {
                    kernel.forward(&gp.stream, xs, gs, bs, &mut y, eps)
                })
            })?;
            let after: Vec<T> = gpu
                .stream
                .clone_dtoh(&y)
                .context("downloading y after timing")?;
            if same_bits(&after, &y_ours) {
                report::timed(
                    row,
                    ours_check.clone(),
                    m.time_us,
                    m.timing,
                    bytes,
                    Some(copy_gbps),
                )
            } else {
                report::failed(
                    row,
                    Some(ours_check.clone()),
                    "the timed launches' output differs from the checked output (a race?): not reported",
                )
            }
        } else {
            report::failed(
                row,
                Some(ours_check.clone()),
                "our output is off the f64 reference: not timed",
            )
        };
        report::add_speedups(&mut ours_row, &candle_row);
        report::add_same_size_copy(&mut ours_row, bytes, copy.time_us.p50);
        out.push(candle_row);
        out.push(ours_row);
    }
    Ok(out)
}
