//! Rule `processes`: our code on one board judged against the spread the same point showed
//! between processes of the same code.
//!
//! A process is a sample of the machine's state too: a launch-bound LayerNorm row flips between
//! two times ~9% apart from one process to the next, with a tight interval in each. So on one
//! board a verdict on our code needs to know how far the point moves between processes when
//! the code does not change. That spread comes from replicates: processes of the same code of
//! the point (the row's `code` setting, the hash of its GPU modules, or the run's commit where
//! the row has none or the quantity is a host-side one; same launch settings) on the same
//! board, taken from each side's own runs (several processes a side) and from the history
//! (every earlier same-code run of the point on that board). Each side is pooled with the
//! history's runs of its own code: a point's process-level modes (a kernel ~3% slower in some
//! processes than in others, with a tight interval in each) may fall all on one side's few
//! processes, and only its code's other runs show the other mode. The two sides are never
//! pooled with each other, so a comparison never learns its spread from itself.
//!
//! With `S` the largest distance between two replicates of one group (as a ratio), the change
//! `r` = median of head's process medians / median of base's, and the threshold
//! `T = max(min_effect, SAFETY x S, floor)`, where the floor is the spread of most points like it:
//! - |r - 1| < T: SAME (the move lies within what processes of unchanged code showed);
//! - otherwise FASTER or SLOWER when every process of head lies beyond every process of base,
//!   else UNCERTAIN.
//!
//! With fewer than [`MIN_REPLICATES`] replicates behind `S` the spread is unknown: a FASTER or
//! SLOWER becomes UNCERTAIN, to be settled by interleaved processes (scripts/ci/confirm.sh).
//!
//! Which lines it judges: between sides run at different times the board itself may have moved
//! between them (its clocks, its neighbours), so the earlier rules' SAME and UNCERTAIN stand
//! (rule `drift` holds a line against how far the library lines moved) and only a FASTER or
//! SLOWER is judged again. Between [`interleaved`] sides (base, head, base, head, ... processes
//! on one board, as scripts/ci/confirm.sh runs them) a move of the board lands on both sides
//! alike, so there this rule judges every line of ours: a library line's own move between two
//! processes is its noise, not the board's, and is no reason to hold ours.
//!
//! The rule applies to our implementations on sides of one board (across boards the drift and
//! boards rules decide), to runs that recorded their board, not to workload traces, to a line
//! rule `clocks` held back only between interleaved sides (both ran under the same power limit
//! in turn, so their throttled processes are compared too), and host-side quantities are judged
//! against their own spread like any other.

use super::boards::{row_of, settings};
use super::line::{Change, Line};
use super::verdict::{Direction, Verdict};
use crate::compare::drift::{HOST_SIDE_STATS, TIME_SCALE};
use crate::history::{HistoryPoint, HistoryRun};
use crate::identity::is_library;
use std::collections::{BTreeMap, BTreeSet};

/// Workload traces (`trace`, `llm_trace`): the user's own job, of which `trace` makes no
/// replicate processes; the earlier rules judge them.
pub const TRACE_KINDS: [&str; 2] = ["trace", "llm_trace"];

/// The threshold is this many times the largest replicate distance: a new pair of processes
/// can land a little further apart than the few pairs seen.
pub const SAFETY: f64 = 2.0;

/// Processes of the same code (over all groups) needed before their spread is used.
pub const MIN_REPLICATES: usize = 2;

/// What stands for the code of a row: its launch settings (the `code` setting among them,
/// where the row records one), and the run's commit where it does not. A host-side quantity
/// measures host code, which `code` (the GPU modules) does not cover: the commit stands for it.
fn code_key(run: &HistoryRun, kind: &str, row: &HistoryPoint, stat: &str) -> String {
    let s = settings(kind, row);
    let mut key: String = s.iter().map(|(k, v)| format!("{k}={v};")).collect();
    if !s.contains_key(crate::code_id::SETTING) || HOST_SIDE_STATS.contains(&stat) {
        key.push_str(run.commit().unwrap_or("nocommit"));
        if run.record.run.git_dirty == Some(true) {
            key.push_str("+dirty");
        }
    }
    key
}

/// The between-process spread of one point on one board.
#[derive(Debug, Clone, PartialEq)]
pub struct Spread {
    /// Largest ratio - 1 between two processes of one same-code group.
    pub max_ratio: f64,
    /// Processes in the groups that had two or more.
    pub replicates: usize,
}

