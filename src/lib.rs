//! opbench: GPU operator benchmarks that write versioned JSON artifacts, a summary, and a static dashboard.

pub mod artifact;
pub mod cli;
pub mod code_id;
pub mod comm;
pub mod compare;
pub mod describe;
pub mod dtype;
pub mod env;
pub mod gemm;
pub mod gpu;
pub mod harness;
pub mod history;
pub mod identity;
pub mod input;
pub mod kernels;
pub mod layernorm;
pub mod llm;
pub mod progress;
pub mod sampling;
pub mod site;
pub mod stats;
pub mod summary;
pub mod text;
pub mod trace;
pub mod trend;
