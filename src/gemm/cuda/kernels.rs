//! Our GEMM kernels on the GPU: the PTX modules loaded once, one `unsafe` launch function per
//! kernel (grid, block, shared memory), and [`Kernels::launch`], the safe, checked entry.

use super::operands::{check_gemm, DevMat, Elem};
use super::tma::{encode, Half, MatrixBox, TensorMap};
use crate::gemm::dtype::Dtype;
use crate::gemm::impls::Impl;
use crate::gemm::shapes::BLayout;
use crate::gemm::splitk::{plan_split, tma_smem_bytes, Reduction, SplitPlan, TmaTile, TMA_BK};
use crate::gpu::Gpu;
use anyhow::{anyhow, bail, Context, Result};
use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, DevicePtr, LaunchConfig, PushKernelArg};
use std::collections::HashMap;
use std::sync::Mutex;

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

/// The compiled TMA kernels (kernels/gemm_tc_tma.cu).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum TmaKernel {
    /// No producer warpgroup: consumer thread 0 issues the loads.
    Inline128x256,
    /// Producer warpgroup + consumers, one CTA per SM or per unit.
    Ws(TmaTile),
    /// Producer warpgroup, 2-CTA clusters with B multicast.
    Cluster2,
}

impl TmaKernel {
    fn tile(self) -> TmaTile {
        match self {
            TmaKernel::Ws(t) => t,
            TmaKernel::Inline128x256 | TmaKernel::Cluster2 => TmaTile::T128x256,
        }
    }

    fn threads(self) -> u32 {
        let consumers = self.tile().consumers() as u32;
        match self {
            TmaKernel::Inline128x256 => 128 * consumers,
            _ => 128 * (consumers + 1),
        }
    }

    /// CTAs per cluster.
    fn cluster(self) -> usize {
        match self {
            TmaKernel::Cluster2 => 2,
            _ => 1,
        }
    }

    /// The kernel's symbol: "gemm_tc_tma_ws_128x256_nk_bf16" for B stored [N, K].
    fn function_name(self, layout: BLayout, dtype: &str) -> String {
        let nk = match layout {
            BLayout::Kn => "",
            BLayout::Nk => "_nk",
        };
        match self {
            TmaKernel::Inline128x256 => format!("gemm_tc_tma_128x256{nk}_{dtype}"),
            TmaKernel::Ws(t) => format!("gemm_tc_tma_ws_{}{nk}_{dtype}", t.name()),
            TmaKernel::Cluster2 => format!("gemm_tc_tma_ws_cluster2_128x256{nk}_{dtype}"),
        }
    }

    /// The kernels an implementation may launch.
    fn of(imp: Impl) -> &'static [TmaKernel] {
        match imp {
            Impl::Tma128x256 => &[TmaKernel::Inline128x256],
            Impl::TmaWs128x256 | Impl::TmaWsPersistent128x256 => {
                &[TmaKernel::Ws(TmaTile::T128x256)]
            }
            Impl::TmaWsCluster2 => &[TmaKernel::Cluster2],
            Impl::TmaWsSplitK => &[
                TmaKernel::Ws(TmaTile::T64x128),
                TmaKernel::Ws(TmaTile::T128x128),
                TmaKernel::Ws(TmaTile::T128x192),
                TmaKernel::Ws(TmaTile::T128x256),
                TmaKernel::Ws(TmaTile::Swap16x64),
                TmaKernel::Ws(TmaTile::Swap32x64K128),
                TmaKernel::Ws(TmaTile::Swap64x64K128),
            ],
            _ => &[],
        }
    }
}

/// f32 workspace for split-K partial tiles (64 MiB) and the per-tile arrival counters; the
/// counters start zeroed and the last unit of every tile resets its own. The workspace has
/// one half per reduction: the atomic one must stay zeroed between launches (its last units
/// zero what they read), while slots are left holding partials.
const SPLIT_WORKSPACE_FLOATS: usize = 16 << 20;
/// The f32 workspace a plan may use: one half of it.
const SPLIT_REGION_FLOATS: usize = SPLIT_WORKSPACE_FLOATS / 2;
const SPLIT_COUNTERS: usize = 1 << 16;

struct SplitWorkspace {
    partials: CudaSlice<f32>,
    counters: CudaSlice<i32>,
}

