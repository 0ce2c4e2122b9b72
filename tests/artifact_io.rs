//! Artifact schema round trips, the JSON Schema, atomic/partial writes and clear errors.

mod common;

use opbench::artifact::{parse_artifact, read_artifact, validate, ArtifactWriter, ResultRow};
use opbench::env::Env;
use opbench::stats::summarize;

fn schema() -> serde_json::Value {
    serde_json::from_str(include_str!("../docs/artifact.schema.json")).unwrap()
}

#[test]
fn fixture_round_trips_and_matches_json_schema() {
    let a = common::fixture_artifact("layernorm", "run-1");
    validate(&a).unwrap();
    let text = serde_json::to_string(&a).unwrap();
    assert_eq!(parse_artifact(&text).unwrap(), a);
    let v = jsonschema::validator_for(&schema()).unwrap();
    let instance: serde_json::Value = serde_json::from_str(&text).unwrap();
    let errors: Vec<String> = v.iter_errors(&instance).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
}

#[test]
fn json_schema_rejects_what_validation_rejects() {
    let v = jsonschema::validator_for(&schema()).unwrap();
    let mut instance = serde_json::to_value(common::fixture_artifact("layernorm", "x")).unwrap();
    instance["results"][0]["stats"]["time"] = instance["results"][0]["stats"]["time_us"].clone();
    assert!(
        !v.is_valid(&instance),
        "a stats key without a unit must be rejected"
    );
    let mut instance = serde_json::to_value(common::fixture_artifact("layernorm", "x")).unwrap();
    instance["schema_version"] = 2.into();
    assert!(!v.is_valid(&instance));
}

#[test]
fn comm_ceilings_pass_the_schema_and_a_zero_is_refused_by_name() {
    let mut a = common::fixture_artifact("comm", "c");
    a.ceilings.peer_copy_gbps.insert("0->1".into(), 370.5);
    a.ceilings.collective_latency_us = Some(14.2);
    validate(&a).unwrap();
    let instance = serde_json::to_value(&a).unwrap();
    let v = jsonschema::validator_for(&schema()).unwrap();
    let errors: Vec<String> = v.iter_errors(&instance).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(
        parse_artifact(&serde_json::to_string(&a).unwrap()).unwrap(),
        a
    );
    a.ceilings.peer_copy_gbps.insert("1->0".into(), 0.0);
    let e = validate(&a).unwrap_err().to_string();
    assert!(e.contains("ceilings.peer_copy_gbps.1->0"), "{e}");
    let mut bad = serde_json::to_value(&a).unwrap();
    bad["ceilings"]["collective_latency_us"] = (-1.0).into();
    assert!(!v.is_valid(&bad));
}

#[test]
fn writer_keeps_partial_results_and_never_touches_the_last_complete_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("layernorm.json");
    std::fs::write(&path, "previous complete artifact").unwrap();
    // A file that is no artifact is not replaced without --overwrite.
    let e = ArtifactWriter::start("layernorm", &path, Env::cpu(), false).err();
    let e = format!("{:#}", e.expect("refused"));
    assert!(e.contains("--overwrite"), "{e}");
    let mut w = ArtifactWriter::start("layernorm", &path, Env::cpu(), true).unwrap();
    let mut row = ResultRow::new("layernorm_forward", "candle").param("rows", 2usize);
    row.stats
        .insert("time_us".into(), summarize(&[1.0, 2.0]).unwrap());
    w.push(row.clone()).unwrap();
    let partial = w.partial_path().to_path_buf();
    drop(w); // a crash: finish() never runs
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "previous complete artifact"
    );
    let kept = read_artifact(&partial).unwrap();
    assert_eq!(kept.results.len(), 1);
    assert!(!kept.run.complete);

    let mut w = ArtifactWriter::start("layernorm", &path, Env::cpu(), true).unwrap();
    w.push(row).unwrap();
    let done = w.finish().unwrap();
    let a = read_artifact(&done).unwrap();
    assert!(a.run.complete);
    assert!(
        !partial.exists(),
        "the partial file is moved onto the final path"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&done).unwrap().permissions().mode() & 0o777;
        assert_eq!(
            mode, 0o644,
            "artifacts are readable by everyone, like any other file"
        );
    }
    let mut leftovers: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    leftovers.sort();
    // The crashed run's point was kept under its run id, beside the new artifact.
    let kept_as = format!("layernorm.json.{}.partial", kept.run.id);
    assert_eq!(
        leftovers,
        vec!["layernorm.json".to_string(), kept_as.clone()],
        "no temporary files left"
    );
    assert_eq!(
        read_artifact(&dir.path().join(kept_as)).unwrap(),
        kept,
        "kept as it was"
    );
}

