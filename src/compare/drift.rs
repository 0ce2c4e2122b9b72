//! Verdicts that hold across boards and hosts: the controls of the same runs say how far the
//! machine itself moved, and our own code is judged against that move.
//!
//! Rules, applied in this order to every judged line (each line names the one that decided it):
//! 1. `clocks`: a point not measured at full clocks on either side (`Side::throttled`), or
//!    measured after the clocks recovered on one side only (two methods: top-clock time
//!    against the power-capped steady state), is never FASTER or SLOWER; such a verdict
//!    becomes UNCERTAIN.
//! 2. `library`: implementations the project never changes (`identity::is_library`: cuBLAS,
//!    candle, PyTorch, transformers, Triton) keep their verdicts, but a move of theirs is the
//!    machine's drift, never a regression.
//! 3. `drift`: per GPU pair, kind and quantity, the log-ratios head/base of the library lines
//!    (and, for durations, of the ceilings measured in the same processes: copy bandwidth,
//!    matrix rate, launch interval) give the machine's shift (their median, from
//!    [`MIN_FOR_SHIFT`] values on) and its spread (the 90th percentile of their distance from
//!    the shift). Our lines are judged again with the base scaled by the shift and a minimum
//!    effect of max(--min-effect, spread). The drift only makes verdicts more careful: a
//!    FASTER or SLOWER that it explains becomes SAME (or UNCERTAIN), an UNCERTAIN whose whole
//!    plausible change lies inside the spread becomes SAME, and it never turns SAME into
//!    FASTER or SLOWER.
//! 4. `intervals`: otherwise the verdict of `verdict::judge` (disjoint 95% intervals of the
//!    median and the minimum effect) stands.
//!
//! Host-side quantities (`ttft_ms`, `e2e_ms`, `decode_enqueue_ms`) are grouped by quantity, so
//! they are judged against the library implementations' host-side quantities of the same run:
//! a slower host moves them all.

use super::line::{Change, Line};
use super::verdict::{judge, Direction, Verdict};
use crate::history::HistoryRun;
use crate::identity::is_library;
use std::collections::BTreeMap;

/// Control values needed before their median is taken as the machine's shift; with fewer, the
/// shift is 0 and the spread is the largest of them.
pub const MIN_FOR_SHIFT: usize = 5;

/// How far the machine moved for one group of lines, from its controls.
#[derive(Debug, Clone, PartialEq)]
pub struct Drift {
    /// Median head/base ratio of the controls (1.0 = no shift).
    pub shift: f64,
    /// 90th percentile of the controls' distance from the shift, as a fraction.
    pub spread: f64,
    /// Library lines and ceilings it was taken from.
    pub controls: usize,
}

impl Drift {
    /// Shift and spread of these log-ratios (None when there are none).
    pub fn of(log_ratios: &[f64]) -> Option<Drift> {
        if log_ratios.is_empty() {
            return None;
        }
        let mut v = log_ratios.to_vec();
        v.sort_by(f64::total_cmp);
        let (shift, spread) = if v.len() >= MIN_FOR_SHIFT {
            let shift = quantile(&v, 0.5);
            let mut dev: Vec<f64> = v.iter().map(|x| (x - shift).abs()).collect();
            dev.sort_by(f64::total_cmp);
            (shift, quantile(&dev, 0.9))
        } else {
            (0.0, v.iter().map(|x| x.abs()).fold(0.0, f64::max))
        };
        Some(Drift {
            shift: shift.exp(),
            spread: spread.exp() - 1.0,
            controls: v.len(),
        })
    }

    /// "controls moved -1.2% (median of 46), 90% within +-4.1%".
    pub fn text(&self) -> String {
        format!(
            "controls moved {:+.1}% (median of {}), 90% within +-{:.1}%",
            (self.shift - 1.0) * 100.0,
            self.controls,
            self.spread * 100.0
        )
    }
}

/// Type-7 quantile of sorted values.
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let h = (sorted.len() - 1) as f64 * q;
    let (lo, hi) = (h.floor() as usize, h.ceil() as usize);
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

