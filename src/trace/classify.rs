//! Model-aware attribution of a Llama step's kernels: an operation class from the kernel name
//! (plus its position inside the attention block), and a layer from the order of kernels,
//! anchored on the RMSNorm kernels (two per decoder layer, one final norm).

use super::record::{Activity, ActivityKind};
use serde::{Deserialize, Serialize};

/// Operation classes of a transformer step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpClass {
    /// Weight matmuls / GEMVs (Q, K, V, O, gate, up, down, lm_head) with their split-K reduces.
    Matmul,
    Rmsnorm,
    Rope,
    /// Scores and weighted values (f32 matmuls in candle), scale, mask, softmax, and the casts
    /// to and from f32 that candle's attention does.
    Attention,
    /// copy2d/ucopy: KV-cache concat, repeat_kv (grouped-query heads), contiguous layouts.
    KvCopy,
    /// Residual adds, SiLU, gating multiply, other casts.
    Elementwise,
    /// Argmax / sampling of the next token.
    Sampling,
    /// Token-embedding gather (index_select).
    Embedding,
    Memcpy,
    Memset,
    Other,
}

impl OpClass {
    pub const ALL: [OpClass; 11] = [
        OpClass::Matmul,
        OpClass::Rmsnorm,
        OpClass::Rope,
        OpClass::Attention,
        OpClass::KvCopy,
        OpClass::Elementwise,
        OpClass::Sampling,
        OpClass::Embedding,
        OpClass::Memcpy,
        OpClass::Memset,
        OpClass::Other,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            OpClass::Matmul => "matmul",
            OpClass::Rmsnorm => "rmsnorm",
            OpClass::Rope => "rope",
            OpClass::Attention => "attention",
            OpClass::KvCopy => "kv_copy",
            OpClass::Elementwise => "elementwise",
            OpClass::Sampling => "sampling",
            OpClass::Embedding => "embedding",
            OpClass::Memcpy => "memcpy",
            OpClass::Memset => "memset",
            OpClass::Other => "other",
        }
    }
}

/// Where in the model a kernel ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Layer {
    /// Before the first RMSNorm: token upload and embedding gather.
    Embedding,
    /// Decoder layer (0-based).
    Block(usize),
    /// From the final RMSNorm on: norm, lm_head, logits cast, argmax, token download.
    Head,
}

impl Layer {
    /// "embedding", "0".."21", "head": the label used in rows and exports.
    pub fn label(self) -> String {
        match self {
            Layer::Embedding => "embedding".into(),
            Layer::Block(l) => l.to_string(),
            Layer::Head => "head".into(),
        }
    }
}

/// Attention or MLP half of a decoder layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Half {
    Attn,
    Mlp,
}

/// The class and place of one activity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attribution {
    pub class: OpClass,
    /// None when the step's RMSNorm anchors did not match the model's layer count.
    pub layer: Option<Layer>,
    pub half: Option<Half>,
}

/// How the layer attribution of one step went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnchorReport {
    /// What was counted: "rmsnorm kernels" (candle) or "kernels matching the launch plan".
    pub rule: String,
    /// Anchors found in the step.
    pub found: usize,
    /// Anchors the layout needs.
    pub expected: usize,
    /// Layers were assigned (the anchors matched the layout).
    pub layers_assigned: bool,
}

/// How kernel names become classes, for the artifact.
pub const CLASS_RULES: &str = "class: kernel-name rules (rmsnorm -> rmsnorm; rope -> rope; \
softmax/attn -> attention; copy2d/ucopy -> kv_copy; nvjet/gemm/gemv/cutlass/xmma/splitKreduce/\
cuBLAS internal -> matmul (opbench's decode_gemv kernels too, with the RMSNorm, RoPE, KV-cache \
write, SiLU and residual add fused into them); argmax -> sampling; is_u32 (index_select)/embed -> \
embedding; cast/badd/bmul/usilu/silu/affine/where -> elementwise)";

