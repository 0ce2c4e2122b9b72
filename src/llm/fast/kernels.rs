//! The decode kernels (kernels/decode_*.cu) from Rust: argument blocks mirrored as #[repr(C)]
//! structs, one `unsafe` launch function per kernel behind a safe wrapper that checks every
//! buffer's size and alignment against the shapes first.
//!
//! Buffers are passed as [`Dev`] views (device address + byte length) of allocations that the
//! caller owns and keeps alive past the launch (and past any graph that captured it); event
//! tracking is off (checked when the engine opens), so stream order alone orders the accesses.

use super::plan::{
    argmax_blocks, attn_max_warps_per_head, attn_smem_bytes, attn_tc_fits, attn_tc_head_dim_bound,
    attn_tc_smem_bytes, gemv_blocks, gemv_smem_budget, gemv_smem_bytes, gemv_tc_grid,
    gemv_tc_smem_bytes, Dims, ARGMAX_THREADS, ATTN_CHUNK, ATTN_MAX_CLUSTER, ATTN_MAX_HEAD_DIM,
    ATTN_MAX_SPLIT, ATTN_TC_MAX_GROUP, ATTN_TC_MAX_WARPS, GEMV_WARPS,
};
use super::tiles::tiled_len;
use crate::gpu::Gpu;
use anyhow::{bail, Context, Result};
use cudarc::driver::{
    sys, CudaFunction, CudaSlice, CudaStream, DevicePtr, DeviceRepr, LaunchConfig,
};
use std::ffi::c_void;
use std::sync::Arc;

#[allow(dead_code)] // ptx.rs holds every kernels/*.cu module; this file uses five.
mod ptx {
    include!(concat!(env!("OUT_DIR"), "/ptx.rs"));
}

/// A device buffer as a kernel sees it: its address and size in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dev {
    pub ptr: u64,
    pub bytes: usize,
}

impl Dev {
    /// A view of a whole slice. The slice must outlive every launch that uses the view.
    pub fn of<T>(s: &CudaSlice<T>, stream: &Arc<CudaStream>) -> Dev {
        let (ptr, _sync) = s.device_ptr(stream);
        Dev {
            ptr,
            bytes: s.num_bytes(),
        }
    }

    /// `bytes` bytes starting `offset` bytes in; fails past the end.
    pub fn sub(&self, offset: usize, bytes: usize) -> Result<Dev> {
        if offset + bytes > self.bytes {
            bail!(
                "sub-view [{offset}, {}) of a {}-byte buffer",
                offset + bytes,
                self.bytes
            );
        }
        Ok(Dev {
            ptr: self.ptr + offset as u64,
            bytes,
        })
    }

    fn need(&self, what: &str, bytes: usize, align: u64) -> Result<()> {
        if self.bytes < bytes {
            bail!("{what}: {} bytes, the launch touches {bytes}", self.bytes);
        }
        if !self.ptr.is_multiple_of(align) {
            bail!("{what} at {:#x} is not {align}-byte aligned", self.ptr);
        }
        Ok(())
    }
}

#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct QkvStoreC {
    q_out: u64,
    kc: u64,
    vc: u64,
    inv_freq: u64,
    pos: u64,
    rows_per_seq: i32,
    nq: i32,
    nkv: i32,
    hd: i32,
    max_ctx: i32,
}

#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct MergeInC {
    part_o: u64,
    part_ml: u64,
    pos: u64,
    rows_per_seq: i32,
    splits: i32,
    split_len: i32,
    heads: i32,
    hd: i32,
}

#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct GemvArgsC {
    w: u64,
    x: u64,
    norm_w: u64,
    out: u64,
    qkv: QkvStoreC,
    merge: MergeInC,
    eps: f32,
    n: i32,
    k: i32,
    m: i32,
    x_stride: i32,
    out_stride: i32,
    ksplit: i32,
    mode: i32,
    folded_norm: i32,
}

#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct AttnArgsC {
    q: u64,
    kc: u64,
    vc: u64,
    part_o: u64,
    part_ml: u64,
    counters: u64,
    out: u64,
    pos: u64,
    rows_per_seq: i32,
    m: i32,
    heads: i32,
    kv_heads: i32,
    hd: i32,
    max_ctx: i32,
    splits: i32,
    split_len: i32,
    merge_in_block: i32,
    cache_ready: i32,
    scale: f32,
}

// SAFETY: plain #[repr(C)] blocks of integers and floats, laid out like the C structs of
// kernels/decode_common.cuh (same field order and types, so the same offsets and size).
unsafe impl DeviceRepr for GemvArgsC {}
unsafe impl DeviceRepr for AttnArgsC {}
unsafe impl DeviceRepr for QkvStoreC {}
unsafe impl DeviceRepr for MergeInC {}

/// Where the RoPE'd queries and the new keys/values of a QKV projection go.
#[derive(Debug, Clone, Copy)]
pub struct QkvTarget {
    /// [rows][q_rows] f32.
    pub q_out: Dev,
    /// One layer's K and V caches, [seqs][kv_heads][max_ctx][hd] f16.
    pub kc: Dev,
    pub vc: Dev,
    /// [hd / 2] f32.
    pub inv_freq: Dev,
    /// One i32: the position of each sequence's first row in this launch.
    pub pos: Dev,
    pub rows_per_seq: usize,
    pub max_ctx: usize,
}

