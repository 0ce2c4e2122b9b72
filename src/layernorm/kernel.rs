//! Our LayerNorm kernel from Rust: one `unsafe` launch function behind a safe wrapper that
//! checks dtype, lengths, alignment and eps against the launch plan (cudarc style).

use super::plan::LaunchPlan;
use super::Elem;
use crate::gpu::Gpu;
use anyhow::{bail, Context, Result};
use cudarc::driver::{
    CudaFunction, CudaSlice, CudaStream, DevicePtr, DeviceRepr, LaunchConfig, PushKernelArg,
};
use std::sync::Arc;

#[allow(dead_code)] // ptx.rs holds every kernels/*.cu module; this file uses one.
mod ptx {
    include!(concat!(env!("OUT_DIR"), "/ptx.rs"));
}

/// A loaded LayerNorm kernel for one (rows, cols, dtype) plan.
pub struct LayerNormKernel {
    func: CudaFunction,
    pub plan: LaunchPlan,
}

impl LayerNormKernel {
    /// Loads the plan's kernel from the `layernorm` PTX module (once per process), gives it the
    /// shared memory its ring needs, sizes a persistent grid (`plan.grid` fill or even) from the
    /// occupancy query (at most `max_blocks_per_sm` blocks per SM when given), and refuses a block
    /// larger than the compiled kernel can run.
    pub fn load(gpu: &Gpu, plan: LaunchPlan, max_blocks_per_sm: Option<usize>) -> Result<Self> {
        use cudarc::driver::sys::CUfunction_attribute as F;
        let func = gpu.function("layernorm", ptx::LAYERNORM, &plan.kernel)?;
        let at = || format!("kernel {}", plan.kernel);
        if plan.smem_bytes > 0 {
            func.set_attribute(
                F::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                plan.smem_bytes as i32,
            )
            .with_context(|| {
                format!(
                    "{}: allowing {} bytes of shared memory",
                    at(),
                    plan.smem_bytes
                )
            })?;
        }
        let max_threads = func
            .get_attribute(F::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
            .with_context(at)? as usize;
        if plan.block_threads > max_threads {
            bail!(
                "{}: the plan wants {} threads per block, the compiled kernel allows {max_threads} \
                 (registers); plan.rs and the __launch_bounds__ in kernels/layernorm.cu disagree",
                at(),
                plan.block_threads
            );
        }
        let blocks_per_sm = func
            .occupancy_max_active_blocks_per_multiprocessor(
                plan.block_threads as u32,
                plan.smem_bytes,
                None,
            )
            .with_context(at)? as usize;
        let blocks_per_sm = blocks_per_sm.min(max_blocks_per_sm.unwrap_or(usize::MAX));
        let plan = plan.fit_to_device(gpu.sm_count, blocks_per_sm)?;
        Ok(LayerNormKernel { func, plan })
    }

    /// Enqueues y = LayerNorm(x) * gamma + beta on `stream`. Checks every buffer against
    /// the plan first, so the launch cannot read or write out of bounds.
    pub fn forward<T: Elem + DeviceRepr>(
        &self,
        stream: &Arc<CudaStream>,
        x: &CudaSlice<T>,
        gamma: &CudaSlice<T>,
        beta: &CudaSlice<T>,
        y: &mut CudaSlice<T>,
        eps: f32,
    ) -> Result<()> {
        let p = &self.plan;
        if T::ELEM != p.dtype {
            bail!(
                "kernel {} is for {}, called with {} buffers",
                p.kernel,
                p.dtype,
                T::ELEM
            );
        }
        let n = p.rows * p.cols;
        for (name, len, want) in [
            ("x", x.len(), n),
            ("y", y.len(), n),
            ("gamma", gamma.len(), p.cols),
            ("beta", beta.len(), p.cols),
        ] {
            if len != want {
                bail!(
                    "{name} has {len} elements, the {}x{} plan needs {want}",
                    p.rows,
                    p.cols
                );
            }
        }
        let align = p.vec_width * p.dtype.size_bytes();
        for (name, ptr) in [
            ("x", x.device_ptr(stream).0),
            ("gamma", gamma.device_ptr(stream).0),
            ("beta", beta.device_ptr(stream).0),
            ("y", y.device_ptr(stream).0),
        ] {
            if !ptr.is_multiple_of(align as u64) {
                bail!(
                    "{name} at {ptr:#x} is not {align}-byte aligned as {} needs",
                    p.kernel
                );
            }
        }
        if !(eps.is_finite() && eps >= 0.0) {
            bail!("eps {eps}: must be finite and >= 0");
        }
        let cfg = LaunchConfig {
            grid_dim: (p.grid_blocks as u32, 1, 1),
            block_dim: (p.block_threads as u32, 1, 1),
            shared_mem_bytes: p.smem_bytes as u32,
        };
        // SAFETY: the function is the plan's kernel for T (checked above); x and y hold
        // rows*cols elements and gamma/beta cols, aligned for the plan's vector width; the
        // kernel reads rows*cols elements of x and writes as many of y, nothing else.
        unsafe {
            launch_layernorm(
                stream,
                &self.func,
                cfg,
                (x, gamma, beta, y),
                p.rows as i64,
                p.cols as i32,
                p.threads_per_row as i32,
                eps,
            )
        }
        .with_context(|| format!("launching {} on {}x{}", p.kernel, p.rows, p.cols))
    }
}

type Buffers<'a, T> = (
    &'a CudaSlice<T>,
    &'a CudaSlice<T>,
    &'a CudaSlice<T>,
    &'a mut CudaSlice<T>,
);

/// Raw launch of a `layernorm_*` kernel: (x, gamma, beta, y, rows, cols, tpr, eps).
///
/// # Safety
/// `func` must be a kernel of kernels/layernorm.cu for T; the buffers must hold rows*cols
/// (x, y) and cols (gamma, beta) elements aligned for its vector width; `cfg` must come from
/// the plan that named `func`.
#[allow(clippy::too_many_arguments)]
unsafe fn launch_layernorm<T: DeviceRepr>(
    stream: &Arc<CudaStream>,
    func: &CudaFunction,
    cfg: LaunchConfig,
    (x, gamma, beta, y): Buffers<'_, T>,
    rows: i64,
    cols: i32,
    tpr: i32,
    eps: f32,
) -> Result<()> {
    let mut b = stream.launch_builder(func);
    b.arg(x)
        .arg(gamma)
        .arg(beta)
        .arg(y)
        .arg(&rows)
        .arg(&cols)
        .arg(&tpr)
        .arg(&eps);
    // SAFETY: argument order and types match the kernel signature; see the function's contract.
    unsafe { b.launch(cfg) }.context("cuLaunchKernel")?;
    Ok(())
}
