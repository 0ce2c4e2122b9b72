//! Whether each of our points ran the same code on both sides of a comparison, read off the
//! rows' `code` setting (`crate::code_id`: the hash of the GPU modules the row's kernels came
//! from) instead of assumed from the commits. A changed hash also shows on its line, as a
//! setting that differs.

use super::boards::row_of;
use super::line::{Change, Line};
use crate::code_id::SETTING;
use crate::history::HistoryRun;
use crate::identity::is_library;
use std::collections::BTreeSet;

/// Our judged points, by what their rows say of the code.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct CodeCounts {
    /// One hash on both sides.
    pub unchanged: usize,
    /// A hash on each side, not the same.
    pub changed: usize,
    /// A side without a hash (an older artifact, a CPU run): the commits stand for the code.
    pub unknown: usize,
}

/// The `code` values of the point's rows in `runs` of the line's GPU on that side; None when
/// a row lacks one.
fn codes(runs: &[&HistoryRun], l: &Line, gpu: &str, ignore: &[String]) -> Option<BTreeSet<String>> {
    let mut out = BTreeSet::new();
    for r in runs
        .iter()
        .filter(|r| r.kind() == l.point.kind && r.gpu() == gpu)
    {
        if let Some(row) = row_of(r, &l.point, ignore) {
            out.insert(row.params.get(SETTING)?.to_string());
        }
    }
    (!out.is_empty()).then_some(out)
}

/// Counts our judged points (one per point, whatever its quantities) by their code.
pub fn counts(
    lines: &[Line],
    base: &[&HistoryRun],
    head: &[&HistoryRun],
    ignore: &[String],
) -> CodeCounts {
    let mut seen = BTreeSet::new();
    let mut c = CodeCounts::default();
    for l in lines.iter().filter(|l| {
        matches!(l.change, Change::Compared(_) | Change::Failed)
            && !is_library(&l.point.implementation)
            && l.variant.is_none()
    }) {
        if !seen.insert((l.gpu.clone(), l.point.clone())) {
            continue;
        }
        let (bg, hg) = l.gpu.split_once(" -> ").unwrap_or((&l.gpu, &l.gpu));
        match (codes(base, l, bg, ignore), codes(head, l, hg, ignore)) {
            (Some(b), Some(h)) if b.len() == 1 && b == h => c.unchanged += 1,
            (Some(_), Some(_)) => c.changed += 1,
            _ => c.unknown += 1,
        }
    }
    c
}

/// The report's note, when any of our points carries a hash on a side.
pub fn note(c: &CodeCounts) -> Option<String> {
    if c.unchanged + c.changed == 0 {
        return None;
    }
    let total = c.unchanged + c.changed + c.unknown;
    let mut s = format!(
        "code: {} of our {total} points ran the same GPU code on both sides (one `code` hash of \
         their modules; with the same launch settings, a move there is not our kernels')",
        c.unchanged
    );
    if c.changed > 0 {
        s.push_str(&format!(
            "; {} ran changed code (their lines list `code: base -> head`)",
            c.changed
        ));
    }
    if c.unknown > 0 {
        s.push_str(&format!(
            "; {} carry no hash on a side, so their commits stand for the code",
            c.unknown
        ));
    }
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_note_counts_every_kind_of_point_and_is_silent_without_hashes() {
        assert_eq!(note(&CodeCounts::default()), None);
        assert_eq!(
            note(&CodeCounts {
                unknown: 4,
                ..Default::default()
            }),
            None
        );
        let n = note(&CodeCounts {
            unchanged: 40,
            changed: 5,
            unknown: 3,
        })
        .unwrap();
        assert!(
            n.starts_with("code: 40 of our 48 points ran the same GPU code"),
            "{n}"
        );
        assert!(n.contains("; 5 ran changed code"), "{n}");
        assert!(n.contains("; 3 carry no hash on a side"), "{n}");
        let only = note(&CodeCounts {
            unchanged: 2,
            ..Default::default()
        })
        .unwrap();
        assert!(
            !only.contains("changed") && !only.contains("no hash"),
            "{only}"
        );
    }
}
