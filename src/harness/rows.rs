//! The rule every benchmark applies to a point that was not timed: status failed, no
//! statistics or derived metrics, the check (if one ran) kept, and the reason in the notes.

use crate::artifact::{Correctness, ResultRow, Status};

/// Marks `row` failed for `why`, keeping `correctness` when a check ran.
pub fn failed(mut row: ResultRow, correctness: Option<Correctness>, why: &str) -> ResultRow {
    row.status = Status::Failed;
    row.correctness = correctness;
    row.stats.clear();
    row.metrics.clear();
    row.notes.push(why.to_string());
    row
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::summarize;

    #[test]
    fn a_failed_row_keeps_its_check_and_loses_its_numbers() {
        let mut r = ResultRow::new("b", "i").param("n", 3usize);
        r.stats
            .insert("time_us".into(), summarize(&[1.0, 2.0]).unwrap());
        r.metrics.insert("gbps".into(), 1.0);
        let f = failed(r, None, "faulted");
        assert_eq!(f.status, Status::Failed);
        assert!(f.stats.is_empty() && f.metrics.is_empty());
        assert_eq!(f.notes, vec!["faulted".to_string()]);
    }
}
