//! Kernel traces of a workload: GPU activity records (CUPTI, feature `cuda`), their attribution
//! to operation classes and model layers, per-step busy/idle arithmetic, artifact rows, and the
//! Chrome trace-event export (opens in Perfetto / chrome://tracing).

pub mod analyze;
pub mod chrome;
pub mod classify;
pub mod compact;
#[cfg(feature = "cuda")]
pub mod cupti;
pub mod record;
pub mod rows;

pub use analyze::{analyze_step, busy_ns, gaps_ns, StepAnalysis};
pub use classify::{attribute, class_by_name, Attribution, Half, Layer, OpClass};
pub use record::{Activity, ActivityKind, Phase, StepWindow, Trace};
