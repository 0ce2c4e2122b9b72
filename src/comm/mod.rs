//! Collectives across the GPUs of a host: the
//! collectives and their names, the plan of message sizes, nccl-tests' bandwidth formulas, the
//! host reference every result is checked against, the rank environment a launcher gives, and
//! the ranks joined over TCP (`group`, `wire`) with rank 0 deciding when sampling stops
//! (`lockstep`), the artifact rows (`row`), our kernels' names (`ours`), the peers' rows merged in (`merge`), and the
//! command line (`cli`). The GPU half (`gpu`, feature `cuda`) runs NCCL through cudarc.

pub mod bandwidth;
pub mod cli;
pub mod collective;
#[cfg(feature = "cuda")]
mod device_mem;
#[cfg(feature = "cuda")]
mod gpu;
pub mod group;
pub mod lockstep;
pub mod merge;
#[cfg(feature = "cuda")]
mod oneshot;
pub mod ours;
#[cfg(feature = "cuda")]
mod peer_copy;
pub mod plan;
pub mod rank;
pub mod reference;
pub mod row;
pub mod wire;

pub use bandwidth::{algbw_gbps, busbw_factor, busbw_gbps};
pub use collective::Collective;
pub use group::Group;
pub use plan::{size_plan, SizePlan};
pub use rank::RankEnv;
