//! The opbench decode engine: weights in kernel layout, a static KV cache and every buffer
//! allocated up front, prefill through cuBLAS plus our kernels, and the decode step captured
//! once into one CUDA graph that reads its tokens and position from device memory.

use super::host_tokens::HostTokens;
use super::kernels::{
    ArgmaxOut, AttnCall, AttnMerge, DecodeKernels, Dev, GemvCall, GemvOut, MergeIn, Norm, QkvTarget,
};
use super::plan::{
    attn_cluster_merge, attn_max_warps_per_head, attn_smem_bytes, attn_split_len,
    attn_tc_smem_bytes, decode_attn_layout, decode_attn_warps, fold_norms, gemv_grid_cap,
    gemv_tensor_cores, gemv_tile, merge_in_o_proj, smem_carveout_pct, step_ksplits, BufferSizes,
    DecodeAttnLayout, Dims,
};
use super::tiles::tiled_unpadded;
use super::weights::{FastWeights, LayerMats};
use crate::gpu::Gpu;
use crate::llm::model::Model;
use anyhow::{bail, Context, Result};
use cudarc::cublas::{result::gemm_ex, sys as blas_sys, CudaBlas};
use cudarc::driver::{sys, CudaGraph, CudaSlice, CudaStream};
use half::f16;
use std::sync::Arc;

/// Kernel classes of the decode step, as the timing ablation names them.
pub const STEP_CLASSES: [&str; 7] = [
    "embed",
    "qkv",
    "attention",
    "o_proj",
    "gate_up",
    "down",
    "head",
];

/// The engine's buffers (element counts from [`BufferSizes`]).
struct Buffers {
    prompt_tok: CudaSlice<i32>,
    tok: CudaSlice<i32>,
    tok_host: HostTokens,
    argmax_key: CudaSlice<u64>,
    argmax_count: CudaSlice<u32>,
    pos: CudaSlice<i32>,
    resid: CudaSlice<f16>,
    xn: CudaSlice<f16>,
    qkv: CudaSlice<f32>,
    q: CudaSlice<f32>,
    attn: CudaSlice<f16>,
    gate_up: CudaSlice<f16>,
    h: CudaSlice<f16>,
    part_o: CudaSlice<f32>,
    part_ml: CudaSlice<f32>,
    counters: CudaSlice<u32>,
    logits: CudaSlice<f32>,
    kc: Vec<CudaSlice<f16>>,
    vc: Vec<CudaSlice<f16>>,
}

/// Views of the buffers, taken once (the slices live as long as the engine).
#[derive(Clone, Copy)]
struct Views {
    prompt_tok: Dev,
    tok: Dev,
    argmax: ArgmaxOut,
    pos: Dev,
    resid: Dev,
    xn: Dev,
    qkv: Dev,
    q: Dev,
    attn: Dev,
    gate_up: Dev,
    h: Dev,
    part_o: Dev,
    part_ml: Dev,
    counters: Dev,
    logits: Dev,
}

/// Per-layer weight views.
#[derive(Clone, Copy)]
struct LayerViews {
    ln1: Dev,
    ln2: Dev,
    /// Row-major matrices (prefill's cuBLAS).
    rows: LayerMats,
    /// The matrices as the decode step's products read them: tiles (tiles.rs) for the
    /// tensor-core kernel, the row-major ones for the CUDA-core kernel.
    step: LayerMats,
    kc: Dev,
    vc: Dev,
}

/// Launch choices of an engine (defaults: the rules in plan.rs, PDL on).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EngineOptions {
    /// Launch the captured step's kernels with programmatic dependent launch.
    pub pdl: bool,
    /// Warps per weight-row pair for qkv, o, gate/up, down, lm_head.
    pub ksplit: Option<[usize; 5]>,
    /// Positions per attention split in the decode step.
    pub attn_split: Option<usize>,
    /// Warps per query head in the decode step's attention blocks.
    pub attn_warps: Option<usize>,
    /// Warps per block of the decode step's attention on the tensor cores (None: the rule in
    /// plan::decode_attn_tc_warps; Some(0): the CUDA-core kernel).
    pub attn_tc_warps: Option<usize>,
    /// Preferred shared-memory carveout of every decode kernel, percent (None: the rule in
    /// plan::smem_carveout_pct).
    pub carveout: Option<i32>,
    /// Blocks per SM the products' grids are sized to: the CUDA-core walk's cap at ksplit 1,
    /// the blocks the tensor-core tiles are dealt round (None: plan::gemv_grid_cap's rule; 0:
    /// one block per 8 pairs of rows, or per 8 / ksplit tiles).
    pub gemv_blocks_per_sm: Option<usize>,
}

