//! Kernel traces of a workload: GPU activity records (CUPTI, feature `cuda`), their attribution
//! to operation classes and model layers (each implementation by its own layout), per-step
//! busy/idle arithmetic, artifact rows, and the Chrome trace-event and compact exports.

pub mod analyze;
pub mod chrome;
pub mod classify;
pub mod compact;
#[cfg(feature = "cuda")]
pub mod cupti;
pub mod layout;
pub mod record;
pub mod rows;

pub use analyze::{analyze_step, busy_ns, gaps_ns, ImplSteps, StepAnalysis};
pub use classify::{class_by_name, Attribution, Half, Layer, OpClass};
pub use layout::{attribute, Layout, Slot};
pub use record::{Activity, ActivityKind, Phase, StepWindow, Trace};