/// How candle's steps are attributed (`attribute_by_norms`), for the artifact.
pub const NORM_ANCHORS_METHOD: &str = "candle: class by name, then by position: inside a \
layer's attention half, the matmul, cast, affine and where kernels after the last rope kernel up to the first cast after the softmax are attention \
(candle's f32 scores, scale, mask, softmax, weighted values). layer: candle's Llama issues exactly \
2 x layers + 1 rmsnorm kernels per forward (input and post-attention norm per layer, final norm); \
activities are ordered by start time; those before the first rmsnorm are 'embedding', those from \
rmsnorm 2L up to rmsnorm 2L+2 are layer L (attention half up to rmsnorm 2L+1, MLP half after), \
those from the final rmsnorm on are 'head'. A step whose rmsnorm count differs gets no layers.";

/// The class a kernel (or copy, memset) gets from its name alone.
pub fn class_by_name(kind: ActivityKind, name: &str) -> OpClass {
    match kind {
        ActivityKind::Memcpy => return OpClass::Memcpy,
        ActivityKind::Memset => return OpClass::Memset,
        ActivityKind::Kernel => {}
    }
    let n = name.to_ascii_lowercase();
    let has = |s: &str| n.contains(s);
    if has("rmsnorm") || has("layernorm") || has("layer_norm") {
        OpClass::Rmsnorm
    } else if has("rope") || has("rotary") {
        OpClass::Rope
    } else if has("softmax") || has("flash") || has("attn") || has("fmha") {
        OpClass::Attention
    } else if has("argmax") || has("argmin") || has("sample") || has("topk") {
        OpClass::Sampling
    } else if has("copy2d") || has("ucopy") {
        OpClass::KvCopy
    } else if has("nvjet")
        || has("gemm")
        || has("gemv")
        || has("cutlass")
        || has("xmma")
        || has("splitkreduce")
        || has("cublas")
        || n.starts_with("_zn8internal")
    {
        OpClass::Matmul
    } else if n.starts_with("is_") || has("index_select") || has("embed") {
        OpClass::Embedding
    } else if n.starts_with("cast_")
        || n.starts_with("badd")
        || n.starts_with("bmul")
        || n.starts_with("bsub")
        || n.starts_with("bdiv")
        || n.starts_with("bmaximum")
        || n.starts_with("bminimum")
        || has("silu")
        || n.starts_with("ugelu")
        || n.starts_with("uexp")
        || n.starts_with("uneg")
        || n.starts_with("usqrt")
        || n.starts_with("affine")
        || n.starts_with("where")
        || n.starts_with("fill")
        || n.starts_with("const_set")
        || n.starts_with("powf")
        || n.starts_with("elu")
        // PyTorch's and Triton's pointwise kernels, for workloads traced by `trace`.
        || has("elementwise")
        || n.starts_with("triton_poi")
    {
        OpClass::Elementwise
    } else {
        OpClass::Other
    }
}

fn is_cast(a: &Activity) -> bool {
    a.kind == ActivityKind::Kernel && a.name.to_ascii_lowercase().starts_with("cast_")
}

/// Each activity's class by name, with no layer yet.
pub fn by_name(acts: &[&Activity]) -> Vec<Attribution> {
    acts.iter()
        .map(|a| Attribution {
            class: class_by_name(a.kind, &a.name),
            layer: None,
            half: None,
        })
        .collect()
}

