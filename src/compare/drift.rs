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
//!    machine's drift, never a regression. A library line whose version (its `code`,
//!    `code_id::tag_library`) differs between the sides says so and is no control of the drift.
//! 3. `drift`: per GPU pair, kind and quantity, the log-ratios head/base of the library lines
//!    (and, for durations, of the ceilings measured in the same processes: copy bandwidth,
//!    matrix rate, launch interval) give the machine's shift (their median, from
//!    [`MIN_FOR_SHIFT`] values on) and its spread (the 90th percentile of their distance from
//!    the shift). Our lines are judged again with the base scaled by the shift and a minimum
//!    effect of max(--min-effect, spread). The drift only makes verdicts more careful: a
//!    FASTER or SLOWER that it explains becomes SAME (or UNCERTAIN), an UNCERTAIN whose whole
//!    plausible change lies inside the spread becomes SAME, and it never turns SAME into
//!    FASTER or SLOWER. For per-launch kernel times (`time_us`), the fixed cost of a launch is
//!    a control of its own: the launch interval of a trivial kernel measured in the same
//!    processes (`ceilings.launch_interval_us`). A board or host that launches 0.17 us slower
//!    makes a 4 us kernel 4% slower and a 400 us one 0.04%, so that move is added to the base
//!    (after the shift) rather than scaled: short, launch-bound kernels are judged against the
//!    launch cost of their own machine, long ones are untouched.
//!    The same is done with the controls of a similar duration only (base medians within
//!    [`TIME_SCALE`] of the line's, from [`MIN_FOR_SHIFT`] of them on), and the more careful
//!    of the two judgements stands: long kernels under the power limit drift more than the
//!    benchmark's median control does.
//! 4. `spread`: a FASTER or SLOWER whose base median lies within the head's P5-P95 samples,
//!    or whose head median lies within the base's, becomes UNCERTAIN. The medians then differ
//!    less than the point's own samples do on one side: a bimodal point (short GEMMs whose
//!    samples fall in two modes 10% apart) whose median changed mode, not a shift of the
//!    whole distribution, which is what a change of code makes.
//! 5. `modes`: a FASTER or SLOWER where a side's fast tail (P5 of a time) lies more than the
//!    minimum effect below its median was measured in two states of the machine (a long kernel
//!    under the power limit: some samples at the top clock, the rest capped); it is judged on
//!    the fast tails instead, with the minimum effect of its drift judgement: SAME when they
//!    agree, kept when they moved the same way, UNCERTAIN otherwise ([`by_fast_mode`]).
//! 6. `intervals`: otherwise the verdict of `verdict::judge` (disjoint 95% intervals of the
//!    median and the minimum effect) stands.
//! 7. `boards` (`super::boards`, after all of these): a FASTER or SLOWER of ours across two
//!    machines whose head median lies within the range the same point, with the same launch
//!    settings, measured on several other boards in the history becomes SAME.
//!
//! Host-side quantities ([`HOST_SIDE_STATS`]) are grouped by quantity, so they are judged
//! against the library implementations' host-side quantities of the same run: a slower host
//! moves them all. Between two machines that is not enough (candle's eager enqueue and our one
//! graph launch do not move alike with the CPU), so rule `host` comes right after `clocks`:
//! our host-side quantities measured on two machines are never FASTER or SLOWER; on one machine
//! they are judged as usual.

use super::line::{Change, Line, Side};
use super::verdict::{judge, Direction, Verdict};
use crate::history::HistoryRun;
use crate::identity::is_library;
use std::collections::BTreeMap;

/// For a library line whose `code` (the library's version, `code_id::tag_library`) differs
/// between two sides that both record it: "old -> new". Such a line is no control of the
/// machine's drift.
fn library_changed(l: &Line) -> Option<String> {
    if !is_library(&l.point.implementation) {
        return None;
    }
    let prefix = format!("{}: ", crate::code_id::SETTING);
    l.settings.iter().find_map(|s| {
        let (b, h) = s.strip_prefix(&prefix)?.split_once(" -> ")?;
        (b != "-" && h != "-").then(|| format!("{b} -> {h}"))
    })
}

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

/// What the ceilings measured in the processes of both sides say about the machine's move.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CeilingMoves {
    /// Head/base log-ratios in the direction of a duration (a copy 2% slower counts as +2%).
    pub log_ratios: Vec<f64>,
    /// The launch interval of a trivial kernel, base and head, in microseconds.
    pub launch_interval_us: Option<(f64, f64)>,
}

