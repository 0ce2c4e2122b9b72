//! The launch plans `llm_bench --trace` places opbench's kernels in layers with: the decode
//! step from `plan::step_plan`, and prefill in the order `Engine::enqueue_prefill` issues it.

use super::plan::{step_plan, Dims, KernelClass};
use crate::trace::{Half, Layer, Layout, OpClass, Phase, Slot};

/// The decode step's plan kernels as trace slots (one kernel each).
fn decode_slots(d: &Dims) -> Vec<Slot> {
    step_plan(d, 1, 0)
        .iter()
        .map(|k| {
            let class = match k.class {
                KernelClass::Embed => OpClass::Embedding,
                KernelClass::Gemv => OpClass::Matmul,
                KernelClass::Attention => OpClass::Attention,
                KernelClass::Argmax => OpClass::Sampling,
            };
            let (layer, half) = match (k.layer, k.class) {
                (Some(l), _) => {
                    let mlp = matches!(k.name, "gate_up_silu" | "down_residual");
                    (
                        Layer::Block(l),
                        Some(if mlp { Half::Mlp } else { Half::Attn }),
                    )
                }
                (None, KernelClass::Embed) => (Layer::Embedding, None),
                (None, _) => (Layer::Head, None),
            };
            Slot::one(class, layer, half)
        })
        .collect()
}

/// Prefill: the embedding gather; per layer RMSNorm, the QKV GEMM (cuBLAS: one or more
/// kernels), RoPE + cache write, attention, the O GEMM, RMSNorm, the gate/up GEMM, SiLU, the down
/// GEMM; then lm_head (our matrix-vector kernel, final norm fused) and argmax.
fn prefill_slots(d: &Dims) -> Vec<Slot> {
    use OpClass::*;
    let mut v = vec![Slot::one(Embedding, Layer::Embedding, None)];
    for l in 0..d.layers {
        let (b, a, m) = (Layer::Block(l), Some(Half::Attn), Some(Half::Mlp));
        v.extend([
            Slot::one(Rmsnorm, b, a),
            Slot::many(Matmul, b, a),
            Slot::one(Rope, b, a),
            Slot::one(Attention, b, a),
            Slot::many(Matmul, b, a),
            Slot::one(Rmsnorm, b, m),
            Slot::many(Matmul, b, m),
            Slot::one(Elementwise, b, m),
            Slot::many(Matmul, b, m),
        ]);
    }
    v.push(Slot::one(Matmul, Layer::Head, None));
    v.push(Slot::one(Sampling, Layer::Head, None));
    v
}

