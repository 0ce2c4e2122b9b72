//! The sweep plan: which (shape, dtype) points run which implementations, which are skipped
//! and why, and how many launches to time per point.

use super::args::{DeviceKind, GemmArgs, L2Policy, ModelArg};
use super::dtype::Dtype;
use super::impls::Impl;
use super::metrics::flop;
use super::shapes::{self, BLayout, LayerOp, Model, Shape, ShapeSet};
use anyhow::{bail, Context, Result};

/// One implementation at one point, or the reason it is not run.
#[derive(Debug, Clone, PartialEq)]
pub struct Planned {
    pub imp: Impl,
    pub skip: Option<String>,
}

/// One (shape, dtype) point and the implementations planned for it (cuBLAS first).
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub shape: Shape,
    pub dtype: Dtype,
    pub impls: Vec<Planned>,
    /// Flush L2 before each timed launch.
    pub cold: bool,
}

impl Point {
    /// Implementations that will actually run.
    pub fn runnable(&self) -> impl Iterator<Item = Impl> + '_ {
        self.impls
            .iter()
            .filter(|p| p.skip.is_none())
            .map(|p| p.imp)
    }

    /// What the progress line names while `imp` runs here: "4096x4096x4096 bf16 cublas".
    pub fn progress_label(&self, imp: Impl) -> String {
        format!("{} {} {}", self.shape.label(), self.dtype, imp.name())
    }
}

/// Progress steps of a sweep: one per (point, implementation) that will run.
pub fn progress_steps(points: &[Point]) -> u64 {
    points.iter().map(|p| p.runnable().count() as u64).sum()
}

/// The implementations available on `device` for `dtype`, in catalog order.
fn available(device: DeviceKind, dtype: Dtype) -> Vec<Impl> {
    match device {
        DeviceKind::Cpu => {
            if dtype == Dtype::Tf32 {
                vec![]
            } else {
                vec![Impl::Candle]
            }
        }
        DeviceKind::Cuda => Impl::ALL
            .into_iter()
            .filter(|i| i.gpu_dtypes().contains(&dtype))
            .collect(),
    }
}

/// One axis flag, its repeated values dropped with a warning on stderr.
fn axis(flag: &str, spec: &str) -> Result<Vec<usize>> {
    let (values, repeated) = shapes::parse_axis_repeats(spec).context(flag.to_string())?;
    if !repeated.is_empty() {
        let shown: Vec<String> = repeated.iter().map(|v| v.to_string()).collect();
        eprintln!(
            "warning: {flag} lists {} more than once; each value runs once",
            shown.join(", ")
        );
    }
    Ok(values)
}

/// Expands the command line into the list of points.
pub fn build(args: &GemmArgs) -> Result<Vec<Point>> {
    let cpu = args.device == DeviceKind::Cpu;
    let square_spec = args
        .square
        .clone()
        .unwrap_or_else(|| if cpu { "64:256:x2" } else { "1024:8192:x2" }.into());
    let square = axis("--square", &square_spec)?;
    let mut shapes_main = shapes::square(&square);
    match (&args.m, &args.n, &args.k) {
        (None, None, None) => {}
        (Some(m), Some(n), Some(k)) => {
            let ms = axis("--m", m)?;
            let ns = axis("--n", n)?;
            let ks = axis("--k", k)?;
            shapes_main.extend(shapes::cartesian(&ms, &ns, &ks));
        }
        _ => bail!("--m, --n and --k go together: give all three axes (or use --square)"),
    }
    let dtypes = if args.dtypes.is_empty() {
        if cpu {
            vec![Dtype::F32]
        } else {
            vec![Dtype::F32, Dtype::Tf32, Dtype::F16, Dtype::Bf16]
        }
    } else {
        args.dtypes.clone()
    };
    let model = args.model.unwrap_or(if cpu {
        ModelArg::None
    } else {
        ModelArg::TinyLlama
    });
    let model_shapes = match model {
        ModelArg::None => vec![],
        ModelArg::TinyLlama => {
            let tokens = axis("--tokens", &args.tokens)?;
            let ops = if args.layer_ops.is_empty() {
                LayerOp::ALL.to_vec()
            } else {
                args.layer_ops.clone()
            };
            shapes::model_shapes(Model::TinyLlama1_1b, &ops, &tokens)
        }
    };

    let mut points = Vec::new();
    let sets = [(&shapes_main, &dtypes), (&model_shapes, &args.model_dtypes)];
    for (shape_list, dts) in sets {
        for &layout in &args.b_layouts {
            for &dtype in dts.iter() {
                for &shape in shape_list.iter() {
                    let point = plan_point(args, shape.with_b_layout(layout), dtype);
                    super::memory::check_countable(&point)?;
                    if !point.impls.is_empty() {
                        points.push(point);
                    }
                }
            }
        }
    }
    if points.is_empty() {
        bail!(
            "nothing to run: the shapes, --dtypes and --impls leave no point (on --device cpu only \
             candle runs, in f32/f16/bf16)"
        );
    }
    Ok(points)
}

