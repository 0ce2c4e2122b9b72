//! The opbench decode path's pure arithmetic: model dimensions and what our kernels accept,
//! the fused weight row orders, launch shapes, buffer sizes, and the step plan (every kernel of
//! one decode step with the bytes it must move), all testable without a GPU.

use crate::llm::configs::Arch;
use anyhow::{bail, Result};

/// Rows per block of the matrix-vector kernel are pairs of weight rows; a block has 8 warps.
pub const GEMV_WARPS: usize = 8;
/// Batch tiles the matrix-vector kernel is compiled for (`decode_gemv_b{tile}`).
pub const GEMV_TILES: [usize; 5] = [1, 2, 4, 8, 16];
/// Cached positions per attention block (kernels/decode_common.cuh ATTN_CHUNK).
pub const ATTN_CHUNK: usize = 32;

/// Model dimensions as the decode kernels see them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Dims {
    pub hidden: usize,
    pub inter: usize,
    pub layers: usize,
    pub heads: usize,
    pub kv_heads: usize,
    pub head_dim: usize,
    pub vocab: usize,
    pub eps: f32,
    pub rope_theta: f32,
}

impl Dims {
    /// Checks that our kernels can run this architecture and says which limit a config breaks.
    pub fn from_arch(a: &Arch) -> Result<Dims> {
        let d = Dims {
            hidden: a.hidden_size,
            inter: a.intermediate_size,
            layers: a.num_hidden_layers,
            heads: a.num_attention_heads,
            kv_heads: a.num_key_value_heads,
            head_dim: a.head_dim(),
            vocab: a.vocab_size,
            eps: a.rms_norm_eps as f32,
            rope_theta: a.rope_theta,
        };
        let name = &a.name;
        if d.heads == 0 || d.kv_heads == 0 || !d.heads.is_multiple_of(d.kv_heads) {
            bail!(
                "{name}: {} heads on {} kv heads is not grouped attention",
                d.heads,
                d.kv_heads
            );
        }
        if d.heads / d.kv_heads > 32 {
            bail!("{name}: the attention kernel runs one warp per query head of a group (<= 32)");
        }
        if !d.head_dim.is_multiple_of(8)
            || !d.hidden.is_multiple_of(8)
            || !d.inter.is_multiple_of(8)
        {
            bail!(
                "{name}: head_dim {}, hidden {} and intermediate {} must be multiples of 8 \
                 (16-byte loads)",
                d.head_dim,
                d.hidden,
                d.inter
            );
        }
        if d.head_dim > ATTN_MAX_HEAD_DIM {
            bail!(
                "{name}: head_dim {} above the attention kernel's {ATTN_MAX_HEAD_DIM}",
                d.head_dim
            );
        }
        if !d.vocab.is_multiple_of(2) {
            bail!(
                "{name}: vocabulary {} must be even (weight rows go in pairs)",
                d.vocab
            );
        }
        Ok(d)
    }

    pub fn q_rows(&self) -> usize {
        self.heads * self.head_dim
    }
    pub fn kv_rows(&self) -> usize {
        self.kv_heads * self.head_dim
    }
    pub fn qkv_rows(&self) -> usize {
        self.q_rows() + 2 * self.kv_rows()
    }
    /// (n, k) of the step's products: qkv, o, gate/up, down, lm_head.
    pub fn products(&self) -> [(usize, usize); 5] {
        let (h, i) = (self.hidden, self.inter);
        [
            (self.qkv_rows(), h),
            (h, self.q_rows()),
            (2 * i, h),
            (h, i),
            (self.vocab, h),
        ]
    }
    /// Weight elements one decode step reads: every matrix and norm, not the embedding table.
    pub fn step_weight_elems(&self) -> u64 {
        let (h, i) = (self.hidden as u64, self.inter as u64);
        let per_layer = self.qkv_rows() as u64 * h + h * h + 2 * i * h + i * h + 2 * h;
        self.layers as u64 * per_layer + self.vocab as u64 * h + h
    }
}

/// The compiled batch tile that serves `batch` rows, or None above 16.
pub fn gemv_tile(batch: usize) -> Option<usize> {
    GEMV_TILES.iter().copied().find(|&t| t >= batch)
}

/// 16-byte chunks of each of its two rows that a lane of the batch-1 product (decode_gemv_b1,
/// U in kernels/decode_gemv.cu) loads per pass: a longer share of a row takes several passes,
/// each loaded only after the previous one is used.
pub const GEMV_PASS_CHUNKS: usize = 8;
/// Blocks of the batch-1 product resident on one SM at once (ptxas: 128 registers x 256
/// threads, so two fit the 64 Ki registers); also the rule's grid cap per SM
/// (gemv_grid_cap).
pub const GEMV_BLOCKS_PER_SM: usize = 2;

/// Warps sharing one pair of weight rows: the fewest that give about one block per SM (at
/// least 90% of the SMs busy), and no more than leave each lane one 16-byte chunk per row.
/// One wave whose every load is issued up front beat two half-as-deep waves on the H100
/// (batch 1: ksplit 1 everywhere 819-821 tokens/s; 2 blocks per SM, i.e. 2/4/1/4/1, 755).
/// Then, while a lane's share of a row still takes more than one pass and twice the warps
/// still fit the SMs at once, the warps per pair double: more of the row is in flight at the
/// start, and the blocks stay one wave. That splits down_proj (k = 5632: 22 chunks per lane,
/// 3 passes) in two, 128 -> 256 blocks: batch-1 decode 876-882 -> 902-903 tokens/s on the
/// H100, 1,003-1,005 -> 1,032-1,033 on the H200 (one call each, 5 repeats per point).
pub fn gemv_ksplit(n: usize, k: usize, sm_count: usize) -> usize {
    let pairs = n / 2;
    let chunks = k / 8;
    let mut best = 1;
    for ks in [1usize, 2, 4, 8] {
        if 32 * ks > chunks.max(32) {
            break;
        }
        best = ks;
        let blocks = pairs.div_ceil(GEMV_WARPS / ks);
        if 10 * blocks >= 9 * sm_count {
            break;
        }
    }
    while best < 8 {
        let ks = 2 * best;
        let passes = chunks.div_ceil(32 * best).div_ceil(GEMV_PASS_CHUNKS);
        if passes <= 1 || 32 * ks > chunks || gemv_blocks(n, ks) > GEMV_BLOCKS_PER_SM * sm_count {
            break;
        }
        best = ks;
    }
    best
}