/// The epilogue of a matrix-vector product.
#[derive(Debug, Clone, Copy)]
pub enum GemvOut {
    /// f32 [m][stride], columns 0..n.
    F32 { out: Dev, stride: usize },
    /// f16 [m][stride] += result.
    Resid { out: Dev, stride: usize },
    /// f16 [m][stride], columns 0..n/2: silu(even row) * odd row.
    Silu { out: Dev, stride: usize },
    /// RoPE + KV cache write (fused QKV row order).
    Qkv(QkvTarget),
}

/// Where the greedy argmax puts the next tokens, and its scratch.
#[derive(Debug, Clone, Copy)]
pub struct ArgmaxOut {
    /// [m] i32: the tokens the next step embeds.
    pub tok: Dev,
    /// The device address of a device-mapped pinned host buffer of at least m i32 that gets
    /// the same tokens, or None.
    pub host: Option<u64>,
    /// [m] u64 and [m] u32, zero before the first launch; each launch leaves them zero.
    pub key: Dev,
    pub count: Dev,
    /// One i32, advanced by pos_inc.
    pub pos: Dev,
}

/// Attention partials that a matrix-vector launch merges into its x rows (k = heads x hd).
#[derive(Debug, Clone, Copy)]
pub struct MergeIn {
    pub part_o: Dev,
    pub part_ml: Dev,
    pub pos: Dev,
    pub rows_per_seq: usize,
    pub splits: usize,
    pub split_len: usize,
}

/// How a product RMS-normalizes its x rows.
#[derive(Debug, Clone, Copy)]
pub enum Norm {
    /// x is scaled by 1/rms and this weight ([k] f16) in shared memory: the CUDA-core kernel.
    Weight(Dev),
    /// w carries the norm weight (weights::fold_norm) and the sums are scaled by 1/rms: the
    /// tensor-core kernel.
    Folded,
}

/// One matrix-vector launch: out(x[m rows] . w[n][k]^T), optionally of RMS-normalized x, or of
/// x merged from attention partials.
#[derive(Debug, Clone, Copy)]
pub struct GemvCall {
    /// [n][k] row-major for the CUDA-core kernel, in tiles (tiles.rs) for the tensor-core one.
    pub w: Dev,
    pub x: Dev,
    pub merge: Option<MergeIn>,
    pub x_stride: usize,
    pub norm: Option<Norm>,
    pub eps: f32,
    pub n: usize,
    pub k: usize,
    pub m: usize,
    /// Warps sharing a pair of weight rows (CUDA cores) or a 16-row tile (tensor cores).
    pub ksplit: usize,
    /// Run on the tensor cores (decode_gemv_tc_b*) rather than f32 FMAs (decode_gemv_b*).
    pub tensor_cores: bool,
    /// The blocks resident at once the grid is sized to (plan::gemv_grid_cap), where the kernel
    /// can use it: the CUDA-core kernel at ksplit 1 launches at most this many, each warp
    /// walking pairs p, p + blocks x 8, ... (decode_gemv_walk_b*); the tensor-core kernel deals
    /// its tiles round at least this many where the matrix has that many (plan::gemv_tc_grid).
    /// None: one block per 8 pairs, or per 8 / ksplit tiles.
    pub resident_blocks: Option<usize>,
    pub out: GemvOut,
}

/// One attention launch over the cache (decode: m = batch, rows_per_seq = 1; prefill:
/// m = batch x prompt, rows_per_seq = prompt).
#[derive(Debug, Clone, Copy)]
pub struct AttnCall {
    pub q: Dev,
    pub kc: Dev,
    pub vc: Dev,
    pub part_o: Dev,
    pub part_ml: Dev,
    pub counters: Dev,
    pub out: Dev,
    pub pos: Dev,
    pub rows_per_seq: usize,
    pub m: usize,
    /// Positions the grid covers (the longest context any row may have).
    pub grid_ctx: usize,
    /// Positions per split: a multiple of 32, at most plan::ATTN_MAX_SPLIT
    /// (plan::attn_split_len picks it).
    pub split_len: usize,
    pub max_ctx: usize,
    /// Who merges the splits into `out` (or leaves them to the next product).
    pub merge: AttnMerge,
    /// true: every cached position below the device position was written before this launch
    /// (decode: by earlier steps), so the kernel stages those before waiting on its
    /// predecessor; false (prefill: the positions are written by the launch before).
    pub cache_ready: bool,
    /// Warps per query head in a block, 1 to plan::attn_max_warps_per_head: each takes every
    /// W-th chunk of 32 positions of the split (shorter chains for long splits).
    pub warps_per_head: usize,
    /// Some(w): the tensor-core kernel (decode_attn_tc) in blocks of w warps, 1 to
    /// plan::ATTN_TC_MAX_WARPS, each taking every w-th chunk of 16 positions (one split only,
    /// merged in the block; warps_per_head unused). None: the CUDA-core kernel.
    pub tensor_core_warps: Option<usize>,
}