/// One engine per (model, batch, prompt length, context); see the module doc.
pub struct Engine {
    // Declared first so it is dropped before the buffers it points into.
    graph: Option<CudaGraph>,
    k: DecodeKernels,
    blas: CudaBlas,
    stream: Arc<CudaStream>,
    dims: Dims,
    pub batch: usize,
    pub prompt_len: usize,
    pub max_ctx: usize,
    /// The step's products run on the tensor cores (plan::gemv_tensor_cores).
    tc: bool,
    ksplit: [usize; 5],
    sm_count: usize,
    views: Views,
    layers: Vec<LayerViews>,
    embed: Dev,
    final_norm: Dev,
    /// Prefill's RMSNorm weight when the norm weights are folded into the matrices.
    ones: Dev,
    /// lm_head as the head's product reads it (tiles with the tensor-core kernel).
    lm_head: Dev,
    inv_freq: Dev,
    /// Host mirror of the device position: the next decode step writes this position.
    host_pos: usize,
    /// The captured step launches its kernels with programmatic dependent launch.
    pdl: bool,
    /// Positions per attention split of the decode step.
    decode_split_len: usize,
    /// Warps per query head of the decode step's attention blocks.
    decode_attn_warps: usize,
    /// Warps per tensor-core attention block of the decode step (None: the CUDA-core kernel).
    decode_attn_tc: Option<usize>,
    /// The decode kernels' preferred shared-memory carveout, percent (None: the driver's).
    carveout: Option<i32>,
    /// plan::gemv_grid_cap: the CUDA-core walk's cap, the tensor-core products' spread.
    gemv_cap: Option<usize>,
    _bufs: Buffers,
    _weights: FastWeights,
}

fn alloc<T: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits>(
    stream: &Arc<CudaStream>,
    n: usize,
    what: &str,
) -> Result<CudaSlice<T>> {
    stream
        .alloc_zeros::<T>(n.max(1))
        .with_context(|| format!("opbench: allocating {what} ({n} elements)"))
}

