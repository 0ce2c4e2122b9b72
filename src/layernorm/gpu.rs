//! The GPU sweep: per point, fresh inputs, the f64 check of candle and of our kernel on the
//! same device tensors, then warm and cold CUDA-event timings of both, rows written as they come.

use super::kernel::LayerNormKernel;
use super::plan::plan;
use super::reference::{compare, Inputs};
use super::report::{self, CANDLE, KIND, OPBENCH};
use super::sweep::TimingMethod;
use super::{Dtype, Elem, Shape, SweepConfig};
use crate::artifact::ResultRow;
use crate::gpu::{
    measure, measure_rotating, rotation, CopyKernel, Gpu, Measured, TimingConfig, TimingMode,
};
use crate::harness::{failed, Session, SessionSpec};
use crate::progress::Progress;
use anyhow::{bail, Context, Result};
use candle_core::cuda_backend::CudaDType;
use candle_core::{Storage, Tensor};
use cudarc::driver::{CudaSlice, DeviceRepr, ValidAsZeroBits};
use std::path::PathBuf;

/// Runs the sweep on GPU 0 and writes the artifact; returns its path.
pub fn run(cfg: &SweepConfig) -> Result<PathBuf> {
    cfg.check()?;
    let mut s = Session::start(
        Gpu::open(0)?,
        SessionSpec {
            kind: KIND,
            out: &cfg.out,
            overwrite: cfg.overwrite,
            copy_ceiling: true,
            launch_interval: true,
        },
    )?;
    let copy_gbps = s.copy_gbps.expect("the session measured the copy ceiling");
    let notes = &mut s.w.artifact.notes;
    notes.push(cfg.timing.describe(s.gpu.l2_bytes, cfg.rotate_l2_multiple));
    notes.push(cfg.sampling.describe());
    notes.push(format!(
        "inputs: fresh per point from seed {} + point index; x = offset + scale * N(0,1) per row, \
         gamma +-U[0.5,1.5), beta U[-1,1); checked against a float64 CPU reference; \
         our output poisoned (NaN) before the check and before timing, and the last timed \
         launch's output compared bit for bit with the checked one; candle allocates its own output",
        cfg.seed
    ));
    s.w.flush()?;
    let copier = CopyKernel::load(&s.gpu)?;
    let progress = Progress::new(cfg.points().len() as u64);
    for (i, shape, dtype) in cfg.points() {
        progress.start(format!("{shape} {dtype}"));
        let seed = cfg.seed + i as u64;
        let gpu = &mut s.gpu;
        let rows = match dtype {
            Dtype::F32 => point::<f32>(gpu, cfg, &copier, &shape, seed, copy_gbps),
            Dtype::F16 => point::<half::f16>(gpu, cfg, &copier, &shape, seed, copy_gbps),
            Dtype::Bf16 => point::<half::bf16>(gpu, cfg, &copier, &shape, seed, copy_gbps),
            other => Err(anyhow::anyhow!(
                "LayerNorm runs in f32, f16 or bf16, not {other}"
            )),
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
                    failed(row, None, &why)
                })
                .collect()
        });
        for r in rows {
            s.push(&progress, r)?;
        }
        s.point_done(&progress);
    }
    progress.finish();
    s.finish()
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

/// How one measurement is timed.
#[derive(Debug, Clone, Copy)]
enum How {
    /// Back-to-back launches on set 0.
    Warm,
    /// L2 flushed before each launch on set 0.
    Flush,
    /// Back-to-back launches cycling through this many buffer sets (1: warm), stream held
    /// while each sample is queued.
    Rotate(usize),
}

impl How {
    /// Buffer sets the launches touch.
    fn sets(self) -> usize {
        match self {
            How::Rotate(k) => k,
            _ => 1,
        }
    }

    fn measure(
        self,
        gpu: &mut Gpu,
        tc: TimingConfig,
        bytes_per_set: usize,
        l2_multiple: usize,
        mut launch: impl FnMut(&Gpu, usize) -> Result<()>,
    ) -> Result<Measured> {
        match self {
            How::Warm => measure(gpu, tc, TimingMode::Warm, |g| launch(g, 0)),
            How::Flush => measure(gpu, tc, TimingMode::Cold, |g| launch(g, 0)),
            How::Rotate(k) => measure_rotating(gpu, tc, k, bytes_per_set, l2_multiple, launch),
        }
    }
}