/// Attributes the activities of one candle forward step (sorted by start time) of a model with
/// `layers` decoder layers, anchored on its RMSNorm kernels. One attribution per activity.
pub fn attribute_by_norms(acts: &[&Activity], layers: usize) -> (Vec<Attribution>, AnchorReport) {
    let mut out = by_name(acts);
    let anchors: Vec<usize> = out
        .iter()
        .enumerate()
        .filter(|(_, c)| c.class == OpClass::Rmsnorm)
        .map(|(i, _)| i)
        .collect();
    let expected = 2 * layers + 1;
    let report = AnchorReport {
        rule: "rmsnorm kernels".into(),
        found: anchors.len(),
        expected,
        layers_assigned: layers > 0 && anchors.len() == expected,
    };
    if !report.layers_assigned {
        return (out, report);
    }
    for (i, at) in out.iter_mut().enumerate() {
        // Number of anchors at or before i.
        let k = anchors.partition_point(|&a| a <= i);
        if k == 0 {
            at.layer = Some(Layer::Embedding);
        } else if k == expected {
            at.layer = Some(Layer::Head);
        } else {
            let l = (k - 1) / 2;
            at.layer = Some(Layer::Block(l));
            at.half = Some(if (k - 1) % 2 == 0 {
                Half::Attn
            } else {
                Half::Mlp
            });
        }
    }
    // Attention region of each layer: after the last rope kernel, through the first cast after
    // the softmax (candle's f32 attention); matmul/elementwise/other kernels there are attention.
    for l in 0..layers {
        let (lo, hi) = (anchors[2 * l], anchors[2 * l + 1]);
        let idx: Vec<usize> = (lo..hi).collect();
        let Some(&last_rope) = idx.iter().rev().find(|&&i| out[i].class == OpClass::Rope) else {
            continue;
        };
        let Some(&soft) = idx
            .iter()
            .rev()
            .find(|&&i| out[i].class == OpClass::Attention && i > last_rope)
        else {
            continue;
        };
        let end = idx
            .iter()
            .copied()
            .find(|&i| i > soft && is_cast(acts[i]))
            .unwrap_or(soft);
        for at in &mut out[last_rope + 1..=end] {
            if matches!(
                at.class,
                OpClass::Matmul | OpClass::Elementwise | OpClass::Other
            ) {
                at.class = OpClass::Attention;
            }
        }
    }
    (out, report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_map_to_classes() {
        let k = ActivityKind::Kernel;
        assert_eq!(class_by_name(k, "rmsnorm_f16"), OpClass::Rmsnorm);
        assert_eq!(class_by_name(k, "rope_f16"), OpClass::Rope);
        assert_eq!(class_by_name(k, "copy2d_f16"), OpClass::KvCopy);
        assert_eq!(
            class_by_name(k, "nvjet_sm90_hsh_64x8_64x16_4x1_v_bz_TNT"),
            OpClass::Matmul
        );
        assert_eq!(class_by_name(k, "fast_argmax_f32"), OpClass::Sampling);
        assert_eq!(class_by_name(k, "is_u32_f16"), OpClass::Embedding);
        assert_eq!(class_by_name(k, "usilu_f16"), OpClass::Elementwise);
        assert_eq!(class_by_name(k, "mystery_kernel"), OpClass::Other);
        assert_eq!(
            class_by_name(k, "vectorized_elementwise_kernel"),
            OpClass::Elementwise
        );
        assert_eq!(
            class_by_name(k, "triton_poi_fused_add_0"),
            OpClass::Elementwise
        );
        assert_eq!(
            class_by_name(k, "fmha_cutlassF_f16_aligned"),
            OpClass::Attention
        );
        assert_eq!(class_by_name(ActivityKind::Memcpy, "x"), OpClass::Memcpy);
    }

    #[test]
    fn opbench_kernel_names_map_to_classes() {
        let k = ActivityKind::Kernel;
        for (name, class) in [
            ("decode_embed", OpClass::Embedding),
            ("decode_gemv_b1", OpClass::Matmul),
            ("decode_gemv_b16", OpClass::Matmul),
            ("decode_gemv_tc_b4", OpClass::Matmul),
            ("decode_attn", OpClass::Attention),
            ("decode_attn_tc_d64", OpClass::Attention),
            ("decode_argmax", OpClass::Sampling),
            ("decode_rmsnorm", OpClass::Rmsnorm),
            ("decode_rope_cache", OpClass::Rope),
            ("decode_silu", OpClass::Elementwise),
        ] {
            assert_eq!(class_by_name(k, name), class, "{name}");
        }
    }
}
