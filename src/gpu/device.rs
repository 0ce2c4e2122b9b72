//! Opening a GPU once per process: candle's CUDA device, its stream, NVML, and the L2 flush buffer.

use crate::env::{Env, GpuProbe, HostEnv};
use anyhow::{Context, Result};
use cudarc::driver::{CudaContext, CudaFunction, CudaSlice, CudaStream, DevicePtrMut};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often timing loops read NVML's throttle reasons at the most.
pub const THROTTLE_READ_INTERVAL: Duration = Duration::from_millis(20);

/// One GPU, its candle device and the stream everything runs on.
pub struct Gpu {
    pub device: candle_core::Device,
    pub cuda: candle_core::CudaDevice,
    pub stream: Arc<CudaStream>,
    pub ctx: Arc<CudaContext>,
    pub ordinal: usize,
    probe: Option<GpuProbe>,
    probe_error: Option<String>,
    l2_flush: CudaSlice<u8>,
    /// When NVML's throttle reasons were last read, and whether any was set.
    throttle_read: Option<(Instant, bool)>,
    /// L2 size read off the device.
    pub l2_bytes: usize,
    pub sm_count: usize,
    /// Most shared memory one SM can be configured to hold (the rest of its L1 array is L1).
    pub smem_per_sm: usize,
}

impl Gpu {
    /// Opens GPU `ordinal`. Fails with a clear message when there is no GPU or driver.
    pub fn open(ordinal: usize) -> Result<Self> {
        let device = candle_core::Device::new_cuda(ordinal).with_context(|| {
            format!(
                "cannot open CUDA GPU {ordinal}: no NVIDIA GPU or driver is visible to this process. \
                 Run on a machine with a GPU, or pass --device cpu"
            )
        })?;
        let cuda = match &device {
            candle_core::Device::Cuda(c) => c.clone(),
            _ => unreachable!("new_cuda returns a CUDA device"),
        };
        let stream = cuda.cuda_stream();
        let ctx = stream.context().clone();
        let attr = |a| ctx.attribute(a).map(|v| v as usize);
        use cudarc::driver::sys::CUdevice_attribute as A;
        let l2_bytes = attr(A::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE).context("reading the L2 size")?;
        let sm_count =
            attr(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT).context("reading the SM count")?;
        let smem_per_sm = attr(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)
            .context("reading the shared memory per SM")?;
        // Twice the L2, so a memset of it evicts every line the timed kernel could reuse.
        let l2_flush = stream
            .alloc_zeros::<u8>(2 * l2_bytes.max(1 << 20))
            .context("allocating the L2 flush buffer")?;
        let (probe, probe_error) = match GpuProbe::open(ordinal as u32) {
            Ok(p) => (Some(p), None),
            Err(e) => (None, Some(format!("{e:#}"))),
        };
        Ok(Gpu {
            device,
            cuda,
            stream,
            ctx,
            ordinal,
            probe,
            probe_error,
            l2_flush,
            throttle_read: None,
            l2_bytes,
            sm_count,
            smem_per_sm,
        })
    }

    /// The artifact's `env` block as of now (samples the clocks once more).
    pub fn env(&mut self) -> Env {
        self.sample_clocks();
        let gpu = self.probe.as_ref().map(|p| p.env());
        Env {
            device: "cuda".into(),
            host: HostEnv::capture(),
            gpu,
        }
    }

    /// The artifact note every benchmark writes when NVML could not be read.
    pub fn nvml_note(&self) -> Option<String> {
        self.probe_error.as_ref().map(|e| {
            format!(
                "NVML unavailable: no gpu block (name, driver, clocks, throttle reasons) in env: {e}"
            )
        })
    }

    /// Records clocks and throttle reasons; call after each point of a sweep.
    pub fn sample_clocks(&mut self) {
        if let Some(p) = self.probe.as_mut() {
            let _ = p.sample();
        }
    }

    /// Whether the GPU's clocks were held back (a clock-throttle reason, or a busy SM clock
    /// below its top clock) at the latest NVML reading, taken now if the last one is older
    /// than [`THROTTLE_READ_INTERVAL`] (false without NVML).
    /// Reading NVML after every short sample perturbs what is timed, so readings are spaced.
    pub fn throttled_recently(&mut self) -> bool {
        let Some(p) = self.probe.as_mut() else {
            return false;
        };
        let stale = self
            .throttle_read
            .is_none_or(|(at, _)| at.elapsed() >= THROTTLE_READ_INTERVAL);
        if stale {
            self.throttle_read = Some((Instant::now(), p.throttled_now()));
        }
        self.throttle_read.is_some_and(|(_, t)| t)
    }

    /// Waits (at most `max_wait`) until NVML shows no clock-throttle reason: whether it saw
    /// none, and how long it waited. Without NVML there is nothing to wait for.
    pub fn wait_for_clocks(&mut self, max_wait: Duration) -> (bool, Duration) {
        self.throttle_read = None;
        match self.probe.as_mut() {
            Some(p) => p.wait_for_clocks(max_wait),
            None => (true, Duration::ZERO),
        }
    }

    /// Evicts L2 by writing a buffer twice its size, in stream order.
    pub fn flush_l2(&mut self) -> Result<()> {
        self.stream
            .memset_zeros(&mut self.l2_flush)
            .context("L2 flush memset")
    }

    /// Fills a buffer with 0xFF bytes: NaN in f32, f16 and bf16, so unwritten outputs fail checks.
    pub fn poison<T>(&self, buf: &mut CudaSlice<T>) -> Result<()> {
        let bytes = buf.num_bytes();
        let (ptr, _guard) = buf.device_ptr_mut(&self.stream);
        // SAFETY: ptr is a live allocation of `bytes` bytes owned by `buf`, used in stream order.
        unsafe {
            cudarc::driver::result::memset_d8_async(ptr, 0xFF, bytes, self.stream.cu_stream())
        }
        .context("poisoning an output buffer")
    }

    /// Loads (once) a function from one of our PTX modules, on this stream's context.
    /// The module's bytes are recorded for the rows' `code` setting (`crate::code_id`).
    pub fn function(&self, module: &str, ptx: &str, name: &str) -> Result<CudaFunction> {
        crate::code_id::record_module(module, ptx.as_bytes());
        Ok(self
            .cuda
            .get_or_load_custom_func(name, module, ptx)
            .with_context(|| format!("loading kernel {name} from PTX module {module}"))?
            .into_cuda_function())
    }

    /// Waits for all queued work and surfaces any asynchronous error.
    pub fn synchronize(&self) -> Result<()> {
        self.stream
            .synchronize()
            .context("CUDA stream synchronize (a kernel may have faulted)")
    }

    /// Free and total device memory in bytes.
    pub fn mem_info(&self) -> Result<(usize, usize)> {
        self.ctx.mem_get_info().context("cuMemGetInfo")
    }
}
