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
//! Within machine states: a process also runs in one of a board's machine states, which its
//! library lines tell (`super::states`: on an H200 a GEMM process lands in one of two, and many
//! of our points sit 2-6% apart between them, each by its own amount and sign). Where every
//! process of both sides has a state and a state holds processes of both, each process of
//! head is compared with base's processes of its own state (the change `r` is the median of
//! those ratios), and the replicate groups are per code and state, so the spread is what the
//! point moved between processes of one state. With fewer than [`MIN_STATE_REPLICATES`]
//! processes behind that spread, or no state in common, the line is judged over all processes
//! as below.
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
//! Across two machines the drift and boards rules decide, and this rule only holds back: a
//! FASTER or SLOWER of theirs becomes SAME when the move lies within `T = max(min_effect,
//! SAFETY x S)`, `S` the spread the point showed between processes of unchanged code on either
//! board (a point's own modes, which no control shares: an lm_head GEMM ~5% slower in some
//! processes of a board under the power limit), and stands otherwise.
//!
//! The rule applies to our implementations, to runs that recorded their board, not to workload
//! traces, to a line rule `clocks` held back only between interleaved sides (both ran under the
//! same power limit in turn, so their throttled processes are compared too), and host-side
//! quantities are judged against their own spread like any other.

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

/// Processes behind a spread within machine states before a line is judged within states;
/// with fewer it is judged over all processes. A point can have modes of its own that the
/// states do not tell (a split-K kernel ~5% faster in some processes of one state than in
/// others), which two processes of one state need not show.
pub const MIN_STATE_REPLICATES: usize = 4;

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
/// one group per key: code, and machine state where the processes have one) and the two
/// sides' processes, each process with the key of its group: a side's processes of one key are
/// pooled with the history group of that key, never with the other side's. A side whose
/// processes all sat in one of a point's modes then shows the other mode through its code's
/// earlier runs. `replicates` counts each process once.
pub fn side_spread(
    history: &BTreeMap<String, Vec<f64>>,
    base: &[(f64, String)],
    head: &[(f64, String)],
) -> Option<Spread> {
    let side_groups = |side: &[(f64, String)]| -> BTreeMap<String, Vec<f64>> {
        let mut g: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        for (m, key) in side {
            g.entry(key.clone()).or_default().push(*m);
        }
        for (key, v) in g.iter_mut() {
            v.extend_from_slice(history.get(key).map_or(&[][..], Vec::as_slice));
        }
        g
    };
    let (b, h) = (side_groups(base), side_groups(head));
    let mut groups: Vec<Vec<f64>> = history
        .iter()
        .filter(|(k, _)| !b.contains_key(*k) && !h.contains_key(*k))
        .map(|(_, g)| g.clone())
        .collect();
    groups.extend(b.values().cloned());
    groups.extend(h.values().cloned());
    let mut s = spread_of(&groups)?;
    // A history group pooled with both sides counts once.
    for (key, hist) in history {
        if let (Some(gb), Some(gh)) = (b.get(key), h.get(key)) {
            if gb.len() >= 2 && gh.len() >= 2 {
                s.replicates -= hist.len();
            }
        }
    }
    Some(s)
}

/// How head's processes lie against base's: the ratio of their medians, and whether every
/// process of head lies above (`higher`) or below (`lower`) every process of base it is
/// compared with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Move {
    pub ratio: f64,
    pub higher: bool,
    pub lower: bool,
}

impl Move {
    /// Every process of head against every process of base.
    pub fn of(base: &[f64], head: &[f64]) -> Self {
        let (mut b, mut h) = (base.to_vec(), head.to_vec());
        let ratio = median(&mut h) / median(&mut b);
        Move {
            ratio,
            higher: h[0] > b[b.len() - 1],
            lower: h[h.len() - 1] < b[0],
        }
    }