/// How an attention launch combines its splits along the sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttnMerge {
    /// Only the partials are written; a following GemvCall merges them (`GemvCall::merge`).
    Partials,
    /// The last block of each (row, kv head) to finish, found with an atomic counter, merges
    /// them through L2.
    LastBlock,
    /// The splits of each (row, kv head) run as one thread-block cluster and merge through
    /// distributed shared memory: at most plan::ATTN_MAX_CLUSTER splits.
    Cluster,
}

/// The loaded decode kernels.
pub struct DecodeKernels {
    gemv: Vec<(usize, CudaFunction)>,
    /// decode_gemv_walk_b*: the CUDA-core product on a capped grid (GemvCall::resident_blocks).
    gemv_walk: Vec<(usize, CudaFunction)>,
    gemv_tc: Vec<(usize, CudaFunction)>,
    attn: CudaFunction,
    /// decode_attn_tc_d*: the tensor-core attention, by the head dim it is laid out for.
    attn_tc: Vec<(usize, CudaFunction)>,
    embed: CudaFunction,
    rmsnorm: CudaFunction,
    rope_cache: CudaFunction,
    silu: CudaFunction,
    argmax: CudaFunction,
    dims: Dims,
    stream: Arc<CudaStream>,
    /// Launch with programmatic stream serialization (programmatic dependent launch).
    pdl: bool,
}

/// A kernel argument as cuLaunchKernelEx takes it: a pointer to the value.
fn arg<T>(v: &T) -> *mut c_void {
    v as *const T as *mut c_void
}

fn i32_of(what: &str, v: usize) -> Result<i32> {
    i32::try_from(v).with_context(|| format!("{what} = {v} does not fit the kernel's int"))
}

impl DecodeKernels {
    /// Loads every decode kernel and gives the shared-memory-hungry ones their budget.
    pub fn load(gpu: &Gpu, dims: Dims) -> Result<Self> {
        use cudarc::driver::sys::CUfunction_attribute as F;
        // A product kernel, its shared-memory limit raised to x's budget for its tile.
        let product = |module: &str, ptx: &str, name: String, smem: usize| {
            let f = gpu.function(module, ptx, &name)?;
            f.set_attribute(
                F::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                smem as i32,
            )
            .with_context(|| format!("{name}: {smem} bytes of shared memory for x"))?;
            anyhow::Ok(f)
        };
        let (mut gemv, mut gemv_walk, mut gemv_tc) = (Vec::new(), Vec::new(), Vec::new());
        for t in super::plan::GEMV_TILES {
            let smem = gemv_smem_budget(&dims, t, false);
            let name = |family: &str| format!("{family}_b{t}");
            let m = ptx::DECODE_GEMV;
            gemv.push((t, product("decode_gemv", m, name("decode_gemv"), smem)?));
            gemv_walk.push((
                t,
                product("decode_gemv", m, name("decode_gemv_walk"), smem)?,
            ));
        }
        for t in super::plan::GEMV_TC_TILES {
            let (smem, name) = (
                gemv_smem_budget(&dims, t, true),
                format!("decode_gemv_tc_b{t}"),
            );
            gemv_tc.push((
                t,
                product("decode_gemv_tc", ptx::DECODE_GEMV_TC, name, smem)?,
            ));
        }
        let attn = gpu.function("decode_attn", ptx::DECODE_ATTN, "decode_attn")?;
        let smem = attn_smem_bytes(&dims, ATTN_MAX_SPLIT, attn_max_warps_per_head(&dims));
        attn.set_attribute(
            F::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            smem as i32,
        )
        .context("decode_attn: shared memory budget")?;
        let mut attn_tc = Vec::new();
        for hd in [64, 128] {
            let f = gpu.function(
                "decode_attn_tc",
                ptx::DECODE_ATTN_TC,
                &format!("decode_attn_tc_d{hd}"),
            )?;
            let smem = attn_tc_smem_bytes(&dims, ATTN_MAX_SPLIT, ATTN_TC_MAX_WARPS);
            f.set_attribute(
                F::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                smem as i32,
            )
            .with_context(|| format!("decode_attn_tc_d{hd}: {smem} bytes of shared memory"))?;
            attn_tc.push((hd, f));
        }
        let misc = |n: &str| gpu.function("decode_misc", ptx::DECODE_MISC, n);
        Ok(DecodeKernels {
            gemv,
            gemv_walk,
            gemv_tc,
            attn,
            attn_tc,
            embed: misc("decode_embed")?,
            rmsnorm: misc("decode_rmsnorm")?,
            rope_cache: misc("decode_rope_cache")?,
            silu: misc("decode_silu")?,
            argmax: misc("decode_argmax")?,
            dims,
            stream: gpu.stream.clone(),
            pdl: false,
        })
    }