/// The ceilings both sides measured, per kind: the newest run of each kind on each side.
pub fn ceiling_moves(base: &[&HistoryRun], head: &[&HistoryRun]) -> BTreeMap<String, CeilingMoves> {
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
        let mut launch = None;
        if let (Some(bi), Some(hi)) = (b.launch_interval_us, h.launch_interval_us) {
            if bi > 0.0 && hi > 0.0 {
                v.push((hi / bi).ln());
                launch = Some((bi, hi));
            }
        }
        out.insert(
            kind.to_string(),
            CeilingMoves {
                log_ratios: v,
                launch_interval_us: launch,
            },
        );
    }
    out
}

/// Controls "of a similar duration" are those whose base median is within this factor of the
/// line's: a 1.4 ms GEMM under the power limit drifts like other long kernels, not like the
/// 8 us ones of the same benchmark.
pub const TIME_SCALE: f64 = 2.0;

/// A group of lines judged against one drift.
type GroupKey = (String, String, String);

fn group_of(l: &Line) -> GroupKey {
    (l.gpu.clone(), l.point.kind.clone(), l.stat.clone())
}

/// Quantities the host CPU decides (time to first token, end to end, time to enqueue a step).
pub const HOST_SIDE_STATS: [&str; 3] = ["ttft_ms", "e2e_ms", "decode_enqueue_ms"];

/// The quantity whose samples are one kernel launch each, and so carry the launch's fixed cost.
pub const PER_LAUNCH_STAT: &str = "time_us";

