//! Kernel time per NVTX range, by two rules side by side.
//! - *Thread*: a kernel belongs to the ranges open on the host thread that launched it (the
//!   thread and time of its API call, found by correlation id), as Nsight Systems projects
//!   NVTX ranges onto the GPU. A range named by a module path ("model.layers.3.self_attn", the
//!   Python helper's names) gives the per-module totals. *Inclusive* totals count a kernel in
//!   every enclosing range (once per name), *self* totals only in the innermost one.
//! - *Window*: a kernel belongs to a range when any thread of the range's process launched it
//!   while the range was open, as torch.profiler and HTA count a step: PyTorch launches the
//!   backward pass from its autograd thread, so a `backward` range opened on the main thread
//!   holds those kernels only by this rule. A kernel without its launch call (`--api none`)
//!   counts by its GPU start. Once per name, however many instances overlap.

use super::calls::CallIndex;
use super::workload::Workload;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

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
    /// Kernels any thread of the process launched while an instance was open (window rule).
    #[serde(default)]
    pub window_kernels: u64,
    #[serde(default)]
    pub window_kernel_time_ns: u64,
}

/// Range totals by name id, with the ids of the names.
struct Totals<'a> {
    ids: HashMap<&'a str, usize>,
    rows: Vec<RangeTotal>,
    /// Per name id: the last launch counted in its inclusive total (no name counts twice).
    stamp: Vec<u64>,
}

impl<'a> Totals<'a> {
    fn id(&mut self, name: &'a str) -> usize {
        *self.ids.entry(name).or_insert_with(|| {
            self.rows.push(RangeTotal {
                name: name.to_string(),
                ..Default::default()
            });
            self.stamp.push(u64::MAX);
            self.rows.len() - 1
        })
    }
}

/// Adds the kernels launched on one thread to the totals: `ranges` (name ids, start, end) of
/// the thread, `launches` (call start, kernel duration) sorted by start. Ranges are taken as
/// nested (push/pop); one that closed before a launch is dropped wherever it sits in the
/// stack (start/end ranges may overlap).
fn add_thread(t: &mut Totals, ranges: &mut [(usize, u64, u64)], launches: &[(u64, u64)]) {
    ranges.sort_by_key(|&(_, s, e)| (s, std::cmp::Reverse(e)));
    let mut stack: Vec<(usize, u64)> = Vec::new();
    let mut next = 0;
    for (n, &(at, dur)) in launches.iter().enumerate() {
        while next < ranges.len() && ranges[next].1 <= at {
            let (id, s, e) = ranges[next];
            while stack.last().is_some_and(|&(_, end)| end <= s) {
                stack.pop();
            }
            stack.push((id, e));
            next += 1;
        }
        stack.retain(|&(_, end)| end > at);
        for &(id, _) in &stack {
            if t.stamp[id] != n as u64 {
                t.stamp[id] = n as u64;
                t.rows[id].kernels += 1;
                t.rows[id].kernel_time_ns += dur;
            }
        }
        if let Some(&(inner, _)) = stack.last() {
            t.rows[inner].self_kernels += 1;
            t.rows[inner].self_kernel_time_ns += dur;
        }
    }
    // Stamps are per thread's launch numbers: reset for the next thread.
    t.stamp.iter_mut().for_each(|s| *s = u64::MAX);
}

/// Adds the window totals of one process: `ranges` (name id, start, end) of every thread,
/// `launches` (launch time, kernel duration) of every thread sorted by time. Each name's
/// instances are merged into disjoint spans first, so a kernel counts once per name.
fn add_window(t: &mut Totals, ranges: &mut [(usize, u64, u64)], launches: &[(u64, u64)]) {
    let mut prefix_ns = Vec::with_capacity(launches.len() + 1);
    prefix_ns.push(0u64);
    for &(_, d) in launches {
        prefix_ns.push(prefix_ns.last().copied().unwrap_or(0).saturating_add(d));
    }
    let count = |s: u64, e: u64| {
        let a = launches.partition_point(|&(at, _)| at < s);
        let b = launches.partition_point(|&(at, _)| at < e);
        ((b - a) as u64, prefix_ns[b] - prefix_ns[a])
    };
    ranges.sort_unstable_by_key(|&(id, s, _)| (id, s));
    let mut i = 0;
    while i < ranges.len() {
        let (id, s, mut e) = ranges[i];
        let mut j = i + 1;
        while j < ranges.len() && ranges[j].0 == id && ranges[j].1 <= e {
            e = e.max(ranges[j].2);
            j += 1;
        }
        let (n, ns) = count(s, e);
        t.rows[id].window_kernels += n;
        t.rows[id].window_kernel_time_ns += ns;
        i = j;
    }
}