/// The spread of the groups of medians (each a list of one group's process medians).
pub fn spread_of(groups: &[Vec<f64>]) -> Option<Spread> {
    let mut max_ratio: f64 = 0.0;
    let mut replicates = 0;
    for g in groups.iter().filter(|g| g.len() >= 2) {
        let lo = g.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = g.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if lo <= 0.0 {
            return None;
        }
        max_ratio = max_ratio.max(hi / lo - 1.0);
        replicates += g.len();
    }
    (replicates >= MIN_REPLICATES).then_some(Spread {
        max_ratio,
        replicates,
    })
}

/// The spread of a point from its replicate groups: `history` (same-code runs of the board,
/// one group per code key) and the two sides, each pooled with the history group of its own code
/// (`key`), never with the other side. A side whose processes all sat in one of a point's modes
/// then shows the other mode through its code's earlier runs. `replicates` counts each process
/// once.
pub fn side_spread(
    history: &BTreeMap<String, Vec<f64>>,
    base: (&[f64], Option<&str>),
    head: (&[f64], Option<&str>),
) -> Option<Spread> {
    let pooled = |(m, key): (&[f64], Option<&str>)| -> Vec<f64> {
        let mut g = m.to_vec();
        if let Some(h) = key.and_then(|k| history.get(k)) {
            g.extend_from_slice(h);
        }
        g
    };
    let side_keys = [base.1, head.1];
    let mut groups: Vec<Vec<f64>> = history
        .iter()
        .filter(|(k, _)| !side_keys.contains(&Some(k.as_str())))
        .map(|(_, g)| g.clone())
        .collect();
    groups.push(pooled(base));
    groups.push(pooled(head));
    let mut s = spread_of(&groups)?;
    // A history group pooled with both sides (same code on both) counts once.
    if base.1.is_some() && base.1 == head.1 {
        let shared = base.1.and_then(|k| history.get(k)).map_or(0, Vec::len);
        let (nb, nh) = (base.0.len() + shared, head.0.len() + shared);
        if nb >= 2 && nh >= 2 {
            s.replicates -= shared;
        }
    }
    Some(s)
}

/// The change a verdict needs: the minimum effect, [`SAFETY`] times the point's own spread,
/// and the floor (the spread of the points like it), whichever is largest.
pub fn threshold(s: &Spread, min_effect: f64, floor: f64) -> f64 {
    min_effect.max(SAFETY * s.max_ratio).max(floor)
}

/// The floor for a group of points (one kind and quantity on one board, base medians within
/// [`TIME_SCALE`] of the judged line's): the 90th percentile of their spreads. A point whose
/// few replicates happened to land close is judged no more finely than most points like it.
pub fn floor_of(spreads: &[f64]) -> f64 {
    if spreads.is_empty() {
        return 0.0;
    }
    let mut v = spreads.to_vec();
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * FLOOR_QUANTILE).round() as usize]
}

/// The quantile of the group's spreads that [`floor_of`] takes.
pub const FLOOR_QUANTILE: f64 = 0.9;

/// The median of `v`, sorting it in place.
fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    crate::stats::percentile_sorted(v, 50.0)
}

/// One side's process medians of a line's point and quantity: unthrottled rows only, unless
/// `throttled_too` (interleaved sides).
fn medians(runs: &[&HistoryRun], l: &Line, ignore: &[String], throttled_too: bool) -> Vec<f64> {
    runs.iter()
        .filter_map(|r| row_of(r, &l.point, ignore))
        .filter(|row| throttled_too || !row.throttled())
        .filter_map(|row| row.stats.get(&l.stat).map(|s| s.p50))
        .filter(|m| *m > 0.0)
        .collect()
}

/// The decision for one line, from both sides' process medians and the spread.
pub fn decide(
    base: &[f64],
    head: &[f64],
    spread: Option<&Spread>,
    direction: Direction,
    min_effect: f64,
) -> (Verdict, f64) {
    decide_with_floor(base, head, spread, direction, min_effect, 0.0)
}