/// Applies the rules of this module's header to `lines`; `ceilings` holds, per GPU label and
/// kind, what the ceilings moved (see [`ceiling_moves`]); `two_machines` the GPU labels whose
/// sides ran on different machines. Returns the drift of every group that had controls.
pub fn apply(
    lines: &mut [Line],
    ceilings: &BTreeMap<(String, String), CeilingMoves>,
    two_machines: &std::collections::BTreeSet<String>,
    min_effect: f64,
) -> BTreeMap<GroupKey, Drift> {
    let intervals = format!(
        "intervals: disjoint 95% intervals of the median, and a change of at least {:.0}%",
        min_effect * 100.0
    );
    let mut controls: BTreeMap<GroupKey, Vec<f64>> = BTreeMap::new();
    // The same controls with their base medians, for the drift at one time scale.
    let mut timed: BTreeMap<GroupKey, Vec<(f64, f64)>> = BTreeMap::new();
    for l in lines.iter_mut() {
        let library_change = library_changed(l);
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
        let host = (HOST_SIDE_STATS.contains(&l.stat.as_str())
            && two_machines.contains(&l.gpu)
            && !is_library(&l.point.implementation))
        .then(|| {
            "host: a host-side quantity (the CPU's time, not the GPU's) measured on two \
             machines; never judged FASTER or SLOWER across machines"
                .to_string()
        });
        if let Some(rule) = clocks.or(host) {
            if matches!(j.verdict, Verdict::Faster | Verdict::Slower) {
                j.verdict = Verdict::Uncertain;
            }
            l.rule = Some(rule);
            continue;
        }
        l.rule = Some(intervals.clone());
        if let Some(change) = library_change {
            // A library whose version changed measured its own change, not the machine's.
            l.control = Some(format!("library: its version changed ({change})"));
            l.rule = Some(format!(
                "library: not a control, its version changed; {intervals}"
            ));
            continue;
        }
        if is_library(&l.point.implementation) {
            if l.control.is_none() {
                l.control = Some("library: the machine's drift".into());
            }
            l.rule = Some(format!("library: a control; {intervals}"));
            if let Some(r) = j.ratio.filter(|r| *r > 0.0) {
                controls.entry(group_of(l)).or_default().push(r.ln());
                if let Some(b) = &l.base {
                    timed.entry(group_of(l)).or_default().push((b.p50, r.ln()));
                }
            }
        }
    }
    let mut drifts = BTreeMap::new();
    for (key, mut v) in controls {
        if Direction::of_stat(&key.2) == Direction::LowerIsBetter {
            if let Some(c) = ceilings.get(&(key.0.clone(), key.1.clone())) {
                v.extend(&c.log_ratios);
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
                if let Some(d) = Drift::of(&c.log_ratios) {
                    drifts.insert(key, d);
                }
            }
        }
    }
    // The minimum effect each line was judged with (raised by the spread of its controls).
    let mut effects = vec![min_effect; lines.len()];
    for (i, l) in lines.iter_mut().enumerate() {
        if is_library(&l.point.implementation) {
            continue;
        }
        let key = group_of(l);
        let launch = ceilings
            .get(&(key.0.clone(), key.1.clone()))
            .filter(|_| l.stat == PER_LAUNCH_STAT)
            .and_then(|c| c.launch_interval_us)
            .filter(|(b, h)| b != h);
        let launch_delta_us = launch.map(|(b, h)| h - b);
        let global = drifts.get(&key);
        let local = l.base.as_ref().and_then(|b| {
            let near: Vec<f64> = timed
                .get(&key)?
                .iter()
                .filter(|(t, _)| *t >= b.p50 / TIME_SCALE && *t <= b.p50 * TIME_SCALE)
                .map(|(_, r)| *r)
                .collect();
            (near.len() >= MIN_FOR_SHIFT)
                .then(|| Drift::of(&near))
                .flatten()
        });
        if global.is_none() && local.is_none() && launch_delta_us.is_none() {
            continue;
        }
        let (Some(b), Some(h)) = (&l.base, &l.head) else {
            continue;
        };
        let Change::Compared(j) = &mut l.change else {
            continue;
        };
        if b.throttled || h.throttled || b.recovered != h.recovered {
            continue;
        }
        let add = launch_delta_us.unwrap_or(0.0);
        let rejudge = |d: Option<&Drift>| {
            let (shift, spread) = d.map_or((1.0, 0.0), |d| (d.shift, d.spread));
            let mut scaled = b.brief();
            scaled.p50 = b.p50 * shift + add;
            scaled.median_ci95 = [
                b.median_ci95[0] * shift + add,
                b.median_ci95[1] * shift + add,
            ];
            let adj = judge(
                &scaled,
                &h.brief(),
                Direction::of_stat(&l.stat),
                min_effect.max(spread),
            );
            match (j.verdict, adj.verdict) {
                (Verdict::Same, _) => Verdict::Same,
                (Verdict::Uncertain, Verdict::Same) => Verdict::Same,
                (Verdict::Uncertain, _) => Verdict::Uncertain,
                (raw, adj) if raw == adj => raw,
                (_, Verdict::Same) => Verdict::Same,
                _ => Verdict::Uncertain,
            }
        };
        // The more careful of the two drifts decides: SAME before UNCERTAIN before a verdict.
        let careful = |v: Verdict| match v {
            Verdict::Same => 0,
            Verdict::Uncertain => 1,
            _ => 2,
        };
        let mut verdict = rejudge(global);
        let (mut used, mut similar_duration) = (global, false);
        if let Some(d) = local.as_ref() {
            let v = rejudge(Some(d));
            if careful(v) < careful(verdict) {
                (verdict, used, similar_duration) = (v, Some(d), true);
            }
        }
        let spread = used.map_or(0.0, |d| d.spread);
        effects[i] = min_effect.max(spread);
        let shift = used.map_or(1.0, |d| d.shift);
        if verdict != j.verdict || spread > min_effect || shift != 1.0 || add != 0.0 {
            let mut why = Vec::new();
            if let Some(d) = used {
                let text = d.text();
                why.push(if similar_duration {
                    text.replacen("controls", "controls of a similar duration", 1)
                } else {
                    text
                });
            }
            if let Some((bi, hi)) = launch {
                why.push(format!(
                    "a trivial kernel's launch interval moved {add:+.2} us ({bi:.2} -> {hi:.2} us), \
                     added to the base"
                ));
            }
            l.rule = Some(format!(
                "drift: {}; judged against that with a change of at least {:.1}%",
                why.join("; "),
                min_effect.max(spread) * 100.0
            ));
        }
        j.verdict = verdict;
    }
    for (l, effect) in lines.iter_mut().zip(effects) {
        let (Some(b), Some(h)) = (&l.base, &l.head) else {
            continue;
        };
        let Change::Compared(j) = &mut l.change else {
            continue;
        };
        if matches!(j.verdict, Verdict::Faster | Verdict::Slower)
            && (h.spans(b.p50) || b.spans(h.p50))
        {
            j.verdict = Verdict::Uncertain;
            l.rule = Some(format!(
                "spread: the medians lie within each other's P5-P95 samples (base {:.4}-{:.4}, \
                 head {:.4}-{:.4}): the samples changed mode, the distribution did not shift",
                b.p5, b.p95, h.p5, h.p95
            ));
        } else if matches!(j.verdict, Verdict::Faster | Verdict::Slower) {
            if let Some((verdict, rule)) = by_fast_mode(b, h, j.verdict, &l.stat, effect) {
                j.verdict = verdict;
                l.rule = Some(rule);
            }
        }
    }
    drifts
}

