//! Deterministic fixture artifacts shared by the integration tests (clearly labelled FIXTURE).
#![allow(dead_code)]

use opbench::artifact::{
    Artifact, Ceilings, Correctness, ResultRow, RunInfo, Status, Timing, SCHEMA_VERSION,
};
use opbench::env::{ClockSample, Env, GpuEnv, HostEnv};
use opbench::stats::summarize;

pub fn fixture_env() -> Env {
    let clocks = ClockSample {
        sm_mhz: 1980,
        mem_mhz: 2619,
        temperature_c: Some(40),
        power_w: Some(120.5),
    };
    Env {
        device: "cuda".into(),
        host: HostEnv {
            cpu_model: "FIXTURE CPU".into(),
            cores: 16,
            os: "FIXTURE OS".into(),
            memory_bytes: Some(1 << 37),
        },
        gpu: Some(GpuEnv {
            index: 0,
            name: "FIXTURE GPU".into(),
            uuid: "GPU-00000000-fixture".into(),
            compute_capability: "9.0".into(),
            driver_version: "580.0".into(),
            cuda_driver_version: "13.0".into(),
            memory_total_bytes: 80 << 30,
            max_sm_mhz: 1980,
            max_mem_mhz: 2619,
            clocks_start: clocks.clone(),
            clocks_end: clocks,
            throttle_reasons_seen: vec![],
            board: None,
            samples: 3,
        }),
    }
}

/// A small layernorm-like artifact with one passing and one failed point.
pub fn fixture_artifact(kind: &str, id: &str) -> Artifact {
    let mut ok = ResultRow::new("layernorm_forward", "opbench")
        .param("rows", 4096usize)
        .param("cols", 1024usize)
        .param("dtype", "f16");
    ok.stats.insert(
        "time_us".into(),
        summarize(&[10.0, 11.0, 10.5, 12.0, 10.2, 10.1]).unwrap(),
    );
    ok.metrics.insert("gbps".into(), 1600.0);
    ok.timing = Some(Timing {
        method: "cuda_events".into(),
        warmup: 10,
        launches_per_sample: 20,
        l2_cleared: true,
        sampling: None,
    });
    ok.correctness = Some(Correctness {
        reference: "cpu_f64".into(),
        max_abs_err: 1e-3,
        rel_err: 2e-4,
        tolerance: 1e-2,
        passed: true,
        non_finite: 0,
    });
    let mut failed = ResultRow::new("layernorm_forward", "candle")
        .param("rows", 1usize)
        .param("cols", 7usize)
        .param("dtype", "bf16");
    failed.status = Status::Failed;
    failed.correctness = Some(Correctness {
        reference: "cpu_f64".into(),
        max_abs_err: f64::MAX,
        rel_err: f64::MAX,
        tolerance: 1e-2,
        passed: false,
        non_finite: 0,
    });
    failed.notes.push("output contained NaN".into());
    Artifact {
        schema_version: SCHEMA_VERSION,
        kind: kind.into(),
        run: RunInfo {
            id: id.into(),
            started_utc: "2026-11-22T10:00:00Z".into(),
            finished_utc: "2026-11-22T10:05:00Z".into(),
            complete: true,
            git_commit: Some("0123456789abcdef0123456789abcdef01234567".into()),
            git_dirty: Some(false),
            tool_version: "0.1.0".into(),
            command_line: vec!["layernorm_bench".into()],
            synthetic: false,
        },
        env: fixture_env(),
        ceilings: Ceilings {
            copy_gbps: Some(3000.0),
            ..Default::default()
        },
        results: vec![ok, failed],
        compiler: None,
        notes: vec![],
    }
}

pub fn write_fixture(dir: &std::path::Path, name: &str, a: &Artifact) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, serde_json::to_string_pretty(a).unwrap()).unwrap();
    p
}

/// Runs a binary of this package in `cwd`: its exit code, stdout and stderr.
pub fn run_bin(exe: &str, args: &[&str], cwd: &std::path::Path) -> (Option<i32>, String, String) {
    let o = std::process::Command::new(exe)
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("the binary runs");
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The repository's root (where the test fixtures are).
pub fn repo() -> &'static std::path::Path {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
}