impl Engine {
    /// Lays out the weights, allocates everything and captures the decode step.
    pub fn new(
        gpu: &Gpu,
        model: &Model,
        batch: usize,
        prompt_len: usize,
        max_ctx: usize,
        opts: EngineOptions,
    ) -> Result<Engine> {
        let EngineOptions {
            pdl,
            ksplit,
            attn_split,
            attn_warps,
            attn_tc_warps,
            carveout,
            gemv_blocks_per_sm,
        } = opts;
        if gpu.cuda.is_event_tracking() {
            bail!(
                "opbench needs cudarc's event tracking off (--event-tracking off): a captured \
                 graph cannot record per-buffer events"
            );
        }
        let dims = Dims::from_arch(&model.arch)?;
        if gemv_tile(batch).is_none() || batch == 0 {
            bail!("skip: opbench decodes batches of 1 to 16 sequences, not {batch}");
        }
        if prompt_len == 0 || max_ctx < prompt_len {
            bail!("opbench: prompt {prompt_len} and context {max_ctx}");
        }
        let max_w = attn_max_warps_per_head(&dims);
        let decode_attn_warps = attn_warps.unwrap_or_else(|| decode_attn_warps(batch).min(max_w));
        if decode_attn_warps == 0 || decode_attn_warps > max_w {
            bail!(
                "--opbench-attn-warps {decode_attn_warps}: this model's attention blocks take 1 \
                 to {max_w} warps per query head"
            );
        }
        let stream = gpu.stream.clone();
        let k = DecodeKernels::load(gpu, dims)?;
        let DecodeAttnLayout {
            split_len,
            tc_warps: decode_attn_tc,
        } = decode_attn_layout(&dims, batch, max_ctx, attn_split, attn_tc_warps)?;
        let attn_bytes = match decode_attn_tc {
            Some(w) => attn_tc_smem_bytes(&dims, split_len, w),
            None => attn_smem_bytes(&dims, split_len, decode_attn_warps),
        };
        let carveout =
            carveout.or_else(|| smem_carveout_pct(&dims, batch, gpu.smem_per_sm, attn_bytes));
        k.set_carveout(carveout)?;
        let weights = FastWeights::build(model, &dims, &gpu.device, &stream, fold_norms(batch))?;
        let s = BufferSizes::new(&dims, batch, prompt_len, max_ctx);
        let bufs = Buffers {
            prompt_tok: alloc(&stream, s.rows, "prompt tokens")?,
            tok: alloc(&stream, batch, "tokens")?,
            tok_host: HostTokens::new(&gpu.ctx, batch)?,
            argmax_key: alloc(&stream, batch, "argmax keys")?,
            argmax_count: alloc(&stream, batch, "argmax counts")?,
            pos: alloc(&stream, 1, "position")?,
            resid: alloc(&stream, s.resid, "residual")?,
            xn: alloc(&stream, s.xn, "normalized x")?,
            qkv: alloc(&stream, s.qkv_f32, "qkv")?,
            q: alloc(&stream, s.q_f32, "q")?,
            attn: alloc(&stream, s.attn, "attention out")?,
            gate_up: alloc(&stream, s.gate_up, "gate/up")?,
            h: alloc(&stream, s.h, "mlp hidden")?,
            part_o: alloc(&stream, s.part_o_f32, "attention partials")?,
            part_ml: alloc(&stream, s.part_ml_f32, "attention max/sum")?,
            counters: alloc(&stream, s.counters, "attention counters")?,
            logits: alloc(&stream, s.logits_f32, "logits")?,
            kc: (0..dims.layers)
                .map(|_| alloc(&stream, s.cache_layer, "K cache"))
                .collect::<Result<_>>()?,
            vc: (0..dims.layers)
                .map(|_| alloc(&stream, s.cache_layer, "V cache"))
                .collect::<Result<_>>()?,
        };
        let v = |s: &CudaSlice<_>| Dev::of(s, &stream);
        let (tok, pos) = (Dev::of(&bufs.tok, &stream), Dev::of(&bufs.pos, &stream));
        let views = Views {
            prompt_tok: Dev::of(&bufs.prompt_tok, &stream),
            tok,
            argmax: ArgmaxOut {
                tok,
                host: Some(bufs.tok_host.device_ptr()),
                key: Dev::of(&bufs.argmax_key, &stream),
                count: Dev::of(&bufs.argmax_count, &stream),
                pos,
            },
            pos,
            resid: v(&bufs.resid),
            xn: v(&bufs.xn),
            qkv: Dev::of(&bufs.qkv, &stream),
            q: Dev::of(&bufs.q, &stream),
            attn: v(&bufs.attn),
            gate_up: v(&bufs.gate_up),
            h: v(&bufs.h),
            part_o: Dev::of(&bufs.part_o, &stream),
            part_ml: Dev::of(&bufs.part_ml, &stream),
            counters: Dev::of(&bufs.counters, &stream),
            logits: Dev::of(&bufs.logits, &stream),
        };
        let layers = weights
            .layers
            .iter()
            .enumerate()
            .map(|(l, w)| {
                let rows = LayerMats {
                    qkv: v(&w.qkv),
                    o: v(&w.o),
                    gate_up: v(&w.gate_up),
                    down: v(&w.down),
                };
                LayerViews {
                    ln1: v(&w.ln1),
                    ln2: v(&w.ln2),
                    rows,
                    step: w.tiles.unwrap_or(rows),
                    kc: v(&bufs.kc[l]),
                    vc: v(&bufs.vc[l]),
                }
            })
            .collect();
        let sm = gpu.sm_count;
        let tc = gemv_tensor_cores(batch);
        let ksplit = ksplit.unwrap_or(step_ksplits(&dims, sm, tc));
        let mut e = Engine {
            graph: None,
            embed: v(&weights.embed),
            final_norm: v(&weights.final_norm),
            ones: v(&weights.ones),
            lm_head: weights.lm_head_tiles.unwrap_or(v(&weights.lm_head)),
            inv_freq: Dev::of(&weights.inv_freq, &stream),
            k,
            blas: CudaBlas::new(stream.clone()).context("opbench: creating a cuBLAS handle")?,
            stream,
            dims,
            batch,
            prompt_len,
            max_ctx,
            tc,
            ksplit,
            sm_count: sm,
            views,
            layers,
            host_pos: 0,
            pdl,
            decode_split_len: split_len,
            carveout,
            gemv_cap: gemv_grid_cap(sm, gemv_blocks_per_sm),
            decode_attn_warps,
            decode_attn_tc,
            _bufs: bufs,
            _weights: weights,
        };
        e.stream
            .synchronize()
            .context("opbench: laying out the weights")?;
        e.capture(pdl)?;
        Ok(e)
    }

