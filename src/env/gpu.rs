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
    /// The physical board and its settings; absent in artifacts of older builds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub board: Option<Board>,
}

/// What tells one physical board (and how it is set up) from another of the same model. Two
/// runs with the same `GpuEnv::uuid` ran on the same GPU.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Board {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serial: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pci_bus_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vbios_version: Option<String>,
    /// The enforced power limit: tensor-core work runs into it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_limit_w: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_default_limit_w: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecc_enabled: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mig_enabled: Option<bool>,
}

impl GpuEnv {
    /// A short name of the physical board: the UUID's first group ("GPU-9e9eaf8d").
    pub fn board_label(&self) -> String {
        board_label(&self.uuid)
    }
}

/// "GPU-9e9eaf8d-a838-..." -> "GPU-9e9eaf8d"; other strings whole.
pub fn board_label(uuid: &str) -> String {
    match uuid.match_indices('-').nth(1) {
        Some((i, _)) => uuid[..i].to_string(),
        None => uuid.to_string(),
    }
}

impl Board {
    /// Reads what NVML gives of the board; what it refuses stays None.
    fn read(d: &nvml_wrapper::Device<'_>) -> Self {
        let watts = |mw: u32| mw as f64 / 1000.0;
        Board {
            serial: d.serial().ok(),
            pci_bus_id: d.pci_info().ok().map(|p| p.bus_id),
            vbios_version: d.vbios_version().ok(),
            power_limit_w: d.enforced_power_limit().ok().map(watts),
            power_default_limit_w: d.power_management_limit_default().ok().map(watts),
            ecc_enabled: d.is_ecc_enabled().ok().map(|e| e.currently_enabled),
            mig_enabled: d.mig_mode().ok().map(|m| m.current != 0),
        }
    }

    /// The settings that change speed, as "700 W, ECC on, MIG off" (what is known of them).
    pub fn settings_text(&self) -> String {
        let on = |b: bool| if b { "on" } else { "off" };
        let mut parts = Vec::new();
        if let Some(w) = self.power_limit_w {
            parts.push(format!("{w:.0} W"));
        }
        if let Some(e) = self.ecc_enabled {
            parts.push(format!("ECC {}", on(e)));
        }
        if let Some(m) = self.mig_enabled {
            parts.push(format!("MIG {}", on(m)));
        }
        parts.join(", ")
    }
}

/// An open NVML handle on one GPU, sampling clocks through a run.
pub struct GpuProbe {
    nvml: Nvml,
    index: u32,
    env: GpuEnv,
    /// The SM clock a busy, unthrottled GPU runs at.
    top_sm_mhz: u32,
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
                board: Some(Board::read(&d)),
            };
            env
        };
        let top_sm_mhz = nvml
            .device_by_index(index)
            .ok()
            .and_then(|d| d.applications_clock(Clock::SM).ok())
            .filter(|&mhz| mhz > 0)
            .unwrap_or(env.max_sm_mhz);
        Ok(GpuProbe {
            nvml,
            index,
            env,
            top_sm_mhz,
        })
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

    /// Whether the GPU's clocks are held back now: NVML reports a clock-throttle reason (GPU
    /// idle aside), or the SM clock of a busy GPU is below its top clock (the applications
    /// clock, else the maximum). A reason seen here joins `throttle_reasons_seen`. Unreadable
    /// state counts as not held back.
    pub fn throttled_now(&mut self) -> bool {
        let Ok(d) = self.nvml.device_by_index(self.index) else {
            return false;
        };
        let (now, idle) = reasons_now(&d);
        let below_top = !idle
            && d.clock_info(Clock::SM)
                .is_ok_and(|mhz| mhz < self.top_sm_mhz);
        if !now.is_empty() {
            let mut seen: BTreeSet<String> =
                self.env.throttle_reasons_seen.iter().cloned().collect();
            seen.extend(now.iter().cloned());
            self.env.throttle_reasons_seen = seen.into_iter().collect();
        }
        !now.is_empty() || below_top
    }

    /// Waits until NVML reports no clock-throttle reason (GPU idle aside), polling every 2 ms,
    /// for at most `max_wait`; returns whether the clocks were free and how long it waited.
    pub fn wait_for_clocks(
        &mut self,
        max_wait: std::time::Duration,
    ) -> (bool, std::time::Duration) {
        let t = std::time::Instant::now();
        loop {
            let free = self
                .nvml
                .device_by_index(self.index)
                .map(|d| reasons_now(&d).0.is_empty())
                .unwrap_or(true);
            if free || t.elapsed() >= max_wait {
                return (free, t.elapsed());
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
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
    reasons_now(d).0
}

/// The clock-throttle reasons NVML reports now, GPU idle left out, and whether it is idle.
fn reasons_now(d: &nvml_wrapper::Device<'_>) -> (Vec<String>, bool) {
    let names: Vec<String> = d
        .current_throttle_reasons()
        .map(|r| r.iter_names().map(|(name, _)| name.to_string()).collect())
        .unwrap_or_default();
    let idle = names.iter().any(|n| n == "GPU_IDLE");
    (
        names.into_iter().filter(|n| n != "GPU_IDLE").collect(),
        idle,
    )
}
