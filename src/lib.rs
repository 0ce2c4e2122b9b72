//! opbench: GPU operator benchmarks that write versioned JSON artifacts, a summary, and a static dashboard.

pub mod artifact;
pub mod cli;
pub mod env;
pub mod gemm;
#[cfg(feature = "cuda")]
pub mod gpu;
pub mod layernorm;
pub mod llm;
pub mod site;
pub mod stats;
pub mod summary;
