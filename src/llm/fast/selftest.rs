//! GPU self-test of every decode kernel against a float64 CPU reference, at awkward sizes
//! (head_dim 40, 3 query heads per kv head, k = 240 / 664, vocabulary 1002, batch 1/3/5/16,
//! contexts that end mid-chunk), with outputs poisoned (NaN) before each launch. The QKV and
//! gate/up references use the unfused weights, so the fused row orders are tested too.

use super::host_tokens::HostTokens;
use super::kernels::{
    ArgmaxOut, AttnCall, AttnMerge, DecodeKernels, Dev, GemvCall, GemvOut, MergeIn, Norm, QkvTarget,
};
use super::plan::{
    argmax_blocks, attn_max_warps_per_head, attn_split_len, gate_up_row_order, inv_freq,
    qkv_row_order, Dims, ARGMAX_PER_THREAD, ARGMAX_THREADS,
};
use super::tiles::tile;
use super::weights::fold_norm;
use crate::gpu::Gpu;
use anyhow::{Context, Result};
use cudarc::driver::{CudaSlice, DeviceRepr};
use half::f16;
use rand::{Rng, SeedableRng};

/// One kernel check.
#[derive(Debug, Clone)]
pub struct Check {
    pub name: String,
    pub rel_l2: f64,
    pub max_abs: f64,
    pub tolerance: f64,
}

impl Check {
    pub fn passed(&self) -> bool {
        self.rel_l2.is_finite() && self.rel_l2 < self.tolerance
    }
}

fn dims() -> Dims {
    Dims {
        hidden: 240,
        inter: 664,
        layers: 1,
        heads: 6,
        kv_heads: 2,
        head_dim: 40,
        vocab: 1002,
        eps: 1e-5,
        rope_theta: 10_000.0,
    }
}

struct Ctx<'a> {
    gpu: &'a Gpu,
    rng: rand::rngs::StdRng,
}

impl Ctx<'_> {
    fn randn(&mut self, n: usize, std: f64) -> Vec<f64> {
        (0..n)
            .map(|_| {
                // Sum of uniforms: close enough to normal for test data, and never zero-heavy.
                let u: f64 = (0..4).map(|_| self.rng.random::<f64>() - 0.5).sum();
                u * std * 1.7
            })
            .collect()
    }
    /// Random f16 values: their f64 copy and their upload.
    fn rand16(&mut self, n: usize, std: f64) -> Result<(Vec<f64>, CudaSlice<f16>)> {
        let v = self.randn(n, std);
        self.up16(&v)
    }
    /// `w` [rows][k] with the norm weight `g` folded in (weights::fold_norm, the engine's own
    /// fold, on the CPU), in tiles (tiles.rs), uploaded: what the tensor-core kernel takes to
    /// RMS-normalize x.
    fn folded_tiles(&self, w: &[f64], g: &[f64]) -> Result<CudaSlice<f16>> {
        let cpu = &candle_core::Device::Cpu;
        let k = g.len();
        let t = |v: &[f64], shape: &[usize]| {
            candle_core::Tensor::from_vec(
                v.iter().map(|&x| f16::from_f64(x)).collect::<Vec<_>>(),
                shape,
                cpu,
            )
        };
        let f = fold_norm(&t(w, &[w.len() / k, k])?, &t(g, &[k])?)?;
        let host = f.flatten_all()?.to_vec1::<f16>()?;
        Ok(self.gpu.stream.clone_htod(&tile(&host, w.len() / k, k))?)
    }
    /// `w` [n][k] (values f16 holds exactly) in tiles (tiles.rs), uploaded: the tensor-core
    /// kernel's copy of a matrix without a norm.
    fn tiles16(&self, w: &[f64], k: usize) -> Result<CudaSlice<f16>> {
        let h: Vec<f16> = w.iter().map(|&x| f16::from_f64(x)).collect();
        Ok(self.gpu.stream.clone_htod(&tile(&h, w.len() / k, k))?)
    }
    /// f16-rounded values (what the device sees) and their upload.
    fn up16(&mut self, v: &[f64]) -> Result<(Vec<f64>, CudaSlice<f16>)> {
        let h: Vec<f16> = v.iter().map(|&x| f16::from_f64(x)).collect();
        let back = h.iter().map(|x| x.to_f64()).collect();
        Ok((back, self.gpu.stream.clone_htod(&h)?))
    }
    fn poisoned<T: DeviceRepr + cudarc::driver::ValidAsZeroBits>(
        &self,
        n: usize,
    ) -> Result<CudaSlice<T>> {
        let mut s = self.gpu.stream.alloc_zeros::<T>(n)?;
        self.gpu.poison(&mut s)?;
        Ok(s)
    }
    fn poison_view(&self, v: Dev) -> Result<()> {
        // SAFETY: v views a live allocation of v.bytes bytes that this test owns; stream order.
        unsafe {
            cudarc::driver::result::memset_d8_async(
                v.ptr,
                0xFF,
                v.bytes,
                self.gpu.stream.cu_stream(),
            )
        }?;
        Ok(())
    }
    fn dev<T>(&self, s: &CudaSlice<T>) -> Dev {
        Dev::of(s, &self.gpu.stream)
    }
    fn down16(&self, s: &CudaSlice<f16>) -> Result<Vec<f64>> {
        Ok(self
            .gpu
            .stream
            .clone_dtoh(s)?
            .iter()
            .map(|x| x.to_f64())
            .collect())
    }
    fn down32(&self, s: &CudaSlice<f32>) -> Result<Vec<f64>> {
        Ok(self
            .gpu
            .stream
            .clone_dtoh(s)?
            .iter()
            .map(|&x| x as f64)
            .collect())
    }
}