fn plan_point(args: &GemmArgs, shape: Shape, dtype: Dtype) -> Point {
    let is_model = shape.set == ShapeSet::Model;
    let chosen = |i: Impl| {
        if args.skip_impls.contains(&i) {
            false
        } else if args.impls.is_empty() {
            !is_model || i.in_model_sweep()
        } else {
            args.impls.contains(&i)
        }
    };
    let gflop = flop(shape.m, shape.n, shape.k) / 1e9;
    let impls = available(args.device, dtype)
        .into_iter()
        .filter(|&i| chosen(i) && (shape.b_layout == BLayout::Kn || i.reads_b_nk()))
        .map(|imp| {
            let skip = match imp.supports(shape.m, shape.n, shape.k) {
                Err(why) => Some(why),
                Ok(()) if imp.is_slow() && gflop > args.slow_max_gflop => Some(format!(
                    "{} is not run above --slow-max-gflop {} (this shape: {gflop:.0} GFLOP): \
                     one launch would take seconds",
                    imp.name(),
                    args.slow_max_gflop
                )),
                Ok(()) => None,
            };
            Planned { imp, skip }
        })
        .collect();
    let cold = match args.l2 {
        L2Policy::Auto => is_model,
        L2Policy::Warm => false,
        L2Policy::Cold => true,
    };
    Point {
        shape,
        dtype,
        impls,
        cold,
    }
}

/// How many launches to time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SamplePlan {
    pub warmup: usize,
    pub samples: usize,
    pub batch: usize,
}

