//! The `--device cpu` path end to end: a small sweep writes an artifact that validates,
//! carries the rows of the default sweep, and goes through `summarize`.

use opbench::artifact::{read_artifact, Status};
use opbench::layernorm::{cpu, report, Dtype, SweepConfig};

#[test]
fn a_cpu_run_writes_an_artifact_that_validates_and_summarizes() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("artifacts").join("layernorm.json");
    let cfg = SweepConfig {
        shapes: vec![
            "3x7".parse().unwrap(),
            "2x4x1025".parse().unwrap(),
            "1x2048".parse().unwrap(),
        ],
        dtypes: vec![Dtype::F32, Dtype::Bf16],
        eps: 1e-5,
        warmup: 1,
        sampling: opbench::harness::Sampling::fixed(3),
        batch: 1,
        bytes_per_thread: None,
        kernel: opbench::layernorm::plan::KernelChoice::Regs,
        grid: None,
        x_cache: opbench::layernorm::plan::XCache::Auto,
        blocks_per_sm: None,
        timing: opbench::layernorm::sweep::TimingMethod::Rotate,
        rotate_l2_multiple: 2,
        seed: 7,
        out: out.clone(),
        overwrite: false,
    };
    let path = cpu::run(&cfg).unwrap();
    assert_eq!(path, out);
    let a = read_artifact(&out).unwrap();
    assert_eq!(a.kind, "layernorm");
    assert!(a.run.complete);
    assert_eq!(a.env.device, "cpu");
    assert_eq!(a.results.len(), 6);
    for r in &a.results {
        assert_eq!(r.benchmark, "layernorm_forward");
        assert_eq!(r.implementation, "candle");
        assert_eq!(r.status, Status::Ok, "{r:?}");
        for k in ["shape", "rows", "cols", "dtype", "mode", "eps"] {
            assert!(r.params.contains_key(k), "missing param {k}");
        }
        let c = r.correctness.as_ref().unwrap();
        assert!(c.passed && c.rel_err <= c.tolerance && c.reference == "cpu_f64");
        assert_eq!(r.stats["time_us"].n, 3);
        assert!(r.metrics["gbps"] > 0.0);
        assert_eq!(r.timing.as_ref().unwrap().method, "host_clock_synchronized");
    }
    let r = &a.results[2];
    assert_eq!(r.param_str("shape").as_deref(), Some("2x4x1025"));
    assert_eq!(
        (
            r.param_str("rows").as_deref(),
            r.param_str("cols").as_deref()
        ),
        (Some("8"), Some("1025"))
    );
    assert!(!out.with_extension("json.partial").exists());

    let o = opbench::summary::run(&dir.path().join("artifacts"), dir.path(), false).unwrap();
    assert_eq!((o.artifacts, o.results), (1, 6));
    let csv = std::fs::read_to_string(&o.csv).unwrap();
    assert!(csv.lines().next().unwrap().contains("param.cols"), "{csv}");
    assert_eq!(csv.lines().count(), 7);

    let table = report::markdown_table(&a);
    assert!(table.contains("| 3x7 | f32 | warm |"), "{table}");
    assert!(report::bar_report(&a)
        .last()
        .unwrap()
        .contains("not judged"));
}

/// The committed GPU artifact: valid, complete, every point checked and passed, and every
/// opbench row carries its launch configuration, bandwidth and speedups.
#[test]
fn the_committed_gpu_artifact_is_complete_and_every_point_passed() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("artifacts/layernorm.json");
    let a = read_artifact(&path).unwrap();
    assert_eq!(a.kind, "layernorm");
    assert!(a.run.complete && a.run.git_commit.is_some());
    assert_eq!(a.env.device, "cuda");
    assert!(a.env.gpu.is_some() && a.ceilings.copy_gbps.is_some());
    // 8 shapes x 3 dtypes x (warm, cold) for each of candle, opbench and the three peers
    // timed in the same call (torch, torch-compile, triton).
    for imp in ["candle", "opbench", "torch", "torch-compile", "triton"] {
        let n = a.results.iter().filter(|r| r.implementation == imp).count();
        assert_eq!(n, 48, "{imp}");
    }
    assert_eq!(a.results.len(), 240);
    for r in &a.results {
        assert_eq!(r.status, Status::Ok, "{r:?}");
        assert!(r.correctness.as_ref().unwrap().passed);
        assert!(r.metrics.contains_key("pct_of_copy_bw"));
        if r.implementation == "opbench" {
            for k in ["block_threads", "rows_per_block", "vec_width", "variant"] {
                assert!(r.params.contains_key(k), "missing param {k}");
            }
            for k in [
                "speedup_vs_candle_p50",
                "speedup_vs_candle_p95",
                "gbps",
                "same_size_copy_gbps",
            ] {
                assert!(r.metrics.contains_key(k), "missing metric {k}");
            }
        }
        // Timing: warm rows back to back with the stream held; cold rows by rotation over
        // buffer sets (the rule met), except the decode row, flushed per launch.
        let t = r.timing.as_ref().unwrap();
        let decode = r.param_str("rows").as_deref() == Some("1");
        match r.param_str("mode").as_deref() {
            Some("warm") => assert_eq!(
                (t.method.as_str(), t.l2_cleared),
                ("cuda_events_held", false)
            ),
            Some("cold") if decode => {
                assert_eq!((t.method.as_str(), t.l2_cleared), ("cuda_events", true))
            }
            Some("cold") => {
                assert_eq!(
                    (t.method.as_str(), t.l2_cleared),
                    ("cuda_events_rotating_buffers", true)
                );
                assert!(
                    r.notes.iter().any(|n| n.contains("rule 2x L2 met")),
                    "{r:?}"
                );
            }
            m => panic!("unexpected mode {m:?}"),
        }
    }
}

#[test]
fn cpu_sampling_follows_the_sampling_policy_not_a_fixed_twenty() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("layernorm.json");
    let sampling = opbench::harness::Sampling {
        min_samples: 2,
        max_samples: 3,
        target_rel: 0.0,
        budget: std::time::Duration::from_secs(60),
        recover_throttled: true,
    };
    let cfg = SweepConfig {
        shapes: vec!["4x64".parse().unwrap()],
        dtypes: vec![Dtype::F32],
        eps: 1e-5,
        warmup: 1,
        sampling,
        batch: 1,
        bytes_per_thread: None,
        kernel: opbench::layernorm::plan::KernelChoice::Regs,
        grid: None,
        x_cache: opbench::layernorm::plan::XCache::Auto,
        blocks_per_sm: None,
        timing: opbench::layernorm::sweep::TimingMethod::Rotate,
        rotate_l2_multiple: 2,
        seed: 7,
        out: out.clone(),
        overwrite: false,
    };
    cpu::run(&cfg).unwrap();
    let a = read_artifact(&out).unwrap();
    let r = &a.results[0];
    assert_eq!(r.stats["time_us"].n, 3);
    let s = r.timing.as_ref().unwrap().sampling.as_ref().unwrap();
    assert_eq!((s.stopped_by.as_str(), s.max_samples), ("max_samples", 3));
}
