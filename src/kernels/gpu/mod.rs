//! The GPU run (feature `cuda`): compile (NVRTC or nvcc), load, check memory, ceilings, the
//! sweep, the profile, outputs.

mod ceilings;
mod check;
mod launch;
pub mod nvrtc;
mod profile;
mod runner;

use crate::gpu::Gpu;
use crate::kernels::args::Args;
use crate::kernels::compile::{compile, Image, Target};
use crate::kernels::resume::RunEnd;
use crate::kernels::source::Source;
use crate::kernels::sweep::Plan;
use anyhow::{bail, Context, Result};
use cudarc::driver::sys::{CUfunction_attribute, CUresult};
use cudarc::driver::{CudaFunction, DriverError};
use cudarc::nvrtc::Ptx;

/// The name the user's module is recorded under for its rows' `code` (crate::code_id).
pub const CODE_MODULE: &str = "kernel_bench";

/// Static shared memory a block may use without opting in.
const DEFAULT_SHARED_LIMIT: u32 = 48 * 1024;

/// Runs the plan on the GPU and writes the artifact and report (or, as ncu's target process,
/// launches the listed points once each). After a kernel fault the partial artifact is handed
/// over for a fresh process to continue (`RunEnd::Faulted`).
pub fn run(args: &Args, plan: &Plan, source: &Source) -> Result<RunEnd> {
    let mut gpu = Gpu::open(args.gpu)?;
    let cc = gpu
        .ctx
        .compute_capability()
        .context("reading the GPU's compute capability")?;
    let target = match &args.arch {
        Some(a) => Target::from_arch(a)?,
        None => Target::from_cc(cc),
    };
    let listed: Vec<String> = plan
        .manifest
        .kernels
        .iter()
        .map(|k| k.name.clone())
        .collect();
    let names = source.qualified_names(&listed)?;
    eprintln!(
        "compiling {} for sm_{} (--compiler {:?})",
        source.path, target.sm, args.compiler
    );
    let compiled = compile(args.compiler, source, &names, &target)?;
    for n in &compiled.notes {
        eprintln!("{n}");
    }
    let image = match &compiled.image {
        Image::Ptx(p) => {
            crate::code_id::replace_module(CODE_MODULE, p.as_bytes());
            Ptx::from_src(p.clone())
        }
        Image::Cubin(b) => {
            crate::code_id::replace_module(CODE_MODULE, b);
            Ptx::from_binary(b.clone())
        }
    };
    let module = gpu.ctx.load_module(image).with_context(|| {
        format!(
            "loading the module {} built from {} (for {})",
            compiled.info.name, source.path, compiled.info.target
        )
    })?;
    let funcs = plan
        .manifest
        .kernels
        .iter()
        .zip(&compiled.symbols)
        .map(|(k, sym)| {
            module.load_function(sym).with_context(|| {
                format!(
                    "kernel `{}` (symbol {sym}) is not in the module {} built from {}",
                    k.name, compiled.info.name, source.path
                )
            })
        })
        .collect::<Result<Vec<_>>>()?;
    raise_shared_limits(plan, &funcs)?;
    check_memory(&gpu, plan)?;
    match &args.ncu_child {
        Some(ids) => runner::ncu_target(&mut gpu, plan, &funcs, ids).map(|()| RunEnd::Finished),
        None => runner::sweep(gpu, plan, &funcs, args, &compiled),
    }
}

/// Opts each kernel into the dynamic shared memory its largest point asks for beyond 48 KiB.
fn raise_shared_limits(plan: &Plan, funcs: &[CudaFunction]) -> Result<()> {
    for (k, f) in funcs.iter().enumerate() {
        let most = plan
            .groups
            .iter()
            .flat_map(|g| &g.points)
            .filter(|p| p.kernel == k)
            .map(|p| p.shared_bytes)
            .max()
            .unwrap_or(0);
        if most > DEFAULT_SHARED_LIMIT {
            f.set_attribute(
                CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                most as i32,
            )
            .with_context(|| {
                format!(
                    "kernel `{}` asks for {most} bytes of dynamic shared memory, more than this \
                     GPU allows per block",
                    plan.manifest.kernels[k].name
                )
            })?;
        }
    }
    Ok(())
}

/// Fails before any work when a parameter set's buffers cannot fit in free device memory.
fn check_memory(gpu: &Gpu, plan: &Plan) -> Result<()> {
    let (free, total) = gpu.mem_info()?;
    // Room for the copy ceiling's buffers is not needed at the same time; keep a small margin.
    let margin = 256usize << 20;
    for g in &plan.groups {
        if g.total_bytes.saturating_add(margin) > free {
            let parts: Vec<String> = plan
                .manifest
                .buffers
                .iter()
                .zip(&g.buffers)
                .map(|(b, s)| {
                    format!(
                        "{} = {} ({} x {}): {:.2} GiB",
                        b.name,
                        b.len,
                        s.len,
                        b.dtype.name(),
                        s.bytes as f64 / GIB
                    )
                })
                .collect();
            bail!(
                "at {} the buffers need {:.2} GiB but the GPU has {:.2} GiB free of {:.2} GiB: {}. \
                 Lower that parameter's values",
                Plan::label(&g.params),
                g.total_bytes as f64 / GIB,
                free as f64 / GIB,
                total as f64 / GIB,
                parts.join("; ")
            );
        }
    }
    Ok(())
}

const GIB: f64 = (1u64 << 30) as f64;

/// The CUDA error in `e`'s chain if it is one that leaves the context unusable
/// (illegal address, misaligned access, device assert, illegal instruction, launch failure).
pub fn sticky_error(e: &anyhow::Error) -> Option<DriverError> {
    use CUresult::*;
    e.chain()
        .find_map(|c| c.downcast_ref::<DriverError>())
        .copied()
        .filter(|d| {
            matches!(
                d.0,
                CUDA_ERROR_ILLEGAL_ADDRESS
                    | CUDA_ERROR_MISALIGNED_ADDRESS
                    | CUDA_ERROR_ASSERT
                    | CUDA_ERROR_ILLEGAL_INSTRUCTION
                    | CUDA_ERROR_HARDWARE_STACK_ERROR
                    | CUDA_ERROR_INVALID_PC
                    | CUDA_ERROR_LAUNCH_FAILED
                    | CUDA_ERROR_LAUNCH_TIMEOUT
                    | CUDA_ERROR_ILLEGAL_STATE
                    | CUDA_ERROR_UNKNOWN
            )
        })
}
