//! A streaming copy kernel (kernels/copy_probe.cu) timed beside cuMemcpyDtoD: how far a plain
//! kernel that reads and writes each byte once gets at a given size. The grid arithmetic is
//! pure and builds without the `cuda` feature.

#[cfg(feature = "cuda")]
use super::{measure_rotating, Gpu, TimingConfig};
#[cfg(feature = "cuda")]
use anyhow::{bail, Context, Result};
#[cfg(feature = "cuda")]
use cudarc::driver::{CudaFunction, CudaSlice, DevicePtr, LaunchConfig, PushKernelArg};

#[cfg(feature = "cuda")]
#[allow(dead_code)] // ptx.rs holds every kernels/*.cu module; this file uses one.
mod ptx {
    include!(concat!(env!("OUT_DIR"), "/ptx.rs"));
}

/// Threads per block (the kernel's `__launch_bounds__`).
const BLOCK_THREADS: usize = 256;
/// Resident blocks per SM the grid is sized for (2048 threads per SM on Hopper).
const BLOCKS_PER_SM: usize = 8;
/// 16-byte vectors each thread moves per step (`U` in the kernel).
const UNROLL: usize = 4;

/// Grid size for `vectors` 16-byte vectors: one step per thread or a full device, whichever
/// is smaller.
pub fn copy_grid_blocks(vectors: usize, sm_count: usize) -> usize {
    vectors
        .div_ceil(BLOCK_THREADS * UNROLL)
        .clamp(1, (sm_count * BLOCKS_PER_SM).max(1))
}

/// The loaded copy kernel.
#[cfg(feature = "cuda")]
pub struct CopyKernel {
    func: CudaFunction,
    sm_count: usize,
}

#[cfg(feature = "cuda")]
impl CopyKernel {
    pub fn load(gpu: &Gpu) -> Result<Self> {
        Ok(CopyKernel {
            func: gpu.function("opbench_copy_probe", ptx::COPY_PROBE, "opbench_copy16")?,
            sm_count: gpu.sm_count,
        })
    }

    /// Enqueues a copy of `src` into `dst` on `gpu.stream`: same length, 16-byte multiple.
    pub fn copy<T>(&self, gpu: &Gpu, src: &CudaSlice<T>, dst: &mut CudaSlice<T>) -> Result<()> {
        let bytes = src.num_bytes();
        if dst.num_bytes() != bytes {
            bail!(
                "copy kernel: source has {bytes} bytes, destination {}",
                dst.num_bytes()
            );
        }
        if !bytes.is_multiple_of(16) {
            bail!("copy kernel: {bytes} bytes is not a multiple of 16");
        }
        for p in [src.device_ptr(&gpu.stream).0, dst.device_ptr(&gpu.stream).0] {
            if !p.is_multiple_of(16) {
                bail!("copy kernel: buffer at {p:#x} is not 16-byte aligned");
            }
        }
        let n = (bytes / 16) as i64;
        let cfg = LaunchConfig {
            grid_dim: (copy_grid_blocks(bytes / 16, self.sm_count) as u32, 1, 1),
            block_dim: (BLOCK_THREADS as u32, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut b = gpu.stream.launch_builder(&self.func);
        b.arg(src).arg(dst).arg(&n);
        // SAFETY: opbench_copy16(const uint4*, uint4*, long long n) reads n vectors of src and
        // writes n of dst; both hold exactly n * 16 bytes, 16-byte aligned (checked above).
        unsafe { b.launch(cfg) }.context("launching the copy kernel")?;
        Ok(())
    }
}

/// The launch-to-launch interval of a near-empty kernel: the copy kernel moving 16 bytes (one
/// block), back to back on one stream with the stream held while the host queues each sample,
/// so the interval is the GPU's, not the host's. Returns (microseconds per launch, method).
#[cfg(feature = "cuda")]
pub fn launch_interval_us(gpu: &mut Gpu) -> Result<(f64, String)> {
    let k = CopyKernel::load(gpu)?;
    let src = gpu
        .stream
        .alloc_zeros::<u8>(16)
        .context("allocating 16 bytes")?;
    let mut dst = gpu
        .stream
        .alloc_zeros::<u8>(16)
        .context("allocating 16 bytes")?;
    let samples = 30;
    let cfg = TimingConfig::fixed(10, samples, 100);
    let m = measure_rotating(gpu, cfg, 1, 32, 1, |g, _| k.copy(g, &src, &mut dst))?;
    let method = format!(
        "launch_interval_us: kernels/copy_probe.cu on 16 bytes (1 block), {} back-to-back launches \
         per sample between two events, the stream held while the host queued them; median of {} \
         samples, per launch",
        cfg.batch, samples
    );
    Ok((m.time_us.p50, method))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grid_covers_small_copies_in_one_step_and_caps_at_a_full_device() {
        assert_eq!(copy_grid_blocks(1, 132), 1);
        assert_eq!(copy_grid_blocks(1024, 132), 1);
        assert_eq!(copy_grid_blocks(1025, 132), 2);
        assert_eq!(copy_grid_blocks(1 << 26, 132), 132 * 8);
        assert_eq!(copy_grid_blocks(1 << 26, 0), 1);
    }
}
