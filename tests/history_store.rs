//! The history end to end: record, naming, loading, series, latest changes, the summary's
//! regressions, size math.

use opbench::artifact::{write_json_atomic, Artifact};
use opbench::history::synthetic::{self, RunSpec};
use opbench::history::*;
use std::path::Path;

const H100: &str = "NVIDIA H100 80GB HBM3";
const H200: &str = "NVIDIA H200";
const KINDS: [&str; 3] = ["layernorm", "gemm", "llm"];

fn run(kind: &str, i: usize, gpu: &str, seed: u64) -> Artifact {
    synthetic::run(&RunSpec::new(
        kind,
        &synthetic::commit(i),
        gpu,
        &synthetic::started(i),
        seed,
    ))
}

fn write(dir: &Path, name: &str, a: &Artifact) -> std::path::PathBuf {
    let p = dir.join(name);
    write_json_atomic(&p, a).unwrap();
    p
}

#[test]
fn record_names_files_and_is_idempotent() {
    let tmp = tempfile::tempdir().unwrap();
    let a = run("layernorm", 3, H100, 7);
    let src = write(tmp.path(), "layernorm.json", &a);
    let hist = tmp.path().join("artifacts/history");
    let r = record(&src, &hist, RecordOptions::default()).unwrap();
    assert!(!r.already_present);
    let name = HistoryName::of(&HistoryRecord::of(&a)).unwrap().file_name();
    assert_eq!(r.path, hist.join("layernorm").join(&name));
    // <time>-<commit12>-<gpu-slug>-<run suffix>.json.gz
    let expect = format!(
        "{}-{}-nvidia-h100-80gb-hbm3-{}.json.gz",
        synthetic::started(3).replace(['-', ':'], ""),
        &synthetic::commit(3)[..12],
        a.run.id.rsplit('-').next().unwrap()
    );
    assert_eq!(name, expect);
    // Recording the same run again writes nothing.
    let again = record(&src, &hist, RecordOptions::default()).unwrap();
    assert!(again.already_present);
    // The history record keeps each point's median, interval, P5/P95 and n, rounded.
    let back = read_history_file(&r.path).unwrap();
    assert_eq!(back, HistoryRecord::of(&a).rounded());
    assert_eq!(back.points.len(), a.results.len());
    let orig = &a.results[5].stats["time_us"];
    let kept = &back.points[5].stats["time_us"];
    assert!((orig.p50 - kept.p50).abs() <= 1e-5 * orig.p50);
    assert_eq!(kept.n, orig.n);
    assert!(kept.median_ci95[0] <= kept.p50 && kept.p50 <= kept.median_ci95[1]);
    // A plain artifact is never double-read as history, and the file is not an artifact.
    assert!(opbench::artifact::read_artifact(&r.path).is_err());
}

#[test]
fn record_refuses_interrupted_dirty_and_partial_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let hist = tmp.path().join("history");
    let mut a = run("gemm", 1, H100, 1);
    a.run.complete = false;
    let e = record_artifact(&a, &hist, RecordOptions::default()).unwrap_err();
    assert!(e.to_string().contains("not complete"), "{e}");
    a.run.complete = true;
    a.run.git_dirty = Some(true);
    let e = record_artifact(&a, &hist, RecordOptions::default()).unwrap_err();
    assert!(e.to_string().contains("--allow-dirty"), "{e}");
    let opts = RecordOptions {
        allow_dirty: true,
        ..RecordOptions::default()
    };
    let r = record_artifact(&a, &hist, opts).unwrap();
    assert!(r.path.to_string_lossy().contains("+dirty-"));
    let p = write(tmp.path(), "gemm.json.partial", &a);
    assert!(record(&p, &hist, RecordOptions::default()).is_err());
    assert!(!hist.join("gemm").read_dir().unwrap().any(|e| e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .starts_with('.')));
}

#[test]
fn record_refuses_a_commit_that_is_not_a_hash() {
    let tmp = tempfile::tempdir().unwrap();
    let hist = tmp.path().join("history");
    let mut a = run("gemm", 1, H100, 1);
    a.run.git_commit = Some("release-1.0".into());
    let e = format!(
        "{:#}",
        record_artifact(&a, &hist, RecordOptions::default()).unwrap_err()
    );
    assert!(
        e.contains("run.git_commit") && e.contains("not a git hash"),
        "{e}"
    );
    assert!(!hist.exists() || std::fs::read_dir(&hist).unwrap().next().is_none());
}

