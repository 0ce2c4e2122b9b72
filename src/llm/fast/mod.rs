//! `opbench`: our own Llama decode path (kernels/decode_*.cu) beside candle in llm_bench: weights
//! laid out once, a static KV cache, cuBLAS prefill, and one CUDA graph per decode step.
//! `plan`, `parity`, `tiles` and `trace_layout` are pure and build without the `cuda` feature.

#[cfg(feature = "cuda")]
pub mod engine;
#[cfg(feature = "cuda")]
pub mod generate;
#[cfg(feature = "cuda")]
pub mod host_tokens;
#[cfg(feature = "cuda")]
pub mod kernels;
pub mod parity;
pub mod plan;
#[cfg(feature = "cuda")]
pub mod selftest;
pub mod tiles;
pub mod trace_layout;
#[cfg(feature = "cuda")]
pub mod weights;

/// `--impl`: which implementations llm_bench measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Impl {
    /// candle-transformers' Llama.
    Candle,
    /// Our decode path (CUDA only).
    Opbench,
}

impl Impl {
    /// The artifact's `implementation` field.
    pub fn label(self) -> &'static str {
        match self {
            Impl::Candle => "candle",
            Impl::Opbench => "opbench",
        }
    }
}

/// `llm_bench --self-test`: every decode kernel against float64 references on GPU 0. Returns
/// one line per check; fails (after listing them) when any check failed.
#[cfg(feature = "cuda")]
pub fn self_test() -> anyhow::Result<Vec<String>> {
    let gpu = crate::gpu::Gpu::open(0)?;
    let checks = selftest::run(&gpu)?;
    let lines: Vec<String> = checks
        .iter()
        .map(|c| {
            format!(
                "{} {:<60} rel_l2 {:.2e} (tolerance {:.0e}) max_abs {:.2e}",
                if c.passed() { "PASS" } else { "FAIL" },
                c.name,
                c.rel_l2,
                c.tolerance,
                c.max_abs
            )
        })
        .collect();
    let failed = checks.iter().filter(|c| !c.passed()).count();
    if failed > 0 {
        anyhow::bail!(
            "{failed} of {} decode kernel checks failed:\n{}",
            checks.len(),
            lines.join("\n")
        );
    }
    Ok(lines)
}

/// `llm_bench --self-test` without the `cuda` feature.
#[cfg(not(feature = "cuda"))]
pub fn self_test() -> anyhow::Result<Vec<String>> {
    anyhow::bail!(
        "--self-test runs the decode kernels on a GPU: rebuild with `--features cuda` and run it \
         on a machine with an NVIDIA GPU"
    )
}
