//! The model's weights laid out once for our kernels: per layer one fused QKV matrix (RoPE pair
//! row order), one fused gate/up matrix (interleaved rows), o_proj, down_proj and the two norm
//! weights; the embedding table, the final norm and lm_head. For the tensor-core products the
//! RMSNorm weights are also folded into the matrices that read normalized x (QKV and gate/up
//! take the layer's two norms, lm_head the final one: fold_norm, plan::fold_norms), and the
//! decode step reads those matrices in tiles (tiles.rs) while prefill's cuBLAS reads the same
//! values row by row, so each is kept in both layouts. Built on the device from the same
//! candle tensors the candle implementation runs.

use super::kernels::Dev;
use super::plan::{gate_up_row_order, qkv_row_order, Dims};
use super::tiles::arena_layout;
use crate::llm::model::Model;
use anyhow::{bail, Context, Result};
use candle_core::{DType, Device, Tensor};
use cudarc::driver::{CudaSlice, CudaStream};
use half::f16;
use std::collections::HashMap;
use std::sync::Arc;

/// One layer's weights in kernel layout.
pub struct LayerWeights {
    pub ln1: CudaSlice<f16>,
    /// Scaled by ln1 along k when folded.
    pub qkv: CudaSlice<f16>,
    pub o: CudaSlice<f16>,
    pub ln2: CudaSlice<f16>,
    /// Scaled by ln2 along k when folded.
    pub gate_up: CudaSlice<f16>,
    pub down: CudaSlice<f16>,
    /// The four matrices in the tensor-core products' tiled layout (with folded norms).
    pub tiles: Option<LayerMats>,
}

/// One layer's four matrices in one layout, as device views: the tiled ones (tiles.rs, views
/// into FastWeights' tile arena) for the decode step's tensor-core products, or the engine's
/// views of the row-major ones.
#[derive(Debug, Clone, Copy)]
pub struct LayerMats {
    pub qkv: Dev,
    pub o: Dev,
    pub gate_up: Dev,
    pub down: Dev,
}

/// All weights in kernel layout.
pub struct FastWeights {
    pub embed: CudaSlice<f16>,
    pub layers: Vec<LayerWeights>,
    pub final_norm: CudaSlice<f16>,
    /// Scaled by the final norm along k when folded (then a copy even when the model ties it
    /// to the embedding table).
    pub lm_head: CudaSlice<f16>,
    /// lm_head in the tiled layout, with the layers' tiles.
    pub lm_head_tiles: Option<Dev>,
    /// What the tiled views (the layers' `tiles`, lm_head_tiles) point into.
    pub tile_arena: Option<CudaSlice<f16>>,
    /// The norm weights are folded into qkv, gate_up and lm_head, and the matrices are also
    /// kept in tiles.
    pub folded: bool,
    /// `hidden` ones: the norm weight prefill's RMSNorm kernel takes when the matrices after
    /// it carry the real one.
    pub ones: CudaSlice<f16>,
    pub inv_freq: CudaSlice<f32>,
}

/// The model's tensors by Hugging Face name: the random ones it keeps, or re-read from its files.
fn tensor_map(model: &Model, dev: &Device) -> Result<HashMap<String, Tensor>> {
    if let Some(m) = &model.tensors {
        return Ok(m.clone());
    }
    if model.files.is_empty() {
        bail!("opbench: the model keeps neither its tensors nor its weight files");
    }
    // SAFETY: read-only memory map of files nobody writes meanwhile.
    let st = unsafe { candle_core::safetensors::MmapedSafetensors::multi(&model.files) }
        .context("opbench: memory-mapping the weight files")?;
    let mut out = HashMap::new();
    for (name, _) in model.arch.tensors() {
        let t = st
            .load(&name, dev)
            .with_context(|| format!("opbench: loading {name}"))?
            .to_dtype(model.dtype)?;
        out.insert(name, t);
    }
    Ok(out)
}

/// Copies a contiguous f16 candle tensor into a fresh slice on `stream`.
fn to_slice(t: &Tensor, stream: &Arc<CudaStream>, what: &str) -> Result<CudaSlice<f16>> {
    let t = t.contiguous()?;
    let n = t.elem_count();
    let mut dst = stream
        .alloc_zeros::<f16>(n)
        .with_context(|| format!("opbench: allocating {what} ({n} elements)"))?;
    let (storage, layout) = t.storage_and_layout();
    let candle_core::Storage::Cuda(cs) = &*storage else {
        bail!("opbench: {what} is not on the GPU");
    };
    let src = cs
        .as_cuda_slice::<f16>()
        .with_context(|| format!("opbench: {what} is not f16"))?;
    let off = layout.start_offset();
    let view = src.slice(off..off + n);
    stream
        .memcpy_dtod(&view, &mut dst)
        .with_context(|| format!("opbench: copying {what}"))?;
    Ok(dst)
}

