//! The shared GPU layer (feature `cuda`): device, event timing, L2 flush, poisoning, ceilings.
//!
//! Every benchmark opens one [`Gpu`] and runs candle's work and our kernels on its one stream,
//! so event timings cover exactly the launches between them. `rotation` (the buffer-set
//! arithmetic of cold timing by rotation) is pure and builds without the feature.

#[cfg(feature = "cuda")]
mod ceilings;
pub mod copy_kernel;
#[cfg(feature = "cuda")]
mod device;
pub mod rotation;
#[cfg(feature = "cuda")]
mod timing;

#[cfg(feature = "cuda")]
pub use ceilings::{copy_bandwidth_gbps, copy_ceiling_gbps, COPY_CEILING_BYTES};
#[cfg(feature = "cuda")]
pub use copy_kernel::{launch_interval_us, CopyKernel};
#[cfg(feature = "cuda")]
pub use device::Gpu;
#[cfg(feature = "cuda")]
pub use timing::{hold_after, measure, measure_rotating, Hold, Measured, TimingConfig, TimingMode};
