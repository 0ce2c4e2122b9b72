//! Tests of `compare` on synthetic runs: noise, one injected slowdown, added/removed, failures.

use super::*;
use crate::artifact::Loaded;
use crate::artifact::{Artifact, Status};
use crate::history::synthetic::{self, RunSpec};
use crate::history::{HistoryPoint, HistoryRecord, HistoryRun};
use crate::identity::Identity;

const H100: &str = "NVIDIA H100 80GB HBM3";
const KINDS: [&str; 3] = ["layernorm", "gemm", "llm"];

/// All three kinds on one commit and GPU, with changes injected into some points.
fn suite_run(commit: usize, gpu: &str, seed: u64, factors: &[(usize, f64)]) -> Vec<Loaded> {
    KINDS
        .iter()
        .enumerate()
        .map(|(j, kind)| {
            let mut spec = RunSpec::new(
                kind,
                &synthetic::commit(commit),
                gpu,
                &synthetic::started(commit),
                seed * 10 + j as u64,
            );
            spec.factors = factors.iter().copied().collect();
            Loaded {
                file: format!("{kind}.json"),
                artifact: synthetic::run(&spec),
            }
        })
        .collect()
}

/// The identity of point `idx` of `synthetic::suite()`.
fn key_of(idx: usize) -> Identity {
    let suite = synthetic::suite();
    let kind = suite[idx].kind;
    let first = suite.iter().position(|p| p.kind == kind).unwrap();
    let a = synthetic::run(&RunSpec::new(kind, "c", H100, "2026-01-01T00:00:00Z", 1));
    HistoryPoint::of(&a.results[idx - first]).identity(kind, &[])
}

/// Artifacts in the form `compare` takes.
fn runs(ls: &[Loaded]) -> Vec<HistoryRun> {
    ls.iter()
        .map(|l| HistoryRun::new(l.file.clone(), HistoryRecord::of(&l.artifact)).unwrap())
        .collect()
}

fn cmp(base: &[Loaded], head: &[Loaded]) -> Report {
    compare(
        "base",
        &runs(base),
        "head",
        &runs(head),
        &Options::default(),
    )
}

fn count(r: &Report, label: &str) -> usize {
    r.lines.iter().filter(|l| l.label() == label).count()
}

#[test]
fn pure_noise_gives_no_slower_verdicts() {
    let lines_per_suite: usize = synthetic::suite().iter().map(|p| p.stats.len()).sum();
    let mut same = 0;
    let mut total = 0;
    for seed in 0..20u64 {
        let r = cmp(
            &suite_run(0, H100, 2 * seed, &[]),
            &suite_run(1, H100, 2 * seed + 1, &[]),
        );
        assert_eq!(r.lines.len(), lines_per_suite);
        assert_eq!(count(&r, "SLOWER"), 0, "seed {seed}: {}", r.tally());
        assert_eq!(count(&r, "FASTER"), 0, "seed {seed}: {}", r.tally());
        assert_eq!(r.regressions().count(), 0);
        same += count(&r, "SAME");
        total += r.lines.len();
    }
    // The rule is not vacuous: with 2% noise and 100 samples almost every point is SAME.
    assert!(same as f64 >= 0.95 * total as f64, "{same} of {total} SAME");
}

#[test]
fn a_ten_percent_slowdown_is_found_and_only_it() {
    let suite = synthetic::suite();
    let lines_per_suite: usize = suite.iter().map(|p| p.stats.len()).sum();
    // A LayerNorm point and a GEMM point of our own implementation.
    for (k, idx) in [3usize, 131].into_iter().enumerate() {
        let seed = 40 + 2 * k as u64;
        let r = cmp(
            &suite_run(0, H100, seed, &[]),
            &suite_run(1, H100, seed + 1, &[(idx, 1.10)]),
        );
        assert_eq!(r.lines.len(), lines_per_suite);
        let slow: Vec<&Line> = r.regressions().collect();
        assert_eq!(
            slow.len(),
            suite[idx].stats.len(),
            "point {idx}: {}",
            r.tally()
        );
        for l in slow {
            assert_eq!(l.point, key_of(idx));
            let ratio = l.ratio().unwrap();
            assert!((ratio - 1.10).abs() < 0.03, "ratio {ratio}");
            assert_eq!(l.label(), "SLOWER");
        }
        // And a 10% speed-up is FASTER, not a regression.
        let r = cmp(
            &suite_run(0, H100, seed, &[]),
            &suite_run(1, H100, seed + 1, &[(idx, 1.0 / 1.10)]),
        );
        assert_eq!(count(&r, "FASTER"), suite[idx].stats.len());
        assert_eq!(r.regressions().count(), 0);
    }
    // A library implementation's point (an LLM point, two quantities) 10% slower: SLOWER,
    // named the machine's drift, never a regression.
    let r = cmp(
        &suite_run(0, H100, 60, &[]),
        &suite_run(1, H100, 61, &[(170, 1.10)]),
    );
    assert_eq!(r.regressions().count(), 0, "{}", r.tally());
    let slow: Vec<&Line> = r.lines.iter().filter(|l| l.label() == "SLOWER").collect();
    assert_eq!(slow.len(), suite[170].stats.len());
    assert!(slow
        .iter()
        .all(|l| l.point == key_of(170) && l.control.is_some()));
}

