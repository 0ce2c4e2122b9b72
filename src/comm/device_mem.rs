//! Device memory from `cuMemAlloc`, zeroed, freed on drop (feature `cuda`). cudarc's own
//! allocations are stream-ordered pool memory, which neither CUDA IPC can export nor
//! `cuCtxEnablePeerAccess` opens to another GPU: the peer copies and our one-shot all-reduce
//! need this kind.

use anyhow::{Context, Result};
use cudarc::driver::sys::CUdeviceptr;
use cudarc::driver::{result, CudaContext};
use std::sync::Arc;

/// `bytes` of zeroed device memory of one context.
pub struct DeviceMem {
    pub ptr: CUdeviceptr,
    ctx: Arc<CudaContext>,
}

impl DeviceMem {
    pub fn zeroed(ctx: &Arc<CudaContext>, bytes: usize, what: &str) -> Result<Self> {
        ctx.bind_to_thread()?;
        // SAFETY: the context is current; the memory is freed once, in Drop, in this context.
        let ptr = unsafe { result::malloc_sync(bytes) }
            .with_context(|| format!("cuMemAlloc of {bytes} bytes for {what}"))?;
        let mem = DeviceMem {
            ptr,
            ctx: ctx.clone(),
        };
        // SAFETY: `ptr` holds `bytes` bytes.
        unsafe { result::memset_d8_sync(ptr, 0, bytes) }
            .with_context(|| format!("zeroing {what}"))?;
        Ok(mem)
    }
}

impl Drop for DeviceMem {
    fn drop(&mut self) {
        if self.ctx.bind_to_thread().is_ok() {
            // SAFETY: allocated by cuMemAlloc in this context, freed once.
            let _ = unsafe { result::free_sync(self.ptr) };
        }
    }
}
