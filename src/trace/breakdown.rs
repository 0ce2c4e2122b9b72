//! Temporal breakdown per process and GPU, as Holistic Trace Analysis defines it: over the span
//! from the first activity's start to the last one's end, the time the GPU ran computation,
//! communication (NCCL) or memory (copies, memsets) and the time it ran nothing. Where kinds
//! overlap, computation counts first and communication before memory, so the four add up to
//! the span (a whole graph's execution, recorded at graph level, is computation). With it, HTA's communication-computation overlap: the share of communication time
//! during which computation ran too.

use super::analyze::busy_ns;
use super::classify::{class_by_name, OpClass};
use super::record::Activity;
use super::workload::{paused_ns_within, PausedSpan, Workload};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// HTA's kernel types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KernelType {
    Computation,
    Communication,
    Memory,
}

/// Name fragments of collective and point-to-point communication kernels (NCCL, NVSHMEM).
const COMMUNICATION: [&str; 8] = [
    "nccl",
    "nvshmem",
    "allreduce",
    "all_reduce",
    "allgather",
    "all_gather",
    "reducescatter",
    "reduce_scatter",
];

/// The type of one activity: copies and memsets are memory (classify.rs's classes), kernels
/// with a collective's name communication, every other kernel computation.
pub fn kernel_type(a: &Activity) -> KernelType {
    match class_by_name(a.kind, &a.name) {
        OpClass::Memcpy | OpClass::Memset => KernelType::Memory,
        _ => {
            let n = a.name.to_ascii_lowercase();
            if COMMUNICATION.iter().any(|c| n.contains(c)) {
                KernelType::Communication
            } else {
                KernelType::Computation
            }
        }
    }
}

/// The breakdown of one process on one GPU (ns).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Temporal {
    pub pid: u32,
    pub device: u32,
    pub span_ns: u64,
    pub compute_ns: u64,
    /// Communication not overlapped by computation.
    pub communication_ns: u64,
    /// Memory activity overlapped by neither.
    pub memory_ns: u64,
    pub idle_ns: u64,
    /// All communication time (the union of its kernels), overlapped or not.
    pub communication_all_ns: u64,
    /// The part of `communication_all_ns` that ran while computation ran too (HTA's
    /// communication-computation overlap).
    pub communication_overlapped_ns: u64,
}

impl Temporal {
    pub fn pct(&self, part: u64) -> f64 {
        super::analyze::pct(part, self.span_ns)
    }
}

/// The breakdown of `acts` (one process, one GPU); time inside `paused` (recording paused by
/// the program) is left out of the span.
pub fn temporal(pid: u32, device: u32, acts: &[&Activity], paused: &[PausedSpan]) -> Temporal {
    // Each name's type once: the name rules lowercase and scan the name.
    let mut cache: HashMap<(super::record::ActivityKind, &str), KernelType> = HashMap::new();
    let types: Vec<KernelType> = acts
        .iter()
        .map(|a| {
            *cache
                .entry((a.kind, a.name.as_str()))
                .or_insert_with(|| kernel_type(a))
        })
        .collect();
    let iv = |pick: &dyn Fn(KernelType) -> bool| -> Vec<(u64, u64)> {
        acts.iter()
            .zip(&types)
            .filter(|(_, &t)| pick(t))
            .map(|(a, _)| (a.start_ns, a.end_ns))
            .collect()
    };
    let compute = busy_ns(&iv(&|t| t == KernelType::Computation));
    let comm = busy_ns(&iv(&|t| t == KernelType::Communication));
    let compute_comm = busy_ns(&iv(&|t| t != KernelType::Memory));
    let all = busy_ns(&iv(&|_| true));
    let first = acts.iter().map(|a| a.start_ns).min().unwrap_or(0);
    let last = acts.iter().map(|a| a.end_ns).max().unwrap_or(0);
    let span = last
        .saturating_sub(first)
        .saturating_sub(paused_ns_within(paused, first, last));
    Temporal {
        pid,
        device,
        span_ns: span,
        compute_ns: compute,
        communication_ns: compute_comm - compute,
        memory_ns: all - compute_comm,
        idle_ns: span.saturating_sub(all),
        communication_all_ns: comm,
        // |C and M| = |C| + |M| - |C or M|.
        communication_overlapped_ns: compute + comm - compute_comm,
    }
}

