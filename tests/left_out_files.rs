//! Files that cannot be used are named, never dropped in silence (symbolic links, truncated
//! history files), and synthetic runs stay apart from measured ones and say what they are.
#![cfg(unix)]

mod common;

use common::{fixture_artifact, run_bin as bin, write_fixture};
use opbench::history::{record, RecordOptions, HISTORY_DIR};

#[test]
fn symlinked_artifacts_and_truncated_history_files_are_named() {
    let d = tempfile::tempdir().unwrap();
    let elsewhere = write_fixture(
        d.path(),
        "elsewhere/run.json",
        &fixture_artifact("layernorm", "s1"),
    );
    let arts = d.path().join("artifacts");
    std::fs::create_dir_all(&arts).unwrap();
    std::os::unix::fs::symlink(&elsewhere, arts.join("linked.json")).unwrap();
    // A recorded run, then cut short as an interrupted copy would leave it.
    let r = record(
        &elsewhere,
        &arts.join(HISTORY_DIR),
        RecordOptions::default(),
    )
    .unwrap();
    let bytes = std::fs::read(&r.path).unwrap();
    std::fs::write(&r.path, &bytes[..bytes.len() / 2]).unwrap();
    let hist_file = r.path.file_name().unwrap().to_string_lossy().to_string();

    let (rc, out, err) = bin(
        env!("CARGO_BIN_EXE_summarize"),
        &["--skip-invalid"],
        d.path(),
    );
    assert_eq!(rc, Some(0), "{err}");
    assert!(out.contains("from 0 artifacts"), "{out}");
    assert!(
        err.contains("artifacts/linked.json: a symbolic link, not followed"),
        "{err}"
    );
    assert!(
        err.contains(&hist_file) && err.contains("truncated"),
        "{err}"
    );

    let (rc, out, err) = bin(env!("CARGO_BIN_EXE_history"), &["list"], d.path());
    assert_eq!(rc, Some(0), "{err}");
    assert!(out.contains("0 runs"), "{out}");
    assert!(err.contains(&hist_file), "{err}");

    // compare finds nothing and says why, instead of "among the 0 runs" alone.
    let (rc, _, err) = bin(
        env!("CARGO_BIN_EXE_compare"),
        &["--base", "fixture", "--head", "fixture"],
        d.path(),
    );
    assert_eq!(rc, Some(1));
    assert!(err.contains("among the 0 runs"), "{err}");
    assert!(
        err.contains("2 file(s) left out")
            && err.contains("linked.json: a symbolic link")
            && err.contains(&hist_file),
        "{err}"
    );
    let (rc, _, err) = bin(
        env!("CARGO_BIN_EXE_compare"),
        &["--base", "artifacts", "--head", "artifacts"],
        d.path(),
    );
    assert_eq!(rc, Some(1));
    assert!(err.contains("linked.json: a symbolic link"), "{err}");

    let (rc, _, err) = bin(
        env!("CARGO_BIN_EXE_dashboard"),
        &["--out", "site"],
        d.path(),
    );
    assert_eq!(rc, Some(0), "{err}");
    assert!(err.contains("linked.json: a symbolic link"), "{err}");
    assert!(
        err.contains(&hist_file),
        "the history page's left-out file: {err}"
    );
}

#[test]
fn synth_refuses_measured_data_and_its_runs_say_synthetic() {
    let d = tempfile::tempdir().unwrap();
    let history = env!("CARGO_BIN_EXE_history");

    // A folder with a measured run in its history.
    let real = d.path().join("real");
    let a = write_fixture(
        d.path(),
        "runs/m.json",
        &fixture_artifact("layernorm", "m1"),
    );
    let r = record(&a, &real.join(HISTORY_DIR), RecordOptions::default()).unwrap();
    let (rc, _, err) = bin(
        history,
        &["synth", "--out", "real", "--commits", "1"],
        d.path(),
    );
    assert_eq!(rc, Some(1));
    assert!(
        err.contains(&r.path.file_name().unwrap().to_string_lossy().to_string())
            && err.contains("is a measured run"),
        "{err}"
    );
    // A folder holding an artifact.
    let (rc, _, err) = bin(
        history,
        &["synth", "--out", "runs", "--commits", "1"],
        d.path(),
    );
    assert_eq!(rc, Some(1));
    assert!(err.contains("m.json is not a history file"), "{err}");
    assert!(!d.path().join("runs/history").exists());

    // A new folder works, and so does extending it.
    for commits in ["1", "2"] {
        let (rc, out, err) = bin(
            history,
            &[
                "synth",
                "--out",
                "demo",
                "--commits",
                commits,
                "--gpu",
                "NVIDIA H100",
            ],
            d.path(),
        );
        assert_eq!(rc, Some(0), "{err}");
        assert!(out.contains("SYNTHETIC runs (not measurements)"), "{out}");
    }
    let (rc, out, err) = bin(history, &["list", "--artifacts", "demo"], d.path());
    assert_eq!(rc, Some(0), "{err}");
    let runs: Vec<&str> = out.lines().filter(|l| l.contains(".json.gz")).collect();
    assert_eq!(runs.len(), 6, "{out}");
    assert!(
        runs.iter().all(|l| l.ends_with("SYNTHETIC (not measured)")),
        "{out}"
    );
    assert!(out.contains("6 of the runs are SYNTHETIC"), "{out}");

    // One run as the head: compare refuses the same runs on both sides.
    let kind_dir = std::fs::read_dir(d.path().join("demo/history"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let one = std::fs::read_dir(&kind_dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let (rc, out, err) = bin(
        env!("CARGO_BIN_EXE_compare"),
        &[
            "--artifacts",
            "demo",
            "--base",
            "h100",
            "--head",
            one.to_str().unwrap(),
        ],
        d.path(),
    );
    assert_eq!(rc, Some(0), "{err}");
    assert!(out.lines().next().unwrap().contains("SYNTHETIC"), "{out}");
    assert!(
        out.contains("note: base: 6 of its 6 runs are SYNTHETIC"),
        "{out}"
    );

    // The history page labels them and warns.
    let pages = opbench::site::build_pages(
        &[],
        &[],
        d.path().join("demo").to_str().unwrap(),
        opbench::site::PlotlyMode::Cdn,
        "t",
    );
    let page = pages.iter().find(|p| p.file == "history.html").unwrap();
    assert!(
        page.site
            .warnings
            .iter()
            .any(|w| w.contains("6 of the 6 runs") && w.contains("are SYNTHETIC")),
        "{:?}",
        page.site.warnings
    );
    // The runs table is the page's CSV download: every run there says it is synthetic.
    let runs = page
        .files
        .iter()
        .find(|f| f.path == "data/history-runs.csv")
        .expect("the runs table download");
    let rows: Vec<&str> = runs.text.lines().skip(1).collect();
    assert_eq!(rows.len(), 6, "{}", runs.text);
    assert!(
        rows.iter().all(|r| r.contains("(SYNTHETIC, not measured)")),
        "no label in the runs table: {}",
        runs.text
    );
}