fn drop_point(runs: &mut [Loaded], kind: &str, index: usize) -> String {
    let a = &mut runs
        .iter_mut()
        .find(|l| l.artifact.kind == kind)
        .unwrap()
        .artifact;
    let row = a.results.remove(index);
    params_text(&HistoryPoint::of(&row))
}

#[test]
fn points_on_one_side_are_added_or_removed() {
    let mut base = suite_run(0, H100, 1, &[]);
    let mut head = suite_run(1, H100, 2, &[]);
    let removed = drop_point(&mut head, "layernorm", 7);
    let added = drop_point(&mut base, "gemm", 2);
    let r = cmp(&base, &head);
    let rem: Vec<&Line> = r.lines.iter().filter(|l| l.label() == "REMOVED").collect();
    let add: Vec<&Line> = r.lines.iter().filter(|l| l.label() == "ADDED").collect();
    assert_eq!(rem.len(), 1);
    assert_eq!(add.len(), 1);
    assert_eq!(
        (rem[0].point.kind.as_str(), rem[0].point.params.as_str()),
        ("layernorm", removed.as_str())
    );
    assert_eq!(
        (add[0].point.kind.as_str(), add[0].point.params.as_str()),
        ("gemm", added.as_str())
    );
    assert!(rem[0].head.is_none() && rem[0].base.is_some());
    assert!(add[0].base.is_none() && add[0].head.is_some());
    assert_eq!(r.regressions().count(), 0);
    // A whole kind missing from head: every one of its points is removed.
    // (6 LLM points with two quantities each.)
    let r = cmp(
        &suite_run(0, H100, 1, &[]),
        &suite_run(1, H100, 2, &[])[..2],
    );
    assert_eq!(count(&r, "REMOVED"), 12);
    assert!(r
        .lines
        .iter()
        .filter(|l| l.label() == "REMOVED")
        .all(|l| l.point.kind == "llm"));
}

fn fail_row(runs: &mut [Loaded], kind: &str, index: usize) {
    let a: &mut Artifact = &mut runs
        .iter_mut()
        .find(|l| l.artifact.kind == kind)
        .unwrap()
        .artifact;
    let row = &mut a.results[index];
    row.status = Status::Failed;
    row.stats.clear();
    row.metrics.clear();
    if let Some(c) = row.correctness.as_mut() {
        c.passed = false;
        c.rel_err = 1.0;
    }
}

#[test]
fn a_point_failing_in_head_is_a_regression() {
    let base = suite_run(0, H100, 1, &[]);
    let mut head = suite_run(1, H100, 2, &[]);
    fail_row(&mut head, "gemm", 4);
    let r = cmp(&base, &head);
    assert_eq!(count(&r, "FAILED"), 1);
    assert_eq!(r.regressions().count(), 1);
    // Failing in base and passing in head is not judged (nothing to compare against).
    let r = cmp(&head, &base);
    assert_eq!(count(&r, "FAILED"), 0);
    assert_eq!(count(&r, "N/A"), 1);
}

fn skip_row(runs: &mut [Loaded], kind: &str, index: usize) {
    fail_row(runs, kind, index);
    let a = &mut runs.iter_mut().find(|l| l.artifact.kind == kind).unwrap();
    let row = &mut a.artifact.results[index];
    row.status = Status::Skipped;
    row.correctness = None;
}

