//! The regressions table's verdicts on the charts: per kind and GPU, the newest commit's point
//! on each of its lines is marked when the table judged any of our points there SLOWER (or only
//! FASTER), with our code's signed time change (`time_change`) in its hover.

use super::regressions::GroupCount;
use super::series::Commit;
use crate::site::fmt;
use serde::Serialize;

/// A mark on one line: at commit index `x`, SLOWER (`slower`) or only FASTER.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mark {
    pub x: usize,
    pub slower: bool,
    /// The hover: counts and the change with its interval.
    pub t: String,
}

/// The mark of the line of `gpu` in `kind` whose commits are `commits`, from `counts` (the
/// table against the predecessor); `None` when the table judged nothing there SLOWER or FASTER.
pub fn mark(counts: &[GroupCount], kind: &str, gpu: &str, commits: &[Commit]) -> Option<Mark> {
    let g = counts.iter().find(|g| g.kind == kind && g.gpu == gpu)?;
    if g.slower == 0 && g.faster == 0 {
        return None;
    }
    let x = commits
        .iter()
        .position(|c| c.hash.is_some() && c.hash == g.head_commit)?;
    let mut t = format!(
        "the table below: {} of our points SLOWER, {} FASTER than commit {}",
        g.slower,
        g.faster,
        g.base_commit
            .as_deref()
            .map_or("unknown", |h| &h[..h.len().min(10)])
    );
    if let Some(c) = g.change {
        t.push_str(&format!(
            "; our code's time {} [{}, {}] over {} points",
            signed_pct(c.pct),
            signed_pct(c.lo_pct),
            signed_pct(c.hi_pct),
            c.points
        ));
    }
    Some(Mark {
        x,
        slower: g.slower > 0,
        t,
    })
}

/// "+4.1%", "-0.3%".
fn signed_pct(v: f64) -> String {
    let s = fmt::pct(v.abs());
    if v < 0.0 {
        format!("-{s}")
    } else {
        format!("+{s}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::site::pages::history::change::TimeChange;

    fn count(slower: usize, faster: usize) -> GroupCount {
        GroupCount {
            kind: "layernorm".into(),
            gpu: "NVIDIA H200".into(),
            base_commit: Some("aaaaaaaaaaaa".into()),
            head_commit: Some("bbbbbbbbbbbb".into()),
            judged: 10,
            slower,
            faster,
            uncertain: 0,
            library_moved: 0,
            failed: 0,
            removed: 0,
            change: Some(TimeChange {
                pct: 4.0,
                lo_pct: 2.0,
                hi_pct: 6.0,
                points: 10,
            }),
            base_started_utc: String::new(),
            head_started_utc: String::new(),
            head_throttled: 0,
            head_board: None,
            same_board: true,
        }
    }

    fn commits() -> Vec<Commit> {
        ["aaaaaaaaaaaa", "bbbbbbbbbbbb"]
            .iter()
            .map(|h| Commit {
                hash: Some(h.to_string()),
                started_utc: "2026-12-01T00:00:00Z".into(),
            })
            .collect()
    }

    #[test]
    fn the_newest_commit_is_marked_with_the_tables_counts_and_change() {
        let m = mark(&[count(3, 1)], "layernorm", "NVIDIA H200", &commits()).unwrap();
        assert_eq!(m.x, 1);
        assert!(m.slower);
        assert!(m.t.contains("3 of our points SLOWER"), "{}", m.t);
        assert!(m.t.contains(&format!("+{}", fmt::pct(4.0))), "{}", m.t);
        let faster = mark(&[count(0, 2)], "layernorm", "NVIDIA H200", &commits()).unwrap();
        assert!(!faster.slower);
    }

    #[test]
    fn nothing_judged_or_another_line_is_not_marked() {
        assert_eq!(
            mark(&[count(0, 0)], "layernorm", "NVIDIA H200", &commits()),
            None
        );
        assert_eq!(
            mark(&[count(1, 0)], "gemm", "NVIDIA H200", &commits()),
            None
        );
        assert_eq!(
            mark(&[count(1, 0)], "layernorm", "NVIDIA H100", &commits()),
            None
        );
    }
}