/// Adds a timing note to a row, when there is one.
fn annotate(mut row: ResultRow, note: Option<&str>) -> ResultRow {
    if let Some(n) = note {
        row.notes.push(n.to_string());
    }
    row
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
    copier: &CopyKernel,
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
        plan(rows, cols, dtype, cfg.bytes_per_thread, cfg.kernel)?
            .with_grid(cfg.grid)
            .with_x_cache(cfg.x_cache),
        cfg.blocks_per_sm,
    )?;
    let inputs = Inputs::<T>::random(rows, cols, seed);
    let reference = inputs.reference(eps);
    let dev = gpu.device.clone();
    let x = Tensor::from_slice(&inputs.x, shape.0.as_slice(), &dev)?;
    let g = Tensor::from_slice(&inputs.gamma, cols, &dev)?;
    let b = Tensor::from_slice(&inputs.beta, cols, &dev)?;
    drop(inputs);

    let y_candle: Vec<T> = candle_nn::ops::layer_norm(&x, &g, &b, eps)
        .context("candle layer_norm")?
        .flatten_all()?
        .to_vec1()?;
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
        sampling: cfg.sampling,
        batch: cfg.batch,
    };
    let rotate_sets = match cfg.timing {
        TimingMethod::Rotate => rotation::plan_sets(bytes, gpu.l2_bytes, cfg.rotate_l2_multiple),
        TimingMethod::Flush => None,
    };
    // Buffer sets for cold rotation: set 0 is x and y; the others hold copies of x (the same
    // values at other addresses, so every set's output must equal the checked one) and their
    // own y. gamma and beta are shared by all sets.
    let mut xs = vec![x.clone()];
    let mut ys = vec![y];
    for _ in 1..rotate_sets.unwrap_or(1) {
        xs.push(x.copy().context("copying x into another buffer set")?);
        let mut yj = gpu
            .stream
            .alloc_zeros::<T>(rows * cols)
            .context("allocating y of another buffer set")?;
        gpu.poison(&mut yj)?;
        ys.push(yj);
    }
    let cold = match rotate_sets {
        Some(k) => How::Rotate(k),
        None => How::Flush,
    };
    let warm = match cfg.timing {
        TimingMethod::Rotate => How::Rotate(1),
        TimingMethod::Flush => How::Warm,
    };
    let cold_note = match (cfg.timing, rotate_sets) {
        (TimingMethod::Rotate, None) => Some(format!(
            "cold by an L2 flush before each launch: rotation would need {} buffer sets of {bytes} \
             bytes (more than {})",
            rotation::sets_needed(bytes, gpu.l2_bytes, cfg.rotate_l2_multiple),
            rotation::MAX_SETS
        )),
        _ => None,
    };
    let mult = cfg.rotate_l2_multiple;
    let mut out = Vec::new();
    for (how, name) in [(warm, "warm"), (cold, "cold")] {
        let used = how.sets();
        let row = report::point_row(CANDLE, shape, dtype, name, eps).param("device", "cuda");
        let candle_row = if candle_check.passed {
            let m = how.measure(gpu, tc, bytes, mult, |_, j| {
                candle_nn::ops::layer_norm(&xs[j], &g, &b, eps)
                    .map(drop)
                    .context("candle layer_norm")
            })?;
            annotate(
                report::timed(
                    row,
                    candle_check.clone(),
                    m.time_us,
                    m.timing,
                    bytes,
                    Some(copy_gbps),
                ),
                m.note
                    .as_deref()
                    .or(cold_note.as_deref().filter(|_| name == "cold")),
            )
        } else {
            failed(
                row,
                Some(candle_check.clone()),
                "candle's output is off the f64 reference: not timed",
            )
        };
        // The copy engine moving the same bytes (x into y) timed the same way, over the same
        // sets: what this size allows, launch and ramp-up included. y is poisoned again below.
        let copy = how.measure(gpu, tc, bytes, mult, |gp, j| {
            with_slices(&xs[j], &g, &b, |xj, _, _| {
                gp.stream
                    .memcpy_dtod(xj, &mut ys[j])
                    .context("cuMemcpyDtoD x -> y")
            })
        })?;
        // A plain streaming copy kernel over the same bytes and sets (16-byte rows only).
        let kernel_copy = if bytes.is_multiple_of(32) {
            Some(how.measure(gpu, tc, bytes, mult, |gp, j| {
                with_slices(&xs[j], &g, &b, |xj, _, _| copier.copy(gp, xj, &mut ys[j]))
            })?)
        } else {
            None
        };
        let mut row = report::with_plan(
            report::point_row(OPBENCH, shape, dtype, name, eps),
            &kernel.plan,
        )
        .param("device", "cuda");
        crate::code_id::tag(&mut row, &["layernorm"]);
        let mut ours_row = if ours_check.passed {
            for yj in ys.iter_mut().take(used) {
                gpu.poison(yj)?;
            }
            let m = how.measure(gpu, tc, bytes, mult, |gp, j| {
                with_slices(&xs[j], &g, &b, |xj, gs, bs| {
                    kernel.forward(&gp.stream, xj, gs, bs, &mut ys[j], eps)
                })
            })?;
            let mut same = true;
            for yj in ys.iter().take(used) {
                let after: Vec<T> = gpu
                    .stream
                    .clone_dtoh(yj)
                    .context("downloading y after timing")?;
                same &= same_bits(&after, &y_ours);
            }
            if same {
                annotate(
                    report::timed(
                        row,
                        ours_check.clone(),
                        m.time_us,
                        m.timing,
                        bytes,
                        Some(copy_gbps),
                    ),
                    m.note
                        .as_deref()
                        .or(cold_note.as_deref().filter(|_| name == "cold")),
                )
            } else {
                failed(
                    row,
                    Some(ours_check.clone()),
                    "the timed launches' output differs from the checked output (a race?): not reported",
                )
            }
        } else {
            failed(
                row,
                Some(ours_check.clone()),
                "our output is off the f64 reference: not timed",
            )
        };
        report::add_speedups(&mut ours_row, &candle_row);
        report::add_same_size_copy(&mut ours_row, bytes, copy.time_us.p50);
        if let Some(k) = kernel_copy {
            report::add_same_size_kernel_copy(&mut ours_row, bytes, k.time_us.p50);
        }
        out.push(candle_row);
        out.push(ours_row);
    }
    Ok(out)
}