/// Rule `modes`: a side whose fast tail (P5 of a time, P95 of a rate) lies further from its
/// own median than `min_effect` was measured in two states of the machine (long kernels under
/// the power limit run at two clocks: some samples at the top clock, the rest capped), and its
/// median says which state held longer, not how fast the code is. Such a FASTER or SLOWER is
/// judged again on the fast tails, the code at the top clock: SAME when they agree within
/// `min_effect` (the effect the line's drift judgement used: the spread of its controls, at
/// least --min-effect), the verdict kept when they moved the same way, UNCERTAIN otherwise.
/// None when neither side has two modes.
fn by_fast_mode(
    b: &Side,
    h: &Side,
    verdict: Verdict,
    stat: &str,
    min_effect: f64,
) -> Option<(Verdict, String)> {
    let higher = matches!(Direction::of_stat(stat), Direction::HigherIsBetter);
    let fast = |s: &Side| if higher { s.p95 } else { s.p5 };
    let two_modes = |s: &Side| (fast(s) / s.p50 - 1.0).abs() > min_effect;
    if !(two_modes(b) || two_modes(h)) {
        return None;
    }
    let moved = fast(h) / fast(b) - 1.0;
    let slower = if higher { moved < 0.0 } else { moved > 0.0 };
    let (v, what) = if moved.abs() < min_effect {
        (Verdict::Same, "agree")
    } else if slower == (verdict == Verdict::Slower) {
        (verdict, "moved the same way")
    } else {
        (Verdict::Uncertain, "moved the other way")
    };
    let tail = if higher { "P95" } else { "P5" };
    Some((
        v,
        format!(
            "modes: samples in two states (base {tail} {:.4} / median {:.4}, head {:.4} / \
             {:.4}); the fast modes {what} ({:+.1}%, at least {:.1}% needed)",
            fast(b),
            b.p50,
            fast(h),
            h.p50,
            moved * 100.0,
            min_effect * 100.0
        ),
    ))
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
            p5: p50 * 0.99,
            p95: p50 * 1.01,
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
            confirm: false,
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
        let drifts = apply(&mut lines, &BTreeMap::new(), &Default::default(), 0.03);
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
        apply(&mut lines, &BTreeMap::new(), &Default::default(), 0.03);
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
        apply(&mut lines, &BTreeMap::new(), &Default::default(), 0.03);
        assert_eq!(verdict(lines.last().unwrap()), Verdict::Same);
    }

    #[test]
    fn throttled_points_are_never_faster_or_slower() {
        let mut l = line("tma_ws", 1, 100.0, 120.0);
        l.head.as_mut().unwrap().throttled = true;
        let mut lines = vec![l];
        apply(&mut lines, &BTreeMap::new(), &Default::default(), 0.03);
        assert_eq!(verdict(&lines[0]), Verdict::Uncertain);
        assert!(lines[0].rule.as_deref().unwrap().starts_with("clocks: "));
        assert!(!lines[0].is_regression());
    }

    #[test]
    fn one_side_measured_after_recovery_is_another_method() {
        let mut l = line("tma_ws", 1, 110.0, 100.0);
        l.head.as_mut().unwrap().recovered = true;
        let mut lines = vec![l];
        apply(&mut lines, &BTreeMap::new(), &Default::default(), 0.03);
        assert_eq!(verdict(&lines[0]), Verdict::Uncertain);
        assert!(lines[0].rule.as_deref().unwrap().contains("two methods"));
        // Both sides recovered: judged as usual.
        let mut l = line("tma_ws", 1, 110.0, 100.0);
        l.head.as_mut().unwrap().recovered = true;
        l.base.as_mut().unwrap().recovered = true;
        let mut lines = vec![l];
        apply(&mut lines, &BTreeMap::new(), &Default::default(), 0.03);
        assert_eq!(verdict(&lines[0]), Verdict::Faster);
    }

    #[test]
    fn ceilings_give_a_drift_where_there_are_no_library_lines() {
        let mut lines = vec![line("matmul_tiled", 1, 100.0, 104.0)];
        let mut c = BTreeMap::new();
        c.insert(
            ("H200".to_string(), "gemm".to_string()),
            CeilingMoves {
                log_ratios: vec![0.045],
                launch_interval_us: None,
            },
        );
        apply(&mut lines, &c, &Default::default(), 0.03);
        assert_eq!(verdict(&lines[0]), Verdict::Same);
        // Without the ceiling's move, 4% with tight intervals is SLOWER.
        let mut lines = vec![line("matmul_tiled", 1, 100.0, 104.0)];
        apply(&mut lines, &BTreeMap::new(), &Default::default(), 0.03);
        assert_eq!(verdict(&lines[0]), Verdict::Slower);
        assert!(lines[0].rule.as_deref().unwrap().starts_with("intervals:"));
    }

    #[test]
    fn a_slower_launch_is_added_to_short_kernels_only() {
        let moved = |b: f64, h: f64| {
            let mut c = BTreeMap::new();
            c.insert(
                ("H200".to_string(), "gemm".to_string()),
                CeilingMoves {
                    log_ratios: vec![],
                    launch_interval_us: Some((b, h)),
                },
            );
            c
        };
        // The head launches 0.17 us slower: a 4.2 us kernel 0.22 us slower is that machine.
        let mut lines = vec![line("opbench", 1, 4.23, 4.455)];
        apply(&mut lines, &moved(1.93, 2.10), &Default::default(), 0.03);
        assert_eq!(verdict(&lines[0]), Verdict::Same, "{:?}", lines[0].rule);
        assert!(lines[0]
            .rule
            .as_deref()
            .unwrap()
            .contains("launch interval moved +0.17 us (1.93 -> 2.10 us)"));
        // Without the launch control, the same numbers are SLOWER.
        let mut lines = vec![line("opbench", 1, 4.23, 4.455)];
        apply(&mut lines, &BTreeMap::new(), &Default::default(), 0.03);
        assert_eq!(verdict(&lines[0]), Verdict::Slower);
        // A 1 us regression of a 5 us kernel is more than the launch moved.
        let mut lines = vec![line("opbench", 1, 5.0, 6.0)];
        apply(&mut lines, &moved(1.93, 2.10), &Default::default(), 0.03);
        assert_eq!(verdict(&lines[0]), Verdict::Slower);
        // A 5% regression of a long kernel is untouched by a launch move.
        let mut lines = vec![line("opbench", 1, 400.0, 420.0)];
        apply(&mut lines, &moved(1.93, 2.10), &Default::default(), 0.03);
        assert_eq!(verdict(&lines[0]), Verdict::Slower);
        // A faster launch never makes an unchanged kernel SLOWER.
        let mut lines = vec![line("opbench", 1, 4.23, 4.23)];
        apply(&mut lines, &moved(2.10, 1.93), &Default::default(), 0.03);
        assert_eq!(verdict(&lines[0]), Verdict::Same);
    }

    #[test]
    fn a_median_that_changed_mode_is_uncertain() {
        // Base in the fast mode, head mostly in the slow one: +12%, but head's samples reach
        // down to the base median.
        let mut l = line("tma_ws_splitk", 8, 7.28, 8.16);
        let h = l.head.as_mut().unwrap();
        (h.p5, h.p95) = (7.232, 8.48);
        let mut lines = vec![l];
        apply(&mut lines, &BTreeMap::new(), &Default::default(), 0.03);
        assert_eq!(verdict(&lines[0]), Verdict::Uncertain);
        assert!(lines[0].rule.as_deref().unwrap().starts_with("spread: "));
        assert!(!lines[0].is_regression());
        // The whole distribution shifted by the same +12%: SLOWER.
        let mut lines = vec![line("tma_ws_splitk", 8, 7.28, 8.16)];
        apply(&mut lines, &BTreeMap::new(), &Default::default(), 0.03);
        assert_eq!(verdict(&lines[0]), Verdict::Slower);
    }

    #[test]
    fn a_point_measured_in_two_clock_states_is_judged_on_its_fast_mode() {
        // The head's samples: a few at the top clock (P5 +1.6%), most power-capped (+13%).
        let two_states = |p5_head: f64| {
            let mut l = line("wgmma_128x256", 8192, 2142.8, 2428.7);
            let h = l.head.as_mut().unwrap();
            (h.p5, h.p95) = (p5_head, 2532.2);
            l
        };
        let mut lines = vec![two_states(2177.3)];
        apply(&mut lines, &BTreeMap::new(), &Default::default(), 0.03);
        assert_eq!(verdict(&lines[0]), Verdict::Same, "{:?}", lines[0].rule);
        assert!(lines[0]
            .rule
            .as_deref()
            .unwrap()
            .starts_with("modes: samples in two states"));
        // The code itself 8% slower: the fast mode moved too, and it stays SLOWER.
        let mut lines = vec![two_states(2142.8 * 1.08)];
        apply(&mut lines, &BTreeMap::new(), &Default::default(), 0.03);
        assert_eq!(verdict(&lines[0]), Verdict::Slower);
        assert!(lines[0]
            .rule
            .as_deref()
            .unwrap()
            .contains("moved the same way"));
        // A fast mode that got faster while the median got slower: not decidable.
        let mut lines = vec![two_states(2142.8 * 0.95)];
        apply(&mut lines, &BTreeMap::new(), &Default::default(), 0.03);
        assert_eq!(verdict(&lines[0]), Verdict::Uncertain);
        // One state on both sides (P5 within 1% of the median): the rule does not apply.
        let mut lines = vec![line("wgmma_128x256", 8192, 2142.8, 2428.7)];
        apply(&mut lines, &BTreeMap::new(), &Default::default(), 0.03);
        assert_eq!(verdict(&lines[0]), Verdict::Slower);
        assert!(lines[0].rule.as_deref().unwrap().starts_with("intervals: "));
    }

    #[test]
    fn long_kernels_are_judged_against_controls_of_their_duration() {
        // Short controls did not move; the long ones (1.4 ms, under the power limit) moved
        // +6% to +16%. Ours at 1.4 ms moved +9%.
        let mut lines: Vec<Line> = (0..50).map(|i| line("cublas", i, 8.0, 8.0)).collect();
        for (i, h) in [1.06, 1.16, 1.10, 1.08, 1.12].iter().enumerate() {
            lines.push(line("candle", 100 + i as i64, 1400.0, 1400.0 * h));
        }
        lines.push(line("tma_ws", 1, 1418.0, 1418.0 * 1.09));
        lines.push(line("tma_ws", 2, 8.0, 8.0 * 1.09));
        apply(&mut lines, &BTreeMap::new(), &Default::default(), 0.03);
        let long = &lines[lines.len() - 2];
        assert_eq!(verdict(long), Verdict::Same, "{:?}", long.rule);
        assert!(long
            .rule
            .as_deref()
            .unwrap()
            .starts_with("drift: controls of a similar duration moved +10.0%"));
        // The short kernel's neighbours did not move: its +9% stays SLOWER.
        assert_eq!(verdict(lines.last().unwrap()), Verdict::Slower);
    }

    #[test]
    fn host_side_quantities_are_not_judged_across_machines() {
        let enqueue = || {
            let mut l = line("opbench", 1, 0.0014, 0.0026);
            l.stat = "decode_enqueue_ms".into();
            l
        };
        let two: std::collections::BTreeSet<String> = ["H200".to_string()].into();
        let mut lines = vec![enqueue()];
        apply(&mut lines, &BTreeMap::new(), &two, 0.03);
        assert_eq!(verdict(&lines[0]), Verdict::Uncertain);
        assert!(lines[0].rule.as_deref().unwrap().starts_with("host: "));
        // On one machine the same move is SLOWER.
        let mut lines = vec![enqueue()];
        apply(&mut lines, &BTreeMap::new(), &Default::default(), 0.03);
        assert_eq!(verdict(&lines[0]), Verdict::Slower);
    }

    #[test]
    fn library_names() {
        for lib in [
            "cublas",
            "candle",
            "nccl",
            "nccl-inplace",
            "torch",
            "torch-compile",
            "transformers-eager",
            "triton",
        ] {
            assert!(is_library(lib), "{lib}");
        }
        for ours in ["opbench", "opbench-pull", "tma_ws_128x256", "matmul_naive"] {
            assert!(!is_library(ours), "{ours}");
        }
    }
}