    pub fn dims(&self) -> &Dims {
        &self.dims
    }

    /// Weight bytes in kernel layout.
    pub fn weight_bytes(&self) -> usize {
        self._weights.bytes()
    }

    /// Whether the step's products run on the tensor cores.
    pub fn tensor_cores(&self) -> bool {
        self.tc
    }

    /// The ksplit chosen for qkv, o, gate/up, down and lm_head.
    pub fn ksplits(&self) -> [usize; 5] {
        self.ksplit
    }

    fn qkv_target(&self, l: usize, rows_per_seq: usize) -> QkvTarget {
        QkvTarget {
            q_out: self.views.q,
            kc: self.layers[l].kc,
            vc: self.layers[l].vc,
            inv_freq: self.inv_freq,
            pos: self.views.pos,
            rows_per_seq,
            max_ctx: self.max_ctx,
        }
    }

    fn attn_call(
        &self,
        l: usize,
        m: usize,
        rows_per_seq: usize,
        grid_ctx: usize,
        split_len: usize,
    ) -> AttnCall {
        AttnCall {
            q: self.views.q,
            kc: self.layers[l].kc,
            vc: self.layers[l].vc,
            part_o: self.views.part_o,
            part_ml: self.views.part_ml,
            counters: self.views.counters,
            out: self.views.attn,
            pos: self.views.pos,
            rows_per_seq,
            m,
            grid_ctx,
            split_len,
            max_ctx: self.max_ctx,
            merge: AttnMerge::LastBlock,
            cache_ready: false,
            warps_per_head: 1,
            tensor_core_warps: None,
        }
    }

    /// How the step's products apply the RMSNorm of weight `w`: folded into the weights for the
    /// tensor-core kernel, in shared memory for the CUDA-core one (plan::fold_norms; the
    /// ablation's swap of kernel families keeps the weights, so its outputs are meaningless
    /// there, as it says).
    fn norm(&self, w: Dev) -> Norm {
        if self.tc {
            Norm::Folded
        } else {
            Norm::Weight(w)
        }
    }

    /// Prefill's RMSNorm weight before a matrix: ones when the norm weight `w` is folded into it.
    fn prefill_norm(&self, w: Dev) -> Dev {
        if self._weights.folded {
            self.ones
        } else {
            w
        }
    }

    /// final norm + lm_head over m rows of x (stride apart), then argmax and pos += pos_inc.
    fn head(&self, x: Dev, stride: usize, pos_inc: usize) -> Result<()> {
        let d = &self.dims;
        self.k.gemv(&GemvCall {
            w: self.lm_head,
            merge: None,
            x,
            x_stride: stride,
            norm: Some(self.norm(self.final_norm)),
            eps: d.eps,
            n: d.vocab,
            k: d.hidden,
            m: self.batch,
            ksplit: self.ksplit[4],
            tensor_cores: self.tc,
            resident_blocks: self.gemv_cap,
            out: GemvOut::F32 {
                out: self.views.logits,
                stride: d.vocab,
            },
        })?;
        self.k.argmax(
            self.views.logits,
            d.vocab,
            &self.views.argmax,
            self.batch,
            pos_inc,
        )
    }