/// One breakdown per process and GPU, ordered by (pid, device). A whole graph's execution
/// (graph-level tracing) counts as computation.
pub fn temporal_breakdown(w: &Workload) -> Vec<Temporal> {
    let mut out = Vec::new();
    for p in &w.processes {
        let graphs: Vec<Activity> = p.graphs.iter().map(|g| g.as_activity()).collect();
        let mut by_dev: BTreeMap<u32, Vec<&Activity>> = BTreeMap::new();
        for a in p.activities.iter().chain(&graphs) {
            by_dev.entry(a.device).or_default().push(a);
        }
        for (d, acts) in by_dev {
            out.push(temporal(p.pid, d, &acts, &p.paused));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::record::ActivityKind;

    fn act(kind: ActivityKind, name: &str, s: u64, e: u64) -> Activity {
        Activity {
            kind,
            ..Activity::kernel(name, s, e)
        }
    }

    #[test]
    fn the_four_parts_follow_precedence_and_add_up_to_the_span() {
        use ActivityKind::*;
        // gemm 0-100; nccl 50-150 (50 hidden under gemm); memcpy 140-200 (10 under nccl);
        // nothing 200-250; relu 250-300; memset 260-270 (hidden under relu).
        let acts = [
            act(Kernel, "gemm", 0, 100),
            act(Kernel, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 50, 150),
            act(Memcpy, "memcpy", 140, 200),
            act(Kernel, "relu", 250, 300),
            act(Memset, "memset", 260, 270),
        ];
        let refs: Vec<&Activity> = acts.iter().collect();
        let t = temporal(1, 0, &refs, &[]);
        assert_eq!(t.span_ns, 300);
        assert_eq!(t.compute_ns, 150);
        assert_eq!(t.communication_ns, 50);
        assert_eq!(t.memory_ns, 50);
        assert_eq!(t.idle_ns, 50);
        assert_eq!(
            t.compute_ns + t.communication_ns + t.memory_ns + t.idle_ns,
            t.span_ns
        );
        assert_eq!(t.pct(t.compute_ns), 50.0);
        // Recording paused 210-240 by the program: 30 ns of the gap are neither idle nor span.
        let paused = [PausedSpan {
            from_ns: 210,
            to_ns: Some(240),
        }];
        let p = temporal(1, 0, &refs, &paused);
        assert_eq!((p.span_ns, p.idle_ns), (270, 20));
        // nccl 50-150: 100 ns in all, 50 of them under gemm.
        assert_eq!(
            (t.communication_all_ns, t.communication_overlapped_ns),
            (100, 50)
        );
    }

    #[test]
    fn a_graph_execution_is_computation() {
        use crate::trace::workload::{GraphExec, ProcessTrace};
        // memcpy 0-100, a graph 50-150 on another stream: 100 compute, 50 memory.
        let p = ProcessTrace {
            activities: vec![act(ActivityKind::Memcpy, "memcpy", 0, 100)],
            graphs: vec![GraphExec {
                start_ns: 50,
                end_ns: 150,
                device: 0,
                stream: 3,
                correlation_id: 1,
                graph_id: 2,
            }],
            ..Default::default()
        };
        let t = &temporal_breakdown(&Workload { processes: vec![p] })[0];
        assert_eq!(
            (t.compute_ns, t.memory_ns, t.idle_ns, t.span_ns),
            (100, 50, 0, 150)
        );
    }

    #[test]
    fn kernel_types_come_from_names() {
        let k = |n| kernel_type(&Activity::kernel(n, 0, 1));
        assert_eq!(
            k("ncclKernel_AllGather_RING_LL_Sum_int8_t"),
            KernelType::Communication
        );
        assert_eq!(k("nvjet_sm90_tst_128x256"), KernelType::Computation);
        let m = act(ActivityKind::Memset, "x", 0, 1);
        assert_eq!(kernel_type(&m), KernelType::Memory);
    }
}