/// The product kernel family a check ran.
fn kname(tensor_cores: bool) -> &'static str {
    if tensor_cores {
        "gemv_tc"
    } else {
        "gemv"
    }
}

fn check(name: String, got: &[f64], want: &[f64], tolerance: f64) -> Check {
    let (mut num, mut den, mut max_abs) = (0f64, 0f64, 0f64);
    for (g, w) in got.iter().zip(want) {
        let d = g - w;
        num += d * d;
        den += w * w;
        max_abs = max_abs.max(if d.is_finite() {
            d.abs()
        } else {
            f64::INFINITY
        });
    }
    let rel = if got.len() != want.len() || !num.is_finite() {
        f64::INFINITY
    } else {
        (num / den.max(1e-300)).sqrt()
    };
    Check {
        name,
        rel_l2: rel,
        max_abs,
        tolerance,
    }
}

fn rmsnorm_ref(x: &[f64], w: &[f64], eps: f64) -> Vec<f64> {
    let ms = x.iter().map(|v| v * v).sum::<f64>() / x.len() as f64;
    let inv = 1.0 / (ms + eps).sqrt();
    x.iter().zip(w).map(|(v, g)| v * inv * g).collect()
}

fn matvec(w: &[f64], x: &[f64], n: usize, k: usize) -> Vec<f64> {
    (0..n)
        .map(|i| (0..k).map(|j| w[i * k + j] * x[j]).sum())
        .collect()
}

fn permute(w: &[f64], order: &[u32], k: usize) -> Vec<f64> {
    order
        .iter()
        .flat_map(|&r| w[r as usize * k..(r as usize + 1) * k].to_vec())
        .collect()
}

fn rope(v: &mut [f64], pos: usize, d: &Dims) {
    let hd = d.head_dim;
    let f = inv_freq(d);
    for i in 0..hd / 2 {
        let a = pos as f64 * f[i] as f64;
        let (s, c) = a.sin_cos();
        let (x0, x1) = (v[i], v[i + hd / 2]);
        v[i] = x0 * c - x1 * s;
        v[i + hd / 2] = x1 * c + x0 * s;
    }
}

/// K and V caches (f64 copies of what the device holds) for the attention reference.
struct CacheView<'a> {
    kc: &'a [f64],
    vc: &'a [f64],
    max_ctx: usize,
}

/// Attention in f64 of `rows` query rows over the cache: row r is sequence r / rows_per_seq
/// at position pos0 + r % rows_per_seq and sees positions 0..=its own.
fn attn_ref(
    d: &Dims,
    cache: &CacheView,
    rows: usize,
    rows_per_seq: usize,
    pos0: usize,
    q: &[f64],
) -> Vec<f64> {
    let (hd, gsz) = (d.head_dim, d.heads / d.kv_heads);
    let mut o = Vec::new();
    for r in 0..rows {
        let (seq, pos) = (r / rows_per_seq, pos0 + r % rows_per_seq);
        for hh in 0..d.heads {
            let qv = &q[(r * d.heads + hh) * hd..(r * d.heads + hh + 1) * hd];
            let base = (seq * d.kv_heads + hh / gsz) * cache.max_ctx;
            let s: Vec<f64> = (0..=pos)
                .map(|j| {
                    let kr = &cache.kc[(base + j) * hd..(base + j + 1) * hd];
                    qv.iter().zip(kr).map(|(a, b)| a * b).sum::<f64>() / (hd as f64).sqrt()
                })
                .collect();
            let mx = s.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let p: Vec<f64> = s.iter().map(|v| (v - mx).exp()).collect();
            let sum: f64 = p.iter().sum();
            for dd in 0..hd {
                o.push(
                    (0..=pos)
                        .map(|j| p[j] * cache.vc[(base + j) * hd + dd])
                        .sum::<f64>()
                        / sum,
                );
            }
        }
    }
    o
}

/// A decode attention over caches of its own: `m` rows, each its own sequence, random K and V
/// caches of `max_ctx` positions (their f64 copies for the reference), and poisoned outputs
/// for up to `splits` splits; each `check` runs one launch on a fresh query.
struct LoneAttn {
    kc: Vec<f64>,
    vc: Vec<f64>,
    kc_d: CudaSlice<f16>,
    vc_d: CudaSlice<f16>,
    part_o: CudaSlice<f32>,
    part_ml: CudaSlice<f32>,
    counters: CudaSlice<u32>,
    out: CudaSlice<f16>,
    m: usize,
    max_ctx: usize,
}

impl LoneAttn {
    fn new(c: &mut Ctx, d: &Dims, m: usize, max_ctx: usize, splits: usize) -> Result<Self> {
        let (kc, kc_d) = c.rand16(m * d.kv_heads * max_ctx * d.head_dim, 1.0)?;
        let (vc, vc_d) = c.rand16(m * d.kv_heads * max_ctx * d.head_dim, 1.0)?;
        Ok(LoneAttn {
            kc,
            vc,
            kc_d,
            vc_d,
            part_o: c.poisoned::<f32>(m * splits * d.q_rows())?,
            part_ml: c.poisoned::<f32>(m * splits * d.heads * 2)?,
            counters: c.gpu.stream.alloc_zeros::<u32>(m * d.kv_heads)?,
            out: c.poisoned::<f16>(m * d.q_rows())?,
            m,
            max_ctx,
        })
    }