    /// Enqueues one decode step (what the graph holds): embed tok, every layer, head, argmax.
    /// `skip` names kernel classes to leave out (`STEP_CLASSES`; timing ablation only).
    fn enqueue_step(&self, skip: &[&str]) -> Result<()> {
        let (d, b, vw) = (&self.dims, self.batch, &self.views);
        let (h, i) = (d.hidden, d.inter);
        let on = |name: &str| !skip.contains(&name);
        if on("embed") {
            self.k.embed(vw.tok, self.embed, vw.resid, b)?;
        }
        for (l, lw) in self.layers.iter().enumerate() {
            if on("qkv") {
                self.k.gemv(&GemvCall {
                    w: lw.step.qkv,
                    x: vw.resid,
                    merge: None,
                    x_stride: h,
                    norm: Some(self.norm(lw.ln1)),
                    eps: d.eps,
                    n: d.qkv_rows(),
                    k: h,
                    m: b,
                    ksplit: self.ksplit[0],
                    tensor_cores: self.tc,
                    resident_blocks: self.gemv_cap,
                    out: GemvOut::Qkv(self.qkv_target(l, 1)),
                })?;
            }
            if on("attention") {
                // The splits merge in a cluster, or are left as partials for o_proj to merge
                // while it stages its input, or merge in the last block (decode_attn_merge).
                self.k.attention(&AttnCall {
                    merge: self.decode_attn_merge(),
                    cache_ready: true,
                    warps_per_head: self.decode_attn_warps,
                    tensor_core_warps: self.decode_attn_tc,
                    ..self.attn_call(l, b, 1, self.max_ctx, self.decode_split_len)
                })?;
            }
            if on("o_proj") {
                self.k.gemv(&GemvCall {
                    w: lw.step.o,
                    x: vw.attn,
                    merge: self.o_proj_merges().then_some(MergeIn {
                        part_o: vw.part_o,
                        part_ml: vw.part_ml,
                        pos: vw.pos,
                        rows_per_seq: 1,
                        splits: self.decode_splits(),
                        split_len: self.decode_split_len,
                    }),
                    x_stride: d.q_rows(),
                    norm: None,
                    eps: d.eps,
                    n: h,
                    k: d.q_rows(),
                    m: b,
                    ksplit: self.ksplit[1],
                    tensor_cores: self.tc,
                    resident_blocks: self.gemv_cap,
                    out: GemvOut::Resid {
                        out: vw.resid,
                        stride: h,
                    },
                })?;
            }
            if on("gate_up") {
                self.k.gemv(&GemvCall {
                    w: lw.step.gate_up,
                    x: vw.resid,
                    merge: None,
                    x_stride: h,
                    norm: Some(self.norm(lw.ln2)),
                    eps: d.eps,
                    n: 2 * i,
                    k: h,
                    m: b,
                    ksplit: self.ksplit[2],
                    tensor_cores: self.tc,
                    resident_blocks: self.gemv_cap,
                    out: GemvOut::Silu {
                        out: vw.h,
                        stride: i,
                    },
                })?;
            }
            if on("down") {
                self.k.gemv(&GemvCall {
                    w: lw.step.down,
                    x: vw.h,
                    merge: None,
                    x_stride: i,
                    norm: None,
                    eps: d.eps,
                    n: h,
                    k: i,
                    m: b,
                    ksplit: self.ksplit[3],
                    tensor_cores: self.tc,
                    resident_blocks: self.gemv_cap,
                    out: GemvOut::Resid {
                        out: vw.resid,
                        stride: h,
                    },
                })?;
            }
        }
        if on("head") {
            self.head(vw.resid, h, 1)?;
        }
        Ok(())
    }