/// Head/base log-ratios of the ceilings both sides measured, in the direction of a duration
/// (a copy 2% slower counts as +2%), per kind: the newest run of each kind on each side.
pub fn ceiling_moves(base: &[&HistoryRun], head: &[&HistoryRun]) -> BTreeMap<String, Vec<f64>> {
    let newest = |runs: &[&HistoryRun], kind: &str| {
        runs.iter()
            .filter(|r| r.kind() == kind)
            .max_by_key(|r| r.started())
            .map(|r| r.record.ceilings.clone())
    };
    let mut out = BTreeMap::new();
    for kind in base.iter().map(|r| r.kind()) {
        let (Some(b), Some(h)) = (newest(base, kind), newest(head, kind)) else {
            continue;
        };
        let mut v = Vec::new();
        let mut rate = |b: Option<f64>, h: Option<f64>| {
            if let (Some(b), Some(h)) = (b, h) {
                if b > 0.0 && h > 0.0 {
                    v.push((b / h).ln());
                }
            }
        };
        rate(b.copy_gbps, h.copy_gbps);
        for (dtype, tb) in &b.matmul_tflops {
            rate(Some(*tb), h.matmul_tflops.get(dtype).copied());
        }
        if let (Some(bi), Some(hi)) = (b.launch_interval_us, h.launch_interval_us) {
            if bi > 0.0 && hi > 0.0 {
                v.push((hi / bi).ln());
            }
        }
        out.insert(kind.to_string(), v);
    }
    out
}

/// A group of lines judged against one drift.
type GroupKey = (String, String, String);

fn group_of(l: &Line) -> GroupKey {
    (l.gpu.clone(), l.point.kind.clone(), l.stat.clone())
}