/// From one launch's estimated time: about 20 ms of warm-up, batches of >= 200 us (so event
/// resolution does not matter), and `budget_ms` of timed launches, 5 to 100 samples.
pub fn sample_plan(est_us: f64, budget_ms: f64) -> SamplePlan {
    let est = est_us.max(1.0);
    let batch = ((200.0 / est).ceil() as usize).clamp(1, 50);
    let samples = ((budget_ms * 1e3 / (batch as f64 * est)).floor() as usize).clamp(5, 100);
    let warmup = ((20_000.0 / est).ceil() as usize).clamp(1, 50);
    SamplePlan {
        warmup,
        samples,
        batch,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn args(extra: &[&str]) -> GemmArgs {
        let mut v = vec!["gemm_bench"];
        v.extend_from_slice(extra);
        GemmArgs::try_parse_from(v).unwrap()
    }

    #[test]
    fn default_cuda_sweep() {
        let pts = build(&args(&[])).unwrap();
        let square: Vec<_> = pts
            .iter()
            .filter(|p| p.shape.set == ShapeSet::Square)
            .collect();
        let model: Vec<_> = pts
            .iter()
            .filter(|p| p.shape.set == ShapeSet::Model)
            .collect();
        assert_eq!(square.len(), 4 * 4); // 1024..8192 x f32, tf32, f16, bf16
        assert_eq!(model.len(), 30); // 5 projections x 6 token counts, bf16
        assert!(model.iter().all(|p| p.dtype == Dtype::Bf16 && p.cold));
        assert!(square.iter().all(|p| !p.cold));
        // f32 at 8192: the naive kernels are skipped with a reason, the rest run.
        let big = square
            .iter()
            .find(|p| p.dtype == Dtype::F32 && p.shape.m == 8192)
            .unwrap();
        let naive = big.impls.iter().find(|p| p.imp == Impl::Naive).unwrap();
        assert!(naive.skip.as_ref().unwrap().contains("--slow-max-gflop"));
        assert!(big.runnable().any(|i| i == Impl::WarptileBk16));
        let f32_4096 = square
            .iter()
            .find(|p| p.dtype == Dtype::F32 && p.shape.m == 4096)
            .unwrap();
        assert_eq!(f32_4096.runnable().count(), 9); // cublas, candle, 7 ladder kernels
                                                    // tf32 is cuBLAS only.
        let tf = square.iter().find(|p| p.dtype == Dtype::Tf32).unwrap();
        assert_eq!(tf.runnable().collect::<Vec<_>>(), vec![Impl::Cublas]);
        // model shapes: libraries and the top of the tensor-core ladder, cuBLAS first.
        let m1 = model[0];
        assert_eq!(m1.impls[0].imp, Impl::Cublas);
        assert!(m1.runnable().all(|i| i.in_model_sweep()));
        assert_eq!(m1.runnable().count(), 6);
    }

    #[test]
    fn the_nk_layout_plans_only_the_implementations_that_read_it() {
        let pts = build(&args(&["--square", "4096", "--b-layouts", "kn,nk"])).unwrap();
        let nk: Vec<_> = pts
            .iter()
            .filter(|p| p.shape.b_layout == BLayout::Nk)
            .collect();
        assert_eq!(pts.len(), 2 * nk.len(), "every kn point has its nk twin");
        assert!(nk.iter().all(|p| p.runnable().all(|i| i.reads_b_nk())));
        let bf16 = nk
            .iter()
            .find(|p| p.dtype == Dtype::Bf16 && p.shape.set == ShapeSet::Square)
            .unwrap();
        assert_eq!(bf16.impls[0].imp, Impl::Cublas);
        assert_eq!(bf16.runnable().count(), 6); // cublas, candle, four TMA kernels
        assert_eq!(bf16.shape.label(), "4096x4096x4096 B[N,K]");
        let f32 = nk.iter().find(|p| p.dtype == Dtype::F32).unwrap();
        assert_eq!(
            f32.runnable().collect::<Vec<_>>(),
            vec![Impl::Cublas, Impl::Candle]
        );
    }

    #[test]
    fn cpu_sweep_is_candle_only() {
        let pts = build(&args(&["--device", "cpu"])).unwrap();
        assert_eq!(pts.len(), 3);
        assert!(pts
            .iter()
            .all(|p| p.runnable().collect::<Vec<_>>() == vec![Impl::Candle]));
        let e = build(&args(&["--device", "cpu", "--dtypes", "tf32"])).unwrap_err();
        assert!(format!("{e:#}").contains("nothing to run"));
    }

    #[test]
    fn axes_and_unsupported_shapes() {
        let pts = build(&args(&[
            "--square", "none", "--model", "none", "--m", "100,128", "--n", "256", "--k", "64",
            "--dtypes", "f32",
        ]))
        .unwrap();
        assert_eq!(pts.len(), 2);
        let p100 = &pts[0];
        assert_eq!(p100.shape.m, 100);
        let wt = p100
            .impls
            .iter()
            .find(|p| p.imp == Impl::WarptileBk8)
            .unwrap();
        assert!(wt.skip.as_ref().unwrap().contains("M % 128"));
        assert!(pts[1].runnable().any(|i| i == Impl::WarptileBk8));
        let pts = build(&args(&[
            "--square",
            "256",
            "--model",
            "none",
            "--dtypes",
            "bf16",
            "--skip-impls",
            "mma_smem,candle",
        ]))
        .unwrap();
        let run: Vec<Impl> = pts[0].runnable().collect();
        assert_eq!(
            run,
            vec![
                Impl::Cublas,
                Impl::MmaPipelined128x128,
                Impl::MmaPipelined128x256,
                Impl::Wgmma128x256,
                Impl::Tma128x256,
                Impl::TmaWs128x256,
                Impl::TmaWsPersistent128x256,
                Impl::TmaWsCluster2,
                Impl::TmaWsSplitK,
            ]
        );
        let e = build(&args(&["--m", "1"])).unwrap_err();
        assert!(format!("{e:#}").contains("--m, --n and --k go together"));
        let e = build(&args(&["--square", "1:8:x1"])).unwrap_err();
        assert!(format!("{e:#}").contains("--square"));
    }

    #[test]
    fn sample_plans() {
        // A 5 us kernel: batches of 40 launches, 100 samples (budget allows 1500).
        assert_eq!(
            sample_plan(5.0, 300.0),
            SamplePlan {
                warmup: 50,
                samples: 100,
                batch: 40
            }
        );
        // A 250 ms naive kernel: one launch per sample, the minimum 5 samples.
        assert_eq!(
            sample_plan(250_000.0, 300.0),
            SamplePlan {
                warmup: 1,
                samples: 5,
                batch: 1
            }
        );
        // 2 ms: batch 1, 150 samples wanted -> 100.
        assert_eq!(sample_plan(2000.0, 300.0).samples, 100);
        assert_eq!(sample_plan(2000.0, 300.0).warmup, 10);
    }
}
