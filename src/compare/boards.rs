//! Rule `boards`: a point judged against its own range across boards, from the history.
//!
//! The controls of a run (library code, ceilings, the launch interval) measure how far the
//! machine moved for work like theirs. A kernel that runs on a single SM (a one-block decode
//! row) moves with the board in its own way: where its SM and its data's L2 slice sit differs
//! between boards, so its time differs by several percent between boards while every control
//! stays put. What tells such a board effect from a change of code is the point itself on
//! other boards: when the history holds this point, measured with the same launch settings (the
//! settings stand for the code: a kernel change that keeps them is the rule's blind spot), on
//! at least [`MIN_BOARDS`] boards other than head's, and head's median lies within the range of
//! their medians, head measured what those boards measure, and a FASTER or SLOWER becomes SAME.
//! A change that moves the point out of that range keeps its verdict.
//!
//! It applies only to our implementations, to sides on two machines, and to lines that every
//! earlier rule left FASTER or SLOWER; throttled rows of the history are left out of the range.

use super::line::{Change, Line};
use super::verdict::Verdict;
use crate::artifact::Param;
use crate::history::{HistoryPoint, HistoryRun};
use crate::identity::{is_library, is_setting, Identity};
use std::collections::{BTreeMap, BTreeSet};

/// Boards, head's own left out, that must have measured the point before its range is used.
pub const MIN_BOARDS: usize = 4;

/// The row of `point` in `run` (None when the run has none, or several: told apart by
/// settings, which this rule does not choose between).
pub(super) fn row_of<'a>(
    run: &'a HistoryRun,
    point: &Identity,
    ignore: &[String],
) -> Option<&'a HistoryPoint> {
    let mut rows = run
        .record
        .points
        .iter()
        .filter(|p| p.identity(run.kind(), ignore) == *point);
    let first = rows.next()?;
    rows.next().is_none().then_some(first)
}

/// The row's run settings (its launch configuration): what stands for the code.
pub(super) fn settings<'a>(kind: &str, row: &'a HistoryPoint) -> BTreeMap<&'a str, &'a Param> {
    row.params
        .iter()
        .filter(|(k, _)| is_setting(kind, k))
        .map(|(k, v)| (k.as_str(), v))
        .collect()
}

/// Applies the rule to `lines` (see the module's comment). `head` holds head's runs, `history`
/// every run the comparison may draw a range from.
pub fn apply(
    lines: &mut [Line],
    head: &[&HistoryRun],
    history: &[HistoryRun],
    two_machines: &BTreeSet<String>,
    ignore: &[String],
) {
    for l in lines.iter_mut() {
        let Change::Compared(j) = &mut l.change else {
            continue;
        };
        if !matches!(j.verdict, Verdict::Faster | Verdict::Slower)
            || is_library(&l.point.implementation)
            || !two_machines.contains(&l.gpu)
            || l.variant.is_some()
        {
            continue;
        }
        let Some(h) = &l.head else { continue };
        let Some(run) = head.iter().find(|r| r.run_id() == h.run_id) else {
            continue;
        };
        let (Some(head_board), Some(head_row)) = (run.board(), row_of(run, &l.point, ignore))
        else {
            continue;
        };
        let kind = l.point.kind.as_str();
        let want = settings(kind, head_row);
        let mut per_board: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        for r in history.iter().filter(|r| {
            r.kind() == kind && r.gpu() == l.gpu && r.run_id() != run.run_id() && !r.synthetic()
        }) {
            let Some(b) = r.board().filter(|b| *b != head_board) else {
                continue;
            };
            let Some(row) = row_of(r, &l.point, ignore) else {
                continue;
            };
            if row.throttled() || settings(kind, row) != want {
                continue;
            }
            if let Some(s) = row.stats.get(&l.stat) {
                per_board.entry(b).or_default().push(s.p50);
            }
        }
        if per_board.len() < MIN_BOARDS {
            continue;
        }
        let medians: Vec<f64> = per_board
            .values()
            .map(|v| {
                let mut v = v.clone();
                v.sort_by(f64::total_cmp);
                v[v.len() / 2]
            })
            .collect();
        let lo = medians.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = medians.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if (lo..=hi).contains(&h.p50) {
            j.verdict = Verdict::Same;
            l.rule = Some(format!(
                "boards: head's median {:.4} lies within what this point measured with the same \
                 launch settings on {} other boards ({lo:.4}-{hi:.4}); a move inside the \
                 boards' own range is the board's, not the code's",
                h.p50,
                medians.len()
            ));
        }
    }
}
