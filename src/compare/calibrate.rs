//! Calibration of the gate: its false-alarm rate on same-code pairs and its power on planted
//! slowdowns, per kind, GPU and scope (one board, or two), from a pool of runs.
//!
//! A same-code pair is two runs of one kind on one GPU model from the same clean commit. Each
//! pair is compared as `compare` would, with the history minus the pair's two runs (the pair
//! never teaches the gate its own spread). A pair raises a false alarm when any line of our
//! code is FASTER, SLOWER or FAILED. "Decided" counts our GPU-time lines (durations, host-side
//! quantities left out) that are SAME, FASTER or SLOWER. Power: head's rows of our code whose
//! base median is at least [`PLANT_MIN_US`] get their durations (median, interval and
//! percentiles) made `p` slower, and the share of those lines judged SLOWER is the power at `p`.

use super::diff::{compare, Options};
use super::line::Change;
use super::verdict::{Direction, Verdict};
use crate::compare::drift::HOST_SIDE_STATS;
use crate::history::HistoryRun;
use crate::identity::is_library;
use serde::Serialize;
use std::collections::BTreeMap;

/// The planted slowdowns.
pub const PLANTS: [f64; 3] = [0.02, 0.05, 0.10];

/// Rows shorter than this (base median, in us) are left out of the power: launch-bound.
pub const PLANT_MIN_US: f64 = 10.0;

/// One calibration group's figures.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Calibration {
    pub kind: String,
    pub gpu: String,
    /// "one board" or "two boards".
    pub scope: String,
    pub pairs: usize,
    /// Pairs with a FASTER, SLOWER or FAILED line of our code.
    pub false_alarm_pairs: usize,
    /// Our GPU-time lines judged, and how many of them were SAME, FASTER or SLOWER.
    pub our_lines: usize,
    pub decided_lines: usize,
    /// Per planted slowdown (as in [`PLANTS`]): lines planted and lines caught as SLOWER.
    pub planted_lines: Vec<usize>,
    pub caught_lines: Vec<usize>,
}

impl Calibration {
    pub fn false_alarm_rate(&self) -> f64 {
        ratio(self.false_alarm_pairs, self.pairs)
    }
    pub fn decided_share(&self) -> f64 {
        ratio(self.decided_lines, self.our_lines)
    }
    pub fn power(&self, i: usize) -> f64 {
        ratio(self.caught_lines[i], self.planted_lines[i])
    }
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 {
        f64::NAN
    } else {
        a as f64 / b as f64
    }
}

/// Durations in microseconds from a stat key, None for rates and host-side quantities.
fn gpu_time_us(stat: &str, value: f64) -> Option<f64> {
    if HOST_SIDE_STATS.contains(&stat) || Direction::of_stat(stat) != Direction::LowerIsBetter {
        return None;
    }
    if stat.ends_with("_us") {
        Some(value)
    } else if stat.ends_with("_ms") {
        Some(value * 1e3)
    } else if stat.ends_with("_s") {
        Some(value * 1e6)
    } else {
        None
    }
}

/// Head with our durations of at least `PLANT_MIN_US` in base made `p` slower.
fn planted(base: &HistoryRun, head: &HistoryRun, p: f64) -> HistoryRun {
    let mut h = head.clone();
    let kind = base.kind().to_string();
    for row in h.record.points.iter_mut() {
        if is_library(&row.implementation) {
            continue;
        }
        let id = row.identity(&kind, &[]);
        let Some(b) = base
            .record
            .points
            .iter()
            .find(|b| b.identity(&kind, &[]) == id)
        else {
            continue;
        };
        for (stat, s) in row.stats.iter_mut() {
            let long = b
                .stats
                .get(stat)
                .and_then(|bs| gpu_time_us(stat, bs.p50))
                .is_some_and(|us| us >= PLANT_MIN_US);
            if long {
                let f = 1.0 + p;
                s.p50 *= f;
                s.p5 *= f;
                s.p95 *= f;
                s.median_ci95 = [s.median_ci95[0] * f, s.median_ci95[1] * f];
            }
        }
    }
    h
}

fn board(r: &HistoryRun) -> Option<String> {
    r.record.env.gpu.as_ref().map(|g| g.board_label())
}

