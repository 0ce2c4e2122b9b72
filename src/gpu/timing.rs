//! CUDA-event timing: warm (back-to-back launches, divided) and cold (L2 flushed before each).

use super::Gpu;
use crate::artifact::Timing;
use crate::stats::{summarize, Summary};
use anyhow::{Context, Result};
use cudarc::driver::sys::CUevent_flags;

/// Whether L2 is flushed before each timed launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimingMode {
    /// `batch` launches back to back between two events; time divided by `batch`.
    Warm,
    /// L2 flushed (outside the timed region), then one launch between two events.
    Cold,
}

/// How many launches to time.
#[derive(Debug, Clone, Copy)]
pub struct TimingConfig {
    /// Untimed launches first (module load, clocks ramp-up, caches).
    pub warmup: usize,
    /// Timed samples.
    pub samples: usize,
    /// Launches per warm sample.
    pub batch: usize,
}

impl Default for TimingConfig {
    fn default() -> Self {
        TimingConfig {
            warmup: 10,
            samples: 100,
            batch: 20,
        }
    }
}

/// Per-launch times of one measurement.
#[derive(Debug, Clone)]
pub struct Measured {
    pub time_us: Summary,
    pub timing: Timing,
}

/// Times `launch` (which must only enqueue work on `gpu.stream`) with CUDA events.
pub fn measure(
    gpu: &mut Gpu,
    cfg: TimingConfig,
    mode: TimingMode,
    mut launch: impl FnMut(&Gpu) -> Result<()>,
) -> Result<Measured> {
    for _ in 0..cfg.warmup {
        launch(gpu)?;
    }
    gpu.synchronize().context("during warm-up")?;
    let flags = Some(CUevent_flags::CU_EVENT_DEFAULT);
    let per_sample = match mode {
        TimingMode::Warm => cfg.batch.max(1),
        TimingMode::Cold => 1,
    };
    let mut samples_us = Vec::with_capacity(cfg.samples);
    for _ in 0..cfg.samples.max(1) {
        if mode == TimingMode::Cold {
            gpu.flush_l2()?;
        }
        let start = gpu
            .stream
            .record_event(flags)
            .context("recording start event")?;
        for _ in 0..per_sample {
            launch(gpu)?;
        }
        let end = gpu
            .stream
            .record_event(flags)
            .context("recording end event")?;
        let ms = start
            .elapsed_ms(&end)
            .context("reading event time (a kernel may have faulted)")?;
        samples_us.push(ms as f64 * 1e3 / per_sample as f64);
    }
    gpu.synchronize()?;
    Ok(Measured {
        time_us: summarize(&samples_us)?,
        timing: Timing {
            method: "cuda_events".into(),
            warmup: cfg.warmup,
            launches_per_sample: per_sample,
            l2_cleared: mode == TimingMode::Cold,
        },
    })
}
