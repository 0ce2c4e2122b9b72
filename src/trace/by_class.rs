//! Time per kernel class of a traced workload: the classes of `classify.rs` by kernel name,
//! named for any workload (its Llama-specific names generalised: matmul -> gemm, rmsnorm (which
//! also matches LayerNorm) -> norm, kv_copy -> copy), plus communication (NCCL, NVSHMEM) from the
//! temporal breakdown's rule.

use super::breakdown::{kernel_type, KernelType};
use super::classify::{class_by_name, OpClass};
use super::record::Activity;
use super::workload::Workload;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// One class's activities.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassTotal {
    pub class: String,
    pub count: u64,
    /// Summed durations (overlapping activities count fully).
    pub time_ns: u64,
    /// time_ns / the summed duration of every activity, in percent.
    pub time_pct: f64,
}

fn name(c: OpClass) -> &'static str {
    match c {
        OpClass::Matmul => "gemm",
        OpClass::Rmsnorm => "norm",
        OpClass::KvCopy => "copy",
        other => other.as_str(),
    }
}

/// The class of an activity (what `class_totals` sums by).
pub fn activity_class(a: &Activity) -> &'static str {
    if kernel_type(a) == KernelType::Communication {
        "communication"
    } else {
        name(class_by_name(a.kind, &a.name))
    }
}

/// Totals per class, by time descending.
pub fn class_totals(w: &Workload) -> Vec<ClassTotal> {
    let mut cache: HashMap<(super::record::ActivityKind, &str), &'static str> = HashMap::new();
    let mut by: HashMap<&'static str, (u64, u64)> = HashMap::new();
    for a in w.processes.iter().flat_map(|p| &p.activities) {
        let c = *cache
            .entry((a.kind, a.name.as_str()))
            .or_insert_with(|| activity_class(a));
        let e = by.entry(c).or_default();
        e.0 += 1;
        e.1 += a.dur_ns();
    }
    let all: u64 = by.values().map(|v| v.1).sum();
    let mut v: Vec<ClassTotal> = by
        .into_iter()
        .map(|(class, (count, time_ns))| ClassTotal {
            class: class.to_string(),
            count,
            time_ns,
            time_pct: super::analyze::pct(time_ns, all),
        })
        .collect();
    v.sort_by(|a, b| b.time_ns.cmp(&a.time_ns).then(a.class.cmp(&b.class)));
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::record::{Activity, ActivityKind};
    use crate::trace::workload::ProcessTrace;

    #[test]
    fn kernels_fall_in_generic_classes_by_name() {
        let k = |n: &str, d: u64| Activity::kernel(n, 0, d);
        let copy = Activity {
            kind: ActivityKind::Memcpy,
            ..k("[CUDA memcpy Host-to-Device]", 10)
        };
        let w = Workload {
            processes: vec![ProcessTrace {
                activities: vec![
                    k("sm90_xmma_gemm_f16f16_f16f32", 50),
                    k("nvjet_tst_128x256", 30),
                    k("layer_norm_kernel", 5),
                    k("ncclDevKernel_AllReduce_Sum_f16_RING_LL", 20),
                    k("flash_fwd_kernel", 15),
                    k("vectorized_elementwise_kernel", 4),
                    k("mystery", 10),
                    copy,
                ],
                ..Default::default()
            }],
        };
        let v = class_totals(&w);
        let get = |c: &str| v.iter().find(|t| t.class == c).unwrap().clone();
        assert_eq!((get("gemm").count, get("gemm").time_ns), (2, 80));
        assert_eq!(get("norm").time_ns, 5);
        assert_eq!(get("communication").time_ns, 20);
        assert_eq!(get("attention").time_ns, 15);
        assert_eq!(get("memcpy").count, 1);
        assert_eq!(get("other").time_ns, 10);
        assert_eq!(get("elementwise").time_ns, 4);
        // 80 of 144 ns; the largest first.
        assert!((get("gemm").time_pct - 100.0 * 80.0 / 144.0).abs() < 1e-9);
        assert_eq!(v[0].class, "gemm");
    }
}