/// Most blocks of a CUDA-core product at ksplit 1 with `blocks_per_sm` per SM (None: the
/// rule, GEMV_BLOCKS_PER_SM; 0: no cap, one block per 8 pairs of rows). A product that needs
/// more blocks runs on the cap's (decode_gemv_walk), each warp walking several pairs (gate/up's
/// 5632 and lm_head's 16000 at batch 1): one wave, x staged and normalized once per block
/// instead of once per 8 pairs, and the next pair's first weights in flight while a pair's
/// sums are stored. H200, batch 1: +3% tokens/s against no cap; one block per SM -12%, three
/// (not resident at once) a tie (docs/notes/decode.md). The tensor-core products deal their
/// tiles round as many blocks (gemv_tc_grid).
pub fn gemv_grid_cap(sm_count: usize, blocks_per_sm: Option<usize>) -> Option<usize> {
    match blocks_per_sm.unwrap_or(GEMV_BLOCKS_PER_SM) {
        0 => None,
        b => Some(b * sm_count),
    }
}

/// Blocks of the matrix-vector kernel for `n` output rows at `ksplit`.
pub fn gemv_blocks(n: usize, ksplit: usize) -> usize {
    (n / 2).div_ceil(GEMV_WARPS / ksplit)
}

/// Threads of a `decode_argmax` block, and logits each thread loads (all in flight at once).
pub const ARGMAX_THREADS: usize = 256;
pub const ARGMAX_PER_THREAD: usize = 8;

/// Blocks per row of `decode_argmax`: one load per thread per ARGMAX_PER_THREAD step covers
/// the vocabulary (16 for TinyLlama's 32,000), so no block waits on a second round trip.
pub fn argmax_blocks(vocab: usize) -> usize {
    vocab.div_ceil(ARGMAX_THREADS * ARGMAX_PER_THREAD).max(1)
}

/// Batch tiles of the tensor-core product (`decode_gemv_tc_b{tile}`): one or two n = 8
/// operands of mma.m16n8k16.
pub const GEMV_TC_TILES: [usize; 2] = [8, 16];
/// Weight rows per warp tile of the tensor-core product (the mma's m).
pub const GEMV_TC_ROWS: usize = 16;
/// Halves of padding after each x row in the tensor-core product's shared memory
/// (kernels/decode_gemv_tc.cu TC_X_PAD): 64 bytes, so the 8 rows one load touches fall in
/// distinct banks when a row is a multiple of 128 bytes.
pub const TC_X_PAD: usize = 32;

/// Whether the decode step's products run on the tensor cores at this batch. At batch >= 2 the
/// CUDA-core kernel does `batch` f32 FMAs per weight element and is bound by them at 4 and 16;
/// the mma kernel does the same work in a few instructions per 16 x 16 weights.
pub fn gemv_tensor_cores(batch: usize) -> bool {
    batch >= 2
}

/// The compiled tensor-core batch tile that serves `batch` rows, or None above 16.
pub fn gemv_tc_tile(batch: usize) -> Option<usize> {
    GEMV_TC_TILES.iter().copied().find(|&t| t >= batch)
}

/// Warps sharing one 16-row tile of the tensor-core product: the fewest that give about one
/// block per SM (at least 90% of the SMs busy), and no more than leave each warp one step of
/// 4 chunks (32 columns) per 16-row tile.
pub fn gemv_tc_ksplit(n: usize, k: usize, sm_count: usize) -> usize {
    let tiles = n.div_ceil(GEMV_TC_ROWS);
    let steps = (k / 8).div_ceil(4);
    let mut best = 1;
    for ks in [1usize, 2, 4, 8] {
        if ks > steps.max(1) {
            break;
        }
        best = ks;
        let blocks = tiles.div_ceil(GEMV_WARPS / ks);
        if 10 * blocks >= 9 * sm_count {
            break;
        }
    }
    best
}

/// ksplit of the step's products (qkv, o, gate/up, down, lm_head) on one GPU, for the
/// tensor-core kernel or the CUDA-core one.
pub fn step_ksplits(d: &Dims, sm_count: usize, tensor_cores: bool) -> [usize; 5] {
    let f = if tensor_cores {
        gemv_tc_ksplit
    } else {
        gemv_ksplit
    };
    d.products().map(|(n, k)| f(n, k, sm_count))
}

/// Blocks of the tensor-core product for `n` output rows at `ksplit`: one per 8 / ksplit tiles.
pub fn gemv_tc_blocks(n: usize, ksplit: usize) -> usize {
    n.div_ceil(GEMV_TC_ROWS).div_ceil(GEMV_WARPS / ksplit)
}

/// Blocks of the tensor-core product when its tiles are dealt round the grid
/// (kernels/decode_gemv_tc.cu: block b takes tiles b, b + blocks, ...): at least one block per
/// 8 / ksplit tiles, raised to `resident` (the blocks resident at once, plan::gemv_grid_cap)
/// where the matrix has that many tiles, so that no SM holds two full blocks while another
/// holds one (gate/up at batch 16: 176 blocks of 4 tiles on 132 SMs, 8 tiles on some SMs and
/// 4 on others; on 264 blocks, 5 or 6 on each).
pub fn gemv_tc_grid(n: usize, ksplit: usize, resident: Option<usize>) -> usize {
    let base = gemv_tc_blocks(n, ksplit);
    match resident {
        Some(r) => base.max(r.min(n.div_ceil(GEMV_TC_ROWS))),
        None => base,
    }
}

/// Dynamic shared memory of the CUDA-core product: `tile` rows of x of k halves, then, for a
/// product with RMSNorm, the norm weight (k halves; kernels/decode_gemv_parts.cuh
/// prefetch_norm_w).
pub fn gemv_smem_bytes(tile: usize, k: usize, norm: bool) -> usize {
    (tile + usize::from(norm)) * k * 2
}

/// Dynamic shared memory of the tensor-core product: `tile` padded rows of x of k halves (its
/// RMSNorm weight is folded into the weights, weights::fold_norm).
pub fn gemv_tc_smem_bytes(tile: usize, k: usize) -> usize {
    tile * (k + TC_X_PAD) * 2
}

/// The shared-memory budget a product kernel of `tile` rows gets at load: x at the widest k
/// (down_proj), and on CUDA cores at least x plus the norm weight at k = hidden. No more: the
/// norm weight added at the widest k made the tensor-core products 16-98% slower at batch 4,
/// most likely because the larger shared-memory carveout leaves less L1 for the weight loads
/// in flight (docs/notes/decode.md).
pub fn gemv_smem_budget(d: &Dims, tile: usize, tensor_cores: bool) -> usize {
    let widest = d.hidden.max(d.inter);
    if tensor_cores {
        gemv_tc_smem_bytes(tile, widest)
    } else {
        gemv_smem_bytes(tile, widest, false).max(gemv_smem_bytes(tile, d.hidden, true))
    }
}

