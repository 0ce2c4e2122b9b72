//! How a step's activities are placed in layers: candle's RMSNorm anchors, or the launch plan
//! of an implementation that knows the order of the kernels it issues (opbench).

use super::classify::{
    attribute_by_norms, by_name, AnchorReport, Attribution, Half, Layer, OpClass, CLASS_RULES,
    NORM_ANCHORS_METHOD,
};
use super::record::{Activity, ActivityKind};

/// One expected kernel (or run of kernels) of a launch plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    /// The class the kernel's name must give (`class_by_name`).
    pub class: OpClass,
    pub layer: Layer,
    pub half: Option<Half>,
    /// One or more consecutive kernels of `class` (a cuBLAS GEMM may launch a split-K reduce
    /// after its main kernel); otherwise exactly one.
    pub many: bool,
}

impl Slot {
    pub fn one(class: OpClass, layer: Layer, half: Option<Half>) -> Self {
        Slot {
            class,
            layer,
            half,
            many: false,
        }
    }

    pub fn many(class: OpClass, layer: Layer, half: Option<Half>) -> Self {
        Slot {
            many: true,
            ..Slot::one(class, layer, half)
        }
    }
}

/// The layer rule of one implementation's steps.
#[derive(Debug, Clone, PartialEq)]
pub enum Layout {
    /// candle's Llama: 2 x layers + 1 RMSNorm kernels per forward (`attribute_by_norms`).
    NormAnchors { layers: usize },
    /// The kernels in the order the implementation issues them; a step whose kernels do not
    /// match the plan gets no layers.
    Plan(Vec<Slot>),
}

/// How steps of an opbench-style launch plan are attributed, for the artifact.
pub const PLAN_METHOD: &str = "opbench: class by name; layer from the launch plan: the \
step's kernels, ordered by start time, must match the plan's sequence of classes one to one (a \
cuBLAS GEMM of prefill may be several consecutive matmul kernels); each kernel takes its plan \
slot's layer (embedding gather -> 'embedding', decoder layer L, lm_head and argmax -> 'head'); \
a copy or memset takes the layer of the kernel before it ('embedding' before the first). A step \
that does not match the plan gets no layers.";

impl Layout {
    /// The attribution rules of this layout, for the artifact's notes.
    pub fn method(&self) -> String {
        match self {
            Layout::NormAnchors { .. } => format!("{CLASS_RULES}; {NORM_ANCHORS_METHOD}"),
            Layout::Plan(_) => format!("{CLASS_RULES}; {PLAN_METHOD}"),
        }
    }
}

/// Attributes the activities of one step (sorted by start time) under `layout`. Returns one
/// attribution per activity, in order.
pub fn attribute(acts: &[&Activity], layout: &Layout) -> (Vec<Attribution>, AnchorReport) {
    match layout {
        Layout::NormAnchors { layers } => attribute_by_norms(acts, *layers),
        Layout::Plan(slots) => attribute_by_plan(acts, slots),
    }
}

/// Matches the step's kernels against `slots`; `Some(slot index per kernel)` when every kernel
/// and every slot is used. A run of one or more kernels leaves one kernel to each following slot
/// of the same class (the last GEMM of prefill is followed by the lm_head matmul).
fn match_plan(classes: &[OpClass], slots: &[Slot]) -> Option<Vec<usize>> {
    let mut out = Vec::with_capacity(classes.len());
    let mut k = 0;
    for (si, s) in slots.iter().enumerate() {
        let run = classes[k.min(classes.len())..]
            .iter()
            .take_while(|&&c| c == s.class)
            .count();
        let after = slots[si + 1..]
            .iter()
            .take_while(|n| n.class == s.class)
            .count();
        let take = if s.many {
            run.saturating_sub(after)
        } else {
            run.min(1)
        };
        if take == 0 {
            return None;
        }
        out.extend(std::iter::repeat_n(si, take));
        k += take;
    }
    (k == classes.len()).then_some(out)
}

fn attribute_by_plan(acts: &[&Activity], slots: &[Slot]) -> (Vec<Attribution>, AnchorReport) {
    let mut out = by_name(acts);
    let kernels: Vec<usize> = (0..acts.len())
        .filter(|&i| acts[i].kind == ActivityKind::Kernel)
        .collect();
    let classes: Vec<OpClass> = kernels.iter().map(|&i| out[i].class).collect();
    let matched = match_plan(&classes, slots);
    let report = AnchorReport {
        rule: "kernels matching the launch plan".into(),
        found: kernels.len(),
        expected: slots.len(),
        layers_assigned: matched.is_some() && !slots.is_empty(),
    };
    let Some(slot_of) = matched else {
        return (out, report);
    };
    let mut place = (Layer::Embedding, None);
    let mut next_kernel = kernels.iter().zip(&slot_of).peekable();
    for (i, at) in out.iter_mut().enumerate() {
        if let Some((_, &si)) = next_kernel.next_if(|(&k, _)| k == i) {
            place = (slots[si].layer, slots[si].half);
        }
        (at.layer, at.half) = (Some(place.0), place.1);
    }
    (out, report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use OpClass::*;

    #[test]
    fn a_plan_matches_runs_of_matmuls_and_nothing_else() {
        let e = Layer::Embedding;
        let slots = [
            Slot::one(Embedding, e, None),
            Slot::many(Matmul, Layer::Block(0), None),
            Slot::one(Sampling, Layer::Head, None),
        ];
        assert_eq!(
            match_plan(&[Embedding, Matmul, Matmul, Sampling], &slots),
            Some(vec![0, 1, 1, 2])
        );
        assert_eq!(match_plan(&[Embedding, Sampling], &slots), None);
        assert_eq!(
            match_plan(&[Embedding, Matmul, Sampling, Other], &slots),
            None
        );
        let one = [Slot::one(Matmul, e, None)];
        assert_eq!(match_plan(&[Matmul, Matmul], &one), None);
        assert_eq!(match_plan(&[], &one), None);
        // A run followed by a single slot of the same class leaves it its kernel.
        let tail = [
            Slot::many(Matmul, Layer::Block(0), None),
            Slot::one(Matmul, Layer::Head, None),
            Slot::one(Sampling, Layer::Head, None),
        ];
        assert_eq!(
            match_plan(&[Matmul, Matmul, Matmul, Sampling], &tail),
            Some(vec![0, 0, 1, 2])
        );
        assert_eq!(match_plan(&[Matmul, Sampling], &tail), None);
    }
}
