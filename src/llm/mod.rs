//! LLM inference benchmark (llm_bench): candle's Llama measured like a serving benchmark —
//! TTFT, prefill and decode rates, per-token latency, the decode bandwidth bound — plus the
//! merge of the transformers peer's rows and the logits parity check.

pub mod backend;
pub mod cli;
pub mod configs;
pub mod fast;
pub mod generate;
pub mod merge;
pub mod model;
pub mod prompt;
pub mod report;
pub mod rows;
pub mod run;
pub mod source;
pub mod trace;

pub use backend::{Backend, DeviceChoice};
pub use configs::{named, named_config_names, resolve_configs, Arch};
pub use model::{DtypeChoice, Model};
pub use prompt::ChatTemplate;
pub use run::{run, BenchOptions, Source};
