//! kernel_bench: user CUDA kernels compiled with NVRTC or nvcc, swept, checked, timed and
//! profiled.
//!
//! CPU-side pieces (manifest, scanner, names, nvcc and cubin symbols, expressions, sweep, report,
//! ncu parsing) build everywhere and are tested on the CPU; `gpu` (feature `cuda`) compiles, launches and measures.

pub mod app;
pub mod args;
pub mod compile;
pub mod compile_check;
pub mod convention;
pub mod cpu_ref;
pub mod data;
pub mod expr;
#[cfg(feature = "cuda")]
pub mod gpu;
pub mod kernel_name;
pub mod manifest;
pub mod ncu;
pub mod plan_json;
pub mod report;
pub mod resume;
pub mod scan;
pub mod source;
pub mod sweep;

pub use app::main;
pub use args::Args;