#[test]
fn a_point_the_head_skipped_or_newly_failed_fails_the_gate() {
    // Measured in base, skipped in head: the head lost the point.
    let base = suite_run(0, H100, 1, &[]);
    let mut head = suite_run(1, H100, 2, &[]);
    skip_row(&mut head, "gemm", 4);
    let r = cmp(&base, &head);
    assert_eq!(count(&r, "N/A"), 1, "{}", r.tally());
    assert_eq!(r.gate_failures().count(), 1, "{}", r.tally());
    assert_eq!(r.regressions().count(), 0);
    // Skipped in base, failed in head: a failure the base did not have.
    let mut base = suite_run(0, H100, 1, &[]);
    skip_row(&mut base, "gemm", 4);
    let mut head = suite_run(1, H100, 2, &[]);
    fail_row(&mut head, "gemm", 4);
    let r = cmp(&base, &head);
    assert_eq!(count(&r, "FAILED"), 1, "{}", r.tally());
    assert_eq!(r.gate_failures().count(), 1);
    // Skipped on both sides, or failed on both: nothing was lost.
    let r = cmp(&base, &base);
    assert_eq!(r.gate_failures().count(), 0, "{}", r.tally());
    let r = cmp(&head, &head);
    assert_eq!(r.gate_failures().count(), 0, "{}", r.tally());
    // Skipped in base, measured in head: nothing to judge, nothing lost.
    let r = cmp(&base, &suite_run(1, H100, 2, &[]));
    assert_eq!(r.gate_failures().count(), 0, "{}", r.tally());
}

#[test]
fn gpus_pair_by_name_or_directly_when_alone() {
    let h200 = "NVIDIA H200";
    // One GPU per side: H100 against H200, every point judged (H200 is drawn equal here).
    let r = cmp(&suite_run(0, H100, 1, &[]), &suite_run(0, h200, 2, &[]));
    assert_eq!(count(&r, "ADDED") + count(&r, "REMOVED"), 0);
    assert!(r.lines.iter().all(|l| l.gpu == format!("{H100} -> {h200}")));
    assert!(r.notes.iter().any(|n| n.contains("across GPUs")));
    // Two GPUs per side pair by name; a GPU only in head adds its points.
    let mut base = suite_run(0, H100, 1, &[]);
    base.extend(suite_run(0, h200, 2, &[]));
    let mut head = suite_run(1, H100, 3, &[]);
    head.extend(suite_run(1, h200, 4, &[(2, 1.2)]));
    head.extend(suite_run(1, "NVIDIA B200", 5, &[]));
    let r = cmp(&base, &head);
    let slow: Vec<&Line> = r.regressions().collect();
    assert_eq!(slow.len(), 1);
    assert_eq!(slow[0].gpu, h200);
    let lines_per_suite: usize = synthetic::suite().iter().map(|p| p.stats.len()).sum();
    assert_eq!(count(&r, "ADDED"), lines_per_suite);
}

#[test]
fn the_newest_run_of_a_point_wins_within_a_side() {
    let old = suite_run(0, H100, 1, &[(0, 2.0)]);
    let new = suite_run(2, H100, 2, &[]);
    let mut base: Vec<Loaded> = old;
    base.extend(new);
    let r = cmp(&base, &suite_run(3, H100, 3, &[]));
    assert_eq!(r.regressions().count(), 0, "{}", r.tally());
    assert_eq!(count(&r, "FASTER"), 0);
    assert!(r.notes.iter().any(|n| n.contains("newest run")));
}

#[test]
fn tables_render_in_text_and_markdown() {
    let suite = synthetic::suite();
    let mut base = suite_run(0, H100, 1, &[]);
    let head = suite_run(1, H100, 2, &[(131, 1.10)]);
    drop_point(&mut base, "llm", 0);
    let r = cmp(&base, &head);
    let md = render::markdown(&r);
    assert!(md.starts_with("### opbench compare: 1 SLOWER"), "{md}");
    assert!(md.contains("| kind | benchmark | implementation | params | stat |"));
    assert!(md.contains("| **SLOWER** |"));
    assert!(md.contains("| ADDED |"));
    assert_eq!(
        md.lines().filter(|l| l.starts_with("| ")).count(),
        1 + r.lines.len()
    );
    let txt = render::text(&r);
    let slow_line = txt.lines().find(|l| l.contains(" SLOWER ")).unwrap();
    // The rule column names what decided it: our kernel against the drift of cuBLAS and candle.
    assert!(slow_line.ends_with("drift"), "{slow_line}");
    assert!(slow_line.contains(suite[131].implementation));
    assert!(slow_line.contains("(+1"), "{slow_line}");
    assert!(txt.contains("gpu:  NVIDIA H100 80GB HBM3"));
    assert!(txt.contains("do not overlap"));
    // Only the changes: the SAME lines go, the tally keeps counting them.
    let tally = r.tally();
    let mut short = r.clone();
    short.hide_same();
    assert_eq!(short.tally(), tally);
    let changed = r.lines.iter().filter(|l| l.label() != "SAME").count();
    assert!(changed >= 3, "{tally}");
    assert_eq!(short.lines.len(), changed);
    assert!(short.lines.iter().all(|l| l.label() != "SAME"));
    assert!(render::markdown(&short).contains("points are SAME and not listed"));
}

