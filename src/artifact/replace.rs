//! Whether a new run may replace the file at its output path: never, unless asked, when that
//! file holds another benchmark's run, a run from another device or GPU, or no artifact at all.

use super::read_artifact;
use crate::env::Env;
use anyhow::{bail, Result};
use std::path::Path;

/// The device a run measured on, as artifacts record it: "cuda NVIDIA H200", "cpu CPU: ...".
pub fn device_of(env: &Env) -> String {
    format!("{} {}", env.device, env.label())
}

/// Refuses, before anything is measured, to replace `path` when it holds something other
/// than an earlier `kind` run on the same device as `env`. `overwrite` (the benchmarks'
/// `--overwrite` flag) allows it.
pub fn check_replace(path: &Path, kind: &str, env: &Env, overwrite: bool) -> Result<()> {
    if overwrite || !path.exists() {
        return Ok(());
    }
    let how = "write this run elsewhere with --out PATH, or pass --overwrite to replace the file";
    let old = match read_artifact(path) {
        Ok(a) => a,
        Err(e) => bail!(
            "{} exists and is not a readable opbench artifact ({e:#}); refusing to replace it: {how}",
            path.display()
        ),
    };
    if old.kind != kind {
        bail!(
            "{} holds a {} artifact, not {kind}; refusing to replace it: {how}",
            path.display(),
            old.kind
        );
    }
    let (was, now) = (device_of(&old.env), device_of(env));
    if was != now {
        bail!(
            "{} holds {kind} run {} measured on {} ({} results); this run is on {}: refusing to \
             replace a run from another device: {how}",
            path.display(),
            old.run.id,
            old.env.label(),
            old.results.len(),
            env.label()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artifact::{write_json_atomic, ArtifactWriter, ResultRow};
    use crate::env::{ClockSample, GpuEnv};

    fn gpu_env(name: &str) -> Env {
        let clocks = ClockSample {
            sm_mhz: 1980,
            mem_mhz: 3201,
            temperature_c: None,
            power_w: None,
        };
        let mut env = Env::cpu();
        env.device = "cuda".into();
        env.gpu = Some(GpuEnv {
            index: 0,
            name: name.into(),
            uuid: "GPU-0".into(),
            compute_capability: "9.0".into(),
            driver_version: "580".into(),
            cuda_driver_version: "13.0".into(),
            memory_total_bytes: 1 << 37,
            max_sm_mhz: 1980,
            max_mem_mhz: 3201,
            clocks_start: clocks.clone(),
            clocks_end: clocks,
            throttle_reasons_seen: Vec::new(),
            board: None,
            samples: 1,
        });
        env
    }

    fn finished(path: &Path, kind: &str, env: Env) {
        let mut w = ArtifactWriter::start(kind, path, env, true).unwrap();
        let mut row = ResultRow::new("b", "i");
        row.metrics.insert("gbps".into(), 1.0);
        w.push(row).unwrap();
        w.finish().unwrap();
    }

    #[test]
    fn another_device_kind_or_file_is_refused_unless_overwrite() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("layernorm.json");
        finished(&path, "layernorm", gpu_env("NVIDIA H200"));
        let cpu = Env::cpu();
        let e = format!(
            "{:#}",
            check_replace(&path, "layernorm", &cpu, false).unwrap_err()
        );
        assert!(
            e.contains("NVIDIA H200") && e.contains("--overwrite"),
            "{e}"
        );
        assert!(e.contains(&cpu.label()) && e.contains("--out"), "{e}");
        let e = format!(
            "{:#}",
            check_replace(&path, "layernorm", &gpu_env("NVIDIA H100"), false).unwrap_err()
        );
        assert!(e.contains("another device"), "{e}");
        let e = format!(
            "{:#}",
            check_replace(&path, "gemm", &gpu_env("NVIDIA H200"), false).unwrap_err()
        );
        assert!(e.contains("holds a layernorm artifact, not gemm"), "{e}");
        // Same benchmark on the same GPU: an ordinary rerun.
        check_replace(&path, "layernorm", &gpu_env("NVIDIA H200"), false).unwrap();
        check_replace(&path, "layernorm", &cpu, true).unwrap();

        let notes = dir.path().join("notes.json");
        write_json_atomic(&notes, &serde_json::json!({"mine": true})).unwrap();
        let e = format!(
            "{:#}",
            check_replace(&notes, "layernorm", &cpu, false).unwrap_err()
        );
        assert!(e.contains("not a readable opbench artifact"), "{e}");
        check_replace(&dir.path().join("new.json"), "layernorm", &cpu, false).unwrap();
    }
}