    /// Sets every decode kernel's preferred shared-memory carveout (percent of the most an SM
    /// holds; None: the driver's choice), so the step's kernels can share one L1/shared split.
    /// The attribute belongs to the loaded functions, which every engine of the process shares:
    /// each engine sets it when it is created, so it holds for the engine created last.
    pub fn set_carveout(&self, pct: Option<i32>) -> Result<()> {
        use cudarc::driver::sys::CUfunction_attribute as F;
        let v = pct.unwrap_or(-1);
        let all = self
            .gemv
            .iter()
            .chain(&self.gemv_walk)
            .chain(&self.gemv_tc)
            .chain(&self.attn_tc)
            .map(|(_, f)| f)
            .chain([&self.attn, &self.embed, &self.argmax]);
        for f in all {
            f.set_attribute(F::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, v)
                .with_context(|| format!("shared-memory carveout {v}%"))?;
        }
        Ok(())
    }

    /// Launches from now on let each kernel start while its predecessor finishes (the kernels
    /// wait for it with griddepcontrol.wait before touching anything it writes).
    pub fn set_pdl(&mut self, on: bool) {
        self.pdl = on;
    }

    pub fn dims(&self) -> &Dims {
        &self.dims
    }

    fn qkv_c(&self, t: &QkvTarget, rows: usize, seqs: usize) -> Result<QkvStoreC> {
        let d = &self.dims;
        t.q_out.need("q_out", rows * d.q_rows() * 4, 4)?;
        let cache = seqs * d.kv_heads * t.max_ctx * d.head_dim * 2;
        t.kc.need("K cache", cache, 16)?;
        t.vc.need("V cache", cache, 16)?;
        t.inv_freq.need("inv_freq", d.head_dim / 2 * 4, 4)?;
        t.pos.need("pos", 4, 4)?;
        if t.rows_per_seq == 0 {
            bail!("rows_per_seq must be positive");
        }
        Ok(QkvStoreC {
            q_out: t.q_out.ptr,
            kc: t.kc.ptr,
            vc: t.vc.ptr,
            inv_freq: t.inv_freq.ptr,
            pos: t.pos.ptr,
            rows_per_seq: i32_of("rows_per_seq", t.rows_per_seq)?,
            nq: i32_of("q rows", d.q_rows())?,
            nkv: i32_of("kv rows", d.kv_rows())?,
            hd: i32_of("head_dim", d.head_dim)?,
            max_ctx: i32_of("max_ctx", t.max_ctx)?,
        })
    }