    /// Every row's attention at position `pos` of a random f32 query (std `q_std`), launched as
    /// decode does (cached rows staged before the wait, the last block merging the splits, or
    /// the tensor-core kernel in blocks of `tc_warps`), against the float64 reference.
    #[allow(clippy::too_many_arguments)]
    fn check(
        &self,
        c: &mut Ctx,
        k: &DecodeKernels,
        d: &Dims,
        pos: usize,
        q_std: f64,
        split_len: usize,
        tc_warps: Option<usize>,
        name: String,
    ) -> Result<Check> {
        let q32: Vec<f32> = c
            .randn(self.m * d.q_rows(), q_std)
            .iter()
            .map(|&v| v as f32)
            .collect();
        let q_d = c.gpu.stream.clone_htod(&q32)?;
        let q: Vec<f64> = q32.iter().map(|&v| v as f64).collect();
        let pos_d = c.gpu.stream.clone_htod(&[pos as i32])?;
        c.poison_view(c.dev(&self.out))?;
        k.attention(&AttnCall {
            q: c.dev(&q_d),
            kc: c.dev(&self.kc_d),
            vc: c.dev(&self.vc_d),
            part_o: c.dev(&self.part_o),
            part_ml: c.dev(&self.part_ml),
            counters: c.dev(&self.counters),
            out: c.dev(&self.out),
            pos: c.dev(&pos_d),
            rows_per_seq: 1,
            m: self.m,
            grid_ctx: self.max_ctx,
            split_len,
            max_ctx: self.max_ctx,
            merge: AttnMerge::LastBlock,
            cache_ready: true,
            warps_per_head: 1,
            tensor_core_warps: tc_warps,
        })?;
        let cache = CacheView {
            kc: &self.kc,
            vc: &self.vc,
            max_ctx: self.max_ctx,
        };
        Ok(check(
            name,
            &c.down16(&self.out)?,
            &attn_ref(d, &cache, self.m, 1, pos, &q),
            3e-3,
        ))
    }
}

/// The reference argmax: the lowest index among equal maxima, NaN skipped, 0 for a row with
/// no number.
fn argmax_ref(row: &[f32]) -> i32 {
    let mut best: Option<(f32, usize)> = None;
    for (j, &v) in row.iter().enumerate() {
        if !v.is_nan() && best.is_none_or(|(b, _)| v > b) {
            best = Some((v, j));
        }
    }
    best.map_or(0, |(_, j)| j as i32)
}

/// The argmax launched twice on the same scratch (which each launch must leave zeroed): rows
/// with a maximum in the last, partial block, ties within a block and across blocks, a row of
/// -inf, a row of NaN with one number; the tokens in device and mapped host memory, and the
/// position 5 -> 8 -> 11. The vocabulary is TinyLlama's plus a partial block.
fn argmax_checks(c: &mut Ctx, k: &DecodeKernels) -> Result<Vec<Check>> {
    let (m, v) = (5, 32_000 + 1_001);
    let tok_d = c.poisoned::<i32>(m)?;
    let host = HostTokens::new(&c.gpu.ctx, m)?;
    let key_d = c.gpu.stream.alloc_zeros::<u64>(m)?;
    let count_d = c.gpu.stream.alloc_zeros::<u32>(m)?;
    let pos_d = c.gpu.stream.clone_htod(&[5i32])?;
    let out = ArgmaxOut {
        tok: c.dev(&tok_d),
        host: Some(host.device_ptr()),
        key: c.dev(&key_d),
        count: c.dev(&count_d),
        pos: c.dev(&pos_d),
    };
    let mut checks = Vec::new();
    for (round, want_pos) in [(0, 8), (1, 11)] {
        let mut lg: Vec<f32> = c.randn(m * v, 1.0).iter().map(|&x| x as f32).collect();
        let last_block = (argmax_blocks(v) - 1) * ARGMAX_THREADS * ARGMAX_PER_THREAD;
        lg[v - 1 - round] = 9.0;
        lg[v + 700 + round] = 9.0;
        lg[v + 900] = 9.0; // tie in a block: the lower index wins
        lg[2 * v + 3 + round] = 9.0;
        lg[2 * v + last_block] = 9.0; // tie across blocks
        lg[3 * v..4 * v].fill(f32::NEG_INFINITY);
        lg[4 * v..5 * v].fill(f32::NAN);
        lg[4 * v + last_block + round] = -3.0;
        let lg_d = c.gpu.stream.clone_htod(&lg)?;
        k.argmax(c.dev(&lg_d), v, &out, m, 3)?;
        c.gpu.stream.synchronize()?;
        let got_t = c.gpu.stream.clone_dtoh(&tok_d)?;
        let got_h = host.read();
        let got_p = c.gpu.stream.clone_dtoh(&pos_d)?;
        let zeroed = c.gpu.stream.clone_dtoh(&key_d)?.iter().all(|&x| x == 0)
            && c.gpu.stream.clone_dtoh(&count_d)?.iter().all(|&x| x == 0);
        let want_t: Vec<i32> = lg.chunks(v).map(argmax_ref).collect();
        let ok = got_t == want_t && got_h == want_t && got_p == [want_pos] && zeroed;
        checks.push(Check {
            name: format!(
                "argmax rows={m} vocab={v} launch {} (host copy, position -> {want_pos}, \
                 scratch reset)",
                round + 1
            ),
            rel_l2: if ok { 0.0 } else { f64::INFINITY },
            max_abs: 0.0,
            tolerance: 0.5,
        });
    }
    Ok(checks)
}