    /// Each process of head against base's processes of its own machine state
    /// (`super::states`): the median over head's processes of its median over the median of
    /// base's in its state. Head's processes in a state base has none in are left out; None
    /// when that leaves none.
    pub fn within_states(base: &[(f64, usize)], head: &[(f64, usize)]) -> Option<Self> {
        let mut ratios = Vec::new();
        let (mut higher, mut lower) = (true, true);
        for (x, state) in head {
            let mut b: Vec<f64> = base
                .iter()
                .filter(|(_, s)| s == state)
                .map(|(m, _)| *m)
                .collect();
            if b.is_empty() {
                continue;
            }
            let m = median(&mut b);
            ratios.push(x / m);
            higher &= *x > b[b.len() - 1];
            lower &= *x < b[0];
        }
        (!ratios.is_empty()).then(|| Move {
            ratio: median(&mut ratios),
            higher,
            lower,
        })
    }
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

/// One process of a side at a line's point: its median, its replicate group's key (board and
/// code, see [`code_key`]) and its machine state (`super::states`), where it has one.
struct Process {
    median: f64,
    code: String,
    state: Option<usize>,
}

impl Process {
    /// The key of its group within machine states: the code's, and the state's.
    fn state_key(&self) -> Option<String> {
        self.state.map(|s| format!("{}|state {s}", self.code))
    }
}

/// One side's processes at a line's point and quantity: unthrottled rows only, unless
/// `throttled_too` (interleaved sides).
fn processes(
    runs: &[&HistoryRun],
    l: &Line,
    ignore: &[String],
    throttled_too: bool,
    key_of: &dyn Fn(&HistoryRun, &HistoryPoint) -> String,
    states: &BTreeMap<String, usize>,
) -> Vec<Process> {
    runs.iter()
        .filter_map(|r| row_of(r, &l.point, ignore).map(|row| (r, row)))
        .filter(|(_, row)| throttled_too || !row.throttled())
        .filter_map(|(r, row)| {
            let median = row.stats.get(&l.stat).map(|s| s.p50)?;
            (median > 0.0).then(|| Process {
                median,
                code: key_of(r, row),
                state: states.get(r.run_id()).copied(),
            })
        })
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
    let m = Move::of(base, head);
    (judge(m, spread, direction, min_effect, floor), m.ratio)
}

/// The verdict on a move: SAME within the threshold, FASTER or SLOWER beyond it when the
/// processes do not overlap, else UNCERTAIN; UNCERTAIN when the spread is unknown.
pub fn judge(
    m: Move,
    spread: Option<&Spread>,
    direction: Direction,
    min_effect: f64,
    floor: f64,
) -> Verdict {
    let Some(s) = spread else {
        return Verdict::Uncertain;
    };
    if (m.ratio - 1.0).abs() < threshold(s, min_effect, floor) {
        return Verdict::Same;
    }
    match (m.higher, m.lower, direction) {
        (true, _, Direction::LowerIsBetter) | (_, true, Direction::HigherIsBetter) => {
            Verdict::Slower
        }
        (true, _, Direction::HigherIsBetter) | (_, true, Direction::LowerIsBetter) => {
            Verdict::Faster
        }
        _ => Verdict::Uncertain,
    }
}

/// One line of ours the rule has the processes of.
struct Pending {
    line: usize,
    base: Vec<f64>,
    head: Vec<f64>,
    /// The spread over every process of the point's replicate groups.
    spread: Option<Spread>,
    /// Head against base within machine states, when every process has one and a state
    /// holds processes of both sides, with the spread within states.
    states: Option<(Move, Option<Spread>)>,
    /// The sides are [`interleaved`].
    alternating: bool,
    /// The sides ran on two machines: the earlier rules' FASTER or SLOWER becomes SAME when
    /// the move lies within what the point moved between processes of unchanged code on either
    /// board (a point's own modes, which no control shares: a kernel ~5% slower in some
    /// processes of a board); otherwise it stands. Nothing is judged finer there.
    across: bool,
    /// Judged again (else it only lends its spread to the floor of the points like it).
    judged: bool,
    base_median: f64,
}

impl Pending {
    /// The spread the line is judged against: within states where it is compared so.
    fn judged_spread(&self) -> Option<&Spread> {
        match &self.states {
            Some((_, s)) => s.as_ref(),
            None => self.spread.as_ref(),
        }
    }
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
    let kinds: BTreeSet<&str> = base.iter().chain(head).map(|r| r.kind()).collect();
    let history: Vec<&HistoryRun> = history
        .iter()
        .filter(|r| !r.synthetic() && !sides.contains(r.run_id()) && kinds.contains(r.kind()))
        .collect();
    let states = super::states::states(
        &base
            .iter()
            .chain(head)
            .chain(&history)
            .copied()
            .collect::<Vec<_>>(),
    );
    let mut decided = 0;
    let mut pending = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if l.verdict().is_none() {
            continue;
        }
        if is_library(&l.point.implementation)
            || TRACE_KINDS.contains(&l.point.kind.as_str())
            || l.variant.is_some()
        {
            continue;
        }
        // Across two machines only a FASTER or SLOWER is looked at, and only to hold it back
        // (see [`Pending::across`]).
        let across = two_machines.contains(&l.gpu);
        if across && !matches!(l.verdict(), Some(Verdict::Faster | Verdict::Slower)) {
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
        let boards: BTreeSet<String> = b_runs
            .iter()
            .chain(&h_runs)
            .filter_map(|r| r.board())
            .collect();
        // A run without a board (a CPU run) has no board to learn a spread on.
        if boards.is_empty() {
            continue;
        }
        let key_of = |r: &HistoryRun, row: &HistoryPoint| {
            format!(
                "{}|{}",
                r.board().unwrap_or_default(),
                code_key(r, kind, row, &l.stat)
            )
        };
        let (bp, hp) = (
            processes(&b_runs, l, ignore, alternating, &key_of, &states),
            processes(&h_runs, l, ignore, alternating, &key_of, &states),
        );
        if bp.is_empty() || hp.is_empty() {
            continue;
        }
        // Replicate groups: the history's same-code runs on this board, one group per code (and
        // one per code and machine state), and each side with the history's runs of its own
        // code (see the module's comment).
        let mut groups: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        let mut state_groups: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        for r in history
            .iter()
            .filter(|r| r.kind() == kind && r.board().is_some_and(|b| boards.contains(&b)))
        {
            for p in processes(&[r], l, ignore, alternating, &key_of, &states) {
                if let Some(k) = p.state_key() {
                    state_groups.entry(k).or_default().push(p.median);
                }
                groups.entry(p.code).or_default().push(p.median);
            }
        }
        let keyed = |ps: &[Process], key: &dyn Fn(&Process) -> Option<String>| {
            ps.iter()
                .map(|p| key(p).map(|k| (p.median, k)))
                .collect::<Option<Vec<(f64, String)>>>()
        };
        let code = |p: &Process| Some(p.code.clone());
        let spread = keyed(&bp, &code)
            .zip(keyed(&hp, &code))
            .and_then(|(b, h)| side_spread(&groups, &b, &h));
        let stated = |ps: &[Process]| -> Option<Vec<(f64, usize)>> {
            ps.iter().map(|p| p.state.map(|s| (p.median, s))).collect()
        };
        let states_move = (!across)
            .then(|| stated(&bp).zip(stated(&hp)))
            .flatten()
            .and_then(|(b, h)| Move::within_states(&b, &h))
            .map(|m| {
                let s = keyed(&bp, &Process::state_key)
                    .zip(keyed(&hp, &Process::state_key))
                    .and_then(|(b, h)| side_spread(&state_groups, &b, &h));
                (m, s)
            })
            .filter(|(_, s)| {
                s.as_ref()
                    .is_some_and(|s| s.replicates >= MIN_STATE_REPLICATES)
            });
        let bm: Vec<f64> = bp.iter().map(|p| p.median).collect();
        let hm: Vec<f64> = hp.iter().map(|p| p.median).collect();
        let base_median = median(&mut bm.clone());
        pending.push(Pending {
            line: i,
            spread,
            states: states_move,
            base: bm,
            head: hm,
            alternating,
            across,
            judged,
            base_median,
        });
    }
    // Every line of ours with a known spread, judged or not, is a point "like" the judged ones of
    // its kind and quantity when its base median lies within TIME_SCALE of theirs. A line
    // judged within machine states takes its floor from the spreads within states.
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
            .filter_map(|q| {
                let s = if p.states.is_some() && q.states.is_some() {
                    q.judged_spread()
                } else {
                    q.spread.as_ref()
                };
                s.map(|s| s.max_ratio)
            })
            .collect()
    };
    let floors: Vec<f64> = pending.iter().map(|p| floor_of(&like(p))).collect();
    for (p, floor) in pending.into_iter().zip(floors) {
        if !p.judged {
            continue;
        }
        let (m, spread) = match &p.states {
            Some((m, s)) => (*m, s.as_ref()),
            None => (Move::of(&p.base, &p.head), p.spread.as_ref()),
        };
        let l = &mut lines[p.line];
        if p.across {
            let Some(s) = spread.filter(|s| (m.ratio - 1.0).abs() < threshold(s, min_effect, 0.0))
            else {
                continue;
            };
            if let Change::Compared(j) = &mut l.change {
                j.verdict = Verdict::Same;
            }
            l.rule = Some(format!(
                "processes: on two boards; unchanged code moved this point by up to {:.1}% \
                 between {} processes of one board, so a change across boards must reach {:.1}% \
                 (it moved {:+.1}%)",
                s.max_ratio * 100.0,
                s.replicates,
                threshold(s, min_effect, 0.0) * 100.0,
                (m.ratio - 1.0) * 100.0
            ));
            decided += 1;
            continue;
        }
        let verdict = judge(m, spread, Direction::of_stat(&l.stat), min_effect, floor);
        if let Change::Compared(j) = &mut l.change {
            j.verdict = verdict;
            j.ratio = Some(m.ratio);
        }
        let within = if p.states.is_some() {
            ", each compared within its machine state (told by the library lines)"
        } else {
            ""
        };
        l.rule = Some(match spread {
            Some(s) => format!(
                "processes: {} process(es) of base, {} of head{}{within}; unchanged code moved \
                 this point by up to {:.1}% between {} processes on this board (points like \
                 it: {:.1}%), so a change must reach {:.1}%",
                p.base.len(),
                p.head.len(),
                if p.alternating { ", interleaved" } else { "" },
                s.max_ratio * 100.0,
                s.replicates,
                floor * 100.0,
                threshold(s, min_effect, floor) * 100.0
            ),
            None => format!(
                "processes: {} process(es) of base, {} of head{within}, and fewer than \
                 {MIN_REPLICATES} same-code processes of this point on this board: its \
                 between-process spread is unknown; confirm by interleaving \
                 (scripts/ci/confirm.sh)",
                p.base.len(),
                p.head.len()
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
        let keyed = |v: &[f64], k: &str| -> Vec<(f64, String)> {
            v.iter().map(|m| (*m, k.to_string())).collect()
        };
        let same = side_spread(
            &history,
            &keyed(&base, "board|code=a"),
            &keyed(&head, "board|code=a"),
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
            &keyed(&base, "board|code=a"),
            &keyed(&slow, "board|code=b"),
        )
        .unwrap();
        assert!(changed.max_ratio < 0.01, "{changed:?}");
        assert_eq!(
            decide(&base, &slow, Some(&changed), LOWER, 0.03).0,
            Verdict::Slower
        );
    }

    #[test]
    fn each_process_is_compared_with_base_in_its_own_state() {
        // A point 2.5% slower in one machine state (1) than in the other (0). Base's two
        // processes fell in state 0, head's in 0 and 1: same code.
        let base = [(25.0, 0), (25.05, 0)];
        let head = [(25.02, 0), (25.65, 1)];
        assert_eq!(
            Move::within_states(&base, &head).map(|m| m.ratio),
            Some(25.02 / 25.025),
            "head's process in state 1 has no base process to be compared with"
        );
        let plain = Move::of(&[25.0, 25.05], &[25.02, 25.65]);
        assert!(plain.ratio > 1.012, "{plain:?}");
        // Code 5% slower: each head process against base's of its state.
        let slow = [(26.25, 0), (26.9, 1)];
        let base2 = [(25.0, 0), (25.6, 1)];
        let m = Move::within_states(&base2, &slow).unwrap();
        assert!(
            (m.ratio - 1.05).abs() < 0.002 && m.higher && !m.lower,
            "{m:?}"
        );
        let s = spread_of(&[vec![25.0, 25.1, 25.05], vec![25.6, 25.7]]).unwrap();
        assert_eq!(judge(m, Some(&s), LOWER, 0.03, 0.0), Verdict::Slower);
        // No state in common: nothing to compare within states.
        assert_eq!(Move::within_states(&[(25.0, 0)], &[(25.6, 1)]), None);
    }
}
