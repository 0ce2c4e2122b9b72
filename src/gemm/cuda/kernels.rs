//! Our GEMM kernels on the GPU: the PTX modules loaded once, one `unsafe` launch function per
//! kernel (grid, block, shared memory), and [`Kernels::launch`], the safe, checked entry.

use super::operands::{check_gemm, DevMat, Elem};
use crate::gemm::dtype::Dtype;
use crate::gemm::impls::Impl;
use crate::gpu::Gpu;
use anyhow::{anyhow, bail, Context, Result};
use cudarc::driver::{CudaFunction, CudaStream, LaunchConfig, PushKernelArg};
use std::collections::HashMap;

#[allow(dead_code)]
mod ptx {
    include!(concat!(env!("OUT_DIR"), "/ptx.rs"));
}

/// Raw launch arguments: device pointers and sizes, already checked by the caller.
#[derive(Debug, Clone, Copy)]
struct Args {
    a: u64,
    b: u64,
    c: u64,
    m: i32,
    n: i32,
    k: i32,
}

/// # Safety
/// `p.a`, `p.b`, `p.c` point to live device buffers of at least M*K, K*N and M*N elements of
/// the kernel's type, not freed before the launch completes on `stream`.
unsafe fn launch_raw(
    stream: &CudaStream,
    f: &CudaFunction,
    cfg: LaunchConfig,
    p: &Args,
) -> Result<()> {
    let mut b = stream.launch_builder(f);
    b.arg(&p.a)
        .arg(&p.b)
        .arg(&p.c)
        .arg(&p.m)
        .arg(&p.n)
        .arg(&p.k);
    // SAFETY: the argument list matches every GEMM kernel's (ptr, ptr, ptr, int, int, int);
    // the buffers' validity is the caller's contract.
    unsafe { b.launch(cfg) }
        .map(|_| ())
        .context("launching a GEMM kernel")
}

fn cfg(grid: (u32, u32), block: (u32, u32), smem: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (grid.0, grid.1, 1),
        block_dim: (block.0, block.1, 1),
        shared_mem_bytes: smem,
    }
}

fn cdiv(a: i32, b: i32) -> u32 {
    ((a + b - 1) / b) as u32
}

/// # Safety
/// See [`launch_raw`]; any shape with ceil(N/32) <= 65535.
unsafe fn launch_naive(s: &CudaStream, f: &CudaFunction, p: &Args) -> Result<()> {
    unsafe { launch_raw(s, f, cfg((cdiv(p.m, 32), cdiv(p.n, 32)), (32, 32), 0), p) }
}

/// # Safety
/// See [`launch_raw`]; any shape with ceil(M/32) <= 65535.
unsafe fn launch_coalesced(s: &CudaStream, f: &CudaFunction, p: &Args) -> Result<()> {
    unsafe { launch_raw(s, f, cfg((cdiv(p.n, 32), cdiv(p.m, 32)), (32, 32), 0), p) }
}

/// # Safety
/// See [`launch_raw`]; any shape with ceil(M/32) <= 65535.
unsafe fn launch_smem_tiled(s: &CudaStream, f: &CudaFunction, p: &Args) -> Result<()> {
    unsafe { launch_raw(s, f, cfg((cdiv(p.n, 32), cdiv(p.m, 32)), (32, 32), 0), p) }
}

/// # Safety
/// See [`launch_raw`]; M % 128 == 0, N % 128 == 0, K % 8 == 0 (blocktile_2d, vectorized_2d,
/// warptile_bk8) or K % 16 == 0 (warptile_bk16).
unsafe fn launch_128x128_simt(s: &CudaStream, f: &CudaFunction, p: &Args) -> Result<()> {
    unsafe {
        launch_raw(
            s,
            f,
            cfg(((p.n / 128) as u32, (p.m / 128) as u32), (256, 1), 0),
            p,
        )
    }
}

/// # Safety
/// See [`launch_raw`]; N % 128 == 0, K % 32 == 0, any M.
unsafe fn launch_mma_smem(s: &CudaStream, f: &CudaFunction, p: &Args) -> Result<()> {
    unsafe {
        launch_raw(
            s,
            f,
            cfg(((p.n / 128) as u32, cdiv(p.m, 128)), (128, 1), 0),
            p,
        )
    }
}

