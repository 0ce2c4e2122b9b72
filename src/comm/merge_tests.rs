//! `merge` of torch.distributed rows into a comm artifact: bandwidths by our formulas, wrong
//! points, devices and methods refused with the file left as it was.

use super::merge;
use crate::artifact::{read_artifact, write_json_atomic, Artifact, Status};
use crate::comm::row::{Point, NCCL};
use crate::comm::Collective;
use crate::dtype::Dtype;
use serde_json::json;
use std::path::{Path, PathBuf};

/// A comm artifact of one NCCL all-reduce point (1 MiB f32 over 2 ranks), on the H200 of the
/// layernorm fixture.
fn artifact(dir: &Path) -> PathBuf {
    let ln: Artifact = serde_json::from_slice(
        &std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/layernorm_peers/layernorm.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let mut a = ln;
    a.kind = "comm".into();
    a.ceilings = Default::default();
    a.notes.clear();
    let p = Point {
        collective: Collective::AllReduce,
        dtype: Dtype::F32,
        bytes: 1 << 20,
        world: 2,
    };
    let mut r = p.row(NCCL);
    r.metrics.insert("busbw_gbps".into(), 100.0);
    r.stats.insert(
        "time_us".into(),
        crate::stats::summarize(&[10.0, 10.5]).unwrap(),
    );
    a.results = vec![r];
    let out = dir.join("comm.json");
    write_json_atomic(&out, &a).unwrap();
    out
}

fn peer_file(dir: &Path, row: serde_json::Value, device: &str) -> PathBuf {
    let v = json!({"rows": [row], "notes": ["torch 2.11"], "device": {"name": device}});
    let p = dir.join("peers.json");
    std::fs::write(&p, serde_json::to_vec(&v).unwrap()).unwrap();
    p
}

fn torch_row() -> serde_json::Value {
    json!({
        "benchmark": "comm", "implementation": "torch", "status": "ok",
        "params": {"collective": "all_reduce", "dtype": "f32", "bytes": 1048576,
                   "count": 262144, "world_size": 2},
        "samples_us": [10.0, 11.0, 12.0],
        "timing": {"method": "cuda_events", "warmup": 5, "launches_per_sample": 8},
        "correctness": {"reference": "float64", "max_abs_err": 0.0, "rel_err": 1e-7,
                        "tolerance": 1.0, "passed": true}
    })
}

#[test]
fn a_torch_row_gets_the_same_formulas_and_the_artifacts_tolerance() {
    let dir = tempfile::tempdir().unwrap();
    let out = artifact(dir.path());
    let said = merge(&out, &[peer_file(dir.path(), torch_row(), "NVIDIA H200")]).unwrap();
    assert!(said[1].contains("nccl 100.0 GB/s"), "{said:?}");
    let a = read_artifact(&out).unwrap();
    let t = a
        .results
        .iter()
        .find(|r| r.implementation == "torch")
        .unwrap();
    assert_eq!(t.status, Status::Ok);
    assert_eq!(t.params, a.results[0].params);
    let alg = 1048576.0 / 11e-6 / 1e9;
    assert!((t.metrics["algbw_gbps"] - alg).abs() < 1e-9);
    assert!((t.metrics["busbw_gbps"] - alg).abs() < 1e-9); // 2(n-1)/n = 1 for 2 ranks
    let c = t.correctness.as_ref().unwrap();
    assert_eq!(
        c.tolerance,
        3.0 * 2f64.powi(-24),
        "the peer's own bound is replaced"
    );
    assert_eq!(t.timing.as_ref().unwrap().launches_per_sample, 8);
    // Merging again replaces the row instead of adding one.
    merge(&out, &[peer_file(dir.path(), torch_row(), "NVIDIA H200")]).unwrap();
    assert_eq!(read_artifact(&out).unwrap().results.len(), 2);
}

#[test]
fn a_wrong_result_loses_its_times_and_bad_files_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = artifact(dir.path());
    let mut off = torch_row();
    off["correctness"]["rel_err"] = json!(1e-3);
    merge(&out, &[peer_file(dir.path(), off, "NVIDIA H200")]).unwrap();
    let a = read_artifact(&out).unwrap();
    let t = a
        .results
        .iter()
        .find(|r| r.implementation == "torch")
        .unwrap();
    assert_eq!(t.status, Status::Failed);
    assert!(t.stats.is_empty() && t.metrics.is_empty());

    let before = std::fs::read(&out).unwrap();
    let refused = |row: serde_json::Value, device: &str| {
        let e = format!(
            "{:#}",
            merge(&out, &[peer_file(dir.path(), row, device)]).unwrap_err()
        );
        assert_eq!(std::fs::read(&out).unwrap(), before, "{e}");
        e
    };
    let mut other = torch_row();
    other["params"]["bytes"] = json!(2097152);
    assert!(refused(other, "NVIDIA H200").contains("names no NCCL point"));
    assert!(refused(torch_row(), "NVIDIA H100").contains("field `device`"));
    for own in ["nccl", "opbench", "nccl-inplace", "opbench-twoshot"] {
        let mut row = torch_row();
        row["implementation"] = json!(own);
        assert!(refused(row, "NVIDIA H200").contains("never one of the artifact's own"));
    }
    let mut method = torch_row();
    method["timing"]["method"] = json!("cuda_events_rotating");
    assert!(refused(method, "NVIDIA H200").contains("field `timing`"));
}