#[test]
fn ignored_params_match_points_whose_undeclared_param_changed() {
    let base = suite_run(0, H100, 1, &[]);
    let mut head = suite_run(1, H100, 2, &[]);
    for l in &mut head {
        for r in &mut l.artifact.results {
            if r.implementation == "opbench" {
                // Not declared by any kind: a problem parameter, so the points split.
                r.params
                    .insert("tile".into(), crate::artifact::Param::Int(256));
            }
        }
    }
    let opbench_lines = synthetic::suite()
        .iter()
        .filter(|p| p.implementation == "opbench")
        .map(|p| p.stats.len())
        .sum::<usize>();
    let r = cmp(&base, &head);
    assert_eq!(count(&r, "ADDED"), opbench_lines);
    assert_eq!(count(&r, "REMOVED"), opbench_lines);
    let opts = Options {
        ignore_params: vec!["tile".into()],
        ..Options::default()
    };
    let r = compare("base", &runs(&base), "head", &runs(&head), &opts);
    assert_eq!(
        count(&r, "ADDED") + count(&r, "REMOVED"),
        0,
        "{}",
        r.tally()
    );
    assert_eq!(r.regressions().count(), 0);
}

#[test]
fn a_changed_launch_configuration_keeps_the_point_and_is_shown() {
    let base = suite_run(0, H100, 1, &[]);
    let mut head = suite_run(1, H100, 2, &[]);
    for l in &mut head {
        for r in &mut l.artifact.results {
            if l.artifact.kind == "layernorm" && r.implementation == "opbench" {
                r.params
                    .insert("block_threads".into(), crate::artifact::Param::Int(256));
            }
        }
    }
    let r = cmp(&base, &head);
    assert_eq!(
        count(&r, "ADDED") + count(&r, "REMOVED"),
        0,
        "{}",
        r.tally()
    );
    let changed: Vec<&Line> = r.lines.iter().filter(|l| !l.settings.is_empty()).collect();
    assert_eq!(changed.len(), 60, "LayerNorm's 60 opbench points");
    assert!(changed
        .iter()
        .all(|l| l.settings == ["block_threads: - -> 256"]));
}

#[test]
fn a_drifting_control_makes_verdicts_at_its_points_uncertain() {
    // cuBLAS and our kernel both 10% slower at one GEMM point: the machine, not the code.
    let suite = synthetic::suite();
    let at = |implementation: &str| {
        suite
            .iter()
            .position(|p| p.kind == "gemm" && p.implementation == implementation)
            .unwrap()
    };
    let (cublas, ours) = (at("cublas"), at("opbench"));
    // Same parameters: the first gemm point of each implementation.
    let base = suite_run(0, H100, 1, &[]);
    let head = suite_run(1, H100, 2, &[(cublas, 1.10), (ours, 1.10)]);
    let r = cmp(&base, &head);
    // cuBLAS moving alone at one point is no drift of the machine: ours stays a regression,
    // cuBLAS's own move is not one.
    assert_eq!(r.regressions().count(), 1);
    assert_eq!(r.regressions().next().unwrap().point, key_of(ours));
    let opts = Options {
        control: Some("cublas".into()),
        ..Options::default()
    };
    let r = compare("base", &runs(&base), "head", &runs(&head), &opts);
    assert_eq!(r.regressions().count(), 0, "{}", r.tally());
    // The control's own line still says SLOWER, marked as the machine's drift.
    let control_line = r
        .lines
        .iter()
        .find(|l| l.point == key_of(cublas) && l.stat == "time_us")
        .unwrap();
    assert_eq!(control_line.label(), "SLOWER");
    assert!(control_line.control.is_some());
    let ours_line = r
        .lines
        .iter()
        .find(|l| l.point == key_of(ours) && l.stat == "time_us")
        .unwrap();
    assert_eq!(ours_line.label(), "UNCERTAIN");
    assert!(ours_line
        .control
        .as_deref()
        .unwrap()
        .starts_with("control cublas moved +"));
    // Our kernel alone 10% slower while the control holds still: still SLOWER.
    let head = suite_run(1, H100, 2, &[(ours, 1.10)]);
    let r = compare("base", &runs(&base), "head", &runs(&head), &opts);
    assert_eq!(r.regressions().count(), 1);
    assert_eq!(r.regressions().next().unwrap().point, key_of(ours));
}

