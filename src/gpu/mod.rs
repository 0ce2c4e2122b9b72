//! The shared GPU layer (feature `cuda`): device, event timing, L2 flush, poisoning, ceilings.
//!
//! Every benchmark opens one [`Gpu`] and runs candle's work and our kernels on its one stream,
//! so event timings cover exactly the launches between them.

mod ceilings;
mod device;
mod timing;

pub use ceilings::copy_bandwidth_gbps;
pub use device::Gpu;
pub use timing::{measure, Measured, TimingConfig, TimingMode};
