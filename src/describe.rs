//! What `opbench_env` prints: this machine's env block and, when asked, the ceilings measured
//! through CUDA.

use crate::artifact::Ceilings;
use crate::env::{Env, GpuProbe, HostEnv};
use serde::Serialize;

/// What `opbench_env` prints: the env block and, when asked, in-process ceilings.
#[derive(Debug, Serialize)]
pub struct Description {
    pub env: Env,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nvml_error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ceilings: Option<Ceilings>,
}

/// Print the `env` block a benchmark would record on this machine: host CPU, OS and, when an
/// NVIDIA driver is present, the GPU (name, UUID, compute capability, driver and CUDA versions,
/// memory, clocks, throttle reasons) read through NVML. With --ceilings (cuda builds only),
/// also opens the GPU and measures the device-to-device copy bandwidth.
#[derive(clap::Parser)]
#[command(version, after_help = "Example:\n  opbench_env --gpu 0 > env.json")]
pub struct EnvArgs {
    /// GPU index to describe.
    #[arg(
        long,
        default_value_t = 0,
        allow_negative_numbers = true,
        value_parser = crate::cli::count
    )]
    pub gpu: usize,
    /// Also open the GPU through CUDA and measure the copy-bandwidth ceiling (needs the `cuda` feature).
    #[arg(long)]
    pub ceilings: bool,
}

/// Describes this machine; `ceilings` opens the GPU through CUDA and measures copy bandwidth.
pub fn describe(gpu_index: u32, ceilings: bool) -> anyhow::Result<Description> {
    let (gpu, nvml_error) = match GpuProbe::open(gpu_index) {
        Ok(mut p) => {
            let _ = p.sample();
            (Some(p.env()), None)
        }
        Err(e) => (None, Some(format!("{e:#}"))),
    };
    let device = if gpu.is_some() { "cuda" } else { "cpu" };
    let env = Env {
        device: device.into(),
        host: HostEnv::capture(),
        gpu,
    };
    let ceilings = if ceilings {
        Some(measure_ceilings(gpu_index)?)
    } else {
        None
    };
    Ok(Description {
        env,
        nvml_error,
        ceilings,
    })
}

#[cfg(feature = "cuda")]
fn measure_ceilings(gpu_index: u32) -> anyhow::Result<Ceilings> {
    let mut gpu = crate::gpu::Gpu::open(gpu_index as usize)?;
    let (gbps, method) = crate::gpu::copy_ceiling_gbps(&mut gpu)?;
    Ok(Ceilings {
        copy_gbps: Some(gbps),
        method: vec![method],
        ..Default::default()
    })
}

#[cfg(not(feature = "cuda"))]
fn measure_ceilings(_gpu_index: u32) -> anyhow::Result<Ceilings> {
    anyhow::bail!(
        "--ceilings needs a GPU build: rebuild with `cargo build --release --features cuda \
         --bin opbench_env` (README.md, section \"GPU usage\"), or leave --ceilings out"
    )
}
