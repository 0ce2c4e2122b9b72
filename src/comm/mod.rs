//! Collectives across the GPUs of a host: the
//! collectives and their names, the plan of message sizes, nccl-tests' bandwidth formulas, the
//! host reference every result is checked against, and the rank environment a launcher gives.

pub mod bandwidth;
pub mod collective;
pub mod plan;
pub mod rank;
pub mod reference;

pub use bandwidth::{algbw_gbps, busbw_factor, busbw_gbps};
pub use collective::Collective;
pub use plan::{size_plan, SizePlan};
pub use rank::RankEnv;
