//! `merge` on fixture peer files (tests/fixtures/layernorm_peers/, the valid one written by
//! tests/python/test_layernorm_peers.py through the peer script's own functions).

use super::merge;
use crate::artifact::{read_artifact, Param, Status};
use std::path::{Path, PathBuf};

const FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/layernorm_peers"
);

fn fixture(name: &str) -> PathBuf {
    Path::new(FIXTURES).join(name)
}

/// A copy of the fixture artifact (H200; 4096x1024 f16 and 1x2048 f32, warm and cold).
fn artifact_copy(dir: &Path) -> PathBuf {
    let out = dir.join("layernorm.json");
    std::fs::copy(fixture("layernorm.json"), &out).unwrap();
    out
}

fn refused(out: &Path, peers: &Path) -> String {
    let before = std::fs::read(out).unwrap();
    let e = format!("{:#}", merge(out, &[peers.to_path_buf()]).unwrap_err());
    assert_eq!(std::fs::read(out).unwrap(), before, "{e}: the file changed");
    e
}

/// The valid fixture with `edit` applied to its JSON, written to `dir`.
fn edited(dir: &Path, edit: impl Fn(&mut serde_json::Value)) -> PathBuf {
    let mut v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fixture("peers_valid.json")).unwrap()).unwrap();
    edit(&mut v);
    let p = dir.join("edited.json");
    std::fs::write(&p, serde_json::to_vec(&v).unwrap()).unwrap();
    p
}

#[test]
fn peer_rows_get_our_statistics_metrics_and_timing_block() {
    let dir = tempfile::tempdir().unwrap();
    let out = artifact_copy(dir.path());
    let said = merge(&out, &[fixture("peers_valid.json")]).unwrap();
    assert!(said[0].ends_with("8 row(s)"), "{said:?}");
    let a = read_artifact(&out).unwrap();
    assert_eq!(a.results.len(), 16);
    let copy = a.ceilings.copy_gbps.unwrap();
    let find = |imp: &str, shape: &str, mode: &str| {
        a.results
            .iter()
            .find(|r| {
                r.implementation == imp
                    && r.param_str("shape").as_deref() == Some(shape)
                    && r.param_str("mode").as_deref() == Some(mode)
            })
            .unwrap_or_else(|| panic!("no {imp} {shape} {mode} row"))
    };
    let warm = find("torch", "4096x1024", "warm");
    assert_eq!(warm.status, Status::Ok);
    // Params are candle's row's, so the rows pair by identity.
    assert_eq!(warm.params, find("candle", "4096x1024", "warm").params);
    let t = &warm.stats["time_us"];
    assert_eq!((t.n, t.p50), (5, 10.02));
    let gbps = 2.0 * 4096.0 * 1024.0 * 2.0 / (10.02e-6) / 1e9;
    assert!((warm.metrics["gbps"] - gbps).abs() < 1e-9);
    assert!((warm.metrics["pct_of_copy_bw"] - 100.0 * gbps / copy).abs() < 1e-9);
    let timing = warm.timing.as_ref().unwrap();
    assert_eq!(
        (
            timing.method.as_str(),
            timing.launches_per_sample,
            timing.l2_cleared
        ),
        ("cuda_events_held", 20, false)
    );
    let cold = find("torch", "4096x1024", "cold");
    let timing = cold.timing.as_ref().unwrap();
    assert_eq!(
        (timing.method.as_str(), timing.l2_cleared, timing.warmup),
        ("cuda_events_rotating_buffers", true, 10)
    );
    assert!(
        cold.notes
            .iter()
            .any(|n| n.starts_with("cold by rotation: 9 buffer sets")
                && n.contains("rule 2x L2 met)")),
        "{:?}",
        cold.notes
    );
    let flushed = find("torch", "1x2048", "cold").timing.as_ref().unwrap();
    assert_eq!(
        (
            flushed.method.as_str(),
            flushed.launches_per_sample,
            flushed.l2_cleared
        ),
        ("cuda_events", 1, true)
    );
    // A failed check and an error: no timings, the check kept.
    let bad = find("torch-compile", "4096x1024", "cold");
    assert_eq!(bad.status, Status::Failed);
    assert!(bad.stats.is_empty() && bad.metrics.is_empty());
    assert!(!bad.correctness.as_ref().unwrap().passed);
    assert_eq!(find("triton", "1x2048", "warm").status, Status::Failed);
    assert!(said
        .iter()
        .any(|l| l.starts_with("torch 4096x1024 f16 warm: p50 10.02 us")
            && l.ends_with("(peer / opbench 1.80)")));
    assert!(a.notes.iter().any(|n| n.contains("torch 0.0 (fixture)")));
    // Merging again replaces the peer rows instead of adding a second copy.
    merge(&out, &[fixture("peers_valid.json")]).unwrap();
    assert_eq!(read_artifact(&out).unwrap().results.len(), 16);
}

