//! The device a run uses: the CPU, or one CUDA GPU opened through `opbench::gpu` (feature
//! `cuda`). Gives synchronization, memory sampling, the copy ceiling and the env block.

use crate::env::Env;
use anyhow::{bail, Result};
use candle_core::Device;

/// `--device`: where the model runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DeviceChoice {
    /// The GPU when this build has CUDA and a GPU answers, else the CPU.
    Auto,
    Cpu,
    Cuda,
}

/// An opened device.
pub enum Backend {
    Cpu(Device),
    #[cfg(feature = "cuda")]
    Cuda(Box<crate::gpu::Gpu>),
}

impl Backend {
    /// Opens the device; `cuda` fails clearly without a GPU or without the `cuda` feature.
    pub fn open(choice: DeviceChoice) -> Result<Self> {
        match choice {
            DeviceChoice::Cpu => Ok(Backend::Cpu(Device::Cpu)),
            DeviceChoice::Cuda => Self::open_cuda(),
            DeviceChoice::Auto => Ok(Self::open_cuda().unwrap_or(Backend::Cpu(Device::Cpu))),
        }
    }

    #[cfg(feature = "cuda")]
    fn open_cuda() -> Result<Self> {
        Ok(Backend::Cuda(Box::new(crate::gpu::Gpu::open(0)?)))
    }

    #[cfg(not(feature = "cuda"))]
    fn open_cuda() -> Result<Self> {
        bail!(
            "--device cuda: this llm_bench was built without the `cuda` feature. Rebuild with \
             `cargo build --release --features cuda --bin llm_bench` (README.md, section \
             \"GPU usage\", says how without a CUDA toolkit), or pass --device cpu"
        )
    }

    pub fn device(&self) -> Device {
        match self {
            Backend::Cpu(d) => d.clone(),
            #[cfg(feature = "cuda")]
            Backend::Cuda(g) => g.device.clone(),
        }
    }

    pub fn is_cuda(&self) -> bool {
        !matches!(self, Backend::Cpu(_))
    }

    /// "cpu" or "cuda".
    pub fn name(&self) -> &'static str {
        if self.is_cuda() {
            "cuda"
        } else {
            "cpu"
        }
    }

    /// Waits for all queued device work.
    pub fn sync(&self) -> Result<()> {
        match self {
            Backend::Cpu(_) => Ok(()),
            #[cfg(feature = "cuda")]
            Backend::Cuda(g) => g.synchronize(),
        }
    }

    /// The artifact note when NVML could not be read on the GPU (`Gpu::nvml_note`).
    pub fn nvml_note(&self) -> Option<String> {
        match self {
            Backend::Cpu(_) => None,
            #[cfg(feature = "cuda")]
            Backend::Cuda(g) => g.nvml_note(),
        }
    }

    /// Device memory in use right now (total - free, whole device), when the device has one.
    pub fn mem_used_bytes(&self) -> Option<u64> {
        match self {
            Backend::Cpu(_) => None,
            #[cfg(feature = "cuda")]
            Backend::Cuda(g) => g.mem_info().ok().map(|(free, total)| (total - free) as u64),
        }
    }

    /// Turns off cudarc's per-buffer event tracking for buffers created from now on.
    /// Returns whether it was turned off (false on the CPU).
    pub fn disable_event_tracking(&self) -> bool {
        match self {
            Backend::Cpu(_) => false,
            #[cfg(feature = "cuda")]
            Backend::Cuda(g) => {
                // SAFETY: cudarc's event tracking only orders a buffer's uses across streams.
                // llm_bench enqueues every operation (candle's kernels, cuBLAS, copies, frees
                // and our timing events) on the one stream candle's device owns, and never
                // hands a buffer to another stream, so stream order alone is sufficient.
                unsafe { g.cuda.disable_event_tracking() };
                !g.cuda.is_event_tracking()
            }
        }
    }

    /// The copy ceiling in GB/s (read + write bytes) and how it was measured.
    pub fn copy_bandwidth_gbps(&mut self) -> Result<(f64, String)> {
        match self {
            Backend::Cpu(_) => host_copy_bandwidth_gbps(256 << 20),
            #[cfg(feature = "cuda")]
            Backend::Cuda(g) => crate::gpu::copy_ceiling_gbps(g),
        }
    }

    /// The artifact's env block.
    pub fn env(&mut self) -> Env {
        match self {
            Backend::Cpu(_) => Env::cpu(),
            #[cfg(feature = "cuda")]
            Backend::Cuda(g) => g.env(),
        }
    }

    /// Records clocks after a point (GPU only).
    pub fn sample_clocks(&mut self) {
        #[cfg(feature = "cuda")]
        if let Backend::Cuda(g) = self {
            g.sample_clocks();
        }
    }

    /// Seeds the device's random generator (CUDA only: candle cannot seed the CPU one).
    pub fn seed(&self, seed: u64) -> Result<()> {
        if self.is_cuda() {
            self.device().set_seed(seed)?;
        }
        Ok(())
    }

    /// Starts / stops the CUDA profiler range (for `ncu --profile-from-start off`).
    pub fn profiler(&self, on: bool) -> Result<()> {
        match self {
            Backend::Cpu(_) => {
                let _ = on;
                Ok(())
            }
            #[cfg(feature = "cuda")]
            Backend::Cuda(_) => {
                use anyhow::Context;
                let r = if on {
                    cudarc::driver::profiler_start()
                } else {
                    cudarc::driver::profiler_stop()
                };
                r.context("cuProfilerStart/Stop")
            }
        }
    }
}

/// Host memcpy bandwidth (read + write bytes), median of 7 copies of `bytes`.
pub fn host_copy_bandwidth_gbps(bytes: usize) -> Result<(f64, String)> {
    if bytes == 0 {
        bail!("host copy bandwidth: the buffer size must be positive");
    }
    let src = vec![1u8; bytes];
    let mut dst = vec![0u8; bytes];
    dst.copy_from_slice(&src); // touch the pages once
    let mut times = Vec::new();
    for _ in 0..7 {
        let t = std::time::Instant::now();
        dst.copy_from_slice(std::hint::black_box(&src));
        std::hint::black_box(&dst);
        times.push(t.elapsed().as_secs_f64());
    }
    let s = crate::stats::summarize(&times)?;
    let gbps = 2.0 * bytes as f64 / s.p50 / 1e9;
    Ok((
        gbps,
        format!(
            "copy_gbps: host memcpy of {} MiB, (read + write bytes) / median of 7 copies",
            bytes >> 20
        ),
    ))
}