#[test]
fn a_run_that_fails_early_keeps_the_earlier_partial_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("llm.json");
    let mut w = ArtifactWriter::start("llm", &path, Env::cpu(), false).unwrap();
    for i in 0..2usize {
        w.push(ResultRow::new("generate", "candle").param("batch", i))
            .unwrap();
    }
    let partial = w.partial_path().to_path_buf();
    drop(w);
    let before = std::fs::read(&partial).unwrap();
    // The next command fails before its first point (a bad --model-dir, say).
    let mut w = ArtifactWriter::start("llm", &path, Env::cpu(), false).unwrap();
    w.artifact.notes.push("set up, then failed".into());
    w.flush().unwrap();
    drop(w);
    assert_eq!(std::fs::read(&partial).unwrap(), before, "untouched");
    let names = std::fs::read_dir(dir.path()).unwrap().count();
    assert_eq!(names, 1, "no empty partial, no second file");
    // A run that fails before any point with no earlier partial leaves no file at all.
    let other = dir.path().join("gemm.json");
    let w = ArtifactWriter::start("gemm", &other, Env::cpu(), false).unwrap();
    w.flush().unwrap();
    drop(w);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

fn err_of(text: &str) -> String {
    format!("{:#}", parse_artifact(text).unwrap_err())
}

#[test]
fn bad_files_are_refused_with_the_field_named() {
    let good = serde_json::to_string(&common::fixture_artifact("layernorm", "r")).unwrap();
    // Truncated.
    assert!(err_of(&good[..good.len() / 2]).contains("JSON syntax error"));
    // Future version.
    let mut v: serde_json::Value = serde_json::from_str(&good).unwrap();
    v["schema_version"] = 7.into();
    assert!(err_of(&v.to_string()).contains("upgrade opbench"));
    // Non-finite number written as null by a careless producer.
    let mut v: serde_json::Value = serde_json::from_str(&good).unwrap();
    v["results"][0]["stats"]["time_us"]["p50"] = serde_json::Value::Null;
    let e = err_of(&v.to_string());
    assert!(e.contains("results[0].stats.time_us.p50"), "{e}");
    // Missing field.
    let mut v: serde_json::Value = serde_json::from_str(&good).unwrap();
    v["run"].as_object_mut().unwrap().remove("id");
    assert!(err_of(&v.to_string()).contains("id"));
    // Inconsistent: ok status but a failed check.
    let mut v: serde_json::Value = serde_json::from_str(&good).unwrap();
    v["results"][0]["correctness"]["passed"] = false.into();
    assert!(err_of(&v.to_string()).contains("results[0].status"));
    // A failed point must not carry timings.
    let mut v: serde_json::Value = serde_json::from_str(&good).unwrap();
    v["results"][1]["stats"] = v["results"][0]["stats"].clone();
    assert!(err_of(&v.to_string()).contains("results[1].stats"));
    // A time of zero in every sample: a timer that never ran.
    let mut v: serde_json::Value = serde_json::from_str(&good).unwrap();
    for (_, x) in v["results"][0]["stats"]["time_us"]
        .as_object_mut()
        .unwrap()
        .iter_mut()
        .filter(|(k, _)| *k != "n" && *k != "outliers_tukey")
    {
        *x = match x {
            serde_json::Value::Array(a) => vec![0.0; a.len()].into(),
            _ => 0.0.into(),
        };
    }
    let e = err_of(&v.to_string());
    assert!(
        e.contains("results[0].stats.time_us") && e.contains("0 in every sample"),
        "{e}"
    );
    // One point twice under the same settings.
    let mut v: serde_json::Value = serde_json::from_str(&good).unwrap();
    let first = v["results"][0].clone();
    v["results"].as_array_mut().unwrap().push(first);
    let e = err_of(&v.to_string());
    assert!(
        e.contains("results[2]") && e.contains("repeats `results[0]`"),
        "{e}"
    );
}

#[test]
fn read_artifact_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("broken.json");
    std::fs::write(&p, "{").unwrap();
    let e = format!("{:#}", read_artifact(&p).unwrap_err());
    assert!(e.contains("broken.json"), "{e}");
}

#[test]
fn non_finite_outputs_have_their_own_field_and_older_files_load() {
    let mut a = common::fixture_artifact("layernorm", "nf");
    // Older files have no `non_finite`: it reads as 0 and is not written back.
    let text = serde_json::to_string(&a).unwrap();
    assert!(!text.contains("non_finite"));
    assert_eq!(
        parse_artifact(&text).unwrap().results[1]
            .correctness
            .as_ref()
            .unwrap()
            .non_finite,
        0
    );
    let c = a.results[1].correctness.as_mut().unwrap();
    c.non_finite = 3;
    let text = serde_json::to_string(&a).unwrap();
    assert!(text.contains("\"non_finite\":3"), "{text}");
    assert!(jsonschema::validator_for(&schema())
        .unwrap()
        .is_valid(&serde_json::from_str(&text).unwrap()));
    parse_artifact(&text).unwrap();
    // A passed check cannot have NaN/inf outputs.
    let c = a.results[0].correctness.as_mut().unwrap();
    c.non_finite = 1;
    let e = format!("{:#}", validate(&a).unwrap_err());
    assert!(
        e.contains("results[0].correctness.passed") && e.contains("non_finite"),
        "{e}"
    );
}
