//! The gate's calibration table on the history page: per kind, GPU, scope and processes a side,
//! the same-code pairs with a false alarm and the share of planted slowdowns caught, read from
//! `<artifacts>/calibration.json` (`history calibrate --json`).

use super::links::commit_link;
use crate::compare::calibrate::{Calibration, CalibrationFile, CALIBRATION_JSON};
use serde::Serialize;
use std::collections::BTreeSet;
use std::path::Path;

/// One row: every figure formatted.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Row {
    pub kind: String,
    pub gpu: String,
    pub scope: String,
    pub processes: usize,
    pub pairs: usize,
    /// "0 of 12 (0%)".
    pub false_alarms: String,
    /// No pair raised a false alarm.
    pub calm: bool,
    /// "98%".
    pub decided: String,
    /// Per plant: "83% (502 of 605)", "-" when nothing was planted.
    pub caught: Vec<String>,
    /// How many boards the row's runs ran on (the caption names them).
    pub boards: usize,
}

/// The section's view.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct View {
    /// Column heads of the plants: "2% slower caught".
    pub plants: Vec<String>,
    pub rows: Vec<Row>,
    /// Where the figures come from: runs, boards, drivers, commits, when and with what.
    pub caption: String,
}

fn pct(a: usize, b: usize) -> String {
    if b == 0 {
        "-".into()
    } else {
        format!("{:.0}%", 100.0 * a as f64 / b as f64)
    }
}

fn row(g: &Calibration) -> Row {
    Row {
        kind: g.kind.clone(),
        gpu: g.gpu.trim_start_matches("NVIDIA ").to_string(),
        scope: g.scope.clone(),
        processes: g.processes,
        pairs: g.pairs,
        false_alarms: format!(
            "{} of {} ({})",
            g.false_alarm_pairs,
            g.pairs,
            pct(g.false_alarm_pairs, g.pairs)
        ),
        calm: g.false_alarm_pairs == 0,
        decided: pct(g.decided_lines, g.our_lines),
        caught: g
            .planted_lines
            .iter()
            .zip(&g.caught_lines)
            .map(|(p, c)| {
                if *p == 0 {
                    "-".into()
                } else {
                    format!("{} ({c} of {p})", pct(*c, *p))
                }
            })
            .collect(),
        boards: g.boards.len(),
    }
}

/// The view of a calibration file: rows by kind, GPU, scope and processes a side.
pub fn view(f: &CalibrationFile) -> View {
    let mut rows: Vec<Row> = f.groups.iter().map(row).collect();
    rows.sort_by(|a, b| {
        (&a.kind, &a.gpu, &a.scope, a.processes).cmp(&(&b.kind, &b.gpu, &b.scope, b.processes))
    });
    let union = |pick: fn(&Calibration) -> &BTreeSet<String>| {
        f.groups
            .iter()
            .flat_map(|g| pick(g).iter().map(String::as_str))
            .collect::<BTreeSet<&str>>()
    };
    let join = |v: BTreeSet<&str>| v.into_iter().collect::<Vec<_>>().join(", ");
    let boards = join(union(|g| &g.boards));
    let drivers = join(union(|g| &g.drivers));
    let short: Vec<String> = union(|g| &g.commits)
        .into_iter()
        .map(|c| commit_link(Some(c), None).short)
        .collect();
    let short = short.join(", ");
    View {
        plants: f
            .plants
            .iter()
            .map(|p| format!("{:.0}% slower: caught", p * 100.0))
            .collect(),
        rows,
        caption: format!(
            "Can a verdict be trusted? False alarms: pairs of sides that ran the same code \
             (the rows' `code` hashes, else one commit) with a FASTER, SLOWER or FAILED line of \
             our code. Caught: our rows of >= {} us made slower by hand in head and judged \
             SLOWER. Decided: our GPU-time lines that are SAME, FASTER or SLOWER. Each pair is \
             judged by `compare` with the other runs as history; {} runs in {}. Boards: \
             {boards}; driver {drivers}; commits {short}. Computed {} by `history \
             calibrate`{} at a minimum effect of {:.0}%.",
            f.plant_min_us,
            f.runs,
            f.source,
            f.computed_utc.get(..10).unwrap_or(&f.computed_utc),
            f.opbench_commit
                .as_deref()
                .map(|c| format!(" of {}", commit_link(Some(c), None).short))
                .unwrap_or_default(),
            f.min_effect * 100.0
        ),
    }
}