/// Dynamic shared memory of a pipelined tile: STAGES x (A: BM x (32+8) + B: 32 x (BN+8)) x 2 B.
pub const fn pipelined_smem_bytes(bm: u32, bn: u32, stages: u32) -> u32 {
    stages * (bm * 40 + 32 * (bn + 8)) * 2
}

/// # Safety
/// See [`launch_raw`]; N % bn == 0, K % 32 == 0, any M; `f` was compiled for (bm, bn, stages)
/// and allowed `pipelined_smem_bytes` of dynamic shared memory.
unsafe fn launch_mma_pipelined(
    s: &CudaStream,
    f: &CudaFunction,
    p: &Args,
    (bm, bn, stages): (u32, u32, u32),
) -> Result<()> {
    let blocks = (p.n as u32 / bn) * cdiv(p.m, bm as i32);
    let threads = (bm / 64) * (bn / 64) * 32;
    let smem = pipelined_smem_bytes(bm, bn, stages);
    unsafe { launch_raw(s, f, cfg((blocks, 1), (threads, 1), smem), p) }
}

/// Dynamic shared memory of the wgmma kernel: 4 stages x (16 KiB A + 32 KiB B) + 1 KiB so the
/// tiles can be aligned to 1024 bytes (the 128-byte swizzle pattern repeats every 1024).
pub const WGMMA_SMEM_BYTES: u32 = 4 * (16384 + 32768) + 1024;

/// # Safety
/// See [`launch_raw`]; N % 256 == 0, K % 64 == 0, any M; `f` was allowed WGMMA_SMEM_BYTES of
/// dynamic shared memory; sm_90a.
unsafe fn launch_wgmma(s: &CudaStream, f: &CudaFunction, p: &Args) -> Result<()> {
    let blocks = (p.n as u32 / 256) * cdiv(p.m, 128);
    unsafe { launch_raw(s, f, cfg((blocks, 1), (256, 1), WGMMA_SMEM_BYTES), p) }
}

/// (module constant, kernel function name) of an implementation at a dtype.
fn entry(imp: Impl, d: Dtype) -> Option<(&'static str, &'static str, String)> {
    let sfx = match d {
        Dtype::F16 => "f16",
        Dtype::Bf16 => "bf16",
        _ => "",
    };
    let f32 = d == Dtype::F32;
    Some(match imp {
        Impl::Naive if f32 => (
            "gemm_f32_naive",
            ptx::GEMM_F32_NAIVE,
            "gemm_f32_naive".into(),
        ),
        Impl::Coalesced if f32 => (
            "gemm_f32_coalesced",
            ptx::GEMM_F32_COALESCED,
            "gemm_f32_coalesced".into(),
        ),
        Impl::SmemTiled if f32 => (
            "gemm_f32_smem_tiled",
            ptx::GEMM_F32_SMEM_TILED,
            "gemm_f32_smem_tiled".into(),
        ),
        Impl::Blocktile2d if f32 => (
            "gemm_f32_blocktile_2d",
            ptx::GEMM_F32_BLOCKTILE_2D,
            "gemm_f32_blocktile_2d".into(),
        ),
        Impl::Vectorized2d if f32 => (
            "gemm_f32_vectorized_2d",
            ptx::GEMM_F32_VECTORIZED_2D,
            "gemm_f32_vectorized_2d".into(),
        ),
        Impl::WarptileBk8 if f32 => (
            "gemm_f32_warptile",
            ptx::GEMM_F32_WARPTILE,
            "gemm_f32_warptile_bk8".into(),
        ),
        Impl::WarptileBk16 if f32 => (
            "gemm_f32_warptile",
            ptx::GEMM_F32_WARPTILE,
            "gemm_f32_warptile_bk16".into(),
        ),
        Impl::MmaSmem if !sfx.is_empty() => (
            "gemm_tc_mma_smem",
            ptx::GEMM_TC_MMA_SMEM,
            format!("gemm_tc_mma_smem_{sfx}"),
        ),
        Impl::MmaPipelined128x128 if !sfx.is_empty() => (
            "gemm_tc_mma_pipelined",
            ptx::GEMM_TC_MMA_PIPELINED,
            format!("gemm_tc_mma_pipelined_128x128_{sfx}"),
        ),
        Impl::MmaPipelined128x256 if !sfx.is_empty() => (
            "gemm_tc_mma_pipelined",
            ptx::GEMM_TC_MMA_PIPELINED,
            format!("gemm_tc_mma_pipelined_128x256_{sfx}"),
        ),
        Impl::Wgmma128x256 if !sfx.is_empty() => (
            "gemm_tc_wgmma",
            ptx::GEMM_TC_WGMMA,
            format!("gemm_tc_wgmma_128x256_{sfx}"),
        ),
        _ => return None,
    })
}