/// Two commits x two GPUs x three kinds, recorded; returns the artifacts folder.
fn fleet(tmp: &Path) -> std::path::PathBuf {
    let arts = tmp.join("artifacts");
    let hist = arts.join(HISTORY_DIR);
    let mut seed = 100;
    for i in 0..2 {
        for gpu in [H100, H200] {
            for kind in KINDS {
                seed += 1;
                record_artifact(&run(kind, i, gpu, seed), &hist, RecordOptions::default()).unwrap();
            }
        }
    }
    arts
}

#[test]
fn loader_keys_runs_by_commit_gpu_and_time() {
    let tmp = tempfile::tempdir().unwrap();
    let arts = fleet(tmp.path());
    let h = History::load(&arts.join(HISTORY_DIR), false).unwrap();
    assert_eq!(h.runs.len(), 12);
    assert!(h.warnings.is_empty());
    assert!(h.runs.windows(2).all(|w| w[0].started() <= w[1].started()));
    let by_commit = h.by_commit();
    assert_eq!(by_commit.len(), 2);
    assert!(by_commit.values().all(|v| v.len() == 6));
    assert_eq!(
        h.commits(),
        vec![synthetic::commit(0), synthetic::commit(1)]
    );
    let by_gpu = h.by_gpu();
    assert_eq!(by_gpu.keys().collect::<Vec<_>>(), vec![H100, H200]);
    assert_eq!(h.find(None, Some("h100"), None).len(), 6);
    assert_eq!(
        h.find(Some(&synthetic::commit(1)[..8]), Some("h200"), Some("gemm"))
            .len(),
        1
    );
    let one = h.find(None, None, Some("llm"))[0];
    assert_eq!(h.run(one.run_id()).unwrap().file, one.file);

    // Series: one line per point, quantity and GPU, two runs each, judged against the first.
    let series = h.series(&opbench::compare::Options::default());
    let per_gpu_lines: usize = synthetic::suite().iter().map(|p| p.stats.len()).sum();
    assert_eq!(series.len(), 2 * per_gpu_lines);
    for s in &series {
        assert_eq!(s.points.len(), 2, "{:?}", s.point);
        assert!(s.points[0].vs_previous.is_none());
        let j = s.points[1].vs_previous.unwrap();
        assert_ne!(
            j.verdict,
            opbench::compare::Verdict::Slower,
            "{:?}",
            s.point
        );
        assert!(s.points[0].median_ci95[0] <= s.points[0].p50);
        assert!(s.points[0].started_utc < s.points[1].started_utc);
    }
    let headline: Vec<_> = series.iter().filter(|s| s.headline).collect();
    assert!(headline
        .iter()
        .all(|s| s.stat == "time_us" || s.stat == "decode_step_ms"));
    // Latest changes: one per kind and GPU, none of them a regression (no change injected).
    let latest = h.latest_changes(&opbench::compare::Options::default());
    assert_eq!(latest.len(), 6);
    assert!(
        latest.iter().all(|c| c.regressions.is_empty()),
        "{latest:?}"
    );
    // Loading only the newest pair per kind and GPU (what summarize does) gives the same,
    // and leaves older commits unread.
    let hist = arts.join(HISTORY_DIR);
    record_artifact(&run("gemm", 2, H100, 77), &hist, RecordOptions::default()).unwrap();
    let full = History::load(&hist, false).unwrap();
    let pairs = History::load_latest_pairs(&hist, false).unwrap();
    assert_eq!((full.runs.len(), pairs.runs.len()), (13, 12));
    let opts = opbench::compare::Options::default();
    assert_eq!(
        serde_json::to_value(full.latest_changes(&opts)).unwrap(),
        serde_json::to_value(pairs.latest_changes(&opts)).unwrap()
    );
}

