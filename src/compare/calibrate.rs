//! Calibration of the gate: its false-alarm rate on same-code pairs and its power on planted
//! slowdowns, per kind, GPU, scope (one board, or two) and processes a side, from a pool of runs.
//!
//! Runs of one kind on one GPU model ran the same code when every row of ours carries a `code`
//! hash (`crate::code_id`) and their sets of hashes are equal, whatever their commits; runs with
//! a row of ours that has no hash count as the same code only within one clean commit. A pair is
//! two sides of N such runs each, disjoint (`sides`). Each pair is compared as `compare` would,
//! with the history minus the pair's own runs (a pair never teaches the gate its own spread). A
//! pair raises a false alarm when any line of our code is FASTER, SLOWER or FAILED. "Decided"
//! counts our GPU-time lines (durations, host-side quantities left out) that are SAME, FASTER or
//! SLOWER. Power: head's rows of our code whose base median is at least [`PLANT_MIN_US`] get
//! their durations (median, interval and percentiles) made `p` slower, and the share of those
//! lines judged SLOWER is the power at `p`.

use super::diff::{compare, Options};
use super::line::Change;
use super::verdict::{Direction, Verdict};
use crate::code_id::SETTING;
use crate::compare::drift::HOST_SIDE_STATS;
use crate::history::HistoryRun;
use crate::identity::is_library;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The planted slowdowns.
pub const PLANTS: [f64; 3] = [0.02, 0.05, 0.10];

/// Rows shorter than this (base median, in us) are left out of the power: launch-bound.
pub const PLANT_MIN_US: f64 = 10.0;

/// One calibration group's figures.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
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
    /// Runs a side in each pair.
    pub processes: usize,
    /// Same-code pairs in which a line of ours asked for the interleaved confirmation
    /// (`Line::needs_confirmation`): how often the gate spends a confirmation on nothing.
    #[serde(default)]
    pub confirm_pairs: usize,
    /// Per planted slowdown: pairs with a planted line, and those of them in which a line of
    /// ours asked for the confirmation.
    #[serde(default)]
    pub planted_pairs: Vec<usize>,
    #[serde(default)]
    pub asking_pairs: Vec<usize>,
    /// The boards (GPU serials), commits and drivers of the runs behind the pairs.
    pub boards: BTreeSet<String>,
    pub commits: BTreeSet<String>,
    pub drivers: BTreeSet<String>,
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
    /// The share of planted pairs at plant `i` that asked for the confirmation.
    pub fn asking_share(&self, i: usize) -> f64 {
        match (self.asking_pairs.get(i), self.planted_pairs.get(i)) {
            (Some(a), Some(p)) => ratio(*a, *p),
            _ => f64::NAN,
        }
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

/// Head with our durations of at least `PLANT_MIN_US` in base made `p` slower. A planted row
/// stands for changed code: its `code` hash gets a suffix, so that no rule takes head's
/// slowed processes for replicates of base's code.
pub(super) fn planted(base: &HistoryRun, head: &HistoryRun, p: f64) -> HistoryRun {
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
        let mut changed = false;
        for (stat, s) in row.stats.iter_mut() {
            let long = b
                .stats
                .get(stat)
                .and_then(|bs| gpu_time_us(stat, bs.p50))
                .is_some_and(|us| us >= PLANT_MIN_US);
            if long {
                s.scale(1.0 + p);
                changed = true;
            }
        }
        if changed {
            let planted = match row.params.get(SETTING) {
                Some(c) => format!("{c}+planted"),
                None => "planted".to_string(),
            };
            row.params.insert(SETTING.to_string(), planted.into());
        }
    }
    h
}