/// Decode attention over a long context whose splits outnumber a warp's lanes (1,100
/// positions in 35 splits of 32), merged by the last block in two rounds of 32 splits.
fn long_context_merge(c: &mut Ctx, k: &DecodeKernels, d: &Dims) -> Result<Check> {
    let (max_ctx, pos, split_len) = (1100usize, 1099usize, 32usize);
    let splits = max_ctx.div_ceil(split_len);
    let lone = LoneAttn::new(c, d, 1, max_ctx, splits)?;
    let name = format!(
        "attention decode ctx={} splits={splits}: merge in two rounds",
        pos + 1
    );
    lone.check(c, k, d, pos, 1.0, split_len, None, name)
}

/// The tensor-core attention at head shapes the self-test's dims do not reach: TinyLlama's (64
/// dims, 8 query heads per kv head) over a full context of 256, a first position and one past
/// a multiple of 16; the 128-dim kernel with 16 query heads per kv head (the mma's every row);
/// 72 dims (the 128-dim kernel, a last k step half in the pad). Two rows, each its own sequence.
fn attn_tc_shapes(c: &mut Ctx, gpu: &Gpu) -> Result<Vec<Check>> {
    let (m, max_ctx) = (2usize, 256usize);
    let mut out = Vec::new();
    for (hd, heads, kv_heads, ctxs, warps) in [
        (64usize, 32usize, 4usize, &[256usize, 1, 129][..], 8usize),
        (128, 16, 1, &[200][..], 8),
        (72, 12, 4, &[33][..], 4),
    ] {
        let d = Dims {
            hidden: 256,
            inter: 512,
            layers: 1,
            heads,
            kv_heads,
            head_dim: hd,
            vocab: 64,
            eps: 1e-5,
            rope_theta: 10_000.0,
        };
        let k = DecodeKernels::load(gpu, d).context("self-test: decode kernels for other heads")?;
        let lone = LoneAttn::new(c, &d, m, max_ctx, 1)?;
        for &ctx in ctxs {
            let name = format!(
                "attention on the tensor cores hd={hd} heads={heads}/{kv_heads} m={m} ctx={ctx} \
                 warps={warps}"
            );
            let split_len = attn_split_len(max_ctx);
            out.push(lone.check(c, &k, &d, ctx - 1, 2.0, split_len, Some(warps), name)?);
        }
    }
    Ok(out)
}

