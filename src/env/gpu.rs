//! The GPU block, read through NVML (loaded at run time, so CPU builds need no NVIDIA library).

use anyhow::{Context, Result};
use nvml_wrapper::enum_wrappers::device::{Clock, TemperatureSensor};
use nvml_wrapper::Nvml;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// Clocks and health at one moment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClockSample {
    pub sm_mhz: u32,
    pub mem_mhz: u32,
    pub temperature_c: Option<u32>,
    pub power_w: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuEnv {
    pub index: u32,
    pub name: String,
    pub uuid: String,
    /// "9.0"
    pub compute_capability: String,
    pub driver_version: String,
    /// CUDA version the driver supports, "13.0".
    pub cuda_driver_version: String,
    pub memory_total_bytes: u64,
    pub max_sm_mhz: u32,
    pub max_mem_mhz: u32,
    pub clocks_start: ClockSample,
    pub clocks_end: ClockSample,
    /// Every clock-throttle reason NVML reported in any sample of the run (GpuIdle is left out).
    pub throttle_reasons_seen: Vec<String>,
    /// Samples taken during the run (start, after each point, end).
    pub samples: usize,
}

/// An open NVML handle on one GPU, sampling clocks through a run.
pub struct GpuProbe {
    nvml: Nvml,
    index: u32,
    env: GpuEnv,
}

impl GpuProbe {
    /// Opens NVML and reads the static facts and the starting clocks of GPU `index`.
    pub fn open(index: u32) -> Result<Self> {
        let nvml = Nvml::init().context(
            "NVML (libnvidia-ml.so.1) could not be loaded: is the NVIDIA driver installed? \
             Without it there is no GPU to describe (on a machine without a GPU, the \
             benchmarks run on the CPU with their --device cpu flag)",
        )?;
        let env = {
            let d = nvml
                .device_by_index(index)
                .with_context(|| format!("NVML has no GPU with index {index}"))?;
            let cc = d
                .cuda_compute_capability()
                .context("NVML: compute capability")?;
            let cuda = nvml
                .sys_cuda_driver_version()
                .context("NVML: CUDA driver version")?;
            let start = sample(&d)?;
            let env = GpuEnv {
                index,
                name: d.name().context("NVML: GPU name")?,
                uuid: d.uuid().context("NVML: GPU UUID")?,
                compute_capability: format!("{}.{}", cc.major, cc.minor),
                driver_version: nvml.sys_driver_version().context("NVML: driver version")?,
                cuda_driver_version: format!("{}.{}", cuda / 1000, (cuda % 1000) / 10),
                memory_total_bytes: d.memory_info().context("NVML: memory info")?.total,
                max_sm_mhz: d.max_clock_info(Clock::SM).context("NVML: max SM clock")?,
                max_mem_mhz: d
                    .max_clock_info(Clock::Memory)
                    .context("NVML: max memory clock")?,
                clocks_start: start.0.clone(),
                clocks_end: start.0,
                throttle_reasons_seen: start.1.into_iter().collect(),
                samples: 1,
            };
            env
        };
        Ok(GpuProbe { nvml, index, env })
    }

    /// Reads clocks and throttle reasons now; the latest sample becomes `clocks_end`.
    pub fn sample(&mut self) -> Result<ClockSample> {
        let d = self.nvml.device_by_index(self.index)?;
        let (s, reasons) = sample(&d)?;
        let mut seen: BTreeSet<String> = self.env.throttle_reasons_seen.iter().cloned().collect();
        seen.extend(reasons);
        self.env.throttle_reasons_seen = seen.into_iter().collect();
        self.env.clocks_end = s.clone();
        self.env.samples += 1;
        Ok(s)
    }

    /// Whether NVML reports a clock-throttle reason now (GPU idle aside); a reason seen here
    /// joins `throttle_reasons_seen`. Unreadable reasons count as none.
    pub fn throttled_now(&mut self) -> bool {
        let Ok(d) = self.nvml.device_by_index(self.index) else {
            return false;
        };
        let now = throttle_reasons(&d);
        if now.is_empty() {
            return false;
        }
        let mut seen: BTreeSet<String> = self.env.throttle_reasons_seen.iter().cloned().collect();
        seen.extend(now);
        self.env.throttle_reasons_seen = seen.into_iter().collect();
        true
    }

    /// The GPU block as of the last sample.
    pub fn env(&self) -> GpuEnv {
        self.env.clone()
    }
}

fn sample(d: &nvml_wrapper::Device<'_>) -> Result<(ClockSample, Vec<String>)> {
    let s = ClockSample {
        sm_mhz: d.clock_info(Clock::SM).context("NVML: SM clock")?,
        mem_mhz: d.clock_info(Clock::Memory).context("NVML: memory clock")?,
        temperature_c: d.temperature(TemperatureSensor::Gpu).ok(),
        power_w: d.power_usage().ok().map(|mw| mw as f64 / 1000.0),
    };
    let reasons = throttle_reasons(d);
    Ok((s, reasons))
}

/// The clock-throttle reasons NVML reports now, GPU idle left out (an idle GPU is not slowed).
fn throttle_reasons(d: &nvml_wrapper::Device<'_>) -> Vec<String> {
    d.current_throttle_reasons()
        .map(|r| {
            r.iter_names()
                .map(|(name, _)| name.to_string())
                .filter(|n| n != "GPU_IDLE")
                .collect()
        })
        .unwrap_or_default()
}