/// Tile configuration (BM, BN, STAGES) of the pipelined kernels.
fn pipelined_tile(imp: Impl) -> Option<(u32, u32, u32)> {
    match imp {
        Impl::MmaPipelined128x128 => Some((128, 128, 4)),
        Impl::MmaPipelined128x256 => Some((128, 256, 3)),
        _ => None,
    }
}

/// Dynamic shared memory a kernel needs beyond the default 48 KiB, if any.
fn dynamic_smem(imp: Impl) -> Option<u32> {
    match imp {
        Impl::Wgmma128x256 => Some(WGMMA_SMEM_BYTES),
        _ => pipelined_tile(imp).map(|(bm, bn, st)| pipelined_smem_bytes(bm, bn, st)),
    }
}

/// Every ladder kernel, loaded.
pub struct Kernels {
    funcs: HashMap<(Impl, Dtype), CudaFunction>,
}

impl Kernels {
    /// Loads the PTX of the listed ladder kernels (only those, so a module the driver refuses
    /// costs only its own kernels) and raises the shared-memory limit where needed.
    pub fn load(gpu: &Gpu, wanted: &[Impl]) -> Result<Self> {
        let mut funcs = HashMap::new();
        for &imp in wanted {
            for &d in imp.gpu_dtypes() {
                let Some((module, ptx, name)) = entry(imp, d) else {
                    continue;
                };
                let f = gpu.function(module, ptx, &name)?;
                if let Some(bytes) = dynamic_smem(imp) {
                    use cudarc::driver::sys::CUfunction_attribute as A;
                    f.set_attribute(
                        A::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                        bytes as i32,
                    )
                    .with_context(|| format!("allowing {name} its dynamic shared memory"))?;
                }
                funcs.insert((imp, d), f);
            }
        }
        Ok(Kernels { funcs })
    }

    /// Enqueues C = A * B with `imp` at `dtype` on the GPU's stream, after checking shapes,
    /// storage types and the kernel's tile requirements.
    pub fn launch(
        &self,
        gpu: &Gpu,
        imp: Impl,
        dtype: Dtype,
        a: &DevMat,
        b: &DevMat,
        c: &DevMat,
    ) -> Result<()> {
        let f = self
            .funcs
            .get(&(imp, dtype))
            .ok_or_else(|| anyhow!("{} has no {dtype} kernel", imp.name()))?;
        let (m, n, k) = check_gemm(a, b, c, Elem::of(dtype))?;
        if let Err(why) = imp.supports(m, n, k) {
            bail!("{why}");
        }
        let p = Args {
            a: a.ptr,
            b: b.ptr,
            c: c.ptr,
            m: m as i32,
            n: n as i32,
            k: k as i32,
        };
        let s = &gpu.stream;
        // SAFETY: check_gemm proved A, B, C hold M*K, K*N, M*N elements of the kernel's type
        // (DevMat borrows their owners for the call), and `supports` proved the kernel's tile
        // requirements; everything runs on the one stream.
        unsafe {
            match imp {
                Impl::Naive => launch_naive(s, f, &p),
                Impl::Coalesced => launch_coalesced(s, f, &p),
                Impl::SmemTiled => launch_smem_tiled(s, f, &p),
                Impl::Blocktile2d | Impl::Vectorized2d | Impl::WarptileBk8 | Impl::WarptileBk16 => {
                    launch_128x128_simt(s, f, &p)
                }
                Impl::MmaSmem => launch_mma_smem(s, f, &p),
                Impl::MmaPipelined128x128 | Impl::MmaPipelined128x256 => {
                    launch_mma_pipelined(s, f, &p, pipelined_tile(imp).expect("pipelined tile"))
                }
                Impl::Wgmma128x256 => launch_wgmma(s, f, &p),
                Impl::Cublas | Impl::Candle => {
                    bail!("{} is a library, not one of our kernels", imp.name())
                }
            }
        }
    }
}