    /// Captures the decode step into the graph; `pdl`: its kernels launch with programmatic
    /// stream serialization, so each may start (and fetch its weights) while its predecessor
    /// finishes.
    fn capture(&mut self, pdl: bool) -> Result<()> {
        self.pdl = pdl;
        self.graph = Some(self.capture_graph(&[])?);
        Ok(())
    }

    /// Captures and instantiates the decode step again (same kernels and options): `--trace`
    /// does it with CUPTI's activity recording on, so the graph's kernel nodes are traced.
    pub fn recapture(&mut self) -> Result<()> {
        self.capture(self.pdl)
    }

    fn capture_graph(&mut self, skip: &[&str]) -> Result<CudaGraph> {
        self.stream
            .begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
            .context("opbench: beginning the decode-step capture")?;
        self.k.set_pdl(self.pdl);
        let r = self.enqueue_step(skip);
        self.k.set_pdl(false);
        let g = self
            .stream
            .end_capture(sys::CUgraphInstantiate_flags(0))
            .context("opbench: ending the decode-step capture");
        r.context("opbench: enqueueing the decode step for capture")?;
        let g = g?.context("opbench: the captured decode step is empty")?;
        g.upload().context("opbench: uploading the decode graph")?;
        Ok(g)
    }

    /// Timing ablation: microseconds per replay of the whole step and of the step without
    /// each kernel class (`STEP_CLASSES`), each graph replayed back to back `reps` times from
    /// position prompt_len (outputs are meaningless; only the time is kept). The difference to
    /// the full step is what that class costs inside the graph, launch gaps included. The last
    /// entry, `products_on_tensor_cores` or `products_on_cuda_cores`, is the whole step with
    /// the other product kernels (the ksplit rule of that family): what the choice is worth;
    /// left out where that family would read past this engine's matrices (tiles.rs padding).
    pub fn ablation_us(&mut self, reps: usize) -> Result<Vec<(String, f64)>> {
        let reps = reps
            .min(self.max_ctx.saturating_sub(self.prompt_len + 1))
            .max(1);
        let mut out = Vec::new();
        let variants = std::iter::once("none").chain(STEP_CLASSES.iter().copied());
        for v in variants {
            let g = self.capture_graph(&[v])?;
            out.push((v.to_string(), self.replay_us(&g, reps)?));
        }
        // The other family reads this engine's matrices in its own layout: the same bytes
        // where the tiles hold no padding, else its loads would run past the row-major ones.
        if self.tc
            || self
                .dims
                .products()
                .iter()
                .all(|&(n, k)| tiled_unpadded(n, k))
        {
            let (tc, ks) = (self.tc, self.ksplit);
            self.tc = !tc;
            self.ksplit = step_ksplits(&self.dims, self.sm_count, self.tc);
            let g = self.capture_graph(&[]);
            (self.tc, self.ksplit) = (tc, ks);
            let name = if tc {
                "products_on_cuda_cores"
            } else {
                "products_on_tensor_cores"
            };
            out.push((name.to_string(), self.replay_us(&g?, reps)?));
        }
        self.stream
            .memcpy_htod(&[self.prompt_len as i32], &mut self._bufs.pos)?;
        self.host_pos = self.prompt_len;
        Ok(out)
    }

    /// Best of 3 rounds of `reps` back-to-back replays of `g` from position prompt_len, in
    /// microseconds per replay.
    fn replay_us(&mut self, g: &CudaGraph, reps: usize) -> Result<f64> {
        let pos = [self.prompt_len as i32];
        let mut best = f64::INFINITY;
        for _ in 0..3 {
            self.stream.memcpy_htod(&pos, &mut self._bufs.pos)?;
            self.stream.synchronize()?;
            let t = std::time::Instant::now();
            for _ in 0..reps {
                g.launch().context("opbench: ablation replay")?;
            }
            self.stream
                .synchronize()
                .context("opbench: ablation replay")?;
            best = best.min(t.elapsed().as_secs_f64() * 1e6 / reps as f64);
        }
        Ok(best)
    }

