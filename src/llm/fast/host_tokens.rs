//! The new tokens' host copy: a pinned host buffer mapped into the device's address space,
//! which the argmax kernel writes beside the device tokens, so reading a step's tokens is a
//! synchronize and no copy.

use anyhow::{bail, Context, Result};
use cudarc::driver::{sys, CudaContext, PinnedHostSlice};
use std::sync::Arc;

/// `n` i32 tokens in device-mapped pinned host memory.
pub struct HostTokens {
    buf: PinnedHostSlice<i32>,
    host: *const i32,
    dev_ptr: u64,
}

impl HostTokens {
    /// Allocates the buffer (zeroed) and looks up its device address.
    pub fn new(ctx: &Arc<CudaContext>, n: usize) -> Result<HostTokens> {
        if n == 0 {
            bail!("opbench: a host token buffer of 0 tokens");
        }
        // SAFETY: the memory is zeroed below before anything reads it.
        let mut buf =
            unsafe { ctx.alloc_pinned_with_flags::<i32>(n, sys::CU_MEMHOSTALLOC_DEVICEMAP) }
                .context("opbench: allocating mapped pinned memory for the tokens")?;
        let host = buf
            .as_mut_ptr()
            .context("opbench: the pinned token buffer")?;
        // SAFETY: `host` points at n i32 that this process owns and no kernel uses yet.
        unsafe { std::ptr::write_bytes(host, 0, n) };
        let mut dev_ptr: sys::CUdeviceptr = 0;
        // SAFETY: `host` came from cuMemHostAlloc with CU_MEMHOSTALLOC_DEVICEMAP in `ctx`.
        unsafe { sys::cuMemHostGetDevicePointer_v2(&mut dev_ptr, host.cast(), 0) }
            .result()
            .context("opbench: the device address of the pinned token buffer")?;
        Ok(HostTokens { buf, host, dev_ptr })
    }

    /// The address kernels write the tokens to.
    pub fn device_ptr(&self) -> u64 {
        self.dev_ptr
    }

    /// The tokens, read fresh. Call after synchronizing with the kernel that wrote them.
    pub fn read(&self) -> Vec<i32> {
        (0..self.buf.len())
            // SAFETY: in bounds of the live allocation; volatile because the device writes it.
            .map(|i| unsafe { std::ptr::read_volatile(self.host.add(i)) })
            .collect()
    }
}