/// What ran, as a group key: the set of our rows' `code` hashes when every row of ours has one,
/// else the commit. None for a run that cannot be placed (no commit and no hashes).
pub fn code_key(r: &HistoryRun) -> Option<String> {
    let mut hashes = BTreeSet::new();
    let mut ours = 0;
    for row in r
        .record
        .points
        .iter()
        .filter(|p| !is_library(&p.implementation))
    {
        ours += 1;
        match row.params.get(SETTING) {
            Some(c) => {
                hashes.insert(c.to_string());
            }
            None => {
                return r.commit().map(|c| format!("commit {c}"));
            }
        }
    }
    if ours == 0 {
        return r.commit().map(|c| format!("commit {c}"));
    }
    Some(format!(
        "code {}",
        hashes.into_iter().collect::<Vec<_>>().join(",")
    ))
}

/// Where the history page and `compare` look for the calibration: `<artifacts>/calibration.json`.
pub use crate::artifact::CALIBRATION_JSON;

/// The calibration with what it was computed from and with.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CalibrationFile {
    pub schema_version: u32,
    pub computed_utc: String,
    /// The opbench commit whose gate was calibrated (`OPBENCH_GIT_COMMIT`, else git).
    pub opbench_commit: Option<String>,
    /// The folder of runs, as given, and how many runs it held.
    pub source: String,
    pub runs: usize,
    pub min_effect: f64,
    pub plants: Vec<f64>,
    pub plant_min_us: f64,
    pub groups: Vec<Calibration>,
}

impl CalibrationFile {
    pub fn new(source: &str, runs: usize, min_effect: f64, groups: Vec<Calibration>) -> Self {
        CalibrationFile {
            schema_version: 1,
            computed_utc: crate::env::now_utc(),
            opbench_commit: crate::env::git_state().0,
            source: source.to_string(),
            runs,
            min_effect,
            plants: PLANTS.to_vec(),
            plant_min_us: PLANT_MIN_US,
            groups,
        }
    }

    /// Reads `path`; Ok(None) when there is no such file, an error naming it when it is not
    /// one `history calibrate --json` wrote.
    pub fn read(path: &Path) -> anyhow::Result<Option<Self>> {
        if !path.exists() {
            return Ok(None);
        }
        let text = crate::input::read_text(path, "calibration", crate::input::ARTIFACT_MAX_BYTES)?;
        Self::parse(&text)
            .map(Some)
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
    }

    /// The file's text as a calibration, or why it is not one.
    pub fn parse(text: &str) -> anyhow::Result<Self> {
        let f: CalibrationFile = serde_json::from_str(text).map_err(|e| {
            anyhow::anyhow!(
                "not a calibration file ({e}); write it again with `history calibrate --json`"
            )
        })?;
        if f.groups.iter().any(|g| {
            g.planted_lines.len() != f.plants.len() || g.caught_lines.len() != f.plants.len()
        }) {
            anyhow::bail!(
                "a group's planted_lines or caught_lines does not have one entry per plant \
                 ({:?}); write it again with `history calibrate --json`",
                f.plants
            );
        }
        Ok(f)
    }

    /// One line per group of `kind` on `gpu` for compare's notes: the false alarms and the
    /// power at a 5% slowdown.
    pub fn lines_for(&self, kind: &str, gpu: &str) -> Vec<String> {
        let five = self.plants.iter().position(|p| (*p - 0.05).abs() < 1e-9);
        self.groups
            .iter()
            .filter(|g| g.kind == kind && g.gpu == gpu)
            .map(|g| {
                let power = match five {
                    Some(i) if g.planted_lines[i] > 0 => format!(
                        "; a planted 5% slowdown caught at {} of {} of our rows of >= {} us",
                        g.caught_lines[i], g.planted_lines[i], self.plant_min_us
                    ),
                    _ => String::new(),
                };
                format!(
                    "calibration ({kind}, {}, {} process(es) a side; {}): {} of {} same-code \
                     pairs raised a false alarm{power}",
                    g.scope,
                    g.processes,
                    self.computed_utc.get(..10).unwrap_or(&self.computed_utc),
                    g.false_alarm_pairs,
                    g.pairs
                )
            })
            .collect()
    }
}