/// Shared-memory sizes an SM of compute capability 9.0 can be configured to, KiB (the CUDA
/// programming guide); the rest of its unified L1 array is L1 cache.
pub const SM90_CARVEOUTS_KIB: [usize; 10] = [0, 8, 16, 32, 64, 100, 132, 164, 196, 228];
/// Shared memory the system reserves for each resident block (compute capability 8.0 and up).
pub const SMEM_RESERVED_PER_BLOCK: usize = 1024;

/// Preferred shared-memory carveout, percent of `smem_per_sm`, for every kernel of the decode
/// step at `batch` (the engine sets it on each; `attn_bytes`: the step's attention launch), or
/// None for the driver's choice per kernel. The driver rounds a percentage up to the next SM90
/// configuration (carveout_config_kib), so the percent is the largest that lands on the
/// configuration chosen (carveout_pct_for).
///
/// Tensor-core steps (batch 2-16): TC_STEP_CARVEOUT_KIB, or where a block of a product at k =
/// hidden and a block of the kernel after it (another such product, or the attention kernel)
/// need more, the smallest configuration that holds both; one value for every kernel, so that
/// a kernel's blocks can start on an SM its predecessor's still occupy, and the rest of the
/// array stays L1 for the weights in flight. At TinyLlama's shapes 164 KiB holds two product
/// blocks at either tile, or one beside the attention block; down_proj's x at the 16-row tile
/// (177 KiB) does not fit, and the driver gives down_proj alone 196 KiB. Measured against the
/// configurations Nsight Compute reports (docs/notes/decode.md): H200 batch 16, 164 KiB against
/// 196 KiB +1.3-2.6% in three calls, 132 and 228 KiB -16-17%; batch 4, against 132 KiB
/// +0.6-1.1%; H100 batch 16, against 196 KiB a tie. None at batch 1: nothing measurable from 32
/// to 228 KiB. None as well off compute capability 9.0's 228 KiB.
pub fn smem_carveout_pct(
    d: &Dims,
    batch: usize,
    smem_per_sm: usize,
    attn_bytes: usize,
) -> Option<i32> {
    if smem_per_sm != 228 * 1024 || !gemv_tensor_cores(batch) {
        return None;
    }
    let tile = gemv_tc_tile(batch)?;
    let block = |bytes: usize| bytes + SMEM_RESERVED_PER_BLOCK;
    let product = block(gemv_tc_smem_bytes(tile, d.hidden));
    let need = (TC_STEP_CARVEOUT_KIB * 1024).max(product + product.max(block(attn_bytes)));
    let kib = SM90_CARVEOUTS_KIB.into_iter().find(|&c| c * 1024 >= need)?;
    Some(carveout_pct_for(kib, smem_per_sm))
}

/// The shared memory per SM of the tensor-core decode step, KiB, unless its blocks need more
/// (smem_carveout_pct).
pub const TC_STEP_CARVEOUT_KIB: usize = 164;

/// The largest preferred carveout percent that the driver, rounding up to the next SM90
/// configuration, turns into `kib` KiB per SM (228 KiB per SM: 164 KiB -> 71%, 132 -> 57%).
pub fn carveout_pct_for(kib: usize, smem_per_sm: usize) -> i32 {
    (kib * 1024 * 100 / smem_per_sm) as i32
}

/// The SM90 configuration, KiB, that a preferred carveout of `pct` percent of `smem_per_sm`
/// gets: the smallest at least that large (the driver rounds up).
pub fn carveout_config_kib(pct: i32, smem_per_sm: usize) -> Option<usize> {
    let want = pct.max(0) as usize * smem_per_sm;
    SM90_CARVEOUTS_KIB
        .into_iter()
        .find(|&c| c * 1024 * 100 >= want)
}

/// Whether the step's RMSNorm weights are folded into the matrices that read normalized x
/// (weights::fold_norm): with the tensor-core products, which then scale their sums by 1/rms
/// (batch 16 +4-5%, batch 4 +3% on the H100). The CUDA-core product at batch 1 normalizes x in
/// shared memory instead: folding cost it 1-2% (docs/notes/decode.md).
pub fn fold_norms(batch: usize) -> bool {
    gemv_tensor_cores(batch)
}

/// Longest stretch of positions one attention block stages in shared memory.
pub const ATTN_MAX_SPLIT: usize = 256;

/// Positions per attention split for a grid covering `grid_ctx` positions: the whole context
/// in one block up to ATTN_MAX_SPLIT (no partials to merge), in multiples of ATTN_CHUNK.
pub fn attn_split_len(grid_ctx: usize) -> usize {
    grid_ctx
        .div_ceil(ATTN_CHUNK)
        .clamp(1, ATTN_MAX_SPLIT / ATTN_CHUNK)
        * ATTN_CHUNK
}

/// Attention splits along the sequence for a grid that covers `grid_ctx` positions.
pub fn attn_splits(grid_ctx: usize) -> usize {
    grid_ctx.div_ceil(attn_split_len(grid_ctx))
}

/// Positions per attention split in the decode step (batch 1 leaves the merge to o_proj,
/// larger batches merge in the attention kernel's last block):
/// - batch 1-2: 32, one warp's lanes: the shortest chain per block;
/// - batch 3-8: 64, one chunk for each of the two warps per head (decode_attn_warps);
/// - above: the whole context in one block up to ATTN_MAX_SPLIT (batch x kv_heads blocks of
///   four warps per head fill the GPU, and nothing is merged).
///
/// Longer only to keep at most 64 splits.
pub fn decode_split_len(batch: usize, max_ctx: usize) -> usize {
    let chunks = match batch {
        0..=2 => 1,
        3..=8 => 2,
        _ => return attn_split_len(max_ctx),
    };
    max_ctx
        .div_ceil(64)
        .div_ceil(ATTN_CHUNK)
        .clamp(chunks, ATTN_MAX_SPLIT / ATTN_CHUNK)
        * ATTN_CHUNK
}

/// Warps per query head of the decode step's attention blocks (capped by
/// attn_max_warps_per_head), one chunk of 32 positions each at the default split lengths up
/// to batch 8. 512-thread blocks (two warps per head) leave room on an SM for the neighbouring
/// products' blocks; above batch 8 the whole context's eight chunks go to four warps per head.
pub fn decode_attn_warps(batch: usize) -> usize {
    match batch {
        0..=2 => 1,
        3..=8 => 2,
        _ => ATTN_MAX_WARPS_PER_HEAD,
    }
}