/// Calibrates the gate on every same-code pair in `runs` (see the module's comment).
pub fn calibrate(runs: &[HistoryRun], min_effect: f64) -> Vec<Calibration> {
    let mut groups: BTreeMap<(String, String, String), Vec<&HistoryRun>> = BTreeMap::new();
    for r in runs
        .iter()
        .filter(|r| !r.synthetic() && r.commit().is_some() && r.record.run.git_dirty != Some(true))
    {
        let key = (
            r.kind().to_string(),
            r.gpu(),
            r.commit().unwrap().to_string(),
        );
        groups.entry(key).or_default().push(r);
    }
    let mut out: BTreeMap<(String, String, String), Calibration> = BTreeMap::new();
    for ((kind, gpu, _), mut same) in groups {
        same.sort_by(|a, b| (a.started(), a.run_id()).cmp(&(b.started(), b.run_id())));
        for i in 0..same.len() {
            for j in i + 1..same.len() {
                let (a, b) = (same[i], same[j]);
                let scope = if board(a).is_some() && board(a) == board(b) {
                    "one board"
                } else {
                    "two boards"
                };
                let opts = Options {
                    min_effect,
                    history: runs
                        .iter()
                        .filter(|r| r.run_id() != a.run_id() && r.run_id() != b.run_id())
                        .cloned()
                        .collect(),
                    ..Options::default()
                };
                let c = out
                    .entry((kind.clone(), gpu.clone(), scope.to_string()))
                    .or_insert_with(|| Calibration {
                        kind: kind.clone(),
                        gpu: gpu.clone(),
                        scope: scope.to_string(),
                        planted_lines: vec![0; PLANTS.len()],
                        caught_lines: vec![0; PLANTS.len()],
                        ..Calibration::default()
                    });
                let report = compare(
                    "a",
                    std::slice::from_ref(a),
                    "b",
                    std::slice::from_ref(b),
                    &opts,
                );
                let ours = report
                    .lines
                    .iter()
                    .filter(|l| !is_library(&l.point.implementation));
                let mut alarm = false;
                for l in ours {
                    alarm |= matches!(l.change, Change::Failed)
                        || matches!(l.verdict(), Some(Verdict::Faster | Verdict::Slower));
                    let gpu_time = l
                        .base
                        .as_ref()
                        .is_some_and(|s| gpu_time_us(&l.stat, s.p50).is_some());
                    if let (Some(v), true) = (l.verdict(), gpu_time) {
                        c.our_lines += 1;
                        c.decided_lines += usize::from(v != Verdict::Uncertain);
                    }
                }
                c.pairs += 1;
                c.false_alarm_pairs += usize::from(alarm);
                for (k, p) in PLANTS.iter().enumerate() {
                    let h = planted(a, b, *p);
                    let report = compare("a", std::slice::from_ref(a), "b", &[h], &opts);
                    for l in report
                        .lines
                        .iter()
                        .filter(|l| !is_library(&l.point.implementation))
                    {
                        let long = l
                            .base
                            .as_ref()
                            .and_then(|s| gpu_time_us(&l.stat, s.p50))
                            .is_some_and(|us| us >= PLANT_MIN_US);
                        if long && l.verdict().is_some() {
                            c.planted_lines[k] += 1;
                            c.caught_lines[k] += usize::from(l.verdict() == Some(Verdict::Slower));
                        }
                    }
                }
            }
        }
    }
    out.into_values().collect()
}

/// The calibration as a text table.
pub fn table(cals: &[Calibration]) -> String {
    let mut s = format!(
        "{:<10} {:<22} {:<10} {:>5} {:>12} {:>9} {:>8} {:>8} {:>8}\n",
        "kind", "GPU", "scope", "pairs", "false alarm", "decided", "2% slow", "5% slow", "10% slow"
    );
    let pct = |x: f64| {
        if x.is_nan() {
            "-".to_string()
        } else {
            format!("{:.0}%", x * 100.0)
        }
    };
    for c in cals {
        s.push_str(&format!(
            "{:<10} {:<22} {:<10} {:>5} {:>12} {:>9} {:>8} {:>8} {:>8}\n",
            c.kind,
            c.gpu,
            c.scope,
            c.pairs,
            format!("{} of {}", c.false_alarm_pairs, c.pairs),
            pct(c.decided_share()),
            pct(c.power(0)),
            pct(c.power(1)),
            pct(c.power(2)),
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artifact::read_artifact;
    use crate::history::HistoryRecord;

    /// Runs of one commit built from the committed LayerNorm artifact: copies with other run
    /// ids, each of our medians moved by `jitter[i]` (the between-process noise).
    fn same_code_runs(jitter: &[f64]) -> Vec<HistoryRun> {
        let a = read_artifact(std::path::Path::new("artifacts/layernorm.json")).unwrap();
        let base = HistoryRun::new("a.json", HistoryRecord::of(&a)).unwrap();
        jitter
            .iter()
            .enumerate()
            .map(|(i, j)| {
                let mut r = base.clone();
                r.record.run.id.push_str(&format!("-{i}"));
                r.file = format!("{i}.json");
                for p in r
                    .record
                    .points
                    .iter_mut()
                    .filter(|p| !is_library(&p.implementation))
                {
                    for s in p.stats.values_mut() {
                        s.p50 *= 1.0 + j;
                        s.p5 *= 1.0 + j;
                        s.p95 *= 1.0 + j;
                        s.median_ci95 =
                            [s.median_ci95[0] * (1.0 + j), s.median_ci95[1] * (1.0 + j)];
                    }
                }
                r
            })
            .collect()
    }

    #[test]
    fn one_process_a_side_and_no_history_needs_confirmation() {
        let cals = calibrate(&same_code_runs(&[0.0, 0.0]), 0.03);
        let c = &cals[0];
        assert_eq!(
            (c.kind.as_str(), c.scope.as_str()),
            ("layernorm", "one board")
        );
        assert_eq!((c.pairs, c.false_alarm_pairs), (1, 0));
        // A planted 10% is UNCERTAIN, not SLOWER: the spread between processes is unknown.
        assert!(c.planted_lines[2] > 0);
        assert_eq!(c.caught_lines[2], 0, "{c:?}");
    }

    #[test]
    fn with_replicates_a_copy_raises_no_alarm_and_planted_slowdowns_are_caught() {
        let cals = calibrate(&same_code_runs(&[0.0, 0.004, -0.003, 0.002]), 0.03);
        let c = &cals[0];
        assert_eq!((c.pairs, c.false_alarm_pairs), (6, 0));
        assert!(c.decided_share() > 0.9, "{c:?}");
        // 2% is under the 3% minimum effect; 10% is beyond the spread and every interval.
        assert_eq!(c.caught_lines[0], 0);
        assert!(c.power(2) > 0.9, "{c:?}");
        assert!(table(&cals).contains("0 of 6"));
    }

    #[test]
    fn only_durations_of_ten_us_and_more_are_planted() {
        assert_eq!(gpu_time_us("time_us", 12.0), Some(12.0));
        assert_eq!(gpu_time_us("decode_step_ms", 0.02), Some(20.0));
        assert_eq!(gpu_time_us("tokens_per_s", 100.0), None);
        assert_eq!(gpu_time_us("ttft_ms", 2.0), None);
    }
}