#[test]
fn loader_rejects_renamed_files_and_warns_on_strays() {
    let tmp = tempfile::tempdir().unwrap();
    let arts = fleet(tmp.path());
    let hist = arts.join(HISTORY_DIR);
    std::fs::write(hist.join("gemm/notes.json"), "{}").unwrap();
    let h = History::load(&hist, false).unwrap();
    assert_eq!(h.runs.len(), 12);
    assert_eq!(h.warnings.len(), 1, "{:?}", h.warnings);
    // A file moved to another kind's folder no longer matches its content.
    let f = h.find(None, None, Some("gemm"))[0].file.clone();
    let moved = hist.join("llm").join(f.rsplit('/').next().unwrap());
    std::fs::rename(hist.join(&f), &moved).unwrap();
    let e = History::load(&hist, false).unwrap_err();
    assert!(
        format!("{e:#}").contains("do not match its content"),
        "{e:#}"
    );
    assert_eq!(History::load(&hist, true).unwrap().runs.len(), 11);
}

#[test]
fn summarize_never_counts_history_and_counts_each_run_once() {
    let tmp = tempfile::tempdir().unwrap();
    let arts = fleet(tmp.path());
    // The latest H200 layernorm run is also kept as a plain artifact, twice (a copy).
    let a = run("layernorm", 1, H200, 1234);
    write(&arts, "layernorm.json", &a);
    std::fs::create_dir_all(arts.join("fleet")).unwrap();
    write(&arts.join("fleet"), "layernorm-h200.json", &a);
    record_artifact(&a, &arts.join(HISTORY_DIR), RecordOptions::default()).unwrap();
    let (loaded, warnings) = opbench::artifact::load_dir(&arts, false).unwrap();
    assert_eq!(loaded.len(), 1, "history records are not artifacts");
    assert_eq!(loaded[0].file, "fleet/layernorm-h200.json");
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("left out layernorm.json")),
        "{warnings:?}"
    );
    let o = opbench::summary::run(&arts, &arts, false).unwrap();
    assert_eq!(o.artifacts, 1);
    let csv = std::fs::read_to_string(&o.csv).unwrap();
    assert_eq!(csv.lines().count(), 1 + a.results.len());
    // summary.json still judges the history: one entry per kind and GPU with two commits.
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&o.json).unwrap()).unwrap();
    assert_eq!(doc["regressions"].as_array().unwrap().len(), 6);
}

#[test]
fn summary_lists_a_regression_of_the_newest_commit() {
    let tmp = tempfile::tempdir().unwrap();
    let arts = tmp.path().join("artifacts");
    let hist = arts.join(HISTORY_DIR);
    let slowed = synthetic::suite()
        .iter()
        .position(|p| p.kind == "gemm" && p.implementation == "opbench")
        .unwrap();
    for i in 0..3 {
        let mut spec = RunSpec::new(
            "gemm",
            &synthetic::commit(i),
            H100,
            &synthetic::started(i),
            i as u64,
        );
        if i == 2 {
            spec.factors.insert(slowed, 1.10);
        }
        record_artifact(&synthetic::run(&spec), &hist, RecordOptions::default()).unwrap();
    }
    let o = opbench::summary::run(&arts, &arts, false).unwrap();
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&o.json).unwrap()).unwrap();
    let regs = doc["regressions"].as_array().unwrap();
    assert_eq!(regs.len(), 1);
    assert_eq!(regs[0]["base_commit"], synthetic::commit(1));
    let lines = regs[0]["regressions"].as_array().unwrap();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["point"]["implementation"], "opbench");
    assert_eq!(lines[0]["change"]["verdict"], "SLOWER");
}

/// The size math of docs/history.md: one commit of all three kinds, compacted and compressed.
#[test]
fn a_thousand_commits_stay_well_under_50_mb() {
    let mut per_commit = 0usize;
    let mut pretty = 0usize;
    let mut points = 0usize;
    for (j, kind) in KINDS.iter().enumerate() {
        // Average a few runs: compressed size depends on the numbers.
        let sizes: Vec<usize> = (0..4)
            .map(|i| {
                encode(&HistoryRecord::of(&run(kind, i, H100, (10 * j + i) as u64)))
                    .unwrap()
                    .len()
            })
            .collect();
        let a = run(kind, 0, H100, 1);
        points += a.results.len();
        pretty += serde_json::to_vec_pretty(&a).unwrap().len();
        per_commit += sizes.iter().sum::<usize>() / sizes.len();
    }
    let thousand_mb = per_commit as f64 * 1000.0 / 1e6;
    eprintln!(
        "size math: {points} points per commit; pretty artifacts {pretty} bytes; history files \
         {per_commit} bytes per commit; 1000 commits = {thousand_mb:.1} MB"
    );
    assert_eq!(points, synthetic::suite().len());
    assert!(thousand_mb < 25.0, "{thousand_mb} MB per 1000 commits");
}