    /// Enqueues one matrix-vector product. The device position (QKV mode) must be below
    /// `max_ctx` minus the rows per sequence: the caller's host-side position guards that.
    pub fn gemv(&self, c: &GemvCall) -> Result<()> {
        let d = &self.dims;
        let family = if c.tensor_cores {
            &self.gemv_tc
        } else {
            &self.gemv
        };
        let Some((tile, func)) = family.iter().find(|(t, _)| *t >= c.m) else {
            bail!("gemv: {} rows, the kernel takes at most 16", c.m);
        };
        if c.m == 0 || c.n == 0 || !c.n.is_multiple_of(2) || c.k == 0 || !c.k.is_multiple_of(8) {
            bail!(
                "gemv: m={} n={} k={}: needs m > 0, n even, k a multiple of 8",
                c.m,
                c.n,
                c.k
            );
        }
        if ![1, 2, 4, 8].contains(&c.ksplit) {
            bail!("gemv: ksplit {} is not 1, 2, 4 or 8", c.ksplit);
        }
        let smem = match (c.tensor_cores, c.norm) {
            (true, None | Some(Norm::Folded)) => gemv_tc_smem_bytes(*tile, c.k),
            (false, None) => gemv_smem_bytes(*tile, c.k, false),
            (false, Some(Norm::Weight(_))) => gemv_smem_bytes(*tile, c.k, true),
            (true, Some(Norm::Weight(_))) | (false, Some(Norm::Folded)) => bail!(
                "gemv: the tensor-core kernel takes the norm folded into its weights and the \
                 CUDA-core one the norm weight (weights::fold_norm, plan::fold_norms)"
            ),
        };
        if smem > gemv_smem_budget(d, *tile, c.tensor_cores) {
            bail!(
                "gemv: k={} exceeds the shared memory budget set at load",
                c.k
            );
        }
        if c.x_stride < c.k || !c.x_stride.is_multiple_of(8) {
            bail!("gemv: x stride {} for k={}", c.x_stride, c.k);
        }
        // The tensor-core kernel reads its weights in tiles (tiles.rs), padded to whole ones.
        let w_elems = if c.tensor_cores {
            tiled_len(c.n, c.k)
        } else {
            c.n * c.k
        };
        c.w.need("gemv weight", w_elems * 2, 16)?;
        if c.merge.is_none() {
            c.x.need("gemv x", ((c.m - 1) * c.x_stride + c.k) * 2, 16)?;
        }
        let mut a = GemvArgsC {
            w: c.w.ptr,
            x: c.x.ptr,
            eps: c.eps,
            n: i32_of("n", c.n)?,
            k: i32_of("k", c.k)?,
            m: i32_of("m", c.m)?,
            x_stride: i32_of("x_stride", c.x_stride)?,
            ksplit: c.ksplit as i32,
            ..Default::default()
        };
        match c.norm {
            Some(Norm::Weight(nw)) => {
                nw.need("norm weight", c.k * 2, 16)?;
                a.norm_w = nw.ptr;
            }
            Some(Norm::Folded) => a.folded_norm = 1,
            None => {}
        }
        if let Some(g) = c.merge {
            if c.k != d.q_rows() || c.norm.is_some() || g.rows_per_seq == 0 {
                bail!(
                    "gemv merge input: k={} must be heads x hd = {}, without a norm",
                    c.k,
                    d.q_rows()
                );
            }
            if g.splits == 0 || g.split_len == 0 {
                bail!("gemv merge input: {} splits of {}", g.splits, g.split_len);
            }
            g.part_o
                .need("merge partials", c.m * g.splits * d.q_rows() * 4, 16)?;
            g.part_ml
                .need("merge max/sum", c.m * g.splits * d.heads * 8, 8)?;
            g.pos.need("pos", 4, 4)?;
            a.merge = MergeInC {
                part_o: g.part_o.ptr,
                part_ml: g.part_ml.ptr,
                pos: g.pos.ptr,
                rows_per_seq: i32_of("rows_per_seq", g.rows_per_seq)?,
                splits: i32_of("splits", g.splits)?,
                split_len: i32_of("split_len", g.split_len)?,
                heads: d.heads as i32,
                hd: d.head_dim as i32,
            };
        }
        match c.out {
            GemvOut::F32 { out, stride } => {
                if stride < c.n {
                    bail!("gemv f32 out stride {stride} < n {}", c.n);
                }
                out.need("gemv out (f32)", ((c.m - 1) * stride + c.n) * 4, 8)?;
                (a.out, a.out_stride, a.mode) = (out.ptr, i32_of("stride", stride)?, 0);
            }
            GemvOut::Resid { out, stride } => {
                if stride < c.n || !stride.is_multiple_of(2) {
                    bail!("gemv residual stride {stride} for n {}", c.n);
                }
                out.need("gemv residual", ((c.m - 1) * stride + c.n) * 2, 4)?;
                (a.out, a.out_stride, a.mode) = (out.ptr, i32_of("stride", stride)?, 1);
            }
            GemvOut::Silu { out, stride } => {
                if stride < c.n / 2 {
                    bail!("gemv silu out stride {stride} < n/2 {}", c.n / 2);
                }
                out.need("gemv silu out", ((c.m - 1) * stride + c.n / 2) * 2, 2)?;
                (a.out, a.out_stride, a.mode) = (out.ptr, i32_of("stride", stride)?, 2);
            }
            GemvOut::Qkv(t) => {
                if c.n != d.qkv_rows() {
                    bail!(
                        "gemv qkv: n={} but the model has {} QKV rows",
                        c.n,
                        d.qkv_rows()
                    );
                }
                let seqs = (c.m - 1) / t.rows_per_seq + 1;
                a.qkv = self.qkv_c(&t, c.m, seqs)?;
                a.mode = 3;
            }
        }
        if c.resident_blocks == Some(0) {
            bail!("gemv: resident_blocks must be at least one block");
        }
        let (mut blocks, name) = if c.tensor_cores {
            (
                gemv_tc_grid(c.n, c.ksplit, c.resident_blocks),
                "decode_gemv_tc",
            )
        } else {
            (gemv_blocks(c.n, c.ksplit), "decode_gemv")
        };
        // The walking kernel where the cap binds (CUDA cores at ksplit 1); the plain one (one
        // block per 8 pairs, or the tensor-core grid above) else.
        let walk_cap = c
            .resident_blocks
            .filter(|_| !c.tensor_cores && c.ksplit == 1);
        let (func, name) = match walk_cap {
            Some(cap) if cap < blocks => {
                blocks = cap;
                let (_, f) = self
                    .gemv_walk
                    .iter()
                    .find(|(t, _)| t == tile)
                    .context("gemv: no walking kernel for this tile")?;
                (f, "decode_gemv_walk")
            }
            _ => (func, name),
        };
        let cfg = LaunchConfig {
            grid_dim: (blocks as u32, 1, 1),
            block_dim: (32 * GEMV_WARPS as u32, 1, 1),
            shared_mem_bytes: smem as u32,
        };
        // SAFETY: every buffer was checked above to hold what the kernel reads or writes for
        // these m, n, k, strides and mode; `func` is {name}_b{tile} with tile >= m, and its
        // shared-memory limit was raised at load for the widest k allowed above.
        unsafe { launch_gemv(&self.stream, func, cfg, a, self.pdl) }
            .with_context(|| format!("launching {name}_b{tile} n={} k={}", c.n, c.k))
    }