/// The driver's count of 2-CTA clusters of `f` that can be resident at once.
fn max_active_clusters(gpu: &Gpu, f: &CudaFunction, tk: TmaKernel) -> Result<usize> {
    use cudarc::driver::sys;
    gpu.stream
        .context()
        .bind_to_thread()
        .context("binding the CUDA context")?;
    // SAFETY: a zeroed launch attribute is valid plain data; id and value are set below.
    let mut attr: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
    attr.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr.value.clusterDim.x = 2;
    attr.value.clusterDim.y = 1;
    attr.value.clusterDim.z = 1;
    let conf = sys::CUlaunchConfig {
        gridDimX: 2 * gpu.sm_count as u32,
        gridDimY: 1,
        gridDimZ: 1,
        blockDimX: tk.threads(),
        blockDimY: 1,
        blockDimZ: 1,
        sharedMemBytes: tma_smem_bytes(tk.tile()),
        hStream: gpu.stream.cu_stream(),
        attrs: &mut attr,
        numAttrs: 1,
    };
    let mut n: std::ffi::c_int = 0;
    // SAFETY: conf and attr outlive the call; the function handle is live.
    unsafe { sys::cuOccupancyMaxActiveClusters(&mut n, f.cu_function(), &conf) }
        .result()
        .context("cuOccupancyMaxActiveClusters")?;
    if n <= 0 {
        bail!("the driver says no 2-CTA cluster of the cluster kernel fits on this GPU");
    }
    Ok(n as usize)
}

/// How a TMA implementation launches at one shape (`max_clusters`: resident 2-CTA clusters).
fn tma_launch_plan(
    imp: Impl,
    m: usize,
    n: usize,
    k: usize,
    sms: usize,
    max_clusters: usize,
    ws_floats: usize,
) -> (TmaKernel, SplitPlan, u32) {
    let whole = |tile: TmaTile| SplitPlan {
        tile,
        splits: 1,
        reduction: Reduction::Atomic,
        units: tile.tiles(m, n),
    };
    match imp {
        Impl::Tma128x256 => {
            let p = whole(TmaTile::T128x256);
            (TmaKernel::Inline128x256, p, p.units as u32)
        }
        Impl::TmaWs128x256 => {
            let p = whole(TmaTile::T128x256);
            (TmaKernel::Ws(TmaTile::T128x256), p, p.units as u32)
        }
        Impl::TmaWsPersistent128x256 => {
            let p = whole(TmaTile::T128x256);
            (TmaKernel::Ws(TmaTile::T128x256), p, p.units.min(sms) as u32)
        }
        Impl::TmaWsCluster2 => {
            let p = whole(TmaTile::T128x256);
            let pairs = m.div_ceil(256) * n.div_ceil(256);
            (TmaKernel::Cluster2, p, 2 * pairs.min(max_clusters) as u32)
        }
        _ => {
            let p = plan_split(m, n, k, sms, ws_floats);
            (TmaKernel::Ws(p.tile), p, p.grid(sms) as u32)
        }
    }
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

/// The PTX modules an implementation's kernels come from (for its rows' `code` setting).
pub fn modules_of(imp: Impl) -> Vec<&'static str> {
    let mut m: Vec<&'static str> = imp
        .gpu_dtypes()
        .iter()
        .filter_map(|&d| entry(imp, d).map(|(module, _, _)| module))
        .collect();
    if !TmaKernel::of(imp).is_empty() {
        m.push("gemm_tc_tma");
    }
    m.sort_unstable();
    m.dedup();
    m
}