/// What the calibration measured for one comparison of a single run a side: the false-alarm
/// rate of `kind` on `gpu` (without the vendor), within one board or across two. "gate:
/// false alarms in 1 of 45 (2%) same-code pairs, one board".
pub fn gate_note(view: &View, kind: &str, gpu: &str, same_board: bool) -> Option<String> {
    let scope = if same_board {
        "one board"
    } else {
        "two boards"
    };
    let r = view
        .rows
        .iter()
        .find(|r| r.kind == kind && r.gpu == gpu && r.scope == scope && r.processes == 1)?;
    Some(format!(
        "gate: false alarms in {} same-code pairs, {scope}",
        r.false_alarms
    ))
}

/// Reads `<artifacts>/calibration.json`: None when there is none, a warning when it is bad.
pub fn read(artifacts: &Path, warnings: &mut Vec<String>) -> Option<View> {
    match CalibrationFile::read(&artifacts.join(CALIBRATION_JSON)) {
        Ok(f) => f.map(|f| view(&f)),
        Err(e) => {
            warnings.push(format!("{e:#}; the history page shows no calibration"));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(scope: &str, processes: usize, alarms: usize) -> Calibration {
        Calibration {
            kind: "gemm".into(),
            gpu: "NVIDIA H200".into(),
            scope: scope.into(),
            pairs: 12,
            false_alarm_pairs: alarms,
            our_lines: 100,
            decided_lines: 98,
            planted_lines: vec![50, 50, 0],
            caught_lines: vec![1, 41, 0],
            processes,
            boards: ["GPU-1d5c6bba", "GPU-26d66cd9"].map(String::from).into(),
            commits: ["5fc0ffdbbc0c16d7".to_string()].into(),
            drivers: ["580.159.04".to_string()].into(),
            ..Calibration::default()
        }
    }

    #[test]
    fn rows_say_each_rate_with_its_counts_and_the_caption_names_the_runs() {
        let mut f = CalibrationFile::new(
            "docs/notes/gate_runs",
            46,
            0.03,
            vec![group("two boards", 1, 6), group("one board", 1, 0)],
        );
        f.computed_utc = "2026-12-03T12:00:00Z".into();
        f.opbench_commit = Some("abcdef0123456789".into());
        let v = view(&f);
        assert_eq!(v.plants[1], "5% slower: caught");
        assert_eq!(v.rows[0].scope, "one board", "sorted by scope");
        assert!(v.rows[0].calm && !v.rows[1].calm);
        assert_eq!(v.rows[1].false_alarms, "6 of 12 (50%)");
        assert_eq!(v.rows[0].caught, ["2% (1 of 50)", "82% (41 of 50)", "-"]);
        assert_eq!((v.rows[0].gpu.as_str(), v.rows[0].boards), ("H200", 2));
        for want in [
            "46 runs",
            "GPU-1d5c6bba, GPU-26d66cd9",
            "580.159.04",
            "5fc0ffdbbc",
            "2026-12-03",
            "of abcdef0123 at",
        ] {
            assert!(v.caption.contains(want), "{want}: {}", v.caption);
        }
        assert!(!v.caption.contains("5fc0ffdbbc0c"), "commits are shortened");
    }

    #[test]
    fn the_gate_note_is_the_single_run_row_of_the_kind_gpu_and_scope() {
        let f = CalibrationFile::new(
            "docs/notes/gate_runs",
            46,
            0.03,
            vec![
                group("two boards", 1, 6),
                group("one board", 1, 0),
                group("one board", 2, 0),
            ],
        );
        let v = view(&f);
        assert_eq!(
            gate_note(&v, "gemm", "H200", true).unwrap(),
            "gate: false alarms in 0 of 12 (0%) same-code pairs, one board"
        );
        assert!(gate_note(&v, "gemm", "H200", false)
            .unwrap()
            .contains("6 of 12 (50%)"));
        assert_eq!(gate_note(&v, "llm", "H200", true), None);
    }

    #[test]
    fn a_bad_file_is_a_warning_that_names_it_and_no_file_is_no_section() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = Vec::new();
        assert!(read(dir.path(), &mut w).is_none() && w.is_empty());
        std::fs::write(dir.path().join(CALIBRATION_JSON), "{\"groups\": 3}").unwrap();
        assert!(read(dir.path(), &mut w).is_none());
        assert!(
            w[0].contains("calibration.json") && w[0].contains("history calibrate"),
            "{w:?}"
        );
    }
}