    /// Row-major y[m][n] = x[m][k] . w[n][k]^T (+ beta * y) on cuBLAS, f32 accumulation.
    #[allow(clippy::too_many_arguments)]
    fn gemm(
        &self,
        x: Dev,
        w: Dev,
        y: Dev,
        m: usize,
        n: usize,
        k: usize,
        y_f32: bool,
        beta: f32,
    ) -> Result<()> {
        let ysz = if y_f32 { 4 } else { 2 };
        if x.bytes < m * k * 2 || w.bytes < n * k * 2 || y.bytes < m * n * ysz {
            bail!("opbench prefill gemm m={m} n={n} k={k}: a buffer is too small");
        }
        let f16t = blas_sys::cudaDataType_t::CUDA_R_16F;
        let yt = if y_f32 {
            blas_sys::cudaDataType_t::CUDA_R_32F
        } else {
            f16t
        };
        let alpha = 1.0f32;
        // SAFETY: sizes checked above: w holds n x k, x m x k and y m x n elements; column-major
        // op(W)^T (n x k) times X^T (k x m) into Y^T (n x m, leading dimension n) touches only
        // those. alpha/beta are f32 as CUBLAS_COMPUTE_32F requires and outlive the call.
        unsafe {
            gemm_ex(
                *self.blas.handle(),
                blas_sys::cublasOperation_t::CUBLAS_OP_T,
                blas_sys::cublasOperation_t::CUBLAS_OP_N,
                n as i32,
                m as i32,
                k as i32,
                (&alpha) as *const f32 as *const _,
                w.ptr as *const _,
                f16t,
                k as i32,
                x.ptr as *const _,
                f16t,
                k as i32,
                (&beta) as *const f32 as *const _,
                y.ptr as *mut _,
                yt,
                n as i32,
                blas_sys::cublasComputeType_t::CUBLAS_COMPUTE_32F,
                blas_sys::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
            )
        }
        .with_context(|| format!("cublasGemmEx m={m} n={n} k={k}"))
    }

    /// Uploads the prompt (batch rows of prompt_len tokens), runs prefill, and leaves the first
    /// new tokens in the device token buffer (returned) and the position at prompt_len.
    pub fn prefill(&mut self, prompt: &[Vec<u32>]) -> Result<Vec<u32>> {
        self.enqueue_prefill(prompt)?;
        self.read_tokens()
    }

    fn enqueue_prefill(&mut self, prompt: &[Vec<u32>]) -> Result<()> {
        let (b, p) = (self.batch, self.prompt_len);
        if prompt.len() != b || prompt.iter().any(|r| r.len() != p) {
            bail!("opbench prefill: the engine takes {b} prompts of {p} tokens");
        }
        let ids: Vec<i32> = prompt.concat().iter().map(|&t| t as i32).collect();
        self.stream
            .memcpy_htod(&ids, &mut self._bufs.prompt_tok)
            .context("opbench: uploading the prompt")?;
        self.stream
            .memcpy_htod(&[0i32], &mut self._bufs.pos)
            .context("opbench: resetting the position")?;
        let (d, vw) = (self.dims, self.views);
        let (h, i, m) = (d.hidden, d.inter, b * p);
        self.k.embed(vw.prompt_tok, self.embed, vw.resid, m)?;
        for l in 0..d.layers {
            let lw = self.layers[l];
            self.k
                .rmsnorm(vw.resid, self.prefill_norm(lw.ln1), vw.xn, m)?;
            self.gemm(vw.xn, lw.rows.qkv, vw.qkv, m, d.qkv_rows(), h, true, 0.0)?;
            self.k.rope_cache(vw.qkv, &self.qkv_target(l, p), m)?;
            self.k
                .attention(&self.attn_call(l, m, p, p, attn_split_len(p)))?;
            self.gemm(vw.attn, lw.rows.o, vw.resid, m, h, d.q_rows(), false, 1.0)?;
            self.k
                .rmsnorm(vw.resid, self.prefill_norm(lw.ln2), vw.xn, m)?;
            self.gemm(vw.xn, lw.rows.gate_up, vw.gate_up, m, 2 * i, h, false, 0.0)?;
            self.k.silu(vw.gate_up, vw.h, m)?;
            self.gemm(vw.h, lw.rows.down, vw.resid, m, h, i, false, 1.0)?;
        }
        // The last prompt row of each sequence: rows p-1, 2p-1, ... (stride p x hidden).
        let last = vw
            .resid
            .sub((p - 1) * h * 2, vw.resid.bytes - (p - 1) * h * 2)?;
        self.head(last, p * h, p)?;
        self.host_pos = p;
        Ok(())
    }