/// Pairs of one group and scope are capped at this many (taken evenly from all of them), so a
/// long history calibrates in seconds.
pub const MAX_PAIRS: usize = 60;

/// The `k`-subsets of `0..n`, in lexicographic order.
fn subsets(n: usize, k: usize) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut cur = Vec::new();
    fn go(start: usize, n: usize, k: usize, cur: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if cur.len() == k {
            out.push(cur.clone());
            return;
        }
        for i in start..n {
            if n - i < k - cur.len() {
                break;
            }
            cur.push(i);
            go(i + 1, n, k, cur, out);
            cur.pop();
        }
    }
    if k > 0 && k <= n {
        go(0, n, k, &mut cur, &mut out);
    }
    out
}

/// Every `MAX_PAIRS`-th share of `v`, evenly spread, when it holds more.
fn capped<T: Clone>(v: Vec<T>) -> Vec<T> {
    if v.len() <= MAX_PAIRS {
        return v;
    }
    (0..MAX_PAIRS)
        .map(|i| v[i * v.len() / MAX_PAIRS].clone())
        .collect()
}

/// The scope of pairs whose sides alternate on one board (`processes::interleaved`): the
/// situation of the gate's confirmation (scripts/ci/confirm.sh).
pub const INTERLEAVED: &str = "interleaved";

/// The sides of a group's pairs: `processes` same-code runs a side, disjoint, both on one
/// board (INTERLEAVED when they alternate in time, else "one board") or each on its own
/// ("two boards").
fn sides<'a>(
    same: &[&'a HistoryRun],
    processes: usize,
) -> Vec<(&'static str, Vec<&'a HistoryRun>, Vec<&'a HistoryRun>)> {
    let mut by_board: BTreeMap<String, Vec<&HistoryRun>> = BTreeMap::new();
    for r in same {
        by_board
            .entry(r.board().unwrap_or_default())
            .or_default()
            .push(r);
    }
    let pick = |runs: &[&'a HistoryRun], idx: &[usize]| -> Vec<&'a HistoryRun> {
        idx.iter().map(|i| runs[*i]).collect()
    };
    let mut out = Vec::new();
    let boards: Vec<(&String, &Vec<&HistoryRun>)> = by_board.iter().collect();
    for (bi, (name, runs)) in boards.iter().enumerate() {
        let subs = subsets(runs.len(), processes);
        // One board: two disjoint subsets, each pair once. A run without a board is not known
        // to share one with any other.
        if !name.is_empty() {
            let (mut one, mut alternating) = (Vec::new(), Vec::new());
            for (i, a) in subs.iter().enumerate() {
                for b in &subs[i + 1..] {
                    if a.iter().all(|x| !b.contains(x)) {
                        let (a, b) = (pick(runs, a), pick(runs, b));
                        if super::processes::interleaved(&a, &b) {
                            alternating.push((INTERLEAVED, a, b));
                        } else {
                            one.push(("one board", a, b));
                        }
                    }
                }
            }
            out.extend(capped(one));
            out.extend(capped(alternating));
        }
        let mut two = Vec::new();
        for (_, other) in &boards[bi + 1..] {
            for a in &subs {
                for b in subsets(other.len(), processes) {
                    two.push(("two boards", pick(runs, a), pick(other, &b)));
                }
            }
        }
        out.extend(capped(two));
    }
    out
}

/// Calibrates the gate on every same-code pair in `runs` (see the module's comment), with
/// `processes` runs a side.
pub fn calibrate(runs: &[HistoryRun], min_effect: f64, processes: usize) -> Vec<Calibration> {
    let mut groups: BTreeMap<(String, String, String), Vec<&HistoryRun>> = BTreeMap::new();
    for r in runs
        .iter()
        .filter(|r| !r.synthetic() && r.record.run.git_dirty != Some(true))
    {
        if let Some(code) = code_key(r) {
            groups
                .entry((r.kind().to_string(), r.gpu(), code))
                .or_default()
                .push(r);
        }
    }
    let mut out: BTreeMap<(String, String, String), Calibration> = BTreeMap::new();
    for ((kind, gpu, _), mut same) in groups {
        same.sort_by(|a, b| (a.started(), a.run_id()).cmp(&(b.started(), b.run_id())));
        for (scope, a, b) in sides(&same, processes) {
            let own: Vec<&str> = a.iter().chain(&b).map(|r| r.run_id()).collect();
            let opts = Options {
                min_effect,
                history: runs
                    .iter()
                    .filter(|r| !own.contains(&r.run_id()))
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
                    processes,
                    planted_lines: vec![0; PLANTS.len()],
                    caught_lines: vec![0; PLANTS.len()],
                    planted_pairs: vec![0; PLANTS.len()],
                    asking_pairs: vec![0; PLANTS.len()],
                    ..Calibration::default()
                });
            let base: Vec<HistoryRun> = a.iter().map(|r| (*r).clone()).collect();
            let head: Vec<HistoryRun> = b.iter().map(|r| (*r).clone()).collect();
            let report = compare("a", &base, "b", &head, &opts);
            let mut alarm = false;
            c.confirm_pairs += usize::from(report.lines.iter().any(|l| l.confirm));
            for l in report
                .lines
                .iter()
                .filter(|l| !is_library(&l.point.implementation))
            {
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
            for r in a.iter().chain(&b) {
                c.boards.extend(r.board());
                c.commits.extend(r.commit().map(str::to_string));
                c.drivers
                    .extend(r.record.env.gpu.as_ref().map(|g| g.driver_version.clone()));
            }
            for (k, p) in PLANTS.iter().enumerate() {
                let planted_head: Vec<HistoryRun> =
                    head.iter().map(|h| planted(&base[0], h, *p)).collect();
                let report = compare("a", &base, "b", &planted_head, &opts);
                let mut planted_here = false;
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
                        planted_here = true;
                    }
                }
                if planted_here {
                    c.planted_pairs[k] += 1;
                    c.asking_pairs[k] += usize::from(report.lines.iter().any(|l| l.confirm));
                }
            }
        }
    }
    out.into_values().collect()
}