/// Whether the decode step, when its splits do not fit one cluster (attn_cluster_merge), leaves
/// them for o_proj to merge while it stages its input (one fewer chain of fence + atomic +
/// merge per layer) rather than merging them in the attention kernel's last block. Every
/// o_proj block repeats the merge of all rows, so it can pay at batch 1 only: there the two
/// ways tie since the last block's merge takes three round trips (H100: 1,033-1,036 against
/// 1,029-1,040 tokens/s), and at batch 2 the last block's merge is 6-10% faster (1,685-1,754
/// against 1,585-1,594).
pub fn merge_in_o_proj(batch: usize) -> bool {
    batch <= 1
}

/// Most splits one attention cluster holds (the portable thread-block cluster size).
pub const ATTN_MAX_CLUSTER: usize = 8;

/// Whether the decode step's attention runs the splits of each (row, kv head) as one
/// thread-block cluster that merges them through distributed shared memory (2 to
/// ATTN_MAX_CLUSTER splits), so that o_proj stages a finished f16 input. Against the merge in
/// every o_proj block (batch 1) or in the attention kernel's last block (batch 2-8), H100:
/// batch 1 +1.3-1.7%, batch 2 +0.9-1.3%, batch 4 a tie (docs/notes/decode.md).
pub fn attn_cluster_merge(splits: usize) -> bool {
    (2..=ATTN_MAX_CLUSTER).contains(&splits)
}

/// Head dims the attention kernel takes (lanes hold at most two pairs of dims).
pub const ATTN_MAX_HEAD_DIM: usize = 128;

/// Most warps that one query head may take in an attention block (each takes every W-th
/// chunk of 32 positions of the block's split; the block combines them).
pub const ATTN_MAX_WARPS_PER_HEAD: usize = 4;

/// Warps per query head an attention block of this model may use: at most
/// ATTN_MAX_WARPS_PER_HEAD and 1024 threads per block.
pub fn attn_max_warps_per_head(d: &Dims) -> usize {
    (32 / (d.heads / d.kv_heads)).clamp(1, ATTN_MAX_WARPS_PER_HEAD)
}

/// Dynamic shared memory of one attention block: K and V of `split_len` positions (rows
/// padded by 8 halves), the group's queries and every warp's probabilities in f32, and with
/// several warps per head each warp's output, max and sum for the block's combine.
pub fn attn_smem_bytes(d: &Dims, split_len: usize, warps_per_head: usize) -> usize {
    let g = d.heads / d.kv_heads;
    let warps = g * warps_per_head;
    let combine = if warps_per_head > 1 {
        warps * (d.head_dim + 2) * 4
    } else {
        0
    };
    2 * split_len * (d.head_dim + 8) * 2 + g * d.head_dim * 4 + warps * ATTN_CHUNK * 4 + combine
}

/// Most query heads per kv head the tensor-core attention takes (the mma's 16 A rows).
pub const ATTN_TC_MAX_GROUP: usize = 16;

/// Most warps of one tensor-core attention block (512 threads, so at most 128 registers each).
pub const ATTN_TC_MAX_WARPS: usize = 16;

/// Whether this model's heads suit the tensor-core attention kernel (decode_attn_tc): a head
/// dim that is a multiple of 8 up to ATTN_MAX_HEAD_DIM, at most ATTN_TC_MAX_GROUP query heads
/// per kv head.
pub fn attn_tc_fits(d: &Dims) -> bool {
    d.head_dim.is_multiple_of(8)
        && d.head_dim <= ATTN_MAX_HEAD_DIM
        && d.heads / d.kv_heads <= ATTN_TC_MAX_GROUP
}

/// The head dim a tensor-core attention kernel's registers are laid out for: 64
/// (decode_attn_tc_d64) or 128 (_d128).
pub fn attn_tc_head_dim_bound(head_dim: usize) -> usize {
    if head_dim <= 64 {
        64
    } else {
        128
    }
}

/// Warps per block of the decode step's attention on the tensor cores, or None for the CUDA-core
/// kernel: from batch 2 up, where the whole context fits one block (max_ctx up to
/// ATTN_MAX_SPLIT, so there is nothing to merge) and the model's heads suit the kernel. 16
/// chunks of 16 positions go to 8 warps: 256 threads at 88 registers, a third of an SM's
/// register file (the CUDA-core kernel's 1024-thread blocks at batch 16 hold all of it), and a
/// few mma steps per chunk where the CUDA-core kernel's warps ran ~1,000 instructions. H200, against the
/// CUDA-core rule: batch 16 +6%, batch 8 +3%, batch 4 +4%, batch 2 +2%, batch 1 a tie, so batch
/// 1 keeps its 32-position splits merged in a cluster (docs/notes/decode.md).
pub fn decode_attn_tc_warps(d: &Dims, batch: usize, max_ctx: usize) -> Option<usize> {
    (batch >= 2 && max_ctx <= ATTN_MAX_SPLIT && attn_tc_fits(d)).then_some(8)
}

/// The decode step's attention layout: positions per split, and the tensor-core kernel's warps
/// per block (None: the CUDA-core kernel).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodeAttnLayout {
    pub split_len: usize,
    pub tc_warps: Option<usize>,
}

/// The decode step's attention layout for the run's flags (`split`: --opbench-attn-split,
/// `tc_warps`: --opbench-attn-tc-warps, 0 for the CUDA-core kernel; None: the rules). The
/// tensor-core kernel takes the whole context in one block (attn_split_len); the CUDA-core
/// kernel's splits follow decode_split_len. A tensor-core request the model or the split
/// cannot take is an error naming the flag.
pub fn decode_attn_layout(
    d: &Dims,
    batch: usize,
    max_ctx: usize,
    split: Option<usize>,
    tc_warps: Option<usize>,
) -> Result<DecodeAttnLayout> {
    let rule = decode_attn_tc_warps(d, batch, max_ctx);
    let tc_wanted = tc_warps.map_or(rule.is_some(), |w| w > 0);
    let split_len = split.unwrap_or(if tc_wanted {
        attn_split_len(max_ctx)
    } else {
        decode_split_len(batch, max_ctx)
    });
    let one_split = split_len >= max_ctx;
    let tc_warps = match tc_warps {
        Some(0) => None,
        Some(w) => {
            if w > ATTN_TC_MAX_WARPS || !one_split || !attn_tc_fits(d) {
                bail!(
                    "--opbench-attn-tc-warps {w}: the tensor-core attention takes 1 to \
                     {ATTN_TC_MAX_WARPS} warps, the whole context in one split (here {max_ctx} \
                     positions in splits of {split_len}), a head dim that is a multiple of 8 up \
                     to {ATTN_MAX_HEAD_DIM} and at most {ATTN_TC_MAX_GROUP} query heads per kv \
                     head (here {} and {}); 0 picks the CUDA-core kernel",
                    d.head_dim,
                    d.heads / d.kv_heads
                );
            }
            Some(w)
        }
        None => rule.filter(|_| one_split),
    };
    Ok(DecodeAttnLayout {
        split_len,
        tc_warps,
    })
}