/// [`decide`] with a floor under the threshold: the spread of points like this one.
pub fn decide_with_floor(
    base: &[f64],
    head: &[f64],
    spread: Option<&Spread>,
    direction: Direction,
    min_effect: f64,
    floor: f64,
) -> (Verdict, f64) {
    let (mut b, mut h) = (base.to_vec(), head.to_vec());
    let ratio = median(&mut h) / median(&mut b);
    let Some(s) = spread else {
        return (Verdict::Uncertain, ratio);
    };
    let threshold = threshold(s, min_effect, floor);
    if (ratio - 1.0).abs() < threshold {
        return (Verdict::Same, ratio);
    }
    let (b_lo, b_hi) = (b[0], b[b.len() - 1]);
    let (h_lo, h_hi) = (h[0], h[h.len() - 1]);
    let higher = h_lo > b_hi;
    let lower = h_hi < b_lo;
    let verdict = match (higher, lower, direction) {
        (true, _, Direction::LowerIsBetter) | (_, true, Direction::HigherIsBetter) => {
            Verdict::Slower
        }
        (true, _, Direction::HigherIsBetter) | (_, true, Direction::LowerIsBetter) => {
            Verdict::Faster
        }
        _ => Verdict::Uncertain,
    };
    (verdict, ratio)
}

/// One line of ours the rule has the process medians of.
struct Pending {
    line: usize,
    base: Vec<f64>,
    head: Vec<f64>,
    spread: Option<Spread>,
    /// The sides are [`interleaved`].
    alternating: bool,
    /// Judged again (else it only lends its spread to the floor of the points like it).
    judged: bool,
    base_median: f64,
}

/// True when both sides ran on one board in alternating processes: sorted by start, no two
/// neighbouring runs belong to the same side (base, head, base, head or head, base, head, base),
/// with at least two runs a side.
pub fn interleaved(base: &[&HistoryRun], head: &[&HistoryRun]) -> bool {
    if base.len() < 2 || head.len() < 2 || base.len().abs_diff(head.len()) > 1 {
        return false;
    }
    let boards: BTreeSet<Option<String>> = base.iter().chain(head).map(|r| r.board()).collect();
    if boards.len() != 1 || boards.contains(&None) {
        return false;
    }
    let mut all: Vec<(chrono::DateTime<chrono::Utc>, bool)> = base
        .iter()
        .map(|r| (r.started(), false))
        .chain(head.iter().map(|r| (r.started(), true)))
        .collect();
    all.sort();
    all.windows(2).all(|w| w[0].1 != w[1].1 && w[0].0 != w[1].0)
}