#[test]
fn a_move_inside_the_points_own_range_across_boards_is_the_boards() {
    // Our first LayerNorm point 10% slower on head's board, every control still. Other boards
    // of the history measured the same point with the same settings at other speeds.
    let ours = synthetic::suite()
        .iter()
        .position(|p| p.kind == "layernorm" && p.implementation == "opbench")
        .unwrap();
    let base = suite_run(0, H100, 1, &[]);
    let head = suite_run(1, H100, 2, &[(ours, 1.10)]);
    // Runs of other boards, taken as measured (a `history synth` run never counts as a board).
    let history = |factors: &[f64]| -> Vec<HistoryRun> {
        let mut out: Vec<HistoryRun> = factors
            .iter()
            .enumerate()
            .flat_map(|(i, f)| runs(&suite_run(0, H100, 100 + i as u64, &[(ours, *f)])))
            .collect();
        for r in &mut out {
            r.record.run.synthetic = false;
            r.record
                .notes
                .retain(|n| n != crate::history::synthetic::SYNTHETIC_NOTE);
        }
        out
    };
    let line = |r: &Report| -> Line {
        r.lines
            .iter()
            .find(|l| l.point == key_of(ours) && l.stat == "time_us")
            .unwrap()
            .clone()
    };
    let with = |history: Vec<HistoryRun>| {
        let opts = Options {
            history,
            ..Options::default()
        };
        compare("base", &runs(&base), "head", &runs(&head), &opts)
    };
    // No history: SLOWER.
    assert_eq!(line(&cmp(&base, &head)).label(), "SLOWER");
    // Four other boards spanning 0.98x-1.20x: head's 1.10x is what those boards measure.
    let r = with(history(&[0.98, 1.05, 1.15, 1.20]));
    let l = line(&r);
    assert_eq!(l.label(), "SAME", "{:?}", l.rule);
    assert!(
        l.rule.as_deref().unwrap().starts_with("boards: "),
        "{:?}",
        l.rule
    );
    assert_eq!(r.regressions().count(), 0, "{}", r.tally());
    // The same four boards all near the base: head left their range, still SLOWER.
    assert_eq!(
        line(&with(history(&[0.98, 0.99, 1.01, 1.03]))).label(),
        "SLOWER"
    );
    // Three boards are not enough to know the point's range.
    assert_eq!(line(&with(history(&[0.98, 1.15, 1.20]))).label(), "SLOWER");
    // Other launch settings are other code: those rows do not count.
    let mut other = history(&[0.98, 1.05, 1.15, 1.20]);
    for run in &mut other {
        for p in &mut run.record.points {
            if p.implementation == "opbench" {
                p.params
                    .insert("block_threads".into(), crate::artifact::Param::Int(999));
            }
        }
    }
    assert_eq!(line(&with(other)).label(), "SLOWER");
    // Drawn runs are no boards.
    let drawn: Vec<HistoryRun> = [0.98, 1.05, 1.15, 1.20]
        .iter()
        .enumerate()
        .flat_map(|(i, f)| runs(&suite_run(0, H100, 100 + i as u64, &[(ours, *f)])))
        .collect();
    assert_eq!(line(&with(drawn)).label(), "SLOWER");
}

/// The committed LayerNorm artifact as a run of `commit`: our rows carry `code` (none when
/// None) and have their medians, intervals and percentiles moved by `factor`.
fn layernorm_run(id: &str, commit: &str, code: Option<&str>, factor: f64) -> HistoryRun {
    let a =
        crate::artifact::read_artifact(std::path::Path::new("artifacts/layernorm.json")).unwrap();
    let mut r = HistoryRun::new(format!("{id}.json"), HistoryRecord::of(&a)).unwrap();
    r.record.run.id = id.to_string();
    r.record.run.git_commit = Some(commit.to_string());
    r.record.run.git_dirty = Some(false);
    for p in r
        .record
        .points
        .iter_mut()
        .filter(|p| !crate::identity::is_library(&p.implementation))
    {
        if let Some(c) = code {
            p.params.insert(
                crate::code_id::SETTING.into(),
                crate::artifact::Param::Text(c.into()),
            );
        }
        p.stats.values_mut().for_each(|s| s.scale(factor));
    }
    r
}