/// The decode step's tiled matrices in one allocation, in step order (layer by layer: qkv,
/// o_proj, gate/up, down; then lm_head; tiles::arena_layout). One allocation instead of one
/// per matrix narrowed the H200's batch-16 spread between processes (docs/notes/decode.md).
struct TileArena {
    buf: CudaSlice<f16>,
    /// Each slot's [n][k] and element offset, in the order `put` fills them.
    slots: std::vec::IntoIter<((usize, usize), usize)>,
}

impl TileArena {
    /// The arena for every layer's four matrices and lm_head.
    fn new(dims: &Dims, stream: &Arc<CudaStream>) -> Result<TileArena> {
        let p = dims.products();
        let mut shapes: Vec<(usize, usize)> =
            (0..dims.layers).flat_map(|_| p[..4].to_vec()).collect();
        shapes.push(p[4]);
        let (offsets, halves) = arena_layout(&shapes);
        let buf = stream
            .alloc_zeros::<f16>(halves)
            .with_context(|| format!("opbench: allocating the tiled matrices ({halves} halves)"))?;
        Ok(TileArena {
            buf,
            slots: shapes
                .into_iter()
                .zip(offsets)
                .collect::<Vec<_>>()
                .into_iter(),
        })
    }

    /// Uploads the next matrix, a [n][k] f16 candle tensor, in the tiled layout (tiles.rs; the
    /// reordering runs on the host) and returns its view.
    fn put(&mut self, t: &Tensor, stream: &Arc<CudaStream>, what: &str) -> Result<Dev> {
        let (n, k) = t
            .dims2()
            .with_context(|| format!("opbench: {what} is not a matrix"))?;
        let host = t
            .flatten_all()?
            .to_vec1::<f16>()
            .with_context(|| format!("opbench: reading {what} back for its tiles"))?;
        let tiled = super::tiles::tile(&host, n, k);
        let len = tiled.len();
        let off = match self.slots.next() {
            Some((shape, off)) if shape == (n, k) => off,
            slot => bail!(
                "opbench: {what} is {n} x {k}, the tile arena's next slot is {:?}",
                slot.map(|(s, _)| s)
            ),
        };
        let mut view = self.buf.slice_mut(off..off + len);
        stream
            .memcpy_htod(&tiled, &mut view)
            .with_context(|| format!("opbench: uploading {what} in tiles"))?;
        Dev::of(&self.buf, stream).sub(off * 2, len * 2)
    }
}

fn get<'a>(m: &'a HashMap<String, Tensor>, name: &str) -> Result<&'a Tensor> {
    m.get(name)
        .with_context(|| format!("opbench: the model has no tensor {name}"))
}

/// `w` [rows][k] with the RMSNorm weight `g` [k] folded in along k: w[r][c] * g[c] in f32,
/// rounded once to f16. A product over RMS-normalized x then takes raw x and divides each
/// row's sums by its rms: W (g * x / rms) = (W diag(g)) x / rms.
pub fn fold_norm(w: &Tensor, g: &Tensor) -> Result<Tensor> {
    let g = g.to_dtype(DType::F32)?.unsqueeze(0)?;
    Ok(w.to_dtype(DType::F32)?
        .broadcast_mul(&g)?
        .to_dtype(DType::F16)?)
}

fn rows(t: &Tensor, order: &[u32], dev: &Device) -> Result<Tensor> {
    let idx = Tensor::new(order, dev)?;
    Ok(t.index_select(&idx, 0)?)
}