#[test]
fn malformed_mismatched_or_foreign_files_are_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let out = artifact_copy(dir.path());
    let e = refused(&out, &fixture("peers_malformed.json"));
    assert!(
        e.contains("peers_malformed.json") && e.contains("rows[0].samples_us"),
        "{e}"
    );
    let e = refused(&out, &fixture("peers_other_point.json"));
    assert!(
        e.contains("peers_other_point.json: rows[0]: field `params`")
            && e.contains("4096x999 f16 warm"),
        "{e}"
    );
    let e = refused(&out, &fixture("peers_other_device.json"));
    assert!(
        e.contains("field `device`") && e.contains("NVIDIA H200"),
        "{e}"
    );
    type Edit = fn(&mut serde_json::Value);
    let cases: [(&str, Edit); 8] = [
        ("field `device` is missing", |v| {
            v.as_object_mut().unwrap().remove("device");
        }),
        ("rows[0]: field `implementation`", |v| {
            v["rows"][0]["implementation"] = "opbench".into();
        }),
        ("field `params.kernel`", |v| {
            v["rows"][0]["params"]["kernel"] = "x".into();
        }),
        ("rows[0]: field `correctness` is missing", |v| {
            v["rows"][0].as_object_mut().unwrap().remove("correctness");
        }),
        ("rows[0]: field `samples_us`: sample 1 is -2", |v| {
            v["rows"][0]["samples_us"] = serde_json::json!([1.0, -2.0]);
        }),
        ("does not time a warm row", |v| {
            v["rows"][0]["timing"]["method"] = "cuda_events_rotating_buffers".into();
            v["rows"][0]["timing"]["rotation"] =
                serde_json::json!({"sets": 9, "l2_bytes": 62914560, "l2_multiple": 2});
        }),
        (
            "`throttled_samples` is 6, more than the row's 5 samples",
            |v| {
                v["rows"][0]["timing"]["throttled_samples"] = 6.into();
            },
        ),
        ("rows[2]: field `timing`", |v| {
            v["rows"][2]["timing"]
                .as_object_mut()
                .unwrap()
                .remove("rotation");
        }),
    ];
    for (want, edit) in cases {
        let e = refused(&out, &edited(dir.path(), edit));
        assert!(e.contains(want), "want {want:?} in: {e}");
    }
    // Not a layernorm artifact, or not an artifact at all: left as it is.
    let gemm = dir.path().join("gemm.json");
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    v["kind"] = "gemm".into();
    std::fs::write(&gemm, serde_json::to_vec(&v).unwrap()).unwrap();
    let e = refused(&gemm, &fixture("peers_valid.json"));
    assert!(e.contains("not a \"layernorm\" one"), "{e}");
    let notes = dir.path().join("notes.json");
    std::fs::write(&notes, b"{\"mine\": true}").unwrap();
    refused(&notes, &fixture("peers_valid.json"));
}

#[test]
fn a_row_whose_check_fails_the_artifacts_tolerance_is_withdrawn() {
    let dir = tempfile::tempdir().unwrap();
    let out = artifact_copy(dir.path());
    // The peer claims a pass with a looser tolerance than the artifact's f16 1e-2.
    let peers = edited(dir.path(), |v| {
        v["rows"][0]["correctness"]["rel_err"] = 0.05.into();
        v["rows"][0]["correctness"]["tolerance"] = 0.1.into();
    });
    merge(&out, &[peers]).unwrap();
    let a = read_artifact(&out).unwrap();
    let r = a
        .results
        .iter()
        .find(|r| r.implementation == "torch" && r.params["mode"] == Param::from("warm"))
        .unwrap();
    assert_eq!(r.status, Status::Failed);
    assert!(r.stats.is_empty());
    let c = r.correctness.as_ref().unwrap();
    assert_eq!((c.tolerance, c.passed), (1e-2, false));
}

#[test]
fn a_peer_rows_throttled_samples_decide_its_clocks_and_rows_without_a_count_have_none() {
    let dir = tempfile::tempdir().unwrap();
    let out = artifact_copy(dir.path());
    // Of 5 samples: none throttled (row 0), one (row 2: a fifth, as our rows count it), and
    // row 4 without a count (a peer that could not read NVML).
    let peers = edited(dir.path(), |v| {
        v["rows"][0]["timing"]["throttled_samples"] = 0.into();
        v["rows"][2]["timing"]["throttled_samples"] = 1.into();
    });
    merge(&out, &[peers]).unwrap();
    let a = read_artifact(&out).unwrap();
    let torch = |shape: &str, mode: &str| {
        a.results
            .iter()
            .find(|r| {
                r.implementation == "torch"
                    && r.param_str("shape").as_deref() == Some(shape)
                    && r.param_str("mode").as_deref() == Some(mode)
            })
            .unwrap()
    };
    let steady = torch("4096x1024", "warm");
    let s = steady.timing.as_ref().unwrap().sampling.as_ref().unwrap();
    assert_eq!(
        (s.stopped_by.as_str(), s.throttled_samples, s.samples_taken),
        ("fixed_count", 0, Some(5))
    );
    assert_eq!(steady.clocks(), Some("steady"));
    assert!(!steady.throttled());
    let held = torch("4096x1024", "cold");
    assert_eq!(held.clocks(), Some("throttled"));
    assert!(held.throttled(), "never judged FASTER or SLOWER");
    let unread = torch("1x2048", "warm");
    assert!(unread.timing.as_ref().unwrap().sampling.is_none());
    assert_eq!(unread.clocks(), None);
}