/// Dynamic shared memory of one tensor-core attention block: K of `split_len` positions (rows
/// padded by 8 halves; after the pass the warps' outputs, maxima and sums take its place), V,
/// and the group's queries in f32.
pub fn attn_tc_smem_bytes(d: &Dims, split_len: usize, warps: usize) -> usize {
    let g = d.heads / d.kv_heads;
    let rows = split_len * (d.head_dim + 8) * 2;
    let k = rows
        .max(warps * g * (d.head_dim + 2) * 4)
        .next_multiple_of(16);
    k + rows + g * d.head_dim * 4
}

/// Fused QKV row f -> row of cat([q_proj, k_proj, v_proj]). q and k rows go in RoPE pairs
/// (row i and i + hd/2 of one head side by side); v rows keep their order.
pub fn qkv_row_order(d: &Dims) -> Vec<u32> {
    let hd = d.head_dim;
    let mut order = Vec::with_capacity(d.qkv_rows());
    for (base, heads) in [(0, d.heads), (d.q_rows(), d.kv_heads)] {
        for h in 0..heads {
            for i in 0..hd / 2 {
                order.push((base + h * hd + i) as u32);
                order.push((base + h * hd + i + hd / 2) as u32);
            }
        }
    }
    let v0 = d.q_rows() + d.kv_rows();
    order.extend((0..d.kv_rows()).map(|r| (v0 + r) as u32));
    order
}

/// Fused gate/up row f -> row of cat([gate_proj, up_proj]): gate i and up i side by side.
pub fn gate_up_row_order(d: &Dims) -> Vec<u32> {
    (0..d.inter)
        .flat_map(|i| [i as u32, (d.inter + i) as u32])
        .collect()
}

/// RoPE frequencies as candle computes them: 1 / theta^(2i / hd).
pub fn inv_freq(d: &Dims) -> Vec<f32> {
    (0..d.head_dim)
        .step_by(2)
        .map(|i| 1f32 / d.rope_theta.powf(i as f32 / d.head_dim as f32))
        .collect()
}

/// Element counts of every buffer of an engine for `batch` sequences of up to `prompt_len`
/// prompt tokens and `max_ctx` positions; allocated once, before the first step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BufferSizes {
    /// Token rows a launch may cover: batch x prompt_len (prefill) or batch (decode).
    pub rows: usize,
    pub resid: usize,
    pub xn: usize,
    pub qkv_f32: usize,
    pub q_f32: usize,
    pub attn: usize,
    pub gate_up: usize,
    pub h: usize,
    pub part_o_f32: usize,
    pub part_ml_f32: usize,
    pub counters: usize,
    pub logits_f32: usize,
    /// One layer's K (or V) cache.
    pub cache_layer: usize,
}

impl BufferSizes {
    pub fn new(d: &Dims, batch: usize, prompt_len: usize, max_ctx: usize) -> BufferSizes {
        let rows = batch * prompt_len.max(1);
        // Prefill rows see at most prompt_len positions; decode rows see max_ctx, in splits
        // of at least 32 positions (any split length the engine may pick).
        let part_rows_splits =
            (rows * attn_splits(prompt_len)).max(batch * max_ctx.div_ceil(ATTN_CHUNK));
        BufferSizes {
            rows,
            resid: rows * d.hidden,
            xn: rows * d.hidden,
            qkv_f32: rows * d.qkv_rows(),
            q_f32: rows * d.q_rows(),
            attn: rows * d.q_rows(),
            gate_up: rows * 2 * d.inter,
            h: rows * d.inter,
            part_o_f32: part_rows_splits * d.q_rows(),
            part_ml_f32: part_rows_splits * d.heads * 2,
            counters: rows * d.kv_heads,
            logits_f32: batch * d.vocab,
            cache_layer: batch * d.kv_heads * max_ctx * d.head_dim,
        }
    }

    /// Device bytes of the buffers and both caches of every layer (f16 = 2 bytes).
    pub fn total_bytes(&self, layers: usize) -> u64 {
        let f16 = (self.resid + self.xn + self.attn + self.gate_up + self.h) as u64 * 2
            + 2 * layers as u64 * self.cache_layer as u64 * 2;
        let f32 = (self.qkv_f32 + self.q_f32 + self.part_o_f32 + self.part_ml_f32 + self.logits_f32)
            as u64
            * 4;
        f16 + f32 + self.counters as u64 * 4
    }
}

/// What a kernel of the step does (trace classes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelClass {
    Embed,
    Gemv,
    Attention,
    Argmax,
}

/// One launch of the decode step and the DRAM bytes it cannot avoid.
#[derive(Debug, Clone, PartialEq)]
pub struct StepKernel {
    pub name: &'static str,
    pub class: KernelClass,
    pub layer: Option<usize>,
    /// Weights (f16) plus, for attention, the K and V cache at `ctx` positions of every sequence.
    pub floor_bytes: u64,
}

