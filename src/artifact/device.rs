//! Whether a row's own device (`params.device`) agrees with the environment its artifact
//! records: a GPU row in an artifact of a machine without one was measured elsewhere.

use super::ResultRow;
use crate::env::Env;
use anyhow::{bail, Result};

/// Refuses a row (at `at`, e.g. `results[3]`) that says it ran on CUDA in an artifact whose
/// environment has no GPU. CPU rows are allowed anywhere: a GPU machine measures CPU baselines.
pub fn check_row_device(env: &Env, at: &str, row: &ResultRow) -> Result<()> {
    let gpu_env = env.device == "cuda" && env.gpu.is_some();
    if row.param_str("device").as_deref() == Some("cuda") && !gpu_env {
        bail!(
            "field `{at}.params.device` is \"cuda\" ({} {}), but the artifact's env is {:?} with \
             no GPU (`env.gpu`): rows of another machine were merged in; keep each machine's \
             rows in its own artifact",
            row.benchmark,
            row.implementation,
            env.device
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cuda_row_needs_a_gpu_env_and_a_cpu_row_fits_anywhere() {
        let cpu = Env::cpu();
        let cuda_row = ResultRow::new("generate", "candle").param("device", "cuda");
        let e = check_row_device(&cpu, "results[7]", &cuda_row)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("results[7].params.device") && e.contains("env is \"cpu\""),
            "{e}"
        );
        let cpu_row = ResultRow::new("generate", "candle").param("device", "cpu");
        check_row_device(&cpu, "results[0]", &cpu_row).unwrap();
        check_row_device(&cpu, "results[0]", &ResultRow::new("x", "y")).unwrap();
    }
}
