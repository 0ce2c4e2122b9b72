//! Idle time per stream, split as Holistic Trace Analysis does: between two consecutive
//! activities of a stream, the gap is *kernel wait* when it is at most the back-to-back launch
//! overhead (`KERNEL_WAIT_MAX_NS`), *host wait* when the host had not yet called the API that
//! started the next one (the GPU waited for the CPU to enqueue work), and *other* otherwise
//! (waiting on another stream, an event or a synchronization).

use super::calls::CallIndex;
use super::record::Activity;
use super::workload::{paused_ns_within, PausedSpan, Workload};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Gaps at most this long between consecutive activities of a stream are launch overhead
/// (HTA's `consecutive_kernel_delay`, 30 ns by default).
pub const KERNEL_WAIT_MAX_NS: u64 = 30;

/// The idle split of one stream (ns).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreamIdle {
    pub pid: u32,
    pub device: u32,
    pub stream: u32,
    pub activities: usize,
    /// First start to last end.
    pub span_ns: u64,
    /// Summed gaps between consecutive activities (span minus the union of the activities).
    pub idle_ns: u64,
    pub host_wait_ns: u64,
    pub kernel_wait_ns: u64,
    pub other_ns: u64,
}

/// The idle split of one stream's activities (any order); time inside `paused` (recording
/// paused by the program) is neither idle nor part of the span.
pub fn stream_idle(
    pid: u32,
    device: u32,
    stream: u32,
    acts: &mut [&Activity],
    calls: &CallIndex,
    paused: &[PausedSpan],
) -> StreamIdle {
    acts.sort_by_key(|a| (a.start_ns, a.end_ns));
    let mut s = StreamIdle {
        pid,
        device,
        stream,
        activities: acts.len(),
        span_ns: 0,
        idle_ns: 0,
        host_wait_ns: 0,
        kernel_wait_ns: 0,
        other_ns: 0,
    };
    let Some(first) = acts.first() else {
        return s;
    };
    let mut reach = first.end_ns;
    for b in &acts[1..] {
        let gap = b
            .start_ns
            .saturating_sub(reach)
            .saturating_sub(paused_ns_within(paused, reach, b.start_ns));
        if gap > 0 {
            s.idle_ns += gap;
            let launched = calls.get(b.correlation_id).map(|c| c.start_ns);
            if gap <= KERNEL_WAIT_MAX_NS {
                s.kernel_wait_ns += gap;
            } else if launched.is_some_and(|t| t >= reach) {
                s.host_wait_ns += gap;
            } else {
                s.other_ns += gap;
            }
        }
        reach = reach.max(b.end_ns);
    }
    s.span_ns = reach - first.start_ns - paused_ns_within(paused, first.start_ns, reach);
    s
}

/// One split per (pid, device, stream), in that order; whole graph executions (graph-level
/// tracing) occupy their stream like a kernel.
pub fn idle_by_stream(w: &Workload) -> Vec<StreamIdle> {
    let mut out = Vec::new();
    for p in &w.processes {
        let calls = CallIndex::new(p);
        let graphs: Vec<Activity> = p.graphs.iter().map(|g| g.as_activity()).collect();
        let mut by: BTreeMap<(u32, u32), Vec<&Activity>> = BTreeMap::new();
        for a in p.activities.iter().chain(&graphs) {
            by.entry((a.device, a.stream)).or_default().push(a);
        }
        for ((d, st), mut acts) in by {
            out.push(stream_idle(p.pid, d, st, &mut acts, &calls, &p.paused));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::workload::{ApiCall, ProcessTrace};

    fn call(corr: u32, start: u64) -> ApiCall {
        ApiCall {
            driver: false,
            name: "cudaLaunchKernel".into(),
            start_ns: start,
            end_ns: start + 5,
            tid: 1,
            correlation_id: corr,
            cbid: 211,
            return_value: 0,
        }
    }

    fn k(corr: u32, s: u64, e: u64) -> Activity {
        Activity {
            correlation_id: corr,
            ..Activity::kernel("k", s, e)
        }
    }

    #[test]
    fn gaps_split_into_host_wait_kernel_wait_and_other() {
        // k1 0-100. k2 launched at 150 (after k1 ended), runs 200-300: 100 ns host wait.
        // k3 launched at 160 (early), runs 320-400: 20 ns gap <= 30: kernel wait.
        // k4 launched at 170 (early), runs 500-600: 100 ns waiting on something else: other.
        // k5 overlaps k4 (520-580): no gap. k6 has no API call: 50 ns other.
        let acts = [
            k(1, 0, 100),
            k(2, 200, 300),
            k(3, 320, 400),
            k(4, 500, 600),
            k(5, 520, 580),
            k(6, 650, 700),
        ];
        let calls_v = [
            call(1, 0),
            call(2, 150),
            call(3, 160),
            call(4, 170),
            call(5, 171),
        ];
        let p = ProcessTrace {
            api: calls_v.to_vec(),
            ..Default::default()
        };
        let calls = CallIndex::new(&p);
        let mut refs: Vec<&Activity> = acts.iter().rev().collect();
        let s = stream_idle(1, 0, 0, &mut refs, &calls, &[]);
        assert_eq!(s.span_ns, 700);
        assert_eq!(s.host_wait_ns, 100);
        assert_eq!(s.kernel_wait_ns, 20);
        assert_eq!(s.other_ns, 100 + 50);
        assert_eq!(s.idle_ns, 270);
        assert_eq!(s.idle_ns, s.host_wait_ns + s.kernel_wait_ns + s.other_ns);
    }

    #[test]
    fn time_the_program_had_recording_paused_is_neither_idle_nor_span() {
        // k1 0-100, paused 150-900, k2 1000-1100 (no API call): 50 + 100 ns other, not 900.
        let acts = [k(1, 0, 100), k(2, 1000, 1100)];
        let none = ProcessTrace::default();
        let calls = CallIndex::new(&none);
        let paused = [PausedSpan {
            from_ns: 150,
            to_ns: Some(900),
        }];
        let mut refs: Vec<&Activity> = acts.iter().collect();
        let s = stream_idle(1, 0, 0, &mut refs, &calls, &paused);
        assert_eq!((s.idle_ns, s.other_ns, s.span_ns), (150, 150, 350));
        // A pause that covers the whole gap leaves no idle time at all.
        let whole = [PausedSpan {
            from_ns: 0,
            to_ns: None,
        }];
        let mut refs: Vec<&Activity> = acts.iter().collect();
        let s = stream_idle(1, 0, 0, &mut refs, &calls, &[whole[0]]);
        assert_eq!((s.idle_ns, s.span_ns), (0, 0));
        assert_eq!(paused_ns_within(&paused, 0, 1100), 750);
        assert_eq!(paused_ns_within(&whole, 100, 1000), 900);
    }

    #[test]
    fn streams_are_kept_apart() {
        let mut a = k(0, 0, 10);
        a.stream = 7;
        let b = k(0, 100, 110);
        let w = Workload {
            processes: vec![ProcessTrace {
                activities: vec![a, b],
                ..Default::default()
            }],
        };
        let v = idle_by_stream(&w);
        assert_eq!(v.len(), 2);
        assert!(v.iter().all(|s| s.idle_ns == 0 && s.activities == 1));
    }
}