/// Applies the rules of this module's header to `lines`; `ceilings` holds, per GPU label and
/// kind, the ceilings' log-ratios (see [`ceiling_moves`]). Returns the drift of every group
/// that had controls.
pub fn apply(
    lines: &mut [Line],
    ceilings: &BTreeMap<(String, String), Vec<f64>>,
    min_effect: f64,
) -> BTreeMap<GroupKey, Drift> {
    let intervals = format!(
        "intervals: disjoint 95% intervals of the median, and a change of at least {:.0}%",
        min_effect * 100.0
    );
    let mut controls: BTreeMap<GroupKey, Vec<f64>> = BTreeMap::new();
    for l in lines.iter_mut() {
        let Change::Compared(j) = &mut l.change else {
            continue;
        };
        let throttled: Vec<&str> = [("base", &l.base), ("head", &l.head)]
            .into_iter()
            .filter(|(_, s)| s.as_ref().is_some_and(|s| s.throttled))
            .map(|(name, _)| name)
            .collect();
        let recovered = |s: &Option<super::line::Side>| s.as_ref().is_some_and(|s| s.recovered);
        let clocks = if !throttled.is_empty() {
            Some(format!(
                "clocks: not measured at full clocks in {}; never judged FASTER or SLOWER",
                throttled.join(" and ")
            ))
        } else if recovered(&l.base) != recovered(&l.head) {
            let (after, before) = if recovered(&l.head) {
                ("head", "base")
            } else {
                ("base", "head")
            };
            Some(format!(
                "clocks: {after} was measured after the clocks recovered, {before} back to back \
                 under the power limit; two methods are never judged FASTER or SLOWER"
            ))
        } else {
            None
        };
        if let Some(rule) = clocks {
            if matches!(j.verdict, Verdict::Faster | Verdict::Slower) {
                j.verdict = Verdict::Uncertain;
            }
            l.rule = Some(rule);
            continue;
        }
        l.rule = Some(intervals.clone());
        if is_library(&l.point.implementation) {
            if l.control.is_none() {
                l.control = Some("library: the machine's drift".into());
            }
            l.rule = Some(format!("library: a control; {intervals}"));
            if let Some(r) = j.ratio.filter(|r| *r > 0.0) {
                controls.entry(group_of(l)).or_default().push(r.ln());
            }
        }
    }
    let mut drifts = BTreeMap::new();
    for (key, mut v) in controls {
        if Direction::of_stat(&key.2) == Direction::LowerIsBetter {
            if let Some(c) = ceilings.get(&(key.0.clone(), key.1.clone())) {
                v.extend(c);
            }
        }
        if let Some(d) = Drift::of(&v) {
            drifts.insert(key, d);
        }
    }
    // Kinds with no library lines (kernel_bench) still have their ceilings.
    for ((gpu, kind), c) in ceilings {
        for l in lines.iter() {
            let key = group_of(l);
            if matches!(l.change, Change::Compared(_))
                && key.0 == *gpu
                && key.1 == *kind
                && Direction::of_stat(&key.2) == Direction::LowerIsBetter
                && !drifts.contains_key(&key)
            {
                if let Some(d) = Drift::of(c) {
                    drifts.insert(key, d);
                }
            }
        }
    }
    for l in lines.iter_mut() {
        if is_library(&l.point.implementation) {
            continue;
        }
        let (Some(d), Some(b), Some(h)) = (drifts.get(&group_of(l)), &l.base, &l.head) else {
            continue;
        };
        let Change::Compared(j) = &mut l.change else {
            continue;
        };
        if b.throttled || h.throttled || b.recovered != h.recovered {
            continue;
        }
        let mut scaled = b.brief();
        scaled.p50 *= d.shift;
        scaled.median_ci95 = [b.median_ci95[0] * d.shift, b.median_ci95[1] * d.shift];
        let adj = judge(
            &scaled,
            &h.brief(),
            Direction::of_stat(&l.stat),
            min_effect.max(d.spread),
        );
        let verdict = match (j.verdict, adj.verdict) {
            (Verdict::Same, _) => Verdict::Same,
            (Verdict::Uncertain, Verdict::Same) => Verdict::Same,
            (Verdict::Uncertain, _) => Verdict::Uncertain,
            (raw, adj) if raw == adj => raw,
            (_, Verdict::Same) => Verdict::Same,
            _ => Verdict::Uncertain,
        };
        if verdict != j.verdict || d.spread > min_effect || d.shift != 1.0 {
            l.rule = Some(format!(
                "drift: {}; judged against that shift with a change of at least {:.1}%",
                d.text(),
                min_effect.max(d.spread) * 100.0
            ));
        }
        j.verdict = verdict;
    }
    drifts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::line::Side;
    use crate::compare::verdict::Judgement;
    use crate::identity::Identity;

    fn side(p50: f64, throttled: bool) -> Side {
        Side {
            p50,
            median_ci95: [p50 * 0.998, p50 * 1.002],
            n: 50,
            run_id: "r".into(),
            throttled,
            recovered: false,
        }
    }

    fn line(imp: &str, m: i64, base: f64, head: f64) -> Line {
        let params = [("m".to_string(), crate::artifact::Param::Int(m))]
            .into_iter()
            .collect();
        let (b, h) = (side(base, false), side(head, false));
        let j = judge(
            &b.brief(),
            &h.brief(),
            Direction::LowerIsBetter,
            crate::compare::DEFAULT_MIN_EFFECT,
        );
        Line {
            gpu: "H200".into(),
            point: Identity::ignoring("gemm", "gemm", imp, &params, &[]),
            settings: vec![],
            variant: None,
            stat: "time_us".into(),
            base: Some(b),
            head: Some(h),
            change: Change::Compared(j),
            control: None,
            rule: None,
        }
    }

    fn verdict(l: &Line) -> Verdict {
        match l.change {
            Change::Compared(Judgement { verdict, .. }) => verdict,
            _ => panic!("not judged"),
        }
    }

    #[test]
    fn shift_and_spread_of_the_controls() {
        let d = Drift::of(&[0.0, 0.01, 0.02, 0.03, 0.04].map(|x: f64| x)).unwrap();
        assert!((d.shift - 0.02f64.exp()).abs() < 1e-12);
        // Distances 0.02, 0.01, 0, 0.01, 0.02: the 90th percentile is 0.02.
        assert!((d.spread - (0.02f64.exp() - 1.0)).abs() < 1e-12);
        let few = Drift::of(&[-0.03, 0.01]).unwrap();
        assert_eq!(few.shift, 1.0);
        assert!((few.spread - (0.03f64.exp() - 1.0)).abs() < 1e-12);
        assert!(Drift::of(&[]).is_none());
    }

    #[test]
    fn a_board_that_moved_every_control_does_not_make_our_code_slower() {
        // The head board is 6% slower for cuBLAS at every size; ours moved the same way.
        let mut lines: Vec<Line> = (0..6)
            .map(|i| line("cublas", i, 100.0, 106.0 + i as f64 * 0.2))
            .collect();
        lines.push(line("tma_ws", 1, 120.0, 127.0));
        let drifts = apply(&mut lines, &BTreeMap::new(), 0.03);
        let ours = lines.last().unwrap();
        assert_eq!(verdict(ours), Verdict::Same, "{:?}", ours.rule);
        assert!(ours
            .rule
            .as_deref()
            .unwrap()
            .starts_with("drift: controls moved +6.5%"));
        // The library lines stay SLOWER but are no regression.
        assert_eq!(verdict(&lines[0]), Verdict::Slower);
        assert!(!lines[0].is_regression());
        assert_eq!(drifts.len(), 1);
    }

    #[test]
    fn a_real_regression_beyond_the_drift_is_still_slower() {
        let mut lines: Vec<Line> = (0..6)
            .map(|i| line("cublas", i, 100.0, 101.0 + (i % 3) as f64))
            .collect();
        lines.push(line("tma_ws", 1, 120.0, 138.0));
        apply(&mut lines, &BTreeMap::new(), 0.03);
        let ours = lines.last().unwrap();
        assert_eq!(verdict(ours), Verdict::Slower);
        assert!(ours.is_regression());
        assert!(ours.rule.as_deref().unwrap().starts_with("drift:"));
    }

    #[test]
    fn the_drift_never_makes_same_into_a_verdict() {
        // Controls 10% faster; ours unchanged: still SAME, not SLOWER relative to the board.
        let mut lines: Vec<Line> = (0..6).map(|i| line("cublas", i, 100.0, 90.0)).collect();
        lines.push(line("tma_ws", 1, 120.0, 120.0));
        apply(&mut lines, &BTreeMap::new(), 0.03);
        assert_eq!(verdict(lines.last().unwrap()), Verdict::Same);
    }

    #[test]
    fn throttled_points_are_never_faster_or_slower() {
        let mut l = line("tma_ws", 1, 100.0, 120.0);
        l.head.as_mut().unwrap().throttled = true;
        let mut lines = vec![l];
        apply(&mut lines, &BTreeMap::new(), 0.03);
        assert_eq!(verdict(&lines[0]), Verdict::Uncertain);
        assert!(lines[0].rule.as_deref().unwrap().starts_with("clocks: "));
        assert!(!lines[0].is_regression());
    }

    #[test]
    fn one_side_measured_after_recovery_is_another_method() {
        let mut l = line("tma_ws", 1, 110.0, 100.0);
        l.head.as_mut().unwrap().recovered = true;
        let mut lines = vec![l];
        apply(&mut lines, &BTreeMap::new(), 0.03);
        assert_eq!(verdict(&lines[0]), Verdict::Uncertain);
        assert!(lines[0].rule.as_deref().unwrap().contains("two methods"));
        // Both sides recovered: judged as usual.
        let mut l = line("tma_ws", 1, 110.0, 100.0);
        l.head.as_mut().unwrap().recovered = true;
        l.base.as_mut().unwrap().recovered = true;
        let mut lines = vec![l];
        apply(&mut lines, &BTreeMap::new(), 0.03);
        assert_eq!(verdict(&lines[0]), Verdict::Faster);
    }

    #[test]
    fn ceilings_give_a_drift_where_there_are_no_library_lines() {
        let mut lines = vec![line("matmul_tiled", 1, 100.0, 104.0)];
        let mut c = BTreeMap::new();
        c.insert(("H200".to_string(), "gemm".to_string()), vec![0.045]);
        apply(&mut lines, &c, 0.03);
        assert_eq!(verdict(&lines[0]), Verdict::Same);
        // Without the ceiling's move, 4% with tight intervals is SLOWER.
        let mut lines = vec![line("matmul_tiled", 1, 100.0, 104.0)];
        apply(&mut lines, &BTreeMap::new(), 0.03);
        assert_eq!(verdict(&lines[0]), Verdict::Slower);
        assert!(lines[0].rule.as_deref().unwrap().starts_with("intervals:"));
    }

    #[test]
    fn library_names() {
        for lib in [
            "cublas",
            "candle",
            "torch",
            "torch-compile",
            "transformers-eager",
            "triton",
        ] {
            assert!(is_library(lib), "{lib}");
        }
        for ours in ["opbench", "tma_ws_128x256", "matmul_naive"] {
            assert!(!is_library(ours), "{ours}");
        }
    }
}
