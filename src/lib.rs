//! opbench: GPU operator benchmarks that write versioned JSON artifacts, a summary, and a static dashboard.

pub mod artifact;
pub mod cli;
pub mod env;
#[cfg(feature = "cuda")]
pub mod gpu;
pub mod site;
pub mod stats;
pub mod summary;
