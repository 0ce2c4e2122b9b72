//! The difference of two traces, kernel by kernel (names from the kernel summary): kernels only
//! in the second (added), only in the first (removed), and in both with another instance count
//! or a total time that moved by more than the tolerance (changed), largest time change first.

use super::kernsum::KernelStat;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    Added,
    Removed,
    Changed,
    Same,
}

/// One kernel name in either trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelDiff {
    pub name: String,
    pub change: Change,
    pub instances_a: u64,
    pub instances_b: u64,
    pub total_ns_a: u64,
    pub total_ns_b: u64,
}

impl KernelDiff {
    pub fn delta_ns(&self) -> i64 {
        self.total_ns_b as i64 - self.total_ns_a as i64
    }
}

/// Compares summaries `a` (before) and `b` (after). A kernel in both is `Changed` when its
/// instance count differs or its total time moved by more than `time_tol_pct` percent of `a`'s.
pub fn diff(a: &[KernelStat], b: &[KernelStat], time_tol_pct: f64) -> Vec<KernelDiff> {
    let mut m: BTreeMap<&str, (Option<&KernelStat>, Option<&KernelStat>)> = BTreeMap::new();
    for s in a {
        m.entry(&s.name).or_default().0 = Some(s);
    }
    for s in b {
        m.entry(&s.name).or_default().1 = Some(s);
    }
    let mut out: Vec<KernelDiff> = m
        .into_iter()
        .map(|(name, (x, y))| {
            let (ia, ta) = x.map_or((0, 0), |s| (s.instances, s.total_ns));
            let (ib, tb) = y.map_or((0, 0), |s| (s.instances, s.total_ns));
            let change = match (x, y) {
                (None, _) => Change::Added,
                (_, None) => Change::Removed,
                _ => {
                    let moved = (tb as f64 - ta as f64).abs() > ta as f64 * time_tol_pct / 100.0;
                    if ia != ib || moved {
                        Change::Changed
                    } else {
                        Change::Same
                    }
                }
            };
            KernelDiff {
                name: name.to_string(),
                change,
                instances_a: ia,
                instances_b: ib,
                total_ns_a: ta,
                total_ns_b: tb,
            }
        })
        .collect();
    out.sort_by(|p, q| {
        q.delta_ns()
            .unsigned_abs()
            .cmp(&p.delta_ns().unsigned_abs())
            .then(p.name.cmp(&q.name))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::kernsum::kernel_summary;
    use crate::trace::record::Activity;

    fn run(list: &[(&str, u64)]) -> Vec<KernelStat> {
        let ks: Vec<Activity> = list
            .iter()
            .map(|&(n, d)| Activity::kernel(n, 0, d))
            .collect();
        kernel_summary(&ks)
    }

    #[test]
    fn added_removed_changed_and_same_kernels_are_told_apart() {
        let a = run(&[
            ("gemm", 100),
            ("gemm", 100),
            ("relu", 10),
            ("old", 50),
            ("norm", 100),
        ]);
        let b = run(&[("gemm", 100), ("relu", 10), ("new", 70), ("norm", 104)]);
        let d = diff(&a, &b, 5.0);
        let get = |n: &str| d.iter().find(|x| x.name == n).unwrap();
        assert_eq!(get("gemm").change, Change::Changed);
        assert_eq!((get("gemm").instances_a, get("gemm").instances_b), (2, 1));
        assert_eq!(get("gemm").delta_ns(), -100);
        assert_eq!(get("new").change, Change::Added);
        assert_eq!(get("old").change, Change::Removed);
        assert_eq!(get("relu").change, Change::Same);
        // 4% moved: inside a 5% tolerance, outside a 3% one.
        assert_eq!(get("norm").change, Change::Same);
        assert_eq!(
            diff(&a, &b, 3.0)
                .iter()
                .find(|x| x.name == "norm")
                .unwrap()
                .change,
            Change::Changed
        );
        // Largest |delta| first: gemm -100, new +70, old -50, norm +4, relu 0.
        let order: Vec<&str> = d.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(order, ["gemm", "new", "old", "norm", "relu"]);
    }
}