impl FastWeights {
    /// Lays out `model`'s weights (f16 only) on the GPU for our kernels; when `fold` (the
    /// tensor-core products, plan::fold_norms) the norm weights are folded into the matrices
    /// after them and the matrices are also kept in tiles.
    pub fn build(
        model: &Model,
        dims: &Dims,
        dev: &Device,
        stream: &Arc<CudaStream>,
        fold: bool,
    ) -> Result<FastWeights> {
        if model.dtype != DType::F16 {
            bail!(
                "opbench runs f16 weights; this model is {:?} (pass --dtype f16)",
                model.dtype
            );
        }
        let m = tensor_map(model, dev)?;
        let qkv_order = qkv_row_order(dims);
        let gu_order = gate_up_row_order(dims);
        let mut layers = Vec::with_capacity(dims.layers);
        let mut arena = if fold {
            Some(TileArena::new(dims, stream)?)
        } else {
            None
        };
        for l in 0..dims.layers {
            let p = |s: &str| format!("model.layers.{l}.{s}");
            let qkv = Tensor::cat(
                &[
                    get(&m, &p("self_attn.q_proj.weight"))?,
                    get(&m, &p("self_attn.k_proj.weight"))?,
                    get(&m, &p("self_attn.v_proj.weight"))?,
                ],
                0,
            )?;
            let gu = Tensor::cat(
                &[
                    get(&m, &p("mlp.gate_proj.weight"))?,
                    get(&m, &p("mlp.up_proj.weight"))?,
                ],
                0,
            )?;
            let (ln1, ln2) = (
                get(&m, &p("input_layernorm.weight"))?,
                get(&m, &p("post_attention_layernorm.weight"))?,
            );
            let (qkv, gu) = if fold {
                (fold_norm(&qkv, ln1)?, fold_norm(&gu, ln2)?)
            } else {
                (qkv, gu)
            };
            let (qkv, gu) = (rows(&qkv, &qkv_order, dev)?, rows(&gu, &gu_order, dev)?);
            let (o, down) = (
                get(&m, &p("self_attn.o_proj.weight"))?,
                get(&m, &p("mlp.down_proj.weight"))?,
            );
            let tiles = match arena.as_mut() {
                Some(s) => Some(LayerMats {
                    qkv: s.put(&qkv, stream, "qkv")?,
                    o: s.put(o, stream, "o_proj")?,
                    gate_up: s.put(&gu, stream, "gate_up")?,
                    down: s.put(down, stream, "down_proj")?,
                }),
                None => None,
            };
            layers.push(LayerWeights {
                ln1: to_slice(ln1, stream, "ln1")?,
                qkv: to_slice(&qkv, stream, "qkv")?,
                o: to_slice(o, stream, "o_proj")?,
                ln2: to_slice(ln2, stream, "ln2")?,
                gate_up: to_slice(&gu, stream, "gate_up")?,
                down: to_slice(down, stream, "down_proj")?,
                tiles,
            });
        }
        let embed = get(&m, "model.embed_tokens.weight")?;
        let lm_head = if model.arch.tie_word_embeddings {
            embed
        } else {
            get(&m, "lm_head.weight")?
        };
        let final_norm = get(&m, "model.norm.weight")?;
        let lm_head = if fold {
            fold_norm(lm_head, final_norm)?
        } else {
            lm_head.clone()
        };
        let inv = super::plan::inv_freq(dims);
        Ok(FastWeights {
            embed: to_slice(embed, stream, "embed_tokens")?,
            layers,
            final_norm: to_slice(final_norm, stream, "model.norm")?,
            lm_head: to_slice(&lm_head, stream, "lm_head")?,
            lm_head_tiles: match arena.as_mut() {
                Some(s) => Some(s.put(&lm_head, stream, "lm_head")?),
                None => None,
            },
            tile_arena: arena.map(|a| a.buf),
            folded: fold,
            ones: stream
                .clone_htod(&vec![f16::ONE; dims.hidden])
                .context("opbench: uploading the prefill norm weight")?,
            inv_freq: stream
                .clone_htod(&inv)
                .context("opbench: uploading RoPE frequencies")?,
        })
    }

    /// Bytes of the weights in kernel layout.
    pub fn bytes(&self) -> usize {
        let l: usize = self
            .layers
            .iter()
            .map(|l| {
                l.ln1.num_bytes()
                    + l.qkv.num_bytes()
                    + l.o.num_bytes()
                    + l.ln2.num_bytes()
                    + l.gate_up.num_bytes()
                    + l.down.num_bytes()
                    + l.tiles.as_ref().map_or(0, |t| {
                        t.qkv.bytes + t.o.bytes + t.gate_up.bytes + t.down.bytes
                    })
            })
            .sum();
        l + self.embed.num_bytes()
            + self.final_norm.num_bytes()
            + self.lm_head.num_bytes()
            + self.lm_head_tiles.as_ref().map_or(0, |t| t.bytes)
    }
}