#[test]
fn history_records_reject_negative_durations_and_long_names() {
    let a = run("layernorm", 0, H100, 1);
    let good = HistoryRecord::of(&a);
    good.validate().unwrap();
    let mut bad = good.clone();
    bad.points[0].stats.get_mut("time_us").unwrap().p5 = -1.0;
    let e = format!("{:#}", bad.validate().unwrap_err());
    assert!(
        e.contains("points[0].stats.time_us") && e.contains("negative"),
        "{e}"
    );
    let mut bad = good.clone();
    bad.points[0].metrics.insert("gbps".into(), -5.0);
    let e = format!("{:#}", bad.validate().unwrap_err());
    assert!(e.contains("points[0].metrics.gbps"), "{e}");
    let mut bad = good.clone();
    bad.points[0].implementation = "y".repeat(5000);
    let e = format!("{:#}", bad.validate().unwrap_err());
    assert!(
        e.contains("points[0].implementation") && e.contains("at most 256"),
        "{e}"
    );
}

#[test]
fn synthetic_runs_are_marked_and_older_ones_known_by_their_note() {
    let a = run("gemm", 0, H100, 1);
    assert!(a.run.synthetic);
    let r = HistoryRun::new("x", HistoryRecord::of(&a)).unwrap();
    assert!(r.synthetic());
    let mut old = HistoryRecord::of(&a);
    old.run.synthetic = false;
    assert!(HistoryRun::new("x", old.clone()).unwrap().synthetic());
    old.notes.clear();
    assert!(!HistoryRun::new("x", old).unwrap().synthetic());
    // Measured runs do not carry the field at all: their files are as before.
    let mut measured = a.clone();
    measured.run.synthetic = false;
    let json = serde_json::to_string(&measured).unwrap();
    assert!(!json.contains("synthetic\":"), "{json}");
}

/// `git` in `dir`, its trimmed stdout.
fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// A run whose artifact names its commit abbreviated (a device run's `OPBENCH_GIT_COMMIT`) is
/// recorded with the full hash when `history record` runs in the repository, so runs of one
/// commit never appear under two names; elsewhere it keeps the abbreviation.
#[test]
fn record_expands_an_abbreviated_commit_in_its_repository() {
    let repo = tempfile::tempdir().unwrap();
    git(repo.path(), &["init", "-q"]);
    std::fs::write(repo.path().join("f"), "x").unwrap();
    git(repo.path(), &["add", "f"]);
    git(repo.path(), &["commit", "-q", "-m", "one"]);
    let full = git(repo.path(), &["rev-parse", "HEAD"]);
    assert_eq!(full_hash(repo.path(), &full[..7]), Some(full.clone()));
    assert_eq!(full_hash(repo.path(), &full), None, "already whole");
    assert_eq!(
        full_hash(repo.path(), "0000000"),
        None,
        "not in the repository"
    );

    let mut a = run("layernorm", 2, H100, 3);
    a.run.git_commit = Some(full[..7].to_string());
    let src = write(repo.path(), "layernorm.json", &a);
    let record_in = |cwd: &Path, into: &Path| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_history"))
            .args([
                "record",
                src.to_str().unwrap(),
                "--into",
                into.to_str().unwrap(),
            ])
            .current_dir(cwd)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let hist = into.join("history").join("layernorm");
        let file = hist.read_dir().unwrap().next().unwrap().unwrap().path();
        (
            String::from_utf8(out.stdout).unwrap(),
            read_history_file(&file).unwrap().run.git_commit.unwrap(),
        )
    };
    let inside = repo.path().join("artifacts");
    let (said, commit) = record_in(repo.path(), &inside);
    assert_eq!(commit, full);
    assert!(
        said.contains(&format!(
            "commit {} recorded with its full hash",
            &full[..7]
        )),
        "{said}"
    );
    let elsewhere = tempfile::tempdir().unwrap();
    let (said, commit) = record_in(elsewhere.path(), &elsewhere.path().join("artifacts"));
    assert_eq!(commit, full[..7]);
    assert!(!said.contains("full hash"), "{said}");
}