/// The layout of opbench's steps of `phase`.
pub fn trace_layout(d: &Dims, phase: Phase) -> Layout {
    Layout::Plan(match phase {
        Phase::Prefill => prefill_slots(d),
        Phase::Decode => decode_slots(d),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::configs::named;
    use crate::trace::{analyze_step, Activity, ActivityKind, StepWindow, Trace};

    fn tiny() -> Dims {
        Dims::from_arch(&named("tinyllama-1.1b").unwrap()).unwrap()
    }

    /// A step of `names` (1 µs each, 1 µs apart), with a token download at its end.
    fn step(phase: Phase, names: &[&str]) -> (Trace, StepWindow) {
        let mut acts: Vec<Activity> = names
            .iter()
            .enumerate()
            .map(|(i, n)| Activity::kernel(n, 2_000 * i as u64 + 1_000, 2_000 * i as u64 + 2_000))
            .collect();
        let end = 2_000 * names.len() as u64 + 1_000;
        let mut copy = Activity::kernel("memcpy DtoH", end - 500, end - 100);
        copy.kind = ActivityKind::Memcpy;
        acts.push(copy);
        let w = StepWindow {
            phase,
            step: if phase == Phase::Decode { 64 } else { 0 },
            tokens: 1,
            context_len: 192,
            start_ns: 0,
            end_ns: end,
        };
        let t = Trace {
            steps: vec![w.clone()],
            activities: acts,
            dropped_records: 0,
        };
        (t, w)
    }

    #[test]
    fn a_decode_step_of_our_kernels_gets_every_class_and_layer() {
        let d = tiny();
        let mut names = vec!["decode_embed"];
        for _ in 0..d.layers {
            names.extend([
                "decode_gemv_b1",
                "decode_attn",
                "decode_gemv_b1",
                "decode_gemv_b1",
                "decode_gemv_b1",
            ]);
        }
        names.extend(["decode_gemv_b1", "decode_argmax"]);
        assert_eq!(names.len(), 113);
        let (t, w) = step(Phase::Decode, &names);
        let s = analyze_step(&t, &w, &trace_layout(&d, Phase::Decode));
        assert!(s.anchors.layers_assigned, "{:?}", s.anchors);
        assert_eq!(s.by_class[&OpClass::Matmul].count, 4 * 22 + 1);
        assert_eq!(s.by_class[&OpClass::Attention].count, 22);
        assert_eq!(s.by_class[&OpClass::Embedding].count, 1);
        assert_eq!(s.by_class[&OpClass::Sampling].count, 1);
        assert!(!s.by_class.contains_key(&OpClass::Other));
        assert_eq!(s.by_layer.len(), 24, "embedding, 22 layers, head");
        assert_eq!(s.by_layer[&Layer::Block(21)].count, 5);
        // lm_head, argmax and the token download.
        assert_eq!(s.by_layer[&Layer::Head].count, 3);
        let halves: Vec<_> = s.attributed[1..6].iter().map(|(_, a)| a.half).collect();
        let (a, m) = (Some(Half::Attn), Some(Half::Mlp));
        assert_eq!(halves, vec![a, a, a, m, m]);
        // One kernel missing: classes only.
        names.remove(3);
        let (t, w) = step(Phase::Decode, &names);
        let s = analyze_step(&t, &w, &trace_layout(&d, Phase::Decode));
        assert!(!s.anchors.layers_assigned);
        assert!(s.attributed.iter().all(|(_, a)| a.layer.is_none()));
    }

    #[test]
    fn a_prefill_with_cublas_gemms_and_a_split_k_reduce_is_placed_by_the_plan() {
        let d = tiny();
        let gemm = "nvjet_sm90_hsh_128x128_64x4_1x2_h_bz_coopA_TNT";
        let reduce = "_Z19splitKreduce_kernelILi32ELi16Ei6__halfS0_";
        let mut names = vec!["decode_embed"];
        for l in 0..d.layers {
            names.extend([
                "decode_rmsnorm",
                gemm,
                "decode_rope_cache",
                "decode_attn",
                gemm,
            ]);
            names.extend(["decode_rmsnorm", gemm, "decode_silu", gemm]);
            if l == d.layers - 1 {
                names.push(reduce);
            }
        }
        names.extend(["decode_gemv_b1", "decode_argmax"]);
        let (t, w) = step(Phase::Prefill, &names);
        let s = analyze_step(&t, &w, &trace_layout(&d, Phase::Prefill));
        assert!(s.anchors.layers_assigned, "{:?}", s.anchors);
        assert_eq!(s.by_class[&OpClass::Rmsnorm].count, 44);
        assert_eq!(s.by_class[&OpClass::Rope].count, 22);
        assert_eq!(s.by_class[&OpClass::Elementwise].count, 22);
        assert_eq!(
            s.by_layer[&Layer::Block(21)].count,
            10,
            "the reduce stays in layer 21"
        );
        assert_eq!(s.by_layer[&Layer::Head].count, 3);
        let last = s.attributed.iter().rev().nth(2).unwrap();
        assert_eq!(last.0.name, "decode_gemv_b1");
        assert_eq!(last.1.layer, Some(Layer::Head));
    }
}