    /// Enqueues attention of m rows over the cache.
    pub fn attention(&self, c: &AttnCall) -> Result<()> {
        let d = &self.dims;
        if c.m == 0 || c.rows_per_seq == 0 || c.grid_ctx == 0 || c.grid_ctx > c.max_ctx {
            bail!(
                "attention: m={} rows_per_seq={} grid_ctx={} max_ctx={}",
                c.m,
                c.rows_per_seq,
                c.grid_ctx,
                c.max_ctx
            );
        }
        if c.split_len == 0
            || !c.split_len.is_multiple_of(ATTN_CHUNK)
            || c.split_len > ATTN_MAX_SPLIT
        {
            bail!(
                "attention: split_len {} must be a positive multiple of {ATTN_CHUNK} up to \
                 {ATTN_MAX_SPLIT}",
                c.split_len
            );
        }
        let max_w = attn_max_warps_per_head(d);
        if c.warps_per_head == 0 || c.warps_per_head > max_w {
            bail!(
                "attention: {} warps per query head; this model takes 1 to {max_w}",
                c.warps_per_head
            );
        }
        let splits = c.grid_ctx.div_ceil(c.split_len);
        let seqs = (c.m - 1) / c.rows_per_seq + 1;
        c.q.need("attention q", c.m * d.q_rows() * 4, 4)?;
        let cache = seqs * d.kv_heads * c.max_ctx * d.head_dim * 2;
        c.kc.need("attention K cache", cache, 16)?;
        c.vc.need("attention V cache", cache, 16)?;
        c.part_o
            .need("attention partials", c.m * splits * d.q_rows() * 4, 8)?;
        c.part_ml
            .need("attention max/sum", c.m * splits * d.heads * 8, 8)?;
        c.counters
            .need("attention counters", c.m * d.kv_heads * 4, 4)?;
        c.out.need("attention out", c.m * d.q_rows() * 2, 2)?;
        c.pos.need("pos", 4, 4)?;
        if c.merge == AttnMerge::Cluster && splits > ATTN_MAX_CLUSTER {
            bail!(
                "attention: {splits} splits of {} positions; a cluster merge takes at most \
                 {ATTN_MAX_CLUSTER} (longer splits, or AttnMerge::LastBlock)",
                c.split_len
            );
        }
        let a = AttnArgsC {
            q: c.q.ptr,
            kc: c.kc.ptr,
            vc: c.vc.ptr,
            part_o: c.part_o.ptr,
            part_ml: c.part_ml.ptr,
            counters: c.counters.ptr,
            out: c.out.ptr,
            pos: c.pos.ptr,
            rows_per_seq: i32_of("rows_per_seq", c.rows_per_seq)?,
            m: i32_of("m", c.m)?,
            heads: d.heads as i32,
            kv_heads: d.kv_heads as i32,
            hd: d.head_dim as i32,
            max_ctx: i32_of("max_ctx", c.max_ctx)?,
            splits: i32_of("splits", splits)?,
            split_len: i32_of("split_len", c.split_len)?,
            merge_in_block: match c.merge {
                AttnMerge::Partials => 0,
                AttnMerge::LastBlock => 1,
                AttnMerge::Cluster => 2,
            },
            cache_ready: i32::from(c.cache_ready),
            scale: 1.0 / (d.head_dim as f32).sqrt(),
        };
        if let Some(w) = c.tensor_core_warps {
            return self.attention_tc(c, a, w);
        }
        let cfg = LaunchConfig {
            grid_dim: (splits as u32, d.kv_heads as u32, c.m as u32),
            block_dim: (32 * (d.heads / d.kv_heads * c.warps_per_head) as u32, 1, 1),
            shared_mem_bytes: attn_smem_bytes(d, c.split_len, c.warps_per_head) as u32,
        };
        // SAFETY: sizes checked above for m rows, `splits` splits and the model's heads; the
        // counters are zero between launches (each launch's last block resets its own), and the
        // caller keeps the device position + rows_per_seq within max_ctx.
        let cluster = (c.merge == AttnMerge::Cluster).then_some(splits as u32);
        unsafe { launch_attn(&self.stream, &self.attn, cfg, a, self.pdl, cluster) }
            .with_context(|| format!("launching decode_attn m={} splits={splits}", c.m))
    }

    /// The tensor-core attention launch of `c` (checked by `attention`), in blocks of w warps.
    fn attention_tc(&self, c: &AttnCall, a: AttnArgsC, w: usize) -> Result<()> {
        let d = &self.dims;
        if !attn_tc_fits(d) {
            bail!(
                "attention on the tensor cores: head dim {} and {} query heads per kv head; it \
                 takes a head dim that is a multiple of 8 up to {ATTN_MAX_HEAD_DIM} and at most \
                 {ATTN_TC_MAX_GROUP} heads per kv head",
                d.head_dim,
                d.heads / d.kv_heads
            );
        }
        if w == 0 || w > ATTN_TC_MAX_WARPS {
            bail!("attention on the tensor cores: {w} warps per block; it takes 1 to {ATTN_TC_MAX_WARPS}");
        }
        if a.splits != 1 || c.merge == AttnMerge::Partials {
            bail!(
                "attention on the tensor cores: the whole context ({} positions) in one split of \
                 {} merged in the block, not {} splits with merge {:?}",
                c.grid_ctx,
                c.split_len,
                a.splits,
                c.merge
            );
        }
        let bound = attn_tc_head_dim_bound(d.head_dim);
        let func = &self
            .attn_tc
            .iter()
            .find(|(hd, _)| *hd == bound)
            .context("no decode_attn_tc kernel for this head dim")?
            .1;
        let cfg = LaunchConfig {
            grid_dim: (1, d.kv_heads as u32, c.m as u32),
            block_dim: (32 * w as u32, 1, 1),
            shared_mem_bytes: attn_tc_smem_bytes(d, c.split_len, w) as u32,
        };
        // SAFETY: sizes checked by `attention` for m rows, one split and the model's heads (the
        // tensor-core kernel writes only `out`); the caller keeps the device position +
        // rows_per_seq within max_ctx and the split covers every row's context.
        unsafe { launch_attn(&self.stream, func, cfg, a, self.pdl, None) }
            .with_context(|| format!("launching decode_attn_tc_d{bound} m={} warps={w}", c.m))
    }

