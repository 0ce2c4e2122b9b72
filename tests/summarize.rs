//! `summarize` end to end: merge, CSV snapshot, refusal of corrupt inputs, inputs untouched.

mod common;

use std::path::Path;

fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<_> = walkdir::WalkDir::new(dir)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            (
                e.path().display().to_string(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn merges_artifacts_into_json_and_csv_without_touching_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("artifacts");
    common::write_fixture(
        &a,
        "layernorm.json",
        &common::fixture_artifact("layernorm", "run-a"),
    );
    common::write_fixture(
        &a,
        "history/gemm/run-b.json",
        &common::fixture_artifact("gemm", "run-b"),
    );
    std::fs::write(a.join("notes.txt"), "not an artifact").unwrap();
    let before = snapshot(&a);
    let out = dir.path().join("out");
    let o = opbench::summary::run(&a, &out, false).unwrap();
    assert_eq!((o.artifacts, o.results), (2, 4));
    assert_eq!(snapshot(&a), before, "inputs are never modified");
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&o.json).unwrap()).unwrap();
    assert_eq!(doc["kinds"]["layernorm"].as_array().unwrap().len(), 2);
    assert_eq!(doc["kinds"]["gemm"][0]["artifact"], 0); // sorted by path: history/ first
    assert_eq!(doc["artifacts"][1]["env"]["gpu"]["name"], "FIXTURE GPU");

    // Writing into the artifacts folder itself, twice: its own outputs are not read back.
    let o1 = opbench::summary::run(&a, &a, false).unwrap();
    let o2 = opbench::summary::run(&a, &a, false).unwrap();
    assert_eq!((o1.artifacts, o2.artifacts), (2, 2));
}

#[test]
fn csv_matches_golden_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    common::write_fixture(
        dir.path(),
        "layernorm.json",
        &common::fixture_artifact("layernorm", "run-a"),
    );
    let (loaded, _) = opbench::artifact::load_dir(dir.path(), false).unwrap();
    let csv = String::from_utf8(opbench::summary::to_csv(&loaded).unwrap()).unwrap();
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/summary.csv");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&golden, &csv).unwrap();
    }
    let expected =
        std::fs::read_to_string(&golden).expect("golden file; create it with UPDATE_GOLDEN=1");
    assert_eq!(
        csv, expected,
        "summary.csv changed; if intended, rerun with UPDATE_GOLDEN=1"
    );
}

#[test]
fn corrupt_artifact_fails_unless_skipped() {
    let dir = tempfile::tempdir().unwrap();
    common::write_fixture(
        dir.path(),
        "good.json",
        &common::fixture_artifact("layernorm", "g"),
    );
    std::fs::write(
        dir.path().join("bad.json"),
        r#"{"schema_version": 1, "kind": "x""#,
    )
    .unwrap();
    let err = opbench::summary::run(dir.path(), dir.path(), false).unwrap_err();
    // The first line printed names the file, and says how to go on.
    let top = err.to_string();
    assert!(
        top.contains("bad.json") && top.contains("--skip-invalid"),
        "{top}"
    );
    let e = format!("{err:#}");
    assert!(e.contains("JSON syntax error"), "{e}");
    assert!(
        !dir.path().join("summary.json").exists(),
        "nothing written on failure"
    );
    let o = opbench::summary::run(dir.path(), dir.path(), true).unwrap();
    assert_eq!(o.artifacts, 1);
    assert_eq!(o.warnings.len(), 1);
    assert!(o.warnings[0].contains("bad.json"));
}

#[test]
fn missing_folder_says_what_to_pass() {
    let e = format!(
        "{:#}",
        opbench::summary::run(Path::new("/nonexistent/x"), Path::new("/tmp"), false).unwrap_err()
    );
    assert!(e.contains("--artifacts"), "{e}");
}

#[test]
fn rows_of_a_gpu_in_a_cpu_artifact_are_refused_by_summarize_and_history() {
    let dir = tempfile::tempdir().unwrap();
    let mut a = common::fixture_artifact("llm", "mixed");
    a.env = opbench::env::Env::cpu();
    a.results[0]
        .params
        .insert("device".into(), opbench::artifact::Param::from("cuda"));
    let f = common::write_fixture(dir.path(), "cpu.json", &a);
    let e = format!(
        "{:#}",
        opbench::summary::run(dir.path(), &dir.path().join("out"), false).unwrap_err()
    );
    assert!(
        e.contains("cpu.json") && e.contains("results[0].params.device"),
        "{e}"
    );
    let e = format!(
        "{:#}",
        opbench::history::record(&f, &dir.path().join("history"), Default::default()).unwrap_err()
    );
    assert!(e.contains("results[0].params.device"), "{e}");
}

#[test]
fn one_run_id_in_two_different_files_is_an_error_naming_both() {
    let dir = tempfile::tempdir().unwrap();
    let a = common::fixture_artifact("layernorm", "same-id");
    common::write_fixture(dir.path(), "a.json", &a);
    // A byte-for-byte copy counts once, with a warning.
    common::write_fixture(dir.path(), "copy/a.json", &a);
    let out = dir.path().join("out");
    let o = opbench::summary::run(dir.path(), &out, false).unwrap();
    assert_eq!(o.artifacts, 1);
    let mut b = a.clone();
    b.results.pop();
    common::write_fixture(dir.path(), "b.json", &b);
    let e = format!(
        "{:#}",
        opbench::summary::run(dir.path(), &out, false).unwrap_err()
    );
    assert!(
        e.contains("a.json and b.json both hold run same-id") && e.contains("2 and 1 results"),
        "{e}"
    );
    let o = opbench::summary::run(dir.path(), &out, true).unwrap();
    assert!(
        o.warnings.iter().any(|w| w.contains("left out b.json")),
        "{:?}",
        o.warnings
    );
}
