//! Ceilings measured in-process: device-to-device copy bandwidth.

use super::{measure, Gpu, TimingConfig, TimingMode};
use anyhow::{Context, Result};

/// Bytes of the copy every benchmark reports its kernels against: large enough that launch
/// cost and L2 do not count.
pub const COPY_CEILING_BYTES: usize = 1 << 30;

/// The copy ceiling (GB/s, method) of an artifact's `ceilings.copy_gbps`: a copy of
/// [`COPY_CEILING_BYTES`], measured in the process that times the kernels.
pub fn copy_ceiling_gbps(gpu: &mut Gpu) -> Result<(f64, String)> {
    copy_bandwidth_gbps(gpu, COPY_CEILING_BYTES)
}

/// Device-to-device copy of `bytes` (default 1 GiB), counting read + write, median of 20
/// back-to-back copies. Returns (GB/s, description of the method).
pub fn copy_bandwidth_gbps(gpu: &mut Gpu, bytes: usize) -> Result<(f64, String)> {
    let src = gpu
        .stream
        .alloc_zeros::<u8>(bytes)
        .context("allocating the copy-bandwidth source")?;
    let mut dst = gpu
        .stream
        .alloc_zeros::<u8>(bytes)
        .context("allocating the copy-bandwidth destination")?;
    let samples = 20;
    let cfg = TimingConfig::fixed(3, samples, 5);
    let m = measure(gpu, cfg, TimingMode::Warm, |g| {
        g.stream.memcpy_dtod(&src, &mut dst).context("cuMemcpyDtoD")
    })?;
    let gbps = 2.0 * bytes as f64 / (m.time_us.p50 * 1e-6) / 1e9;
    let method = format!(
        "copy_gbps: cuMemcpyDtoDAsync of {} MiB, (read + write bytes) / median of {} samples x {} copies",
        bytes >> 20,
        samples,
        cfg.batch
    );
    Ok((gbps, method))
}
