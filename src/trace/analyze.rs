//! Per-step arithmetic on a trace: GPU busy time (union of activity intervals), idle gaps
//! between activities, and time per operation class and per layer.

use super::classify::{AnchorReport, Attribution, Layer, OpClass};
use super::layout::{attribute, Layout};
use super::record::{Activity, ActivityKind, StepWindow, Trace};
use std::collections::BTreeMap;

/// Length of the union of the intervals [start, end) (ns). Overlaps count once.
pub fn busy_ns(intervals: &[(u64, u64)]) -> u64 {
    merged(intervals).iter().map(|(s, e)| e - s).sum()
}

fn merged(intervals: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let mut v: Vec<(u64, u64)> = intervals.iter().filter(|(s, e)| e > s).copied().collect();
    v.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(v.len());
    for (s, e) in v {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// The idle gaps (ns) between consecutive busy periods: the GPU had nothing to run.
pub fn gaps_ns(intervals: &[(u64, u64)]) -> Vec<u64> {
    merged(intervals)
        .windows(2)
        .map(|w| w[1].0 - w[0].1)
        .collect()
}

/// Count and time of a group of activities.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Agg {
    pub count: usize,
    /// Sum of activity durations (ns). Overlapping activities (a kernel launched with
    /// programmatic dependent launch starts, and waits, while its predecessor runs) count fully.
    pub time_ns: u64,
    /// The busy time the group's activities add (`busy_added_ns`): over all groups of a step
    /// these sum to its busy time.
    pub busy_ns: u64,
    /// Bytes copied/set by memcpy/memset records in the group.
    pub bytes: u64,
}

impl Agg {
    fn add(&mut self, a: &Activity, busy_added: u64) {
        self.count += 1;
        self.time_ns += a.dur_ns();
        self.busy_ns += busy_added;
        self.bytes += a.bytes;
    }
}

/// The busy time each interval adds to the union of those before it in start order: from the
/// later of its start and the latest end so far, to its end (0 when it ends earlier). For
/// intervals sorted by start, the sum equals `busy_ns`.
pub fn busy_added_ns(sorted_by_start: &[(u64, u64)]) -> Vec<u64> {
    let mut reach = 0u64;
    sorted_by_start
        .iter()
        .map(|&(s, e)| {
            let added = e.saturating_sub(s.max(reach));
            reach = reach.max(e);
            added
        })
        .collect()
}

/// Everything derived from one step.
#[derive(Debug, Clone, PartialEq)]
pub struct StepAnalysis {
    pub window: StepWindow,
    pub kernels: usize,
    pub memcpys: usize,
    pub memsets: usize,
    /// Host window: from before the step's first operation was issued to after the sync.
    pub wall_ns: u64,
    /// Union of all activity intervals.
    pub busy_ns: u64,
    /// wall - busy.
    pub idle_ns: u64,
    /// First activity start - last activity end.
    pub span_ns: u64,
    /// Idle time between activities inside the span (span - busy).
    pub gap_ns: u64,
    /// Window start to the first activity's start (host issue latency of the first op).
    pub lead_ns: u64,
    /// Last activity's end to the window's end (sync and host readback).
    pub tail_ns: u64,
    /// Each gap between busy periods (ns), in order.
    pub gaps: Vec<u64>,
    pub by_class: BTreeMap<OpClass, Agg>,
    pub by_layer: BTreeMap<Layer, Agg>,
    /// Per layer and class (the layer breakdown's stacks).
    pub by_layer_class: BTreeMap<(Layer, OpClass), Agg>,
    pub anchors: AnchorReport,
    /// The step's activities (sorted by start) with their attribution.
    pub attributed: Vec<(Activity, Attribution)>,
}

impl StepAnalysis {
    pub fn idle_pct(&self) -> f64 {
        pct(self.idle_ns, self.wall_ns)
    }
}

pub fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

/// The analysed steps of one implementation's traced generation.
#[derive(Debug, Clone, PartialEq)]
pub struct ImplSteps {
    /// The artifact's `implementation` ("candle", "opbench").
    pub implementation: String,
    pub steps: Vec<StepAnalysis>,
}

/// Analyses one step of `trace`, placing its activities in layers by `layout`.
pub fn analyze_step(trace: &Trace, w: &StepWindow, layout: &Layout) -> StepAnalysis {
    let acts = trace.step_activities(w);
    let (attr, anchors) = attribute(&acts, layout);
    let iv: Vec<(u64, u64)> = acts.iter().map(|a| (a.start_ns, a.end_ns)).collect();
    let busy = busy_ns(&iv);
    let first = acts.iter().map(|a| a.start_ns).min();
    let last = acts.iter().map(|a| a.end_ns).max();
    let span = match (first, last) {
        (Some(f), Some(l)) => l.saturating_sub(f),
        _ => 0,
    };
    let added = busy_added_ns(&iv);
    let mut by_class = BTreeMap::new();
    let mut by_layer = BTreeMap::new();
    let mut by_layer_class = BTreeMap::new();
    for ((a, at), &x) in acts.iter().zip(&attr).zip(&added) {
        by_class
            .entry(at.class)
            .or_insert_with(Agg::default)
            .add(a, x);
        if let Some(l) = at.layer {
            by_layer.entry(l).or_insert_with(Agg::default).add(a, x);
            by_layer_class
                .entry((l, at.class))
                .or_insert_with(Agg::default)
                .add(a, x);
        }
    }
    let count = |k: ActivityKind| acts.iter().filter(|a| a.kind == k).count();
    let wall = w.wall_ns();
    StepAnalysis {
        window: w.clone(),
        kernels: count(ActivityKind::Kernel),
        memcpys: count(ActivityKind::Memcpy),
        memsets: count(ActivityKind::Memset),
        wall_ns: wall,
        busy_ns: busy,
        idle_ns: wall.saturating_sub(busy),
        span_ns: span,
        gap_ns: span.saturating_sub(busy),
        lead_ns: first.map_or(0, |f| f.saturating_sub(w.start_ns)),
        tail_ns: last.map_or(0, |l| w.end_ns.saturating_sub(l)),
        gaps: gaps_ns(&iv),
        by_class,
        by_layer,
        by_layer_class,
        anchors,
        attributed: acts.iter().map(|a| (*a).clone()).zip(attr).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_merges_overlaps_and_gaps_are_between_busy_periods() {
        let iv = [(10, 20), (15, 25), (30, 40), (40, 45), (50, 50), (60, 61)];
        assert_eq!(busy_ns(&iv), 15 + 15 + 1);
        assert_eq!(gaps_ns(&iv), vec![5, 15]);
        assert_eq!(busy_ns(&[]), 0);
        assert!(gaps_ns(&[(0, 5)]).is_empty());
    }

    #[test]
    fn busy_added_splits_overlapping_kernels_so_it_sums_to_busy() {
        // A kernel that starts while its predecessor runs is credited from the predecessor's
        // end; one inside another adds nothing; a gap adds nothing to the next.
        let iv = [(0, 10), (4, 16), (6, 12), (20, 25), (22, 30)];
        let added = busy_added_ns(&iv);
        assert_eq!(added, vec![10, 6, 0, 5, 5]);
        assert_eq!(added.iter().sum::<u64>(), busy_ns(&iv));
    }
}