/// The calibration as a text table.
pub fn table(cals: &[Calibration]) -> String {
    let mut s = format!(
        "{:<10} {:<22} {:<11} {:>5} {:>5} {:>12} {:>9} {:>8} {:>8} {:>8} {:>8} {:>8}\n",
        "kind",
        "GPU",
        "scope",
        "procs",
        "pairs",
        "false alarm",
        "decided",
        "2% slow",
        "5% slow",
        "10% slow",
        "confirm",
        "5% asks"
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
            "{:<10} {:<22} {:<11} {:>5} {:>5} {:>12} {:>9} {:>8} {:>8} {:>8} {:>8} {:>8}\n",
            c.kind,
            c.gpu,
            c.scope,
            c.processes,
            c.pairs,
            format!("{} of {}", c.false_alarm_pairs, c.pairs),
            pct(c.decided_share()),
            pct(c.power(0)),
            pct(c.power(1)),
            pct(c.power(2)),
            pct(ratio(c.confirm_pairs, c.pairs)),
            pct(c.asking_share(1)),
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
                    p.stats.values_mut().for_each(|s| s.scale(1.0 + j));
                }
                r
            })
            .collect()
    }

    #[test]
    fn one_process_a_side_and_no_history_needs_confirmation() {
        let cals = calibrate(&same_code_runs(&[0.0, 0.0]), 0.03, 1);
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
        let cals = calibrate(&same_code_runs(&[0.0, 0.004, -0.003, 0.002]), 0.03, 1);
        let c = &cals[0];
        assert_eq!((c.pairs, c.false_alarm_pairs), (6, 0));
        assert!(c.decided_share() > 0.9, "{c:?}");
        // 2% is under the 3% minimum effect; 10% is beyond the spread and every interval.
        assert_eq!(c.caught_lines[0], 0);
        assert!(c.power(2) > 0.9, "{c:?}");
        assert!(table(&cals).contains("0 of 6"));
    }

    #[test]
    fn runs_of_two_commits_pair_when_every_code_hash_matches() {
        let mut runs = same_code_runs(&[0.0, 0.002, -0.002]);
        for (i, r) in runs.iter_mut().enumerate() {
            r.record.run.git_commit = Some(format!("{i:040x}"));
            for p in r
                .record
                .points
                .iter_mut()
                .filter(|p| !is_library(&p.implementation))
            {
                let code = if i < 2 { "00aa" } else { "00bb" };
                p.params.insert(SETTING.into(), code.into());
            }
        }
        // Three commits: runs 0 and 1 ran one code, run 2 another.
        let cals = calibrate(&runs, 0.03, 1);
        assert_eq!(cals.iter().map(|c| c.pairs).sum::<usize>(), 1, "{cals:?}");
        assert_eq!(cals[0].commits.len(), 2);
        assert!(code_key(&runs[0]).unwrap().starts_with("code 00aa"));
        // One row of ours without a hash: the commit stands for the code, and no pair is left.
        let p = runs[1]
            .record
            .points
            .iter_mut()
            .find(|p| !is_library(&p.implementation))
            .unwrap();
        p.params.remove(SETTING);
        assert_eq!(code_key(&runs[1]), Some(format!("commit {:040x}", 1)));
        assert!(calibrate(&runs, 0.03, 1).is_empty());
    }

    #[test]
    fn sides_of_two_processes_are_disjoint_on_one_board_and_span_two_boards() {
        let mut runs = same_code_runs(&[0.0; 6]);
        for r in runs.iter_mut().skip(4) {
            r.record.env.gpu.as_mut().unwrap().uuid = "GPU-0000beef-1111-2222".into();
        }
        let refs: Vec<&HistoryRun> = runs.iter().collect();
        let s = sides(&refs, 2);
        let count = |scope: &str| s.iter().filter(|(sc, _, _)| *sc == scope).count();
        // Four runs on one board: {01|23}, {02|13}, {03|12}; 6 pairs of them x 1 of the other.
        assert_eq!((count("one board"), count("two boards")), (3, 6));
        for (_, a, b) in &s {
            assert_eq!((a.len(), b.len()), (2, 2));
            assert!(a.iter().all(|x| b.iter().all(|y| x.run_id() != y.run_id())));
        }
        assert_eq!(subsets(4, 2).len(), 6);
        assert!(subsets(1, 2).is_empty());
        assert_eq!(capped((0..100).collect::<Vec<_>>()).len(), MAX_PAIRS);
    }

    #[test]
    fn compare_lines_give_the_false_alarms_and_the_five_percent_power() {
        let mut runs = same_code_runs(&[0.0, 0.004, -0.003]);
        for (i, r) in runs.iter_mut().enumerate() {
            r.record.run.id = format!("run-{i}");
        }
        let f = CalibrationFile::new("x", 3, 0.03, calibrate(&runs, 0.03, 1));
        let gpu = runs[0].gpu();
        let lines = f.lines_for("layernorm", &gpu);
        assert_eq!(lines.len(), 1);
        assert!(lines[0].contains("0 of 3 same-code pairs"), "{lines:?}");
        assert!(
            lines[0].contains("a planted 5% slowdown caught at"),
            "{lines:?}"
        );
        assert!(f.lines_for("gemm", &gpu).is_empty());
    }

    #[test]
    fn only_durations_of_ten_us_and_more_are_planted() {
        assert_eq!(gpu_time_us("time_us", 12.0), Some(12.0));
        assert_eq!(gpu_time_us("decode_step_ms", 0.02), Some(20.0));
        assert_eq!(gpu_time_us("tokens_per_s", 100.0), None);
        assert_eq!(gpu_time_us("ttft_ms", 2.0), None);
    }
}
