//! What a chart's subtitle says about its rows: the GPUs, commits and dates they were measured
//! on, and the statistic drawn. One function builds it for every chart.

use super::points::Point;
use std::collections::BTreeMap;

/// The statistic of charts that draw each point's median with whiskers.
pub const MEDIAN_P5_P95: &str = "median (P50) of each point's samples, whiskers P5–P95";
/// The statistic of charts that draw each point's median alone.
pub const MEDIAN: &str = "median (P50) of each point's samples";

/// Charts of a ratio of two implementations' medians at the same point.
pub const RATIO_OF_MEDIANS: &str =
    "ratio of the medians (P50) of the two implementations at each point";
/// Charts of a rate computed from each point's median time.
pub const AT_MEDIAN: &str = "rate at each point's median (P50) time";
/// Charts of a rate that is itself the median over repeats (LLM tokens/s).
pub const MEDIAN_RATE: &str = "median (P50) rate over each point's repeats";
/// Charts of the problem's parameters, not of timings.
pub const PARAMETERS: &str = "parameters recorded with each point (no timing)";
/// Charts of correctness checks.
pub const CHECK: &str = "error of each point's checked output against its reference";

/// Commits named one by one; more are counted.
const MAX_COMMITS: usize = 3;

/// "Measured on NVIDIA H200 · commit 0123456789 · 2026-11-22 · median (P50) …": the GPUs,
/// commits and dates of the rows' artifacts, then `stat`, what the chart draws of them.
pub fn subtitle(points: &[Point], stat: &str) -> String {
    let mut gpus: Vec<String> = Vec::new();
    let mut commits: Vec<String> = Vec::new();
    let mut dates: Vec<&str> = Vec::new();
    for p in points {
        let run = &p.artifact().run;
        push_new(&mut gpus, p.gpu());
        push_new(
            &mut commits,
            super::fmt::commit(run.git_commit.as_deref(), run.git_dirty),
        );
        let day = run.finished_utc.get(..10).unwrap_or(&run.finished_utc);
        if !dates.contains(&day) {
            dates.push(day);
        }
    }
    if points.is_empty() {
        return format!("No rows measured · {stat}");
    }
    gpus.sort();
    commits.sort();
    dates.sort_unstable();
    let commit_text = match commits.len() {
        1 => format!("commit {}", commits[0]),
        n if n <= MAX_COMMITS => format!("commits {}", commits.join(", ")),
        n => format!(
            "{n} commits ({} and {} more)",
            commits[..MAX_COMMITS].join(", "),
            n - MAX_COMMITS
        ),
    };
    let date_text = match (dates.first(), dates.last()) {
        (Some(a), Some(b)) if a != b => format!("{a} to {b}"),
        (Some(a), _) => a.to_string(),
        _ => String::new(),
    };
    let throttled = points.iter().filter(|p| p.row.throttled()).count();
    let clocks = match throttled {
        0 => String::new(),
        n => format!(" · {n} point(s) not measured at full clocks (throttled; see hovers)"),
    };
    format!(
        "Measured on {} · {commit_text} · {date_text} · {stat}{clocks}",
        gpus.join(" and ")
    )
}

/// The subtitle of each GPU's rows alone, keyed by GPU name, where the rows span several GPUs:
/// the browser shows the one the GPU filter picks.
pub fn subtitle_by_gpu(points: &[Point], stat: &str) -> BTreeMap<String, String> {
    let mut by: BTreeMap<String, Vec<Point>> = BTreeMap::new();
    for p in points {
        by.entry(p.gpu()).or_default().push(*p);
    }
    if by.len() < 2 {
        return BTreeMap::new();
    }
    by.into_iter()
        .map(|(g, rows)| (g, subtitle(&rows, stat)))
        .collect()
}

fn push_new(v: &mut Vec<String>, s: String) {
    if !v.contains(&s) {
        v.push(s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artifact::Loaded;
    use crate::artifact::ResultRow;

    fn loaded(commit: &str, finished: &str) -> Loaded {
        let mut l = crate::artifact::fixture::loaded(
            "gemm",
            "a",
            finished,
            vec![ResultRow::new("gemm", "cublas")],
        );
        l.file = "a.json".into();
        l.artifact.run.git_commit = Some(commit.into());
        l.artifact.run.git_dirty = Some(false);
        l
    }

    #[test]
    fn names_gpus_commits_dates_and_the_statistic() {
        let a = loaded("0123456789abcdef", "2026-11-20T03:00:00Z");
        let b = loaded("fedcba9876543210", "2026-11-22T05:00:00Z");
        let pts: Vec<Point> = [&a, &b]
            .iter()
            .map(|l| Point {
                loaded: l,
                row: &l.artifact.results[0],
            })
            .collect();
        let s = subtitle(&pts, MEDIAN);
        assert!(s.starts_with("Measured on CPU"), "{s}");
        assert!(
            s.contains("commits 0123456789, fedcba9876 · 2026-11-20 to 2026-11-22 · median"),
            "{s}"
        );
        assert!(subtitle(&pts[..1], MEDIAN).contains("commit 0123456789 · 2026-11-20 ·"));
        assert_eq!(
            subtitle(&[], MEDIAN),
            format!("No rows measured · {MEDIAN}")
        );
    }
}