#[test]
fn the_code_hash_says_whether_our_code_changed_and_joins_commits_as_replicates() {
    let opts = |history: Vec<HistoryRun>| Options {
        history,
        ..Options::default()
    };
    // Same hash at two commits: the note says so, and no line lists a changed setting.
    let base = [layernorm_run("b", "aaaa", Some("00ab"), 1.0)];
    let head = [layernorm_run("h", "bbbb", Some("00ab"), 1.0)];
    let r = compare("base", &base, "head", &head, &opts(vec![]));
    let ours = r
        .lines
        .iter()
        .filter(|l| !crate::identity::is_library(&l.point.implementation))
        .filter(|l| matches!(l.change, Change::Compared(_)))
        .map(|l| &l.point)
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    assert!(ours > 10, "{ours}");
    let note = r.notes.iter().find(|n| n.starts_with("code: ")).unwrap();
    assert!(
        note.starts_with(&format!(
            "code: {ours} of our {ours} points ran the same GPU code"
        )),
        "{note}"
    );
    assert!(r.lines.iter().all(|l| l.settings.is_empty()));
    // Another hash: every line of ours names it, the note counts it.
    let changed = [layernorm_run("h", "bbbb", Some("00cd"), 1.0)];
    let r = compare("base", &base, "head", &changed, &opts(vec![]));
    let note = r.notes.iter().find(|n| n.starts_with("code: ")).unwrap();
    assert!(
        note.contains(&format!("; {ours} ran changed code")),
        "{note}"
    );
    assert!(r
        .lines
        .iter()
        .filter(|l| !crate::identity::is_library(&l.point.implementation))
        .all(|l| l.settings == ["code: 00ab -> 00cd"]));
    // No hash anywhere (the artifacts before it): no note, the commits stand for the code.
    let plain = |id: &str, c: &str, f: f64| layernorm_run(id, c, None, f);
    let r = compare(
        "base",
        &[plain("b", "aaaa", 1.0)],
        "head",
        &[plain("h", "bbbb", 1.0)],
        &opts(vec![]),
    );
    assert!(!r.notes.iter().any(|n| n.starts_with("code: ")));

    // One board, our rows 6% slower in head. Two earlier processes of the same kernels, at two
    // other commits, moved 7% apart: with the hash they are replicates of one code, so the
    // move lies within what unchanged code showed (threshold 2 x 7%) and nothing is SLOWER.
    // Without it each is the only process of its commit, no replicate is left, and the rule
    // cannot rule out a regression: UNCERTAIN, to be confirmed by interleaving.
    let slower_lines = |code: Option<&str>| {
        let history = vec![
            layernorm_run("e1", "cccc", code, 1.0),
            layernorm_run("e2", "dddd", code, 1.07),
        ];
        let base = [layernorm_run("b", "aaaa", code, 1.0)];
        let head = [layernorm_run("h", "bbbb", code, 1.06)];
        let r = compare("base", &base, "head", &head, &opts(history));
        let ours: Vec<&Line> = r
            .lines
            .iter()
            .filter(|l| !crate::identity::is_library(&l.point.implementation))
            .filter(|l| {
                l.rule
                    .as_deref()
                    .is_some_and(|x| x.starts_with("processes"))
            })
            .collect();
        (
            ours.len(),
            ours.iter().filter(|l| l.label() == "SLOWER").count(),
            ours.iter().filter(|l| l.label() == "SAME").count(),
        )
    };
    let (judged, slower, same) = slower_lines(Some("00ab"));
    assert!(judged > 10, "{judged}");
    assert_eq!((slower, same), (0, judged), "with the hash");
    let (judged_plain, slower_plain, same_plain) = slower_lines(None);
    assert_eq!(judged_plain, judged);
    assert_eq!(
        (slower_plain, same_plain),
        (0, 0),
        "without the hash: UNCERTAIN"
    );
}

#[test]
fn interleaved_processes_judge_every_line_of_ours_on_their_own_spread() {
    let at = |id: &str, minute: u32, factor: f64| {
        let mut record = layernorm_run(id, "aaaa", Some("00ab"), factor).record;
        record.run.started_utc = format!("2026-12-04T10:{minute:02}:00Z");
        HistoryRun::new(format!("{id}.json"), record).unwrap()
    };
    // Base and head alternate on one board; head's rows of ours 8% slower, the processes of
    // each side within 0.2% of each other.
    let base = [at("b1", 0, 1.0), at("b2", 2, 1.002)];
    let head = [at("h1", 1, 1.08), at("h2", 3, 1.082)];
    let b: Vec<&HistoryRun> = base.iter().collect();
    let h: Vec<&HistoryRun> = head.iter().collect();
    assert!(super::processes::interleaved(&b, &h));
    // The same runs one side after the other are not interleaved.
    let late = [at("h1", 5, 1.08), at("h2", 6, 1.082)];
    assert!(!super::processes::interleaved(
        &b,
        &late.iter().collect::<Vec<_>>()
    ));
    let r = compare("base", &base, "head", &head, &Options::default());
    let ours: Vec<&Line> = r
        .lines
        .iter()
        .filter(|l| !crate::identity::is_library(&l.point.implementation))
        .filter(|l| matches!(l.change, Change::Compared(_)))
        .collect();
    assert!(ours.len() > 10);
    for l in &ours {
        let rule = l.rule.as_deref().unwrap_or_default();
        assert!(rule.contains("interleaved"), "{rule}");
        assert_eq!(l.label(), "SLOWER", "{rule}");
        assert!(l.confirm);
    }
    // Same code interleaved: nothing of ours moves, nothing is SLOWER or asks for more.
    let same = [at("h1", 1, 1.001), at("h2", 3, 0.999)];
    let r = compare("base", &base, "head", &same, &Options::default());
    assert!(!r.lines.iter().any(|l| l.is_regression() || l.confirm));
}