/// Totals per range name, by the larger of inclusive and window kernel time, descending.
pub fn range_totals(w: &Workload) -> Vec<RangeTotal> {
    let mut t = Totals {
        ids: HashMap::new(),
        rows: Vec::new(),
        stamp: Vec::new(),
    };
    for p in &w.processes {
        let mut ranges_by_tid: HashMap<u32, Vec<(usize, u64, u64)>> = HashMap::new();
        for r in &p.ranges {
            let id = t.id(&r.name);
            t.rows[id].instances += 1;
            t.rows[id].range_time_ns += r.end_ns.saturating_sub(r.start_ns);
            ranges_by_tid
                .entry(r.tid)
                .or_default()
                .push((id, r.start_ns, r.end_ns));
        }
        if p.ranges.is_empty() {
            continue;
        }
        let calls = CallIndex::new(p);
        let mut per_tid: HashMap<u32, Vec<(u64, u64)>> = HashMap::new();
        let mut all: Vec<(u64, u64)> = Vec::new();
        for k in p.kernels() {
            match calls.get(k.correlation_id) {
                Some(c) => {
                    all.push((c.start_ns, k.dur_ns()));
                    if ranges_by_tid.contains_key(&c.tid) {
                        per_tid
                            .entry(c.tid)
                            .or_default()
                            .push((c.start_ns, k.dur_ns()));
                    }
                }
                None => all.push((k.start_ns, k.dur_ns())),
            }
        }
        all.sort_unstable();
        let mut every: Vec<(usize, u64, u64)> = ranges_by_tid.values().flatten().copied().collect();
        add_window(&mut t, &mut every, &all);
        for (tid, mut launches) in per_tid {
            launches.sort_unstable();
            if let Some(ranges) = ranges_by_tid.get_mut(&tid) {
                add_thread(&mut t, ranges, &launches);
            }
        }
    }
    let mut v = t.rows;
    let key = |r: &RangeTotal| r.kernel_time_ns.max(r.window_kernel_time_ns);
    v.sort_by(|a, b| key(b).cmp(&key(a)).then(a.name.cmp(&b.name)));
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::record::Activity;
    use crate::trace::workload::{ApiCall, NvtxRange, ProcessTrace};

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
        // By window, model [0, 100) also holds thread 2's launch at t=95, and other_thread
        // [0, 10) holds thread 1's launch at t=5.
        assert_eq!((m.window_kernels, m.window_kernel_time_ns), (5, 1116));
        assert_eq!(
            (
                get("other_thread").window_kernels,
                get("other_thread").window_kernel_time_ns
            ),
            (1, 1)
        );
    }

    #[test]
    fn a_range_by_window_holds_the_kernels_another_thread_launched_while_it_was_open() {
        // Main thread 1: step [0, 100) holding fwd [0, 40) and bwd [40, 90) twice-opened
        // ([40, 60) and [55, 90): overlapping instances count a kernel once). The autograd
        // thread 2 launches at 45, 58 and 70, inside bwd, and at 95, inside step only; thread
        // 1 launches at 10 (fwd). A kernel without its launch call counts by its GPU start.
        let p = ProcessTrace {
            ranges: vec![
                range("step", 0, 100, 1),
                range("fwd", 0, 40, 1),
                range("bwd", 40, 60, 1),
                range("bwd", 55, 90, 1),
            ],
            api: vec![
                call(1, 10, 1),
                call(2, 45, 2),
                call(3, 58, 2),
                call(4, 70, 2),
                call(5, 95, 2),
            ],
            activities: vec![
                k(1, 1),
                k(2, 10),
                k(3, 100),
                k(4, 1000),
                k(5, 10000),
                Activity {
                    correlation_id: 99,
                    ..Activity::kernel("no_call", 50, 57)
                },
            ],
            ..Default::default()
        };
        let v = range_totals(&Workload { processes: vec![p] });
        let get = |n: &str| v.iter().find(|t| t.name == n).unwrap().clone();
        let bwd = get("bwd");
        assert_eq!((bwd.kernels, bwd.kernel_time_ns), (0, 0), "thread rule");
        assert_eq!((bwd.window_kernels, bwd.window_kernel_time_ns), (4, 1117));
        assert_eq!(bwd.instances, 2);
        let step = get("step");
        assert_eq!((step.kernels, step.window_kernels), (1, 6));
        assert_eq!(step.window_kernel_time_ns, 11118);
        assert_eq!(
            (get("fwd").window_kernels, get("fwd").window_kernel_time_ns),
            (1, 1)
        );
    }
}
