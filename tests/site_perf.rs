//! Performance of the dashboard on a long history: 1,000 artifacts rendered in under 2 s
//! (release build, this project's 2-core machine) and an overview page under 1.5 MB.
//!
//! Run `cargo test --release --test site_perf -- --nocapture` to see the figures. In a debug
//! build the time limit is 15× looser (unoptimized code), the size limit the same.
//! `OPBENCH_PERF_GPUS=N` spreads the history over N GPU names instead of 4 (1000: every
//! point distinct, the worst case, which is far slower and is not what the limits are for).

use opbench::artifact::Artifact;
use opbench::site::{self, Options, PlotlyMode};
use std::path::Path;
use std::time::Instant;

const N: usize = 1000;
const GPUS: usize = 4;

/// Writes N artifacts cycling through the fixtures: each its own run (id, time, commit), spread
/// over `gpus` GPU names. With few GPUs most points are re-measurements (a history); with one
/// GPU name per artifact every point is distinct.
fn history(dir: &Path, gpus: usize) {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/artifacts");
    let mut base: Vec<Artifact> = std::fs::read_dir(&fixtures)
        .unwrap()
        .map(|e| e.unwrap().path())
        // Artifacts only: not the history folder or the kernel trace beside the LLM trace.
        .filter(|p| p.is_file() && opbench::artifact::is_artifact_file(p))
        .map(|p| opbench::artifact::read_artifact(&p).unwrap())
        .collect();
    base.sort_by(|a, b| a.run.id.cmp(&b.run.id));
    let t0 = chrono::DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z").unwrap();
    for i in 0..N {
        let mut a = base[i % base.len()].clone();
        let t = (t0 + chrono::Duration::minutes(17 * i as i64))
            .to_utc()
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        a.run.id = format!("perf-{i:04}");
        a.run.started_utc = t.clone();
        a.run.finished_utc = t;
        a.run.git_commit = Some(format!("{:040x}", i * 7919));
        if let Some(g) = a.env.gpu.as_mut() {
            g.name = format!("FIXTURE GPU {} (synthetic data)", i % gpus);
            g.uuid = format!("GPU-perf-{}", i % gpus);
        }
        let path = dir.join(format!("{}/{}-{i:04}.json", a.kind, a.kind));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, serde_json::to_vec_pretty(&a).unwrap()).unwrap();
    }
}

fn timed(gpus: usize) -> (f64, u64, site::Outcome) {
    let input = tempfile::tempdir().unwrap();
    history(input.path(), gpus);
    let out = tempfile::tempdir().unwrap();
    let t = Instant::now();
    let o = site::run(&Options {
        artifacts: input.path().to_path_buf(),
        out: out.path().to_path_buf(),
        plotly: PlotlyMode::Cdn,
        dump_context: false,
        strict: true,
        history: Default::default(),
    })
    .unwrap();
    let secs = t.elapsed().as_secs_f64();
    let overview = std::fs::metadata(out.path().join("index.html"))
        .unwrap()
        .len();
    let mut sizes = Vec::new();
    for e in std::fs::read_dir(out.path()).unwrap() {
        let e = e.unwrap();
        if e.path().is_file() {
            sizes.push(format!(
                "{} {:.2} MB",
                e.file_name().to_string_lossy(),
                e.metadata().unwrap().len() as f64 / 1e6
            ));
        }
    }
    sizes.sort();
    println!(
        "{N} artifacts on {gpus} GPU names: {} results, {} points drawn, rendered in {secs:.3} s; \
         overview {:.3} MB; files: {}",
        o.results,
        o.points,
        overview as f64 / 1e6,
        sizes.join(", ")
    );
    (secs, overview, o)
}

#[test]
fn a_thousand_artifact_history_renders_fast_and_the_overview_stays_small() {
    let limit_s = if cfg!(debug_assertions) { 30.0 } else { 2.0 };
    let gpus = std::env::var("OPBENCH_PERF_GPUS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(GPUS);
    let (secs, overview, o) = timed(gpus);
    assert_eq!(o.artifacts, N);
    assert!(
        secs < limit_s,
        "rendering {N} artifacts took {secs:.2} s (limit {limit_s} s)"
    );
    assert!(
        overview < 1_500_000,
        "the overview page is {overview} bytes (limit 1.5 MB)"
    );
}
