//! layernorm_bench: candle's fused LayerNorm against our kernel (kernels/layernorm.cu), both
//! checked against a float64 CPU reference and timed warm and cold on the same device tensors.

pub mod cli;
pub mod cpu;
pub mod dtype;
#[cfg(feature = "cuda")]
pub mod gpu;
#[cfg(feature = "cuda")]
pub mod kernel;
pub mod merge;
pub mod peer_report;
pub mod peers;
pub mod plan;
pub mod reference;
pub mod report;
pub mod sweep;

pub use dtype::{Dtype, Elem};
pub use sweep::{Shape, SweepConfig};