/// The decode step in launch order at context `ctx` (positions read by attention).
pub fn step_plan(d: &Dims, batch: usize, ctx: usize) -> Vec<StepKernel> {
    let h = d.hidden as u64;
    let mut v = vec![StepKernel {
        name: "embed",
        class: KernelClass::Embed,
        layer: None,
        floor_bytes: (batch as u64) * h * 2,
    }];
    let kv = 2 * batch as u64 * ctx as u64 * d.kv_rows() as u64 * 2;
    for l in 0..d.layers {
        let gemv = |name, rows: u64, k: u64, norm: bool| StepKernel {
            name,
            class: KernelClass::Gemv,
            layer: Some(l),
            floor_bytes: (rows * k + if norm { k } else { 0 }) * 2,
        };
        v.push(gemv("qkv_rope", d.qkv_rows() as u64, h, true));
        v.push(StepKernel {
            name: "attention",
            class: KernelClass::Attention,
            layer: Some(l),
            floor_bytes: kv,
        });
        v.push(gemv("o_proj_residual", h, d.q_rows() as u64, false));
        v.push(gemv("gate_up_silu", 2 * d.inter as u64, h, true));
        v.push(gemv("down_residual", h, d.inter as u64, false));
    }
    v.push(StepKernel {
        name: "lm_head",
        class: KernelClass::Gemv,
        layer: None,
        floor_bytes: (d.vocab as u64 * h + h) * 2,
    });
    v.push(StepKernel {
        name: "argmax",
        class: KernelClass::Argmax,
        layer: None,
        floor_bytes: batch as u64 * d.vocab as u64 * 4,
    });
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::configs::named;

    fn tiny() -> Dims {
        Dims::from_arch(&named("tinyllama-1.1b").unwrap()).unwrap()
    }

    #[test]
    fn qkv_order_pairs_rope_halves_and_keeps_v() {
        let d = tiny();
        let o = qkv_row_order(&d);
        assert_eq!(o.len(), d.qkv_rows());
        let mut seen = o.clone();
        seen.sort_unstable();
        assert!(seen.iter().enumerate().all(|(i, &r)| r as usize == i));
        // Head 1 of q: its rows 64..128 go as (64, 96), (65, 97), ...
        assert_eq!(&o[64..68], &[64, 96, 65, 97]);
        // k starts after the 2048 q rows, same pairing.
        assert_eq!(&o[2048..2052], &[2048, 2080, 2049, 2081]);
        // v keeps its order.
        assert_eq!(&o[2304..2308], &[2304, 2305, 2306, 2307]);
    }

    #[test]
    fn gate_up_rows_interleave() {
        let d = tiny();
        let o = gate_up_row_order(&d);
        assert_eq!(&o[..4], &[0, 5632, 1, 5633]);
        assert_eq!(o.len(), 2 * d.inter);
    }

    #[test]
    fn argmax_blocks_cover_the_vocabulary_once() {
        let per_block = ARGMAX_THREADS * ARGMAX_PER_THREAD;
        assert_eq!(argmax_blocks(32_000), 16);
        assert_eq!(argmax_blocks(per_block), 1);
        assert_eq!(argmax_blocks(per_block + 1), 2);
        assert_eq!(argmax_blocks(1), 1);
        for v in [1, 7, 2047, 2048, 2049, 32_000, 128_256] {
            let b = argmax_blocks(v);
            assert!(
                b * per_block >= v && (b - 1) * per_block < v,
                "vocab {v}: {b} blocks"
            );
        }
    }

    #[test]
    fn step_plan_reads_every_weight_once() {
        let a = named("tinyllama-1.1b").unwrap();
        let d = tiny();
        assert_eq!(d.step_weight_elems(), a.params_read_per_step());
        let plan = step_plan(&d, 1, 0);
        // embed + 5 per layer + lm_head + argmax.
        assert_eq!(plan.len(), 1 + 5 * 22 + 2);
        let gemv: u64 = plan
            .iter()
            .filter(|k| k.class == KernelClass::Gemv)
            .map(|k| k.floor_bytes)
            .sum();
        assert_eq!(gemv, 2 * d.step_weight_elems());
        // Attention reads K and V of 4 kv heads x 64 dims per position and sequence.
        let at = step_plan(&d, 2, 100);
        let att = at
            .iter()
            .find(|k| k.class == KernelClass::Attention)
            .unwrap();
        assert_eq!(att.floor_bytes, 2 * 2 * 100 * 256 * 2);
    }

    #[test]
    fn launch_shapes_for_tinyllama_on_132_sms() {
        let d = tiny();
        let ks = [
            gemv_ksplit(d.qkv_rows(), d.hidden, 132),
            gemv_ksplit(d.hidden, d.q_rows(), 132),
            gemv_ksplit(2 * d.inter, d.hidden, 132),
            gemv_ksplit(d.hidden, d.inter, 132),
            gemv_ksplit(d.vocab, d.hidden, 132),
        ];
        // Every tensor-core step takes the 164 KiB configuration (71%: the driver rounds a
        // percentage up to the next configuration): it holds two product blocks at either tile
        // (2 x 34 and 2 x 66 KiB) or one beside an attention block.
        let h100 = 228 * 1024;
        let attn = attn_smem_bytes(&d, 64, 2);
        for b in [2, 4, 8, 16] {
            assert_eq!(smem_carveout_pct(&d, b, h100, attn), Some(71), "batch {b}");
        }
        let attn16 = attn_smem_bytes(&d, 256, 4);
        assert_eq!(smem_carveout_pct(&d, 16, h100, attn16), Some(71));
        assert_eq!(carveout_config_kib(71, h100), Some(164));
        // The driver rounds a percent up to the next configuration: 72% of 228 KiB is 164.2
        // KiB, so 196; 58% is 132.2, so 164; 44% is 100.3, so 132.
        assert_eq!(carveout_config_kib(72, h100), Some(196));
        assert_eq!(carveout_config_kib(58, h100), Some(164));
        assert_eq!(carveout_config_kib(44, h100), Some(132));
        for kib in SM90_CARVEOUTS_KIB.into_iter().filter(|&c| c > 0) {
            assert_eq!(
                carveout_config_kib(carveout_pct_for(kib, h100), h100),
                Some(kib),
                "{kib} KiB"
            );
        }
        // A wider model whose two product blocks do not fit 228 KiB: the driver's choice.
        let wide_h = Dims { hidden: 5120, ..d };
        assert!(2 * (gemv_tc_smem_bytes(16, 5120) + 1024) > 228 * 1024);
        assert_eq!(smem_carveout_pct(&wide_h, 16, h100, attn16), None);
        // The tensor-core attention block at batch 16: K and V of 256 positions (36 KiB each;
        // the 8 warps' states, 16.5 KiB, reuse K's) and 8 f32 queries, under the 16-row tile's
        // carveout.
        let tc16 = attn_tc_smem_bytes(&d, 256, 8);
        assert_eq!(tc16, 2 * 256 * 72 * 2 + 8 * 64 * 4);
        assert_eq!(smem_carveout_pct(&d, 16, h100, tc16), Some(71));
        assert_eq!(smem_carveout_pct(&d, 4, h100, tc16), Some(71));
        // 16 warps of 16 heads of 128 dims: the states outgrow K's rows.
        let wide = Dims {
            heads: 16,
            kv_heads: 1,
            head_dim: 128,
            ..d
        };
        assert_eq!(
            attn_tc_smem_bytes(&wide, 32, 16),
            16 * 16 * 130 * 4 + 32 * 136 * 2 + 16 * 128 * 4
        );
        assert!(attn_tc_fits(&d) && attn_tc_fits(&wide));
        assert!(
            !attn_tc_fits(&Dims { head_dim: 100, ..d }),
            "not a multiple of 8"
        );
        assert!(
            !attn_tc_fits(&Dims { head_dim: 256, ..d }),
            "wider than 128"
        );
        assert!(
            !attn_tc_fits(&Dims { kv_heads: 1, ..d }),
            "32 query heads per kv head"
        );
        assert_eq!(attn_tc_head_dim_bound(40), 64);
        assert_eq!(attn_tc_head_dim_bound(64), 64);
        assert_eq!(attn_tc_head_dim_bound(72), 128);
        // The driver's choice at batch 1 and on other shared-memory sizes.
        assert_eq!(smem_carveout_pct(&d, 1, h100, attn), None);
        assert_eq!(smem_carveout_pct(&d, 4, 164 * 1024, attn), None);
        // An attention launch that does not fit beside a product block in 164 KiB moves the
        // step up a configuration.
        assert_eq!(smem_carveout_pct(&d, 4, h100, 140 * 1024), Some(85));
        assert_eq!(carveout_config_kib(85, h100), Some(196));
        // down_proj's rows (5632) take a lane 3 passes: two warps per pair, 256 blocks.
        assert_eq!(ks, [1, 1, 1, 2, 1]);
        assert_eq!(gemv_blocks(d.hidden, 2), 256);
        // On 120 SMs 256 blocks would not be resident at once: down_proj keeps one warp.
        assert_eq!(gemv_ksplit(d.hidden, d.inter, 120), 1);
        // A GPU with twice the SMs splits the 2048-row matrices, down_proj twice more.
        assert_eq!(gemv_ksplit(d.hidden, d.q_rows(), 264), 2);
        assert_eq!(gemv_ksplit(d.hidden, d.inter, 264), 4);
        assert_eq!(gemv_blocks(d.qkv_rows(), 2), 320);
        assert_eq!(gemv_blocks(2 * d.inter, 1), 704);
        // The grid cap at batch 1: gate/up (704 blocks) and lm_head (2000) walk, each warp
        // taking 2-3 and 7-8 pairs; qkv (160) and o_proj (128) fit under it and do not.
        assert_eq!(gemv_grid_cap(132, None), Some(264));
        assert_eq!(gemv_grid_cap(132, Some(0)), None);
        assert_eq!(gemv_grid_cap(132, Some(3)), Some(396));
        assert!(gemv_blocks(d.qkv_rows(), 1) <= 264 && gemv_blocks(d.hidden, 1) <= 264);
        assert!(gemv_blocks(d.vocab, 1) > 264);
        // A tiny k never gets more warps than 16-byte chunks per lane allow.
        assert_eq!(gemv_ksplit(64, 128, 132), 1);
        assert_eq!(gemv_tile(1), Some(1));
        assert_eq!(gemv_tile(3), Some(4));
        assert_eq!(gemv_tile(16), Some(16));
        assert_eq!(gemv_tile(17), None);
        assert_eq!(attn_splits(256), 1);
        assert_eq!(attn_split_len(33), 64);
        assert_eq!(attn_splits(33), 1);
        assert_eq!(attn_splits(1000), 4);
        assert_eq!(attn_split_len(1000), 256);
    }

    #[test]
    fn tensor_core_shapes_for_tinyllama_on_132_sms() {
        let d = tiny();
        let ks = [
            gemv_tc_ksplit(d.qkv_rows(), d.hidden, 132),
            gemv_tc_ksplit(d.hidden, d.q_rows(), 132),
            gemv_tc_ksplit(2 * d.inter, d.hidden, 132),
            gemv_tc_ksplit(d.hidden, d.inter, 132),
            gemv_tc_ksplit(d.vocab, d.hidden, 132),
        ];
        // qkv: 160 tiles of 16 rows; o and down: 128; gate/up: 704; lm_head: 2000.
        assert_eq!(ks, [8, 8, 2, 8, 1]);
        assert_eq!(step_ksplits(&d, 132, true), ks);
        assert_eq!(step_ksplits(&d, 132, false), [1, 1, 1, 2, 1]);
        assert_eq!(gemv_tc_blocks(d.qkv_rows(), 8), 160);
        assert_eq!(gemv_tc_blocks(d.hidden, 8), 128);
        assert_eq!(gemv_tc_blocks(2 * d.inter, 2), 176);
        assert_eq!(gemv_tc_blocks(d.vocab, 1), 250);
        // A partial last tile still gets a warp: 1002 rows = 62 tiles + 10 rows.
        assert_eq!(gemv_tc_blocks(1002, 1), 8);
        assert_eq!(gemv_tc_blocks(1002, 8), 63);
        // Dealt round the resident blocks: gate/up and lm_head spread to 264 on 132 SMs; qkv,
        // o and down have fewer tiles than that and keep one block per tile.
        let resident = gemv_grid_cap(132, None);
        assert_eq!(resident, Some(264));
        assert_eq!(gemv_tc_grid(2 * d.inter, 2, resident), 264);
        assert_eq!(gemv_tc_grid(d.vocab, 1, resident), 264);
        assert_eq!(gemv_tc_grid(d.qkv_rows(), 8, resident), 160);
        assert_eq!(gemv_tc_grid(d.hidden, 8, resident), 128);
        assert_eq!(gemv_tc_grid(2 * d.inter, 2, None), 176);
        // Never more blocks than tiles, never fewer than one per 8 / ksplit tiles.
        assert_eq!(gemv_tc_grid(1002, 1, Some(264)), 63);
        assert_eq!(gemv_tc_grid(1002, 1, Some(4)), 8);
        // k = 64 is two warp steps of 32 columns: at most 2 warps share a tile.
        assert_eq!(gemv_tc_ksplit(64, 64, 132), 2);
        assert_eq!(gemv_tc_tile(1), Some(8));
        assert_eq!(gemv_tc_tile(8), Some(8));
        assert_eq!(gemv_tc_tile(9), Some(16));
        assert_eq!(gemv_tc_tile(17), None);
        assert!(!gemv_tensor_cores(1) && gemv_tensor_cores(4) && gemv_tensor_cores(16));
        // x of 16 rows of the widest k (5632) fits the 227 KB a block may have, with the
        // static reduction buffers.
        assert_eq!(gemv_tc_smem_bytes(16, d.inter), 16 * 5664 * 2);
        assert_eq!(gemv_tc_smem_bytes(8, d.hidden), 8 * 2080 * 2);
        assert!(!fold_norms(1) && fold_norms(2) && fold_norms(16));
        assert_eq!(gemv_smem_bytes(1, d.hidden, true), 2 * 2048 * 2);
        assert_eq!(gemv_smem_bytes(4, d.inter, false), 4 * 5632 * 2);
        // The budget is x at the widest k: the norm weight rides at k = hidden.
        for t in [1, 2, 4, 8, 16] {
            assert_eq!(gemv_smem_budget(&d, t, false), t * 5632 * 2);
            assert_eq!(gemv_smem_budget(&d, t, true), t * 5664 * 2);
        }
        assert!(gemv_smem_budget(&d, 16, true) + 8 * 32 * 8 * 4 <= 227 * 1024);
        // A model whose hidden size is its widest k: the norm weight sets the budget.
        let wide = Dims { inter: 1024, ..d };
        assert_eq!(gemv_smem_budget(&wide, 1, false), 2 * 2048 * 2);
    }

    #[test]
    fn attention_blocks_fit_1024_threads() {
        let d = tiny(); // 32 query heads on 4 kv heads: 8 per block
        assert_eq!(attn_max_warps_per_head(&d), 4);
        assert_eq!(
            attn_smem_bytes(&d, 32, 1),
            2 * 32 * 72 * 2 + 8 * 64 * 4 + 8 * 32 * 4
        );
        // Four warps per head: 32 warps' probabilities and (o, max, sum) for the combine.
        assert_eq!(
            attn_smem_bytes(&d, 256, 4),
            2 * 256 * 72 * 2 + 8 * 64 * 4 + 32 * 32 * 4 + 32 * 66 * 4
        );
        assert_eq!(attn_max_warps_per_head(&Dims { kv_heads: 2, ..d }), 2);
        assert_eq!(attn_max_warps_per_head(&Dims { kv_heads: 1, ..d }), 1);
        assert_eq!(attn_max_warps_per_head(&Dims { kv_heads: 32, ..d }), 4);
    }

    #[test]
    fn buffer_sizes_cover_prefill_and_decode() {
        let d = tiny();
        let s = BufferSizes::new(&d, 4, 128, 256);
        assert_eq!(s.rows, 512);
        assert_eq!(s.qkv_f32, 512 * 2560);
        assert_eq!(s.cache_layer, 4 * 4 * 256 * 64);
        // Prefill: 512 rows x 1 split; decode: 4 rows x 8 splits of 32.
        assert_eq!(s.part_o_f32, 512 * 2048);
        let long = BufferSizes::new(&d, 2, 16, 2048);
        // Decode over 2048 positions: 2 rows x 64 splits of 32.
        assert_eq!(long.part_o_f32, 2 * 64 * 2048);
        assert_eq!(decode_split_len(1, 256), 32);
        assert_eq!(decode_split_len(1, 2048), 32);
        assert_eq!(decode_split_len(2, 2049), 64);
        assert_eq!(decode_split_len(1, 100_000), 256);
        assert_eq!(decode_split_len(4, 256), 64);
        assert_eq!(decode_split_len(8, 4096), 64);
        assert_eq!(decode_split_len(8, 8192), 128);
        assert_eq!(decode_split_len(16, 100), 128);
        assert_eq!(decode_split_len(16, 2048), 256);
        assert!(merge_in_o_proj(1) && !merge_in_o_proj(2));
        assert!(!attn_cluster_merge(1), "one split: nothing to merge");
        assert!(attn_cluster_merge(2) && attn_cluster_merge(ATTN_MAX_CLUSTER));
        assert!(
            !attn_cluster_merge(ATTN_MAX_CLUSTER + 1),
            "past the portable cluster size"
        );
        // The decode grid at P = T = 128 (256 positions): 8 splits of 32 at batch 1-2, 4 of 64
        // at batch 3-8 (clusters), one block above; past 256 positions batch 1 has more splits
        // than a cluster holds and o_proj merges them.
        for (batch, want) in [(1, true), (2, true), (4, true), (16, false)] {
            let splits = 256usize.div_ceil(decode_split_len(batch, 256));
            assert_eq!(
                attn_cluster_merge(splits),
                want,
                "batch {batch}: {splits} splits"
            );
        }
        assert!(!attn_cluster_merge(
            2048usize.div_ceil(decode_split_len(1, 2048))
        ));
        assert_eq!(decode_attn_warps(1), 1);
        assert_eq!(decode_attn_warps(4), 2);
        assert_eq!(decode_attn_warps(16), ATTN_MAX_WARPS_PER_HEAD);
        // The tensor-core attention from batch 2 up, where one block takes the whole context.
        let d = tiny();
        assert_eq!(decode_attn_tc_warps(&d, 1, 256), None);
        assert_eq!(decode_attn_tc_warps(&d, 2, 256), Some(8));
        assert_eq!(decode_attn_tc_warps(&d, 16, 256), Some(8));
        assert_eq!(decode_attn_tc_warps(&d, 16, 257), None, "two splits");
        let wide_group = Dims { kv_heads: 1, ..d };
        assert_eq!(decode_attn_tc_warps(&wide_group, 16, 256), None);
        // The layout from the flags: the rules, the CUDA-core kernel asked for (its splits),
        // the tensor-core kernel asked for at batch 4 (the whole context), and requests the
        // split or the model cannot take.
        let lay = |b, ctx, split, tc| decode_attn_layout(&d, b, ctx, split, tc);
        let l = |split_len, tc_warps| DecodeAttnLayout {
            split_len,
            tc_warps,
        };
        assert_eq!(lay(16, 256, None, None).unwrap(), l(256, Some(8)));
        assert_eq!(lay(4, 256, None, None).unwrap(), l(256, Some(8)));
        assert_eq!(lay(1, 256, None, None).unwrap(), l(32, None));
        assert_eq!(lay(4, 256, None, Some(0)).unwrap(), l(64, None));
        assert_eq!(lay(1, 256, None, Some(4)).unwrap(), l(256, Some(4)));
        assert_eq!(
            lay(16, 512, None, None).unwrap(),
            l(256, None),
            "two splits"
        );
        let e = lay(4, 256, Some(64), Some(8)).unwrap_err().to_string();
        assert!(
            e.contains("--opbench-attn-tc-warps 8") && e.contains("splits of 64"),
            "{e}"
        );
        assert!(lay(16, 256, None, Some(ATTN_TC_MAX_WARPS + 1)).is_err());
        assert!(decode_attn_layout(&wide_group, 16, 256, None, Some(8)).is_err());
        assert_eq!(
            decode_attn_layout(&wide_group, 16, 256, None, None).unwrap(),
            l(256, None)
        );
        assert_eq!(s.counters, 512 * 4);
        assert_eq!(s.logits_f32, 4 * 32000);
        let kv = 2 * 22 * s.cache_layer as u64 * 2;
        assert!(s.total_bytes(22) > kv);
    }

    #[test]
    fn configs_the_kernels_cannot_run_are_named() {
        let mut a = named("tinyllama-1.1b").unwrap();
        a.num_key_value_heads = 3;
        assert!(Dims::from_arch(&a)
            .unwrap_err()
            .to_string()
            .contains("grouped"));
        let mut b = named("llama-9m").unwrap();
        b.vocab_size = 32001;
        assert!(Dims::from_arch(&b)
            .unwrap_err()
            .to_string()
            .contains("even"));
        for n in crate::llm::configs::named_config_names() {
            assert!(Dims::from_arch(&named(n).unwrap()).is_ok(), "{n}");
        }
        let f = inv_freq(&tiny());
        assert_eq!(f.len(), 32);
        assert_eq!(f[0], 1.0);
    }
}