/// Applies the rule (see the module's comment) to the lines of GPU labels whose sides ran on
/// one machine. `base` and `head` are the sides' runs, `history` the runs the replicates may
/// come from (the sides' own runs in it are left out). Returns how many lines it decided.
pub fn apply(
    lines: &mut [Line],
    base: &[&HistoryRun],
    head: &[&HistoryRun],
    history: &[HistoryRun],
    two_machines: &BTreeSet<String>,
    min_effect: f64,
    ignore: &[String],
) -> usize {
    let sides: BTreeSet<&str> = base.iter().chain(head).map(|r| r.run_id()).collect();
    let mut decided = 0;
    let mut pending = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if l.verdict().is_none() {
            continue;
        }
        if is_library(&l.point.implementation)
            || TRACE_KINDS.contains(&l.point.kind.as_str())
            || two_machines.contains(&l.gpu)
            || l.variant.is_some()
        {
            continue;
        }
        let held_by_clocks = l.rule.as_deref().is_some_and(|r| r.starts_with("clocks"));
        let kind = l.point.kind.as_str();
        let gpu = l.gpu.as_str();
        let pick = |r: &&HistoryRun| r.kind() == kind && (gpu.contains(" -> ") || r.gpu() == gpu);
        let b_runs: Vec<&HistoryRun> = base.iter().copied().filter(pick).collect();
        let h_runs: Vec<&HistoryRun> = head.iter().copied().filter(pick).collect();
        // Sides apart in time: only a FASTER or SLOWER is judged again, and never a point held
        // by `clocks`; interleaved sides: every line (see the module's comment).
        let alternating = interleaved(&b_runs, &h_runs);
        if held_by_clocks && !alternating {
            continue;
        }
        let judged = alternating || matches!(l.verdict(), Some(Verdict::Faster | Verdict::Slower));
        let (bm, hm) = (
            medians(&b_runs, l, ignore, alternating),
            medians(&h_runs, l, ignore, alternating),
        );
        if bm.is_empty() || hm.is_empty() {
            continue;
        }
        let boards: BTreeSet<String> = b_runs
            .iter()
            .chain(&h_runs)
            .filter_map(|r| r.board())
            .collect();
        // A run without a board (a CPU run) has no board to learn a spread on.
        if boards.is_empty() {
            continue;
        }
        // Replicate groups: the history's same-code runs on this board, one group per code, and
        // each side with the history's runs of its own code (see the module's comment).
        let key_of = |r: &HistoryRun, row: &HistoryPoint| {
            format!(
                "{}|{}",
                r.board().unwrap_or_default(),
                code_key(r, kind, row, &l.stat)
            )
        };
        let mut groups: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        for r in history.iter().filter(|r| {
            r.kind() == kind
                && !r.synthetic()
                && !sides.contains(r.run_id())
                && r.board().is_some_and(|b| boards.contains(&b))
        }) {
            let Some(row) =
                row_of(r, &l.point, ignore).filter(|row| alternating || !row.throttled())
            else {
                continue;
            };
            if let Some(s) = row.stats.get(&l.stat).filter(|s| s.p50 > 0.0) {
                groups.entry(key_of(r, row)).or_default().push(s.p50);
            }
        }
        let side_key = |runs: &[&HistoryRun]| -> Option<String> {
            let keys: BTreeSet<String> = runs
                .iter()
                .filter_map(|r| row_of(r, &l.point, ignore).map(|row| key_of(r, row)))
                .collect();
            (keys.len() == 1).then(|| keys.into_iter().next().unwrap_or_default())
        };
        let (b_key, h_key) = (side_key(&b_runs), side_key(&h_runs));
        let spread = side_spread(&groups, (&bm, b_key.as_deref()), (&hm, h_key.as_deref()));
        let base_median = median(&mut bm.clone());
        pending.push(Pending {
            line: i,
            spread,
            base: bm,
            head: hm,
            alternating,
            judged,
            base_median,
        });
    }
    // Every line of ours with a known spread, judged or not, is a point "like" the judged ones of
    // its kind and quantity when its base median lies within TIME_SCALE of theirs.
    let like = |p: &Pending| -> Vec<f64> {
        let l = &lines[p.line];
        pending
            .iter()
            .filter(|q| {
                let o = &lines[q.line];
                o.point.kind == l.point.kind
                    && o.stat == l.stat
                    && q.base_median <= p.base_median * TIME_SCALE
                    && q.base_median >= p.base_median / TIME_SCALE
            })
            .filter_map(|q| q.spread.as_ref().map(|s| s.max_ratio))
            .collect()
    };
    let floors: Vec<f64> = pending.iter().map(|p| floor_of(&like(p))).collect();
    for (p, floor) in pending.into_iter().zip(floors) {
        if !p.judged {
            continue;
        }
        let Pending {
            line: i,
            base: bm,
            head: hm,
            spread,
            alternating,
            ..
        } = p;
        let l = &mut lines[i];
        let (verdict, ratio) = decide_with_floor(
            &bm,
            &hm,
            spread.as_ref(),
            Direction::of_stat(&l.stat),
            min_effect,
            floor,
        );
        if let Change::Compared(j) = &mut l.change {
            j.verdict = verdict;
            j.ratio = Some(ratio);
        }
        l.rule = Some(match &spread {
            Some(s) => format!(
                "processes: {} process(es) of base, {} of head{}; unchanged code moved this point \
                 by up to {:.1}% between {} processes on this board (points like it: {:.1}%), so \
                 a change must reach {:.1}%",
                bm.len(),
                hm.len(),
                if alternating { ", interleaved" } else { "" },
                s.max_ratio * 100.0,
                s.replicates,
                floor * 100.0,
                threshold(s, min_effect, floor) * 100.0
            ),
            None => format!(
                "processes: {} process(es) of base, {} of head, and fewer than {MIN_REPLICATES} \
                 same-code processes of this point on this board: its between-process spread \
                 is unknown; confirm by interleaving (scripts/ci/confirm.sh)",
                bm.len(),
                hm.len()
            ),
        });
        decided += 1;
    }
    decided
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOWER: Direction = Direction::LowerIsBetter;

    #[test]
    fn a_mode_flip_within_the_spread_is_same() {
        // The launch-bound row: 2.58 and 2.80 us in earlier processes of the same code.
        let s = spread_of(&[vec![2.58, 2.80, 2.60]]).unwrap();
        assert!((s.max_ratio - (2.80 / 2.58 - 1.0)).abs() < 1e-12);
        assert_eq!(
            decide(&[2.58], &[2.80], Some(&s), LOWER, 0.03).0,
            Verdict::Same
        );
    }

    #[test]
    fn a_change_beyond_the_spread_is_slower_or_faster() {
        assert!(
            spread_of(&[vec![100.0], vec![101.0]]).is_none(),
            "two groups of one process hold no replicate"
        );
        let s = spread_of(&[vec![100.0, 100.8, 100.4]]).unwrap();
        assert_eq!(
            decide(&[100.2], &[105.3], Some(&s), LOWER, 0.03).0,
            Verdict::Slower
        );
        assert_eq!(
            decide(&[100.2], &[95.0], Some(&s), LOWER, 0.03).0,
            Verdict::Faster
        );
        assert_eq!(
            decide(
                &[100.2],
                &[105.3],
                Some(&s),
                Direction::HigherIsBetter,
                0.03
            )
            .0,
            Verdict::Faster
        );
        // Within the minimum effect: SAME however tight the spread.
        assert_eq!(
            decide(&[100.2], &[102.0], Some(&s), LOWER, 0.03).0,
            Verdict::Same
        );
    }

    #[test]
    fn overlapping_processes_are_uncertain_and_no_spread_is_never_a_verdict() {
        let s = spread_of(&[vec![100.0, 100.5, 100.2]]).unwrap();
        // Medians 6% apart, but one head process sits among base's.
        assert_eq!(
            decide(
                &[100.0, 104.0],
                &[103.0, 108.0, 112.0],
                Some(&s),
                LOWER,
                0.03
            )
            .0,
            Verdict::Uncertain
        );
        assert_eq!(
            decide(&[100.0], &[120.0], None, LOWER, 0.03).0,
            Verdict::Uncertain
        );
    }

    #[test]
    fn a_point_is_judged_no_finer_than_most_points_like_it() {
        let s = spread_of(&[vec![10.0, 10.01]]).unwrap();
        assert_eq!(floor_of(&[0.001, 0.002, 0.06, 0.07]), 0.07);
        assert_eq!(floor_of(&[]), 0.0);
        assert_eq!(
            decide_with_floor(&[10.0], &[10.5], Some(&s), LOWER, 0.03, 0.07).0,
            Verdict::Same
        );
        assert_eq!(
            decide(&[10.0], &[10.5], Some(&s), LOWER, 0.03).0,
            Verdict::Slower
        );
    }

    #[test]
    fn the_threshold_grows_with_the_spread() {
        let s = spread_of(&[vec![10.0, 10.4, 10.2]]).unwrap(); // 4%: threshold 8%
        assert_eq!(
            decide(&[10.0], &[10.7], Some(&s), LOWER, 0.03).0,
            Verdict::Same
        );
        assert_eq!(
            decide(&[10.0], &[10.9], Some(&s), LOWER, 0.03).0,
            Verdict::Slower
        );
    }

    #[test]
    fn each_side_learns_its_codes_modes_from_the_history() {
        // A GEMM point on one board: ~25.0 us in some processes, ~25.8 in others. Base's two
        // processes both landed fast, head's both slow; the history's runs of the same code
        // saw both modes.
        let history: BTreeMap<String, Vec<f64>> =
            [("board|code=a".to_string(), vec![25.0, 25.8, 24.9])].into();
        let (base, head) = ([24.9, 24.95], [25.75, 25.8]);
        let alone = spread_of(&[base.to_vec(), head.to_vec()]).unwrap();
        assert_eq!(
            decide(&base, &head, Some(&alone), LOWER, 0.03).0,
            Verdict::Slower,
            "each side alone: a 3.4% move against a 0.2% spread"
        );
        let same = side_spread(
            &history,
            (&base, Some("board|code=a")),
            (&head, Some("board|code=a")),
        )
        .unwrap();
        assert!(same.max_ratio > 0.035, "{same:?}");
        assert_eq!(same.replicates, 7, "the shared history counts once");
        assert_eq!(
            decide(&base, &head, Some(&same), LOWER, 0.03).0,
            Verdict::Same
        );
        // Head ran other code: its processes are not pooled with base's code, whose history
        // stays tight, so a 6% move is SLOWER.
        let tight: BTreeMap<String, Vec<f64>> =
            [("board|code=a".to_string(), vec![25.0, 25.05])].into();
        let slow = [26.5, 26.55];
        let changed = side_spread(
            &tight,
            (&base, Some("board|code=a")),
            (&slow, Some("board|code=b")),
        )
        .unwrap();
        assert!(changed.max_ratio < 0.01, "{changed:?}");
        assert_eq!(
            decide(&base, &slow, Some(&changed), LOWER, 0.03).0,
            Verdict::Slower
        );
    }
}
