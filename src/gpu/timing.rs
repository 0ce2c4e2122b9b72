//! CUDA-event timing: warm (back-to-back launches, divided), cold (L2 flushed before each),
//! and cold by rotation (back-to-back launches cycling through buffer sets larger than L2).

use super::rotation;
use super::Gpu;
use crate::artifact::Timing;
use crate::sampling::{sample_until, Prepare, Sample, Sampled, Sampling};
use crate::stats::{summarize, Summary};
use anyhow::{Context, Result};
use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaFunction, LaunchConfig, PushKernelArg};
use std::time::{Duration, Instant};

#[allow(dead_code)] // ptx.rs holds every kernels/*.cu module; this file uses one.
mod ptx {
    include!(concat!(env!("OUT_DIR"), "/ptx.rs"));
}

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
    /// When to stop taking samples (a fixed count, or when the median has settled).
    pub sampling: Sampling,
    /// Launches per warm sample.
    pub batch: usize,
}

impl TimingConfig {
    /// `samples` samples exactly (ceilings, estimates).
    pub fn fixed(warmup: usize, samples: usize, batch: usize) -> Self {
        TimingConfig {
            warmup,
            sampling: Sampling::fixed(samples),
            batch,
        }
    }
}

/// Per-launch times of one measurement.
#[derive(Debug, Clone)]
pub struct Measured {
    pub time_us: Summary,
    pub timing: Timing,
    /// How the measurement went where it matters to a reader (rotation sets, hold), if any.
    pub note: Option<String>,
}

impl Measured {
    fn new(
        sampled: &Sampled,
        cfg: &TimingConfig,
        timing: Timing,
        note: Option<String>,
    ) -> Result<Self> {
        let mut timing = timing;
        timing.sampling = Some(sampled.record(&cfg.sampling));
        Ok(Measured {
            time_us: summarize(&sampled.samples_us)?,
            timing,
            note,
        })
    }
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
    let sampled = sample_until(&cfg.sampling, &mut |prepare| {
        let recovered = match prepare {
            Prepare::BackToBack => None,
            Prepare::Recover(max_wait) => {
                let r = gpu.wait_for_clocks(max_wait);
                launch(gpu)?;
                Some(r)
            }
        };
        let t = Instant::now();
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
        // Read while the sample runs, so the host's NVML call stays out of the next sample.
        let throttled = gpu.throttled_recently();
        let ms = start
            .elapsed_ms(&end)
            .context("reading event time (a kernel may have faulted)")?;
        Ok(Sample {
            us: ms as f64 * 1e3 / per_sample as f64,
            wall: t.elapsed(),
            throttled,
            recovered,
        })
    })?;
    gpu.synchronize()?;
    let timing = Timing {
        method: "cuda_events".into(),
        warmup: cfg.warmup,
        launches_per_sample: per_sample,
        l2_cleared: mode == TimingMode::Cold,
        sampling: None,
    };
    Measured::new(&sampled, &cfg, timing, None)
}

/// The longest hold before a sample (the host never needs this long to queue a batch).
const MAX_HOLD: Duration = Duration::from_millis(20);

/// The hold before the next sample: twice what queueing the last one took on the host, plus
/// 20 us, at most `MAX_HOLD` (20 ms).
pub fn hold_after(queue: Duration) -> Duration {
    (2 * queue + Duration::from_micros(20)).min(MAX_HOLD)
}

/// A one-thread kernel that keeps the stream busy for a given time (kernels/timing_hold.cu),
/// so that a sample's launches are all queued before its start event fires: the host's
/// queueing time stays off the clock.
pub struct Hold(CudaFunction);

impl Hold {
    pub fn load(gpu: &Gpu) -> Result<Self> {
        Ok(Hold(gpu.function(
            "opbench_timing_hold",
            ptx::TIMING_HOLD,
            "opbench_hold_ns",
        )?))
    }