/// Every ladder kernel, loaded.
pub struct Kernels {
    funcs: HashMap<(Impl, Dtype), CudaFunction>,
    tma: HashMap<(TmaKernel, Dtype, BLayout), CudaFunction>,
    /// Tensor maps by (matrix, box), encoded once per operand.
    maps: Mutex<HashMap<(MatrixBox, bool), TensorMap>>,
    split: Option<SplitWorkspace>,
    /// How many 2-CTA clusters of the cluster kernel fit on the GPU at once.
    max_clusters: usize,
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
        let mut tma = HashMap::new();
        for &imp in wanted {
            let layouts: &[BLayout] = if imp.reads_b_nk() {
                &[BLayout::Kn, BLayout::Nk]
            } else {
                &[BLayout::Kn]
            };
            for (&tk, &layout) in TmaKernel::of(imp)
                .iter()
                .flat_map(|tk| layouts.iter().map(move |l| (tk, l)))
            {
                for d in [Dtype::F16, Dtype::Bf16] {
                    if tma.contains_key(&(tk, d, layout)) {
                        continue;
                    }
                    let name =
                        tk.function_name(layout, if d == Dtype::F16 { "f16" } else { "bf16" });
                    let f = gpu.function("gemm_tc_tma", ptx::GEMM_TC_TMA, &name)?;
                    use cudarc::driver::sys::CUfunction_attribute as A;
                    f.set_attribute(
                        A::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                        tma_smem_bytes(tk.tile()) as i32,
                    )
                    .with_context(|| format!("allowing {name} its dynamic shared memory"))?;
                    tma.insert((tk, d, layout), f);
                }
            }
        }
        let mut max_clusters = gpu.sm_count / 2;
        if let Some(f) = tma.get(&(TmaKernel::Cluster2, Dtype::Bf16, BLayout::Kn)) {
            max_clusters = max_active_clusters(gpu, f, TmaKernel::Cluster2)?;
            eprintln!(
                "tma_ws_cluster2_128x256: {max_clusters} clusters of 2 CTAs resident at once"
            );
        }
        let split = if wanted.contains(&Impl::TmaWsSplitK) {
            Some(SplitWorkspace {
                partials: gpu
                    .stream
                    .alloc_zeros::<f32>(SPLIT_WORKSPACE_FLOATS)
                    .context("allocating the split-K workspace")?,
                counters: gpu
                    .stream
                    .alloc_zeros::<i32>(SPLIT_COUNTERS)
                    .context("allocating the split-K counters")?,
            })
        } else {
            None
        };
        Ok(Kernels {
            funcs,
            tma,
            maps: Mutex::new(HashMap::new()),
            split,
            max_clusters,
        })
    }

    /// The tensor map of a matrix read in boxes, encoded on first use.
    fn map(&self, half: Half, b: MatrixBox) -> Result<TensorMap> {
        let mut maps = self
            .maps
            .lock()
            .map_err(|_| anyhow!("tensor-map cache poisoned"))?;
        if let Some(m) = maps.get(&(b, half == Half::Bf16)) {
            return Ok(*m);
        }
        let m = encode(half, &b)?;
        maps.insert((b, half == Half::Bf16), m);
        Ok(m)
    }

    /// f32 workspace a split may use (none unless the split-K kernel was loaded).
    fn workspace_floats(&self) -> usize {
        self.split.as_ref().map_or(0, |_| SPLIT_REGION_FLOATS)
    }

    /// The tile and K split `imp` uses at this shape (params of the result row), if it is a
    /// TMA kernel.
    pub fn split_plan(
        &self,
        gpu: &Gpu,
        imp: Impl,
        m: usize,
        n: usize,
        k: usize,
    ) -> Option<SplitPlan> {
        if TmaKernel::of(imp).is_empty() {
            return None;
        }
        Some(
            tma_launch_plan(
                imp,
                m,
                n,
                k,
                gpu.sm_count,
                self.max_clusters,
                self.workspace_floats(),
            )
            .1,
        )
    }

    /// # Safety
    /// As [`launch_raw`]: `a`, `b`, `c` hold M*K, K*N, M*N elements of `dtype` (checked by
    /// the caller), B stored as `layout` says, N % 8 == 0, K % 8 == 0.
    #[allow(clippy::too_many_arguments)]
    unsafe fn launch_tma(
        &self,
        gpu: &Gpu,
        imp: Impl,
        dtype: Dtype,
        a: u64,
        (b, layout): (u64, BLayout),
        c: u64,
        (m, n, k): (usize, usize, usize),
    ) -> Result<()> {
        let (tk, plan, grid) = tma_launch_plan(
            imp,
            m,
            n,
            k,
            gpu.sm_count,
            self.max_clusters,
            self.workspace_floats(),
        );
        let f = self.tma.get(&(tk, dtype, layout)).ok_or_else(|| {
            anyhow!(
                "{} has no {dtype} kernel for B stored {} loaded",
                imp.name(),
                layout.name()
            )
        })?;
        let half = if dtype == Dtype::F16 {
            Half::F16
        } else {
            Half::Bf16
        };
        let tile = tk.tile();
        let ta = self.map(
            half,
            MatrixBox {
                ptr: a,
                rows: m,
                cols: k,
                box_rows: tile.bm() as u32,
                box_cols: TMA_BK as u32,
            },
        )?;
        // [K, N]: boxes of 64 k-rows x 64 columns, BN / 64 per tile. [N, K]: the tile's BN
        // rows x 64 k in one box, or a cluster CTA's share of them (it multicasts its share).
        let b_box = match layout {
            BLayout::Kn => MatrixBox {
                ptr: b,
                rows: k,
                cols: n,
                box_rows: TMA_BK as u32,
                box_cols: 64,
            },
            BLayout::Nk => MatrixBox {
                ptr: b,
                rows: n,
                cols: k,
                box_rows: (tile.bn() / tk.cluster()) as u32,
                box_cols: TMA_BK as u32,
            },
        };
        let tb = self.map(half, b_box)?;
        let region = match plan.reduction {
            Reduction::Atomic => 0,
            Reduction::Slots => SPLIT_REGION_FLOATS * std::mem::size_of::<f32>(),
        };
        let (ws_ptr, counters_ptr) = match &self.split {
            Some(w) => (
                w.partials.device_ptr(&gpu.stream).0 + region as u64,
                w.counters.device_ptr(&gpu.stream).0,
            ),
            None => (0, 0),
        };
        if plan.splits > 1 && plan.tile.tiles(m, n) > SPLIT_COUNTERS {
            bail!(
                "{} split plan needs more tile counters than allocated",
                imp.name()
            );
        }
        let (mi, ni, ki, splits) = (m as i32, n as i32, k as i32, plan.splits as i32);
        let slots = i32::from(plan.reduction == Reduction::Slots);
        let mut bld = gpu.stream.launch_builder(f);
        bld.arg(&ta)
            .arg(&tb)
            .arg(&c)
            .arg(&mi)
            .arg(&ni)
            .arg(&ki)
            .arg(&splits)
            .arg(&slots)
            .arg(&ws_ptr)
            .arg(&counters_ptr);
        let cfg = LaunchConfig {
            grid_dim: (grid, 1, 1),
            block_dim: (tk.threads(), 1, 1),
            shared_mem_bytes: tma_smem_bytes(tile),
        };
        // SAFETY: the argument list matches the TMA kernels' (map, map, ptr, int x5, ptr, ptr);
        // the tensor maps describe the caller's A and B; the workspace outlives the launch.
        unsafe { bld.launch(cfg) }
            .map(|_| ())
            .with_context(|| format!("launching {}", imp.name()))
    }

    /// Enqueues C = A * B with `imp` at `dtype` on the GPU's stream (B stored as `layout`
    /// says), after checking shapes, storage types and the kernel's tile requirements.
    pub fn launch(
        &self,
        gpu: &Gpu,
        imp: Impl,
        dtype: Dtype,
        a: &DevMat,
        (b, layout): (&DevMat, BLayout),
        c: &DevMat,
    ) -> Result<()> {
        let (m, n, k) = check_gemm(a, b, c, layout, Elem::of(dtype))?;
        if let Err(why) = imp.supports(m, n, k) {
            bail!("{why}");
        }
        if layout == BLayout::Nk && !imp.reads_b_nk() {
            bail!("{} reads B only as [K, N], not [N, K]", imp.name());
        }
        if !TmaKernel::of(imp).is_empty() {
            // SAFETY: check_gemm proved the buffer sizes and `supports` the 16-byte strides.
            return unsafe {
                self.launch_tma(gpu, imp, dtype, a.ptr, (b.ptr, layout), c.ptr, (m, n, k))
            };
        }
        let f = self
            .funcs
            .get(&(imp, dtype))
            .ok_or_else(|| anyhow!("{} has no {dtype} kernel", imp.name()))?;
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
                Impl::Tma128x256
                | Impl::TmaWs128x256
                | Impl::TmaWsPersistent128x256
                | Impl::TmaWsCluster2
                | Impl::TmaWsSplitK => bail!("{} launches through launch_tma", imp.name()),
                Impl::Cublas | Impl::Candle => {
                    bail!("{} is a library, not one of our kernels", imp.name())
                }
            }
        }
    }
}