/// Runs every check; the caller prints them and fails on any that did not pass.
pub fn run(gpu: &Gpu) -> Result<Vec<Check>> {
    let d = dims();
    let k = DecodeKernels::load(gpu, d).context("self-test: loading the decode kernels")?;
    let mut c = Ctx {
        gpu,
        rng: rand::rngs::StdRng::seed_from_u64(0x5e1f),
    };
    let mut out = Vec::new();
    let (h, i) = (d.hidden, d.inter);

    // lm_head shape: f32 out with the norm fused (the tensor-core kernel with its weight folded
    // into w), every batch tile and ksplit.
    let (w, w_d) = c.rand16(d.vocab * h, 0.05)?;
    let gv: Vec<f64> = c.randn(h, 0.3).iter().map(|v| 1.0 + v).collect();
    let (g, g_d) = c.up16(&gv)?;
    let wg_d = c.folded_tiles(&w, &g)?;
    // The CUDA-core kernel scales x by the norm weight; the tensor-core one takes it folded.
    let norm = |tc: bool| {
        if tc {
            Norm::Folded
        } else {
            Norm::Weight(Dev::of(&g_d, &c.gpu.stream))
        }
    };
    for (tc, m) in [
        (false, 1usize),
        (false, 3),
        (false, 16),
        (true, 1),
        (true, 9),
        (true, 16),
    ] {
        // (ksplit, grid cap): on CUDA cores the cap makes each warp walk ~21 pairs; on tensor
        // cores the 63 tiles are dealt round 20 blocks (3-4 each, ksplit 1) or 40 (1-2 tiles in
        // blocks of 4 groups, ksplit 2).
        let capped = if tc {
            vec![(1usize, Some(20usize)), (2, Some(40))]
        } else {
            vec![(1, Some(3))]
        };
        for (ks, cap) in [(1usize, None), (2, None), (4, None), (8, None)]
            .into_iter()
            .chain(capped)
        {
            let (x, x_d) = c.rand16(m * h, 1.0)?;
            let y_d = c.poisoned::<f32>(m * d.vocab)?;
            k.gemv(&GemvCall {
                merge: None,
                w: c.dev(if tc { &wg_d } else { &w_d }),
                x: c.dev(&x_d),
                x_stride: h,
                norm: Some(norm(tc)),
                eps: d.eps,
                n: d.vocab,
                k: h,
                m,
                ksplit: ks,
                tensor_cores: tc,
                resident_blocks: cap,
                out: GemvOut::F32 {
                    out: c.dev(&y_d),
                    stride: d.vocab,
                },
            })?;
            let want: Vec<f64> = (0..m)
                .flat_map(|r| {
                    let xn = rmsnorm_ref(&x[r * h..(r + 1) * h], &g, d.eps as f64);
                    matvec(&w, &xn, d.vocab, h)
                })
                .collect();
            out.push(check(
                format!(
                    "{} f32+norm n={} k={h} m={m} ksplit={ks}{}",
                    kname(tc),
                    d.vocab,
                    cap.map_or(String::new(), |b| format!(" blocks={b}"))
                ),
                &c.down32(&y_d)?,
                &want,
                2e-3,
            ));
        }
    }

    // down_proj shape: residual add in place.
    // (tensor cores, m, ksplit, grid cap): the capped launch walks 15 pairs per warp. k = 664
    // is six spans of 128 columns (tiles.rs), the last of 24: at ksplit 1 a tensor-core warp
    // reloads each of its two register buffers twice, at ksplit 4 it has one or two spans.
    for (tc, m, ks, cap) in [
        (false, 1usize, 4usize, None),
        (false, 5, 4, None),
        (false, 1, 1, Some(1usize)),
        (false, 5, 1, Some(1)),
        (true, 1, 4, None),
        (true, 5, 4, None),
        (true, 16, 4, None),
        (true, 16, 1, None),
        (true, 12, 4, Some(4)),
    ] {
        let (w, w_d) = c.rand16(h * i, 0.05)?;
        let w_d = if tc { c.tiles16(&w, i)? } else { w_d };
        let (x, x_d) = c.rand16(m * i, 1.0)?;
        let (res, res_d) = c.rand16(m * h, 1.0)?;
        k.gemv(&GemvCall {
            merge: None,
            w: c.dev(&w_d),
            x: c.dev(&x_d),
            x_stride: i,
            norm: None,
            eps: d.eps,
            n: h,
            k: i,
            m,
            ksplit: ks,
            tensor_cores: tc,
            resident_blocks: cap,
            out: GemvOut::Resid {
                out: c.dev(&res_d),
                stride: h,
            },
        })?;
        let want: Vec<f64> = (0..m)
            .flat_map(|r| {
                let y = matvec(&w, &x[r * i..(r + 1) * i], h, i);
                y.iter()
                    .zip(&res[r * h..(r + 1) * h])
                    .map(|(a, b)| a + b)
                    .collect::<Vec<_>>()
            })
            .collect();
        out.push(check(
            format!(
                "{} residual n={h} k={i} m={m} ksplit={ks}{}",
                kname(tc),
                cap.map_or(String::new(), |b| format!(" blocks={b}"))
            ),
            &c.down16(&res_d)?,
            &want,
            2e-3,
        ));
    }

    // gate/up: interleaved rows, SiLU * up, norm fused.
    let (gate, _) = c.rand16(i * h, 0.05)?;
    let (up, _) = c.rand16(i * h, 0.05)?;
    let cat: Vec<f64> = gate.iter().chain(&up).copied().collect();
    let gu = permute(&cat, &gate_up_row_order(&d), h);
    let (_, gu_d) = c.up16(&gu)?;
    let gug_d = c.folded_tiles(&gu, &g)?;
    // (tensor cores, m, ksplit, grid cap); on tensor cores the cap is the blocks the 83 tiles
    // are dealt round (16 blocks of 4 groups: 1-2 tiles each).
    for (tc, m, ks, cap) in [
        (false, 3usize, 1usize, None),
        (false, 1, 1, Some(2usize)),
        (true, 3, 2, None),
        (true, 16, 1, None),
        (true, 16, 2, Some(16)),
    ] {
        let (x, x_d) = c.rand16(m * h, 1.0)?;
        let h_d = c.poisoned::<f16>(m * i)?;
        k.gemv(&GemvCall {
            merge: None,
            w: c.dev(if tc { &gug_d } else { &gu_d }),
            x: c.dev(&x_d),
            x_stride: h,
            norm: Some(norm(tc)),
            eps: d.eps,
            n: 2 * i,
            k: h,
            m,
            ksplit: ks,
            tensor_cores: tc,
            resident_blocks: cap,
            out: GemvOut::Silu {
                out: c.dev(&h_d),
                stride: i,
            },
        })?;
        let want: Vec<f64> = (0..m)
            .flat_map(|r| {
                let xn = rmsnorm_ref(&x[r * h..(r + 1) * h], &g, d.eps as f64);
                let a = matvec(&gate, &xn, i, h);
                let b = matvec(&up, &xn, i, h);
                a.iter()
                    .zip(&b)
                    .map(|(a, b)| a / (1.0 + (-a).exp()) * b)
                    .collect::<Vec<_>>()
            })
            .collect();
        out.push(check(
            format!(
                "{} silu(gate)*up+norm n={} k={h} m={m} ksplit={ks}{}",
                kname(tc),
                2 * i,
                cap.map_or(String::new(), |b| format!(" blocks={b}"))
            ),
            &c.down16(&h_d)?,
            &want,
            3e-3,
        ));
    }

    // QKV + RoPE + cache write (decode rows: one per sequence) and the prefill path
    // (rope_cache over f32 rows), then attention over the cache they filled.
    let max_ctx = 80;
    let n_qkv = d.qkv_rows();
    let (wq, _) = c.rand16(n_qkv * h, 0.05)?;
    let wp = permute(&wq, &qkv_row_order(&d), h);
    let (_, wf_d) = c.up16(&wp)?;
    let wfg_d = c.folded_tiles(&wp, &g)?;
    let cache_elems = 3 * d.kv_heads * max_ctx * d.head_dim;
    let inv = c.gpu.stream.clone_htod(&inv_freq(&d))?;
    // Random history in the caches, then the kernels write the new positions.
    let (mut kref, kc_d) = c.rand16(cache_elems, 1.0)?;
    let (mut vref, vc_d) = c.rand16(cache_elems, 1.0)?;
    let pos_val = 70usize;
    let pos_d = c.gpu.stream.clone_htod(&[pos_val as i32])?;
    let m = 3;
    let (x, x_d) = c.rand16(m * h, 1.0)?;
    let q_d = c.poisoned::<f32>(m * d.q_rows())?;
    let target = QkvTarget {
        q_out: c.dev(&q_d),
        kc: c.dev(&kc_d),
        vc: c.dev(&vc_d),
        inv_freq: c.dev(&inv),
        pos: c.dev(&pos_d),
        rows_per_seq: 1,
        max_ctx,
    };
    let hd = d.head_dim;
    let mut qref = Vec::new();
    for r in 0..m {
        let xn = rmsnorm_ref(&x[r * h..(r + 1) * h], &g, d.eps as f64);
        let y = matvec(&wq, &xn, n_qkv, h);
        for hh in 0..d.heads {
            let mut v = y[hh * hd..(hh + 1) * hd].to_vec();
            rope(&mut v, pos_val, &d);
            qref.extend(v);
        }
        for g2 in 0..d.kv_heads {
            let mut kv = y[d.q_rows() + g2 * hd..d.q_rows() + (g2 + 1) * hd].to_vec();
            rope(&mut kv, pos_val, &d);
            let base = ((r * d.kv_heads + g2) * max_ctx + pos_val) * hd;
            kref[base..base + hd].copy_from_slice(&kv);
            let v0 = d.q_rows() + d.kv_rows() + g2 * hd;
            vref[base..base + hd].copy_from_slice(&y[v0..v0 + hd]);
        }
    }
    // Both product kernels write the same new positions, poisoned before each run; each run is
    // checked in full.
    for tc in [true, false] {
        c.poison_view(c.dev(&q_d))?;
        for r in 0..m {
            for g2 in 0..d.kv_heads {
                let at = ((r * d.kv_heads + g2) * max_ctx + pos_val) * hd * 2;
                c.poison_view(c.dev(&kc_d).sub(at, hd * 2)?)?;
                c.poison_view(c.dev(&vc_d).sub(at, hd * 2)?)?;
            }
        }
        k.gemv(&GemvCall {
            merge: None,
            w: c.dev(if tc { &wfg_d } else { &wf_d }),
            x: c.dev(&x_d),
            x_stride: h,
            norm: Some(norm(tc)),
            eps: d.eps,
            n: n_qkv,
            k: h,
            m,
            ksplit: 2,
            tensor_cores: tc,
            resident_blocks: None,
            out: GemvOut::Qkv(target),
        })?;
        out.push(check(
            format!(
                "{} qkv+rope q rows={n_qkv} k={h} m={m} pos={pos_val}",
                kname(tc)
            ),
            &c.down32(&q_d)?,
            &qref,
            2e-3,
        ));
        out.push(check(
            format!("{} qkv+rope K cache", kname(tc)),
            &c.down16(&kc_d)?,
            &kref,
            2e-3,
        ));
        out.push(check(
            format!("{} qkv V cache", kname(tc)),
            &c.down16(&vc_d)?,
            &vref,
            2e-3,
        ));
    }

    // Decode attention over 71 positions (3 splits of 32, the last partial), grid for 80.
    let kc_now = c.down16(&kc_d)?;
    let vc_now = c.down16(&vc_d)?;
    let q_now = c.down32(&q_d)?;
    let now = CacheView {
        kc: &kc_now,
        vc: &vc_now,
        max_ctx,
    };
    let decode_ref =
        |rows, rows_per_seq, pos0, q: &[f64]| attn_ref(&d, &now, rows, rows_per_seq, pos0, q);
    let (p_len, b) = (23usize, 2usize);
    let rows = p_len * b;
    let zero_d = c.gpu.stream.clone_htod(&[0i32])?;
    let (qkv_rows, qkv_d32) = {
        let v = c.randn(rows * n_qkv, 1.0);
        let f: Vec<f32> = v.iter().map(|&x| x as f32).collect();
        (
            f.iter().map(|&x| x as f64).collect::<Vec<_>>(),
            c.gpu.stream.clone_htod(&f)?,
        )
    };
    let (wo, wo_d) = c.rand16(h * d.q_rows(), 0.05)?;
    let res0_16: Vec<f16> = c
        .randn(3 * h, 1.0)
        .iter()
        .map(|&v| f16::from_f64(v))
        .collect();
    let res0: Vec<f64> = res0_16.iter().map(|v| v.to_f64()).collect();
    let splits = max_ctx.div_ceil(32);
    let part_o = c.poisoned::<f32>(48 * splits * d.q_rows())?;
    let part_ml = c.poisoned::<f32>(48 * splits * d.heads * 2)?;
    let counters = c.gpu.stream.alloc_zeros::<u32>(48 * d.kv_heads)?;
    let att_d = c.poisoned::<f16>(48 * d.q_rows())?;
    let call =
        |m: usize, rows_per_seq: usize, grid_ctx: usize, split_len: usize, q: &CudaSlice<f32>| {
            AttnCall {
                q: c.dev(q),
                kc: c.dev(&kc_d),
                vc: c.dev(&vc_d),
                part_o: c.dev(&part_o),
                part_ml: c.dev(&part_ml),
                counters: c.dev(&counters),
                out: c.dev(&att_d),
                pos: c.dev(&pos_d),
                rows_per_seq,
                m,
                grid_ctx,
                split_len,
                max_ctx,
                merge: AttnMerge::LastBlock,
                cache_ready: false,
                warps_per_head: 1,
                tensor_core_warps: None,
            }
        };
    let one = attn_split_len(max_ctx);
    let most_warps = attn_max_warps_per_head(&d);
    let (last, cluster) = (AttnMerge::LastBlock, AttnMerge::Cluster);
    let rounds = [
        (0, 32, false, 1, last),
        (1, 32, true, 1, last),
        (2, one, true, 1, last),
        (3, 64, true, 2, last),
        (4, one, true, most_warps, last),
        (5, 32, true, 1, cluster),
        (6, 64, true, 2, cluster),
    ];
    for (round, split_len, cache_ready, warps_per_head, merge) in rounds {
        // Three splits of 32 (the second launch checks that the first left its counters at
        // zero, and stages the cached positions before pdl_wait as decode does), the whole
        // context in one block, then several warps per head: two splits of 64 (the second
        // holds 7 positions, so its second warp has none) and one block of 3 chunks; then the
        // splits as one cluster merging through distributed shared memory.
        c.poison_view(c.dev(&att_d))?;
        k.attention(&AttnCall {
            cache_ready,
            warps_per_head,
            merge,
            ..call(3, 1, max_ctx, split_len, &q_d)
        })?;
        let got = c.down16(&att_d)?;
        out.push(check(
            format!(
                "attention decode m=3 ctx=71 splits={} warps/head={warps_per_head} {merge:?} \
                 launch {}",
                max_ctx.div_ceil(split_len),
                round + 1
            ),
            &got[..3 * d.q_rows()],
            &decode_ref(3, 1, pos_val, &q_now),
            3e-3,
        ));
    }

    // The tensor-core kernel, the whole context in one block (5 chunks of 16, the last with 7
    // positions): one warp, 4 warps (two with a second chunk), 8 and 16 (some with none),
    // staging after the wait as prefill does and before it as decode does. A 40-dim head ends
    // its last k step in K's zeroed pad.
    for (warps, cache_ready) in [(1, false), (4, true), (8, true), (16, true)] {
        c.poison_view(c.dev(&att_d))?;
        k.attention(&AttnCall {
            cache_ready,
            tensor_core_warps: Some(warps),
            ..call(3, 1, max_ctx, one, &q_d)
        })?;
        let got = c.down16(&att_d)?;
        out.push(check(
            format!(
                "attention on the tensor cores m=3 ctx=71 warps={warps} cache_ready={cache_ready}"
            ),
            &got[..3 * d.q_rows()],
            &decode_ref(3, 1, pos_val, &q_now),
            3e-3,
        ));
    }

    // Partials only (the decode step's way), merged by an o_proj-shaped product while it
    // stages x, with the residual add.
    k.attention(&AttnCall {
        merge: AttnMerge::Partials,
        cache_ready: true,
        ..call(3, 1, max_ctx, 32, &q_d)
    })?;
    let att_want = decode_ref(3, 1, pos_val, &q_now);
    let want: Vec<f64> = (0..3)
        .flat_map(|r| {
            let y = matvec(
                &wo,
                &att_want[r * d.q_rows()..(r + 1) * d.q_rows()],
                h,
                d.q_rows(),
            );
            y.iter()
                .zip(&res0[r * h..(r + 1) * h])
                .map(|(a, b)| a + b)
                .collect::<Vec<_>>()
        })
        .collect();
    let wo_tiles = c.tiles16(&wo, d.q_rows())?;
    for tc in [false, true] {
        let res_d = c.gpu.stream.clone_htod(&res0_16)?;
        k.gemv(&GemvCall {
            w: c.dev(if tc { &wo_tiles } else { &wo_d }),
            x: c.dev(&att_d),
            merge: Some(MergeIn {
                part_o: c.dev(&part_o),
                part_ml: c.dev(&part_ml),
                pos: c.dev(&pos_d),
                rows_per_seq: 1,
                splits: 3,
                split_len: 32,
            }),
            x_stride: d.q_rows(),
            norm: None,
            eps: d.eps,
            n: h,
            k: d.q_rows(),
            m: 3,
            ksplit: 1,
            tensor_cores: tc,
            resident_blocks: None,
            out: GemvOut::Resid {
                out: c.dev(&res_d),
                stride: h,
            },
        })?;
        out.push(check(
            format!(
                "attention partials (3 splits) merged in o_proj {} + residual",
                kname(tc)
            ),
            &c.down16(&res_d)?,
            &want,
            3e-3,
        ));
    }

    // Prefill path: 2 sequences of 23 rows from position 0 (f32 rows -> rope_cache), then
    // causal attention of all 46 rows.
    let qp_d = c.poisoned::<f32>(rows * d.q_rows())?;
    let tgt = QkvTarget {
        q_out: c.dev(&qp_d),
        pos: c.dev(&zero_d),
        rows_per_seq: p_len,
        ..target
    };
    k.rope_cache(c.dev(&qkv_d32), &tgt, rows)?;
    // Reference: undo the fused order (fused pair p of row r -> original rows).
    let order = qkv_row_order(&d);
    let mut qpref = vec![0f64; rows * d.q_rows()];
    for r in 0..rows {
        let (seq, pos) = (r / p_len, r % p_len);
        let mut orig = vec![0f64; n_qkv];
        for (f, &o) in order.iter().enumerate() {
            orig[o as usize] = qkv_rows[r * n_qkv + f];
        }
        for hh in 0..d.heads {
            let mut v = orig[hh * hd..(hh + 1) * hd].to_vec();
            rope(&mut v, pos, &d);
            qpref[(r * d.heads + hh) * hd..(r * d.heads + hh + 1) * hd].copy_from_slice(&v);
        }
        for g2 in 0..d.kv_heads {
            let mut kv = orig[d.q_rows() + g2 * hd..d.q_rows() + (g2 + 1) * hd].to_vec();
            rope(&mut kv, pos, &d);
            let base = ((seq * d.kv_heads + g2) * max_ctx + pos) * hd;
            kref[base..base + hd].copy_from_slice(&kv);
            let v0 = d.q_rows() + d.kv_rows() + g2 * hd;
            vref[base..base + hd].copy_from_slice(&orig[v0..v0 + hd]);
        }
    }
    out.push(check(
        format!("rope_cache q rows={rows} (2 x {p_len})"),
        &c.down32(&qp_d)?,
        &qpref,
        1e-4,
    ));
    out.push(check(
        "rope_cache K cache".into(),
        &c.down16(&kc_d)?,
        &kref,
        2e-3,
    ));
    out.push(check(
        "rope_cache V cache".into(),
        &c.down16(&vc_d)?,
        &vref,
        2e-3,
    ));
    // Attention reference reads the caches as the device holds them now.
    let kc_now2 = c.down16(&kc_d)?;
    let vc_now2 = c.down16(&vc_d)?;
    let q_now2 = c.down32(&qp_d)?;
    let mut call_p = call(rows, p_len, p_len, 32, &qp_d);
    call_p.pos = c.dev(&zero_d);
    k.attention(&call_p)?;
    let got = c.down16(&att_d)?;
    let after_prefill = CacheView {
        kc: &kc_now2,
        vc: &vc_now2,
        max_ctx,
    };
    let want = attn_ref(&d, &after_prefill, rows, p_len, 0, &q_now2);
    out.push(check(
        format!("attention prefill causal rows={rows} (2 x {p_len})"),
        &got[..rows * d.q_rows()],
        &want,
        3e-3,
    ));

    // Small kernels: embed, rmsnorm, silu, argmax.
    let (table, table_d) = c.rand16(d.vocab * h, 1.0)?;
    let toks: Vec<i32> = vec![0, 1001, 517, 3, 999];
    let tok_d = c.gpu.stream.clone_htod(&toks)?;
    let e_d = c.poisoned::<f16>(toks.len() * h)?;
    k.embed(c.dev(&tok_d), c.dev(&table_d), c.dev(&e_d), toks.len())?;
    let want: Vec<f64> = toks
        .iter()
        .flat_map(|&t| table[t as usize * h..(t as usize + 1) * h].to_vec())
        .collect();
    out.push(check("embed 5 rows".into(), &c.down16(&e_d)?, &want, 1e-6));

    let m = 11;
    let (x, x_d) = c.rand16(m * h, 2.0)?;
    let y_d = c.poisoned::<f16>(m * h)?;
    k.rmsnorm(c.dev(&x_d), c.dev(&g_d), c.dev(&y_d), m)?;
    let want: Vec<f64> = (0..m)
        .flat_map(|r| rmsnorm_ref(&x[r * h..(r + 1) * h], &g, d.eps as f64))
        .collect();
    out.push(check(
        format!("rmsnorm rows={m} k={h}"),
        &c.down16(&y_d)?,
        &want,
        2e-3,
    ));

    let (gu, gu2_d) = c.rand16(m * 2 * i, 2.0)?;
    let s_d = c.poisoned::<f16>(m * i)?;
    k.silu(c.dev(&gu2_d), c.dev(&s_d), m)?;
    let want: Vec<f64> = (0..m * i)
        .map(|e| {
            let (a, b) = (gu[2 * e], gu[2 * e + 1]);
            a / (1.0 + (-a).exp()) * b
        })
        .collect();
    out.push(check(
        format!("silu rows={m} inter={i}"),
        &c.down16(&s_d)?,
        &want,
        2e-3,
    ));

    out.extend(argmax_checks(&mut c, &k)?);
    out.push(long_context_merge(&mut c, &k, &d)?);
    // Last: loading kernels for other dims resets the shared-memory limits `k` set.
    out.extend(attn_tc_shapes(&mut c, gpu)?);
    gpu.synchronize()?;
    Ok(out)
}
