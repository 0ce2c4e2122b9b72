//! `--device cpu`: the f64 reference against candle's CPU LayerNorm, timed with the host clock,
//! so the artifact's shape is exercised where there is no GPU (CI, tests).

use super::reference::{compare, Inputs};
use super::report::{self, CANDLE, KIND};
use super::{Dtype, Elem, Shape, SweepConfig};
use crate::artifact::{ArtifactWriter, ResultRow, Timing};
use crate::env::Env;
use anyhow::{Context, Result};
use candle_core::{Device, Tensor};
use std::path::PathBuf;

/// Runs the sweep on the CPU and writes the artifact; returns its path.
pub fn run(cfg: &SweepConfig) -> Result<PathBuf> {
    cfg.check()?;
    let mut w = ArtifactWriter::start(KIND, &cfg.out, Env::cpu(), cfg.overwrite)?;
    w.artifact.notes.push(format!(
        "device cpu: candle's CPU layer_norm against the f64 reference (our kernel needs a GPU); inputs from seed {}",
        cfg.seed
    ));
    let progress = crate::progress::Progress::new(cfg.points().len() as u64);
    for (i, shape, dtype) in cfg.points() {
        progress.start(format!("{shape} {dtype}"));
        let row = match dtype {
            Dtype::F32 => point::<f32>(cfg, &shape, cfg.seed + i as u64)?,
            Dtype::F16 => point::<half::f16>(cfg, &shape, cfg.seed + i as u64)?,
            Dtype::Bf16 => point::<half::bf16>(cfg, &shape, cfg.seed + i as u64)?,
            other => anyhow::bail!("LayerNorm runs in f32, f16 or bf16, not {other}"),
        };
        progress.row(&row);
        progress.step();
        w.push(row)?;
    }
    progress.finish();
    w.finish()
}

fn point<T: Elem>(cfg: &SweepConfig, shape: &Shape, seed: u64) -> Result<ResultRow> {
    let dtype = T::ELEM;
    let at = || format!("shape {shape} dtype {dtype}");
    let inputs = Inputs::<T>::random(shape.rows(), shape.cols(), seed);
    let reference = inputs.reference(cfg.eps);
    let dev = Device::Cpu;
    let x = Tensor::from_slice(&inputs.x, shape.0.as_slice(), &dev).with_context(at)?;
    let g = Tensor::from_slice(&inputs.gamma, shape.cols(), &dev).with_context(at)?;
    let b = Tensor::from_slice(&inputs.beta, shape.cols(), &dev).with_context(at)?;
    let forward = || candle_nn::ops::layer_norm(&x, &g, &b, cfg.eps).with_context(at);
    let y: Vec<T> = forward()?.flatten_all()?.to_vec1()?;
    let check = compare(&y, &reference, dtype);
    let row = report::point_row(CANDLE, shape, dtype, "warm", cfg.eps).param("device", "cpu");
    if !check.passed {
        return Ok(crate::harness::failed(
            row,
            Some(check),
            "candle's output is off the f64 reference: not timed",
        ));
    }
    for _ in 0..cfg.warmup {
        forward()?;
    }
    let sampled = crate::harness::sample_host(&cfg.sampling, 1, || forward().map(drop))?;
    let timing = Timing {
        method: "host_clock_synchronized".into(),
        warmup: cfg.warmup,
        launches_per_sample: 1,
        l2_cleared: false,
        sampling: Some(sampled.record(&cfg.sampling)),
    };
    let time_us = crate::stats::summarize(&sampled.samples_us)?;
    Ok(report::timed(
        row,
        check,
        time_us,
        timing,
        shape.bytes_moved(dtype),
        None,
    ))
}