    /// Replays the captured decode step and returns the new tokens (device -> host, synchronized).
    pub fn step(&mut self) -> Result<Vec<u32>> {
        self.launch_step()?;
        self.read_tokens()
    }

    /// Enqueues one decode step (graph replay) without waiting.
    pub fn launch_step(&mut self) -> Result<()> {
        if self.host_pos >= self.max_ctx {
            bail!(
                "opbench: position {} is past the cache ({} positions)",
                self.host_pos,
                self.max_ctx
            );
        }
        let g = self.graph.as_ref().context("opbench: no captured step")?;
        g.launch().context("opbench: launching the decode graph")?;
        self.host_pos += 1;
        Ok(())
    }

    /// The new tokens, after a synchronize: the argmax wrote them into mapped host memory.
    pub fn read_tokens(&self) -> Result<Vec<u32>> {
        self.stream.synchronize().context("opbench: step")?;
        Ok(self
            ._bufs
            .tok_host
            .read()
            .iter()
            .map(|&t| t as u32)
            .collect())
    }

    /// Overwrites the device tokens that the next step embeds (teacher forcing for parity).
    pub fn set_tokens(&mut self, t: &[u32]) -> Result<()> {
        if t.len() != self.batch {
            bail!("opbench: {} tokens for batch {}", t.len(), self.batch);
        }
        let v: Vec<i32> = t.iter().map(|&x| x as i32).collect();
        self.stream
            .memcpy_htod(&v, &mut self._bufs.tok)
            .context("opbench: writing tokens")
    }

    /// The last logits, [batch][vocab] f32 on the host.
    pub fn logits(&self) -> Result<Vec<f32>> {
        let v = self
            .stream
            .clone_dtoh(&self._bufs.logits)
            .context("opbench: reading logits")?;
        self.stream.synchronize()?;
        Ok(v)
    }

    /// The decode kernels' preferred shared-memory carveout, percent (None: the driver's).
    pub fn carveout(&self) -> Option<i32> {
        self.carveout
    }

    /// plan::gemv_grid_cap's blocks: the most a CUDA-core product at ksplit 1 launches, the
    /// fewest a tensor-core product deals its tiles round (None: neither).
    pub fn gemv_cap(&self) -> Option<usize> {
        self.gemv_cap
    }

    /// Attention splits of the captured step's grid.
    pub fn decode_splits(&self) -> usize {
        self.max_ctx.div_ceil(self.decode_split_len)
    }

    /// Warps per query head of the captured step's attention blocks.
    pub fn decode_attn_warps(&self) -> usize {
        self.decode_attn_warps
    }

    /// Warps per tensor-core attention block of the captured step (None: the CUDA-core kernel).
    pub fn decode_attn_tc_warps(&self) -> Option<usize> {
        self.decode_attn_tc
    }

    /// Whether the captured step's o_proj merges the attention splits while it stages its
    /// input (plan::merge_in_o_proj; with one split there is nothing to merge).
    fn o_proj_merges(&self) -> bool {
        self.decode_attn_merge() == AttnMerge::Partials
    }

    /// How the captured step's attention combines its splits (plan::attn_cluster_merge,
    /// plan::merge_in_o_proj).
    pub fn decode_attn_merge(&self) -> AttnMerge {
        let splits = self.decode_splits();
        if attn_cluster_merge(splits) {
            AttnMerge::Cluster
        } else if merge_in_o_proj(self.batch) && splits > 1 {
            AttnMerge::Partials
        } else {
            AttnMerge::LastBlock
        }
    }
}
