//! Device buffers of one parameter set and the one `unsafe` kernel launch, checked around it.

use crate::gpu::Gpu;
use crate::kernels::sweep::{ArgValue, Point, SizedBuffer};
use anyhow::{Context, Result};
use cudarc::driver::{CudaFunction, CudaSlice, DevicePtr, LaunchConfig, PushKernelArg};

/// The buffers of one parameter set, as raw bytes, with their device addresses.
pub struct Buffers {
    slices: Vec<CudaSlice<u8>>,
    /// Device address of each buffer, passed to kernels as pointer arguments.
    pub ptrs: Vec<u64>,
}

impl Buffers {
    /// Allocates one device buffer per manifest buffer.
    pub fn alloc(gpu: &Gpu, sizes: &[SizedBuffer], names: &[String]) -> Result<Buffers> {
        let mut slices = Vec::new();
        let mut ptrs = Vec::new();
        for (s, name) in sizes.iter().zip(names) {
            let slice = gpu
                .stream
                .alloc_zeros::<u8>(s.bytes)
                .with_context(|| format!("allocating buffer `{name}` ({} bytes)", s.bytes))?;
            let ptr = {
                let (ptr, _sync) = slice.device_ptr(&gpu.stream);
                ptr
            };
            ptrs.push(ptr);
            slices.push(slice);
        }
        Ok(Buffers { slices, ptrs })
    }

    pub fn upload(&mut self, gpu: &Gpu, i: usize, bytes: &[u8]) -> Result<()> {
        gpu.stream
            .memcpy_htod(bytes, &mut self.slices[i])
            .context("copying inputs to the GPU")
    }

    pub fn poison(&mut self, gpu: &Gpu, i: usize) -> Result<()> {
        gpu.poison(&mut self.slices[i])
    }

    pub fn download(&self, gpu: &Gpu, i: usize) -> Result<Vec<u8>> {
        gpu.stream
            .clone_dtoh(&self.slices[i])
            .context("copying outputs back from the GPU (a kernel may have faulted)")
    }
}

/// Enqueues one launch of `f` at point `p` on `gpu.stream`.
pub fn launch(gpu: &Gpu, f: &CudaFunction, p: &Point, ptrs: &[u64]) -> Result<()> {
    let values: Vec<ArgValue> = p
        .args
        .iter()
        .map(|a| match a {
            ArgValue::Buffer(i) => ArgValue::U64(ptrs[*i]),
            v => *v,
        })
        .collect();
    let mut b = gpu.stream.launch_builder(f);
    for v in &values {
        match v {
            ArgValue::U64(x) => b.arg(x),
            ArgValue::I32(x) => b.arg(x),
            ArgValue::I64(x) => b.arg(x),
            ArgValue::U32(x) => b.arg(x),
            ArgValue::F32(x) => b.arg(x),
            ArgValue::F64(x) => b.arg(x),
            ArgValue::Buffer(_) => unreachable!("replaced by its address above"),
        };
    }
    let cfg = LaunchConfig {
        grid_dim: (p.grid[0], p.grid[1], p.grid[2]),
        block_dim: (p.block[0], p.block[1], p.block[2]),
        shared_mem_bytes: p.shared_bytes,
    };
    // SAFETY: the manifest check matched the argument count and pointer positions against the
    // kernel's signature; every pointer is a live allocation of this parameter set, sized by the
    // manifest's expressions. A kernel that indexes past them faults, which the caller handles.
    unsafe { b.launch(cfg) }
        .map(|_| ())
        .context("launching the kernel (rejected launch configuration?)")
}