    /// x[r] = table[tok[r]] for m rows.
    pub fn embed(&self, tok: Dev, table: Dev, x: Dev, m: usize) -> Result<()> {
        let d = &self.dims;
        tok.need("tokens", m * 4, 4)?;
        table.need("embedding table", d.vocab * d.hidden * 2, 16)?;
        x.need("embedding out", m * d.hidden * 2, 16)?;
        let cfg = LaunchConfig {
            grid_dim: (m as u32, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        let (mi, hi, vi) = (m as i32, d.hidden as i32, d.vocab as i32);
        let mut p = [
            arg(&tok.ptr),
            arg(&table.ptr),
            arg(&x.ptr),
            arg(&mi),
            arg(&hi),
            arg(&vi),
        ];
        // SAFETY: sizes checked above; the kernel bounds-checks each token against the vocabulary.
        unsafe { launch_raw(&self.stream, &self.embed, cfg, &mut p, self.pdl) }
            .context("launching decode_embed")
    }

    /// y[r] = RMSNorm(x[r]) * w for m rows of `hidden`.
    pub fn rmsnorm(&self, x: Dev, w: Dev, y: Dev, m: usize) -> Result<()> {
        let d = &self.dims;
        x.need("rmsnorm x", m * d.hidden * 2, 16)?;
        y.need("rmsnorm y", m * d.hidden * 2, 16)?;
        w.need("rmsnorm weight", d.hidden * 2, 16)?;
        let cfg = LaunchConfig {
            grid_dim: (m.div_ceil(8) as u32, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        let (mi, ki, eps) = (m as i32, d.hidden as i32, d.eps);
        let mut p = [
            arg(&x.ptr),
            arg(&w.ptr),
            arg(&y.ptr),
            arg(&mi),
            arg(&ki),
            arg(&eps),
        ];
        // SAFETY: m rows of `hidden` elements checked in x and y, `hidden` in w.
        unsafe { launch_raw(&self.stream, &self.rmsnorm, cfg, &mut p, self.pdl) }
            .context("launching decode_rmsnorm")
    }

    /// RoPE + cache stores of m projected rows (f32, fused QKV order).
    pub fn rope_cache(&self, qkv: Dev, t: &QkvTarget, m: usize) -> Result<()> {
        let d = &self.dims;
        let n = d.qkv_rows();
        qkv.need("projected qkv", m * n * 4, 8)?;
        let seqs = (m - 1) / t.rows_per_seq.max(1) + 1;
        let s = self.qkv_c(t, m, seqs)?;
        let cfg = LaunchConfig {
            grid_dim: ((n / 2).div_ceil(256) as u32, m as u32, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        let (mi, ni) = (m as i32, n as i32);
        let mut p = [arg(&qkv.ptr), arg(&s), arg(&mi), arg(&ni)];
        // SAFETY: qkv holds m rows of n f32; the target was checked by qkv_c for m rows.
        unsafe { launch_raw(&self.stream, &self.rope_cache, cfg, &mut p, self.pdl) }
            .context("launching decode_rope_cache")
    }

    /// h[r][i] = silu(gu[r][2i]) * gu[r][2i+1] for m rows.
    pub fn silu(&self, gu: Dev, h: Dev, m: usize) -> Result<()> {
        let i = self.dims.inter;
        gu.need("gate/up", m * 2 * i * 2, 4)?;
        h.need("silu out", m * i * 2, 2)?;
        let total = m * i;
        let cfg = LaunchConfig {
            grid_dim: (total.div_ceil(256).min(65_535) as u32, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        let (mi, ii) = (m as i32, i as i32);
        let mut p = [arg(&gu.ptr), arg(&h.ptr), arg(&mi), arg(&ii)];
        // SAFETY: gu holds m x 2i and h m x i halves (checked).
        unsafe { launch_raw(&self.stream, &self.silu, cfg, &mut p, self.pdl) }
            .context("launching decode_silu")
    }

    /// tok[r] = argmax(logits[r]) for m rows of `vocab` logits (and the same into `t.host`
    /// when given); then *pos += pos_inc.
    pub fn argmax(
        &self,
        logits: Dev,
        vocab: usize,
        t: &ArgmaxOut,
        m: usize,
        pos_inc: usize,
    ) -> Result<()> {
        if vocab == 0 {
            bail!("argmax over an empty vocabulary");
        }
        logits.need("logits", m * vocab * 4, 4)?;
        t.tok.need("tokens", m * 4, 4)?;
        t.key.need("argmax keys", m * 8, 8)?;
        t.count.need("argmax counts", m * 4, 4)?;
        t.pos.need("pos", 4, 4)?;
        let cfg = LaunchConfig {
            grid_dim: (argmax_blocks(vocab) as u32, m as u32, 1),
            block_dim: (ARGMAX_THREADS as u32, 1, 1),
            shared_mem_bytes: 0,
        };
        let (vi, inc) = (i32_of("vocab", vocab)?, i32_of("pos_inc", pos_inc)?);
        let host = t.host.unwrap_or(0);
        let mut p = [
            arg(&logits.ptr),
            arg(&vi),
            arg(&t.tok.ptr),
            arg(&host),
            arg(&t.key.ptr),
            arg(&t.count.ptr),
            arg(&t.pos.ptr),
            arg(&inc),
        ];
        // SAFETY: m rows of the vocabulary in logits, m tokens, keys and counts, one position
        // (checked); `host`, when set, is a device-mapped pinned buffer of at least m ints
        // (ArgmaxOut's contract).
        unsafe { launch_raw(&self.stream, &self.argmax, cfg, &mut p, self.pdl) }
            .context("launching decode_argmax")
    }
}

/// Raw launch of decode_gemv_b*.
///
/// # Safety
/// `a` must describe buffers that hold what the kernel touches for its m, n, k and mode, and
/// `cfg` must give the kernel its x tile, and the norm weight when it has one, in dynamic shared
/// memory (plan::gemv_smem_bytes, plan::gemv_tc_smem_bytes).
unsafe fn launch_gemv(
    stream: &Arc<CudaStream>,
    func: &CudaFunction,
    cfg: LaunchConfig,
    a: GemvArgsC,
    pdl: bool,
) -> Result<()> {
    // SAFETY: one by-value argument block, as the kernel's signature takes; see the contract.
    unsafe { launch_raw(stream, func, cfg, &mut [arg(&a)], pdl) }
}

/// Raw launch of decode_attn.
///
/// # Safety
/// `a` must describe buffers sized for its m rows, splits and heads, with zeroed counters.
unsafe fn launch_attn(
    stream: &Arc<CudaStream>,
    func: &CudaFunction,
    cfg: LaunchConfig,
    a: AttnArgsC,
    pdl: bool,
    cluster: Option<u32>,
) -> Result<()> {
    // SAFETY: one by-value argument block, as the kernel's signature takes; see the contract.
    unsafe { launch_raw_ex(stream, func, cfg, &mut [arg(&a)], pdl, cluster) }
}

/// cuLaunchKernelEx on `stream`, with programmatic stream serialization when `pdl`.
///
/// # Safety
/// As launch_raw_ex.
unsafe fn launch_raw(
    stream: &Arc<CudaStream>,
    func: &CudaFunction,
    cfg: LaunchConfig,
    params: &mut [*mut c_void],
    pdl: bool,
) -> Result<()> {
    // SAFETY: per this function's contract.
    unsafe { launch_raw_ex(stream, func, cfg, params, pdl, None) }
}

/// cuLaunchKernelEx on `stream`, with programmatic stream serialization when `pdl` and
/// thread-block clusters of `cluster` blocks along x when given (grid.x a multiple of it).
///
/// # Safety
/// `params` must point at values whose types and order match the kernel's parameters, alive
/// for the call; the kernel must only touch memory its arguments allow.
unsafe fn launch_raw_ex(
    stream: &Arc<CudaStream>,
    func: &CudaFunction,
    cfg: LaunchConfig,
    params: &mut [*mut c_void],
    pdl: bool,
    cluster: Option<u32>,
) -> Result<()> {
    stream
        .context()
        .bind_to_thread()
        .context("binding the CUDA context")?;
    // SAFETY: zeroed launch attributes are valid plain data; ids and values are set below.
    let mut attrs: [sys::CUlaunchAttribute; 2] = unsafe { std::mem::zeroed() };
    let mut n = 0;
    if pdl {
        attrs[n].id =
            sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
        attrs[n].value.programmaticStreamSerializationAllowed = 1;
        n += 1;
    }
    if let Some(x) = cluster {
        attrs[n].id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        attrs[n].value.clusterDim.x = x;
        attrs[n].value.clusterDim.y = 1;
        attrs[n].value.clusterDim.z = 1;
        n += 1;
    }
    let conf = sys::CUlaunchConfig {
        gridDimX: cfg.grid_dim.0,
        gridDimY: cfg.grid_dim.1,
        gridDimZ: cfg.grid_dim.2,
        blockDimX: cfg.block_dim.0,
        blockDimY: cfg.block_dim.1,
        blockDimZ: cfg.block_dim.2,
        sharedMemBytes: cfg.shared_mem_bytes,
        hStream: stream.cu_stream(),
        attrs: if n > 0 {
            attrs.as_mut_ptr()
        } else {
            std::ptr::null_mut()
        },
        numAttrs: n as u32,
    };
    // SAFETY: conf and attrs outlive the call; params per the contract.
    unsafe {
        sys::cuLaunchKernelEx(
            &conf,
            func.cu_function(),
            params.as_mut_ptr(),
            std::ptr::null_mut(),
        )
    }
    .result()
    .context("cuLaunchKernelEx")
}