    pub fn enqueue(&self, gpu: &Gpu, d: Duration) -> Result<()> {
        let ns = d.as_nanos() as u64;
        let cfg = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (1, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut b = gpu.stream.launch_builder(&self.0);
        b.arg(&ns);
        // SAFETY: opbench_hold_ns(unsigned long long) takes one u64 and touches no memory.
        unsafe { b.launch(cfg) }.context("launching the stream hold kernel")?;
        Ok(())
    }
}

/// Cold timing without a flush per launch: `launch(gpu, set)` must enqueue one launch on
/// `gpu.stream` that touches only buffer set `set` (0..sets) plus data shared by every set
/// (weights), each set `bytes_per_set` bytes. Launches cycle through the sets in order,
/// `cfg.batch` per sample between two events, so each finds its set evicted from L2 by the
/// launches before it when the rule of [`rotation`] holds (`l2_cleared` says whether it does).
/// Warm-up runs at least one full cycle. Before each sample a hold kernel keeps the GPU busy
/// while the host queues the batch, so host enqueue time stays out of the events; samples
/// whose queueing outlasted the hold are counted in the note (each hold is twice the host's
/// queueing time of the sample before, plus 20 us).
/// With `sets == 1` this is a warm measurement (back to back on one set) with the same hold.
pub fn measure_rotating(
    gpu: &mut Gpu,
    cfg: TimingConfig,
    sets: usize,
    bytes_per_set: usize,
    l2_multiple: usize,
    mut launch: impl FnMut(&Gpu, usize) -> Result<()>,
) -> Result<Measured> {
    let sets = sets.max(1);
    let per_sample = cfg.batch.max(1);
    let hold = Hold::load(gpu)?;
    let mut next = 0usize;
    let warmup = cfg.warmup.max(sets);
    let queued = Instant::now();
    for _ in 0..warmup {
        launch(gpu, next % sets)?;
        next += 1;
    }
    let per_launch = queued.elapsed() / warmup as u32;
    gpu.synchronize().context("during warm-up")?;
    // Twice what the host took to queue a sample (first from the warm-up), plus 20 us.
    let mut hold_for = hold_after(per_launch * per_sample as u32);
    let mut held_total = Duration::ZERO;
    let mut host_bound = 0usize;
    let flags = Some(CUevent_flags::CU_EVENT_DEFAULT);
    let sampled = sample_until(&cfg.sampling, &mut |prepare| {
        let recovered = match prepare {
            Prepare::BackToBack => None,
            Prepare::Recover(max_wait) => {
                let r = gpu.wait_for_clocks(max_wait);
                launch(gpu, next % sets)?;
                next += 1;
                Some(r)
            }
        };
        let wall = Instant::now();
        hold.enqueue(gpu, hold_for)?;
        held_total += hold_for;
        let start = gpu
            .stream
            .record_event(flags)
            .context("recording start event")?;
        let t = Instant::now();
        for _ in 0..per_sample {
            launch(gpu, next % sets)?;
            next += 1;
        }
        let took = t.elapsed();
        let end = gpu
            .stream
            .record_event(flags)
            .context("recording end event")?;
        if took + Duration::from_micros(2) >= hold_for {
            host_bound += 1;
        }
        hold_for = hold_after(took);
        let throttled = gpu.throttled_recently();
        let ms = start
            .elapsed_ms(&end)
            .context("reading event time (a kernel may have faulted)")?;
        Ok(Sample {
            us: ms as f64 * 1e3 / per_sample as f64,
            wall: wall.elapsed(),
            throttled,
            recovered,
        })
    })?;
    let samples_us = &sampled.samples_us;
    gpu.synchronize()?;
    let l2_cleared = rotation::evicts(sets, bytes_per_set, gpu.l2_bytes, l2_multiple);
    let held = format!(
        "{per_sample} launches per sample; stream held {:.0} us on average before each sample \
         while the host queued it ({host_bound} of {} samples queued longer than the hold)",
        held_total.as_secs_f64() * 1e6 / samples_us.len() as f64,
        samples_us.len(),
    );
    let note = if sets == 1 {
        format!("warm: back-to-back launches on one buffer set; {held}")
    } else {
        format!(
            "cold by rotation: {sets} buffer sets of {:.1} MB cycled in order ({:.1} MB of other \
             sets between two launches on one set, L2 {:.1} MB: rule {}x L2 {}); {held}",
            bytes_per_set as f64 / 1e6,
            (sets - 1) as f64 * bytes_per_set as f64 / 1e6,
            gpu.l2_bytes as f64 / 1e6,
            l2_multiple,
            if l2_cleared { "met" } else { "NOT met" },
        )
    };
    let timing = Timing {
        method: if sets == 1 {
            rotation::METHOD_HELD
        } else {
            rotation::METHOD
        }
        .into(),
        warmup,
        launches_per_sample: per_sample,
        l2_cleared,
        sampling: None,
    };
    Measured::new(&sampled, &cfg, timing, Some(note))
}