#[test]
fn a_same_that_moved_the_slow_way_by_the_minimum_effect_asks_for_confirmation() {
    let base = [layernorm_run("b", "aaaa", Some("00ab"), 1.0)];
    let head = [layernorm_run("h", "bbbb", Some("00ab"), 1.0)];
    let mut r = compare("base", &base, "head", &head, &Options::default());
    let l = r
        .lines
        .iter_mut()
        .find(|l| !crate::identity::is_library(&l.point.implementation) && l.stat == "time_us")
        .unwrap();
    let judged = |ratio: f64, verdict: crate::compare::Verdict| {
        Change::Compared(crate::compare::Judgement {
            verdict,
            ratio: Some(ratio),
            ci_overlap: true,
        })
    };
    use crate::compare::Verdict::*;
    for (ratio, verdict, asks) in [
        (1.04, Same, true),
        (1.02, Same, false),
        (0.95, Same, false),
        (1.00, Uncertain, true),
        (1.10, Slower, true),
        (0.90, Faster, false),
    ] {
        l.change = judged(ratio, verdict);
        assert_eq!(l.needs_confirmation(0.03), asks, "{ratio} {verdict:?}");
    }
    l.change = Change::Failed;
    assert!(l.needs_confirmation(0.03));
}

/// The measured GEMM processes of tests/fixtures/gemm_states (one H200 board, two machine
/// states), in the order they ran.
fn gemm_state_runs() -> Vec<HistoryRun> {
    (1..=7)
        .map(|i| {
            let path = format!("tests/fixtures/gemm_states/gemm-{i}.json");
            let a = crate::artifact::read_artifact(std::path::Path::new(&path)).unwrap();
            HistoryRun::new(format!("gemm-{i}.json"), HistoryRecord::of(&a)).unwrap()
        })
        .collect()
}

#[test]
fn gemm_processes_are_compared_within_their_machine_state() {
    let runs = gemm_state_runs();
    let states = super::states::states(&runs.iter().collect::<Vec<_>>());
    let state = |i: usize| states[runs[i - 1].run_id()];
    assert!(
        [4, 7].iter().all(|i| state(*i) == state(2))
            && [3, 5, 6].iter().all(|i| state(*i) == state(1))
            && state(1) != state(2),
        "{states:?}"
    );
    // Interleaved on one board: base {1, 4}, head {2, 5}; the history holds 3, 6 and 7.
    let pick =
        |ids: &[usize]| -> Vec<HistoryRun> { ids.iter().map(|i| runs[i - 1].clone()).collect() };
    let (base, head) = (pick(&[1, 4]), pick(&[2, 5]));
    let opts = Options {
        history: pick(&[3, 6, 7]),
        ..Options::default()
    };
    let ours = |r: &Report| -> Vec<Line> {
        r.lines
            .iter()
            .filter(|l| !crate::identity::is_library(&l.point.implementation))
            .filter(|l| matches!(l.change, Change::Compared(_)))
            .cloned()
            .collect()
    };
    let same = ours(&compare("base", &base, "head", &head, &opts));
    assert!(same.len() >= 20, "{}", same.len());
    assert!(same.iter().all(|l| l.label() == "SAME"), "{same:#?}");
    let within = same
        .iter()
        .filter(|l| {
            l.rule
                .as_deref()
                .is_some_and(|r| r.contains("machine state"))
        })
        .count();
    assert!(within * 10 >= same.len() * 9, "{within} of {}", same.len());
    // Head's rows of ours made 5% slower (as a changed kernel's, with its own code hash).
    let slow: Vec<HistoryRun> = head
        .iter()
        .map(|h| super::calibrate::planted(&base[0], h, 0.05))
        .collect();
    let judged = ours(&compare("base", &base, "head", &slow, &opts));
    let caught = judged.iter().filter(|l| l.label() == "SLOWER").count();
    assert!(
        caught * 10 >= judged.len() * 9,
        "{caught} of {}",
        judged.len()
    );
}

