//! Kernel time per NVTX range: each kernel belongs to the ranges open on the host thread that
//! launched it (the thread and time of its API call, found by correlation id), as Nsight
//! Systems projects NVTX ranges onto the GPU. A range named by a module path
//! ("model.layers.3.self_attn", the Python helper's names) gives the per-module totals.
//! *Inclusive* totals count a kernel in every enclosing range (once per name), *self* totals
//! only in the innermost one.

use super::idle::calls_by_correlation;
use super::workload::{NvtxRange, Workload};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// Totals of one range name (ns).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RangeTotal {
    pub name: String,
    /// Times the range was opened.
    pub instances: u64,
    /// Summed host durations of its instances.
    pub range_time_ns: u64,
    pub kernels: u64,
    pub kernel_time_ns: u64,
    pub self_kernels: u64,
    pub self_kernel_time_ns: u64,
}

/// The ranges open at each of `times` (sorted ascending) on one thread, innermost last: one
/// list of indices into `ranges` per time. Ranges are taken as nested (push/pop).
fn open_at(ranges: &[&NvtxRange], times: &[u64]) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..ranges.len()).collect();
    order.sort_by_key(|&i| (ranges[i].start_ns, std::cmp::Reverse(ranges[i].end_ns)));
    let mut stack: Vec<usize> = Vec::new();
    let mut next = 0;
    let mut out = Vec::with_capacity(times.len());
    for &t in times {
        while next < order.len() && ranges[order[next]].start_ns <= t {
            let r = order[next];
            while stack
                .last()
                .is_some_and(|&top| ranges[top].end_ns <= ranges[r].start_ns)
            {
                stack.pop();
            }
            stack.push(r);
            next += 1;
        }
        // Drop ranges that closed before `t`, wherever they sit (start/end ranges overlap).
        stack.retain(|&i| ranges[i].end_ns > t);
        out.push(stack.clone());
    }
    out
}

/// Totals per range name, by inclusive kernel time descending.
pub fn range_totals(w: &Workload) -> Vec<RangeTotal> {
    let mut totals: BTreeMap<String, RangeTotal> = BTreeMap::new();
    for p in &w.processes {
        for r in &p.ranges {
            let t = totals.entry(r.name.clone()).or_default();
            t.instances += 1;
            t.range_time_ns += r.end_ns.saturating_sub(r.start_ns);
        }
        if p.ranges.is_empty() {
            continue;
        }
        let calls = calls_by_correlation(p);
        // Per thread: the kernels' launch times and durations.
        let mut per_tid: HashMap<u32, Vec<(u64, u64)>> = HashMap::new();
        for k in p.kernels() {
            if let Some(c) = calls.get(&k.correlation_id) {
                per_tid
                    .entry(c.tid)
                    .or_default()
                    .push((c.start_ns, k.dur_ns()));
            }
        }
        let mut ranges_by_tid: HashMap<u32, Vec<&NvtxRange>> = HashMap::new();
        for r in &p.ranges {
            ranges_by_tid.entry(r.tid).or_default().push(r);
        }
        for (tid, mut launches) in per_tid {
            let Some(ranges) = ranges_by_tid.get(&tid) else {
                continue;
            };
            launches.sort_unstable();
            let times: Vec<u64> = launches.iter().map(|l| l.0).collect();
            for ((_, dur), open) in launches.iter().zip(open_at(ranges, &times)) {
                let mut seen: Vec<&str> = Vec::with_capacity(open.len());
                for &i in &open {
                    let name = ranges[i].name.as_str();
                    if seen.contains(&name) {
                        continue;
                    }
                    seen.push(name);
                    let t = totals.get_mut(name).expect("every range name has a total");
                    t.kernels += 1;
                    t.kernel_time_ns += dur;
                }
                if let Some(&inner) = open.last() {
                    let t = totals
                        .get_mut(ranges[inner].name.as_str())
                        .expect("every range name has a total");
                    t.self_kernels += 1;
                    t.self_kernel_time_ns += dur;
                }
            }
        }
    }
    let mut v: Vec<RangeTotal> = totals
        .into_iter()
        .map(|(name, t)| RangeTotal { name, ..t })
        .collect();
    v.sort_by(|a, b| {
        b.kernel_time_ns
            .cmp(&a.kernel_time_ns)
            .then(a.name.cmp(&b.name))
    });
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::record::Activity;
    use crate::trace::workload::{ApiCall, ProcessTrace};

    fn range(name: &str, s: u64, e: u64, tid: u32) -> NvtxRange {
        NvtxRange {
            name: name.into(),
            start_ns: s,
            end_ns: e,
            tid,
            end_tid: tid,
            push_pop: true,
        }
    }

    fn call(corr: u32, s: u64, tid: u32) -> ApiCall {
        ApiCall {
            driver: false,
            name: "cudaLaunchKernel".into(),
            start_ns: s,
            end_ns: s + 1,
            tid,
            correlation_id: corr,
            cbid: 211,
            return_value: 0,
        }
    }

    fn k(corr: u32, dur: u64) -> Activity {
        Activity {
            correlation_id: corr,
            ..Activity::kernel("k", 1000, 1000 + dur)
        }
    }

    #[test]
    fn kernels_land_in_the_ranges_open_at_their_launch_on_the_same_thread() {
        // Thread 1: model [0, 100) > layers.0 [10, 40) > attn [20, 30); layers.1 [50, 90).
        // Launches: t=5 (model only, 1 ns), t=25 (model, layers.0, attn: 10 ns),
        // t=35 (model, layers.0: 100 ns), t=60 (model, layers.1: 1000 ns), t=95 on thread 2
        // (no range there: 5 ns), t=200 (after every range: 7 ns).
        let p = ProcessTrace {
            ranges: vec![
                range("model", 0, 100, 1),
                range("model.layers.0", 10, 40, 1),
                range("model.layers.0.attn", 20, 30, 1),
                range("model.layers.1", 50, 90, 1),
                range("other_thread", 0, 10, 2),
            ],
            api: vec![
                call(1, 5, 1),
                call(2, 25, 1),
                call(3, 35, 1),
                call(4, 60, 1),
                call(5, 95, 2),
                call(6, 200, 1),
            ],
            activities: vec![k(1, 1), k(2, 10), k(3, 100), k(4, 1000), k(5, 5), k(6, 7)],
            ..Default::default()
        };
        let v = range_totals(&Workload { processes: vec![p] });
        let get = |n: &str| v.iter().find(|t| t.name == n).unwrap().clone();
        let m = get("model");
        assert_eq!((m.kernels, m.kernel_time_ns), (4, 1111));
        assert_eq!((m.self_kernels, m.self_kernel_time_ns), (1, 1));
        assert_eq!((m.instances, m.range_time_ns), (1, 100));
        let l0 = get("model.layers.0");
        assert_eq!(
            (l0.kernels, l0.kernel_time_ns, l0.self_kernel_time_ns),
            (2, 110, 100)
        );
        let a = get("model.layers.0.attn");
        assert_eq!((a.kernels, a.kernel_time_ns, a.self_kernels), (1, 10, 1));
        let l1 = get("model.layers.1");
        assert_eq!((l1.kernel_time_ns, l1.self_kernel_time_ns), (1000, 1000));
        assert_eq!(get("other_thread").kernels, 0);
        assert_eq!(v[0].name, "model");
        // Self times add up to the kernels inside any range.
        let self_sum: u64 = v.iter().map(|t| t.self_kernel_time_ns).sum();
        assert_eq!(self_sum, 1111);
    }
}
