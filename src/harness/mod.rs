//! The one harness every GPU benchmark runs on: noise-stopped sampling (`crate::sampling`,
//! pure and tested on the CPU with a mock executor, re-exported here), its flags (`args`), the
//! same loop on the host clock for the CPU paths (`host`), the artifact start every run
//! shares (`start`), the failed-row rule (`rows`), and the GPU session (`session`: the device,
//! the ceilings measured once per process, the environment block and notes, the artifact
//! writer with `.partial`, and the end-of-run re-measure).

pub mod args;
pub mod host;
pub mod rows;
#[cfg(feature = "cuda")]
mod session;
pub mod start;

pub use crate::sampling::{
    sample_until, Clocks, Executor, Prepare, Sample, Sampled, Sampling, Stop,
};
pub use args::SamplingArgs;
pub use host::sample_host;
pub use rows::failed;
#[cfg(feature = "cuda")]
pub use session::{Session, SessionSpec};
pub use start::start_artifact;