#[test]
fn a_library_whose_version_changed_is_said_so_and_is_no_control() {
    let with_candle = |id: &str, version: &str, factor: f64| {
        let mut r = layernorm_run(id, "aaaa", Some("00ab"), 1.0);
        for p in r
            .record
            .points
            .iter_mut()
            .filter(|p| p.implementation == "candle")
        {
            p.params.insert(
                crate::code_id::SETTING.into(),
                crate::artifact::Param::Text(format!("candle {version}")),
            );
            p.stats.values_mut().for_each(|s| s.scale(factor));
        }
        r
    };
    let candle = |r: &Report| -> Vec<Line> {
        r.lines
            .iter()
            .filter(|l| l.point.implementation == "candle")
            .cloned()
            .collect()
    };
    let base = [with_candle("b", "0.11.1", 1.0)];
    let against = |version: &str, factor: f64| {
        let head = [with_candle("h", version, factor)];
        compare("base", &base, "head", &head, &Options::default())
    };
    let same = against("0.11.1", 1.0);
    assert!(candle(&same)
        .iter()
        .all(|l| l.control.as_deref() == Some("library: the machine's drift")));
    let newer = against("0.12.0", 1.1);
    let lines = candle(&newer);
    assert!(!lines.is_empty());
    for l in &lines {
        assert_eq!(
            l.control.as_deref(),
            Some("library: its version changed (candle 0.11.1 -> candle 0.12.0)"),
            "{l:?}"
        );
        assert!(l
            .settings
            .iter()
            .any(|s| s.starts_with("code: candle 0.11.1 -> ")));
        assert!(!l.is_regression());
    }
    // Our lines did not move and are not judged against candle's 10%.
    assert!(newer
        .lines
        .iter()
        .filter(|l| l.point.implementation != "candle")
        .all(|l| l.label() == "SAME"));
}

#[test]
fn across_boards_a_move_within_a_points_own_process_modes_is_same() {
    // The measured GEMM processes of one board as base; head the same runs on another board
    // (another serial), with one of our points moved by 4% there: within the spread that point
    // showed between processes of base's board, it is SAME; moved by 30%, it stays SLOWER.
    let runs = gemm_state_runs();
    let on_board = |r: &HistoryRun, serial: &str, id: &str, factor: f64, point: &Identity| {
        let mut rec = r.record.clone();
        rec.run.id = id.to_string();
        if let Some(g) = rec.env.gpu.as_mut() {
            g.uuid = format!("GPU-{serial}-0000");
            if let Some(b) = g.board.as_mut() {
                b.serial = Some(serial.to_string());
            }
        }
        for p in rec.points.iter_mut() {
            if p.identity("gemm", &[]) == *point {
                p.stats.values_mut().for_each(|s| s.scale(factor));
            }
        }
        HistoryRun::new(format!("{id}.json"), rec).unwrap()
    };
    // The point with the widest spread between base's processes.
    let ours: Vec<&HistoryPoint> = runs[0]
        .record
        .points
        .iter()
        .filter(|p| !crate::identity::is_library(&p.implementation))
        .collect();
    let spread = |p: &HistoryPoint| {
        let id = p.identity("gemm", &[]);
        let v: Vec<f64> = runs
            .iter()
            .filter_map(|r| {
                r.record
                    .points
                    .iter()
                    .find(|q| q.identity("gemm", &[]) == id)
            })
            .map(|q| q.stats["time_us"].p50)
            .collect();
        v.iter().copied().fold(0.0, f64::max) / v.iter().copied().fold(f64::INFINITY, f64::min)
    };
    let widest = ours
        .iter()
        .max_by(|a, b| spread(a).total_cmp(&spread(b)))
        .unwrap();
    assert!(spread(widest) > 1.025, "{}", spread(widest));
    let point = widest.identity("gemm", &[]);
    let base = vec![runs[0].clone(), runs[2].clone()];
    let opts = Options {
        history: runs[3..].to_vec(),
        ..Options::default()
    };
    let line = |factor: f64| -> Line {
        let head = vec![
            on_board(&runs[0], "other", "o1", factor, &point),
            on_board(&runs[2], "other", "o2", factor, &point),
        ];
        let r = compare("base", &base, "head", &head, &opts);
        r.lines.iter().find(|l| l.point == point).unwrap().clone()
    };
    let small = line(1.04);
    assert_eq!(small.label(), "SAME", "{small:?}");
    assert!(small
        .rule
        .as_deref()
        .unwrap()
        .starts_with("processes: on two boards"));
    let large = line(1.30);
    assert_eq!(large.label(), "SLOWER", "{large:?}");
}
