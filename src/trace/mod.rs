//! Kernel traces of a workload: GPU activity records (CUPTI, feature `cuda`), their attribution
//! to operation classes and model layers (each implementation by its own layout), per-step
//! busy/idle arithmetic, artifact rows, and the Chrome trace-event and compact exports.

pub mod analyze;
pub mod breakdown;
pub mod by_class;
pub mod calls;
pub mod chrome;
pub mod classify;
pub mod cli;
pub mod compact;
#[cfg(feature = "cuda")]
pub mod cupti;
pub mod cupti_alias;
pub mod diff;
pub mod diff_input;
pub mod idle;
pub mod kernsum;
pub mod launch;
pub mod layout;
pub mod names;
pub mod overhead;
pub mod ranges;
pub mod raw;
pub mod rawfmt;
pub mod record;
pub mod report;
pub mod rows;
pub mod sqlite;
pub mod tool;
pub mod workload;
pub mod workload_rows;

pub use analyze::{analyze_step, busy_ns, gaps_ns, ImplSteps, StepAnalysis};
pub use classify::{class_by_name, Attribution, Half, Layer, OpClass};
pub use layout::{attribute, Layout, Slot};
pub use record::{Activity, ActivityKind, Phase, StepWindow, Trace};
