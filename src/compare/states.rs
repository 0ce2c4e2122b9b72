//! Machine states of a process, told by its library lines: so that rule `processes` compares
//! our code between processes that ran in the same state of the board.
//!
//! On one H200 a GEMM process runs in one of two states: in one, about half of the library
//! lines (cuBLAS, candle: code that never changes) sit 2-6% away from where they sit in the
//! other, and so do many of our points, each by its own amount and sign; within a state the
//! same lines agree to ~1%. Which state a process gets is not under our control, so a point
//! whose processes fell in both states shows the states' distance as its between-process
//! spread, and two sides whose processes fell in different states differ by it. The library
//! lines of each process name its state: two processes of one board are in the same state
//! when fewer than [`STATE_SHARE`] of the library lines they share differ by more than
//! [`STATE_MOVE`]. States are the connected groups of that relation on one board and kind.
//! A kind with fewer than [`MIN_STATE_LINES`] library lines a process has no states: all its
//! processes are taken as one.

use crate::history::HistoryRun;
use crate::identity::{is_library, Identity};
use std::collections::BTreeMap;

/// A library line that moved more than this (as a ratio) between two processes differs.
pub const STATE_MOVE: f64 = 0.03;

/// Two processes are in different states when at least this share of the library lines they
/// share differ. Measured: within a state 8-15% of the GEMM library lines differ (candle, which
/// allocates its output on every call, among them), between states 45-61%.
pub const STATE_SHARE: f64 = 0.30;

/// Library lines two processes must share before their states are told apart.
pub const MIN_STATE_LINES: usize = 20;

/// A process's library lines: (point, quantity) -> median.
type Fingerprint = BTreeMap<(Identity, String), f64>;

fn fingerprint(run: &HistoryRun) -> Fingerprint {
    run.record
        .points
        .iter()
        .filter(|p| is_library(&p.implementation))
        .flat_map(|p| {
            let id = p.identity(run.kind(), &[]);
            p.stats
                .iter()
                .filter(|(stat, s)| stat.ends_with("_us") && s.p50 > 0.0)
                .map(move |(stat, s)| ((id.clone(), stat.clone()), s.p50))
        })
        .collect()
}

/// Whether two processes ran in the same state: None when they share too few library lines
/// to tell.
fn same_state(a: &Fingerprint, b: &Fingerprint) -> Option<bool> {
    let (mut shared, mut moved) = (0usize, 0usize);
    for (k, x) in a {
        if let Some(y) = b.get(k) {
            shared += 1;
            moved += usize::from((x / y).ln().abs() > STATE_MOVE.ln_1p());
        }
    }
    (shared >= MIN_STATE_LINES).then_some((moved as f64) < STATE_SHARE * shared as f64)
}

/// The state of each run (by run id) among `runs` of one kind: runs on one board in the same
/// state share a number. A run without a board, or one that shares too few library lines with
/// every other run of its board, has no state.
pub fn states(runs: &[&HistoryRun]) -> BTreeMap<String, usize> {
    let prints: Vec<Fingerprint> = runs.iter().map(|r| fingerprint(r)).collect();
    let mut parent: Vec<usize> = (0..runs.len()).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    let mut told = vec![false; runs.len()];
    for i in 0..runs.len() {
        for j in i + 1..runs.len() {
            let board = runs[i].board();
            if board.is_none() || board != runs[j].board() || runs[i].kind() != runs[j].kind() {
                continue;
            }
            let Some(same) = same_state(&prints[i], &prints[j]) else {
                continue;
            };
            told[i] = true;
            told[j] = true;
            if same {
                let (a, b) = (root(&mut parent, i), root(&mut parent, j));
                parent[a.max(b)] = a.min(b);
            }
        }
    }
    (0..runs.len())
        .filter(|i| told[*i])
        .map(|i| (runs[i].run_id().to_string(), root(&mut parent, i)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn print(values: &[f64]) -> Fingerprint {
        let id = |i: usize| Identity {
            kind: "gemm".into(),
            benchmark: "gemm".into(),
            implementation: "cublas".into(),
            params: format!("m={i}"),
        };
        values
            .iter()
            .enumerate()
            .map(|(i, v)| ((id(i), "time_us".to_string()), *v))
            .collect()
    }

    #[test]
    fn processes_whose_library_lines_agree_share_a_state() {
        let a: Vec<f64> = (0..40).map(|i| 10.0 + i as f64).collect();
        // Half the lines 5% slower: another state.
        let b: Vec<f64> = a
            .iter()
            .enumerate()
            .map(|(i, v)| if i % 2 == 0 { v * 1.05 } else { *v })
            .collect();
        // A few lines (candle's) moved: the same state.
        let c: Vec<f64> = a
            .iter()
            .enumerate()
            .map(|(i, v)| if i % 10 == 0 { v * 1.2 } else { v * 1.005 })
            .collect();
        assert_eq!(same_state(&print(&a), &print(&b)), Some(false));
        assert_eq!(same_state(&print(&a), &print(&c)), Some(true));
        assert_eq!(
            same_state(&print(&a[..10]), &print(&c[..10])),
            None,
            "too few library lines to tell"
        );
    }
}
