//! The history judged over time: per-point series with each run's verdict against the one
//! before it, and the newest run of each kind and GPU against the previous commit. Built on
//! `history` (the records) and `compare` (the verdicts), which do not import it.

mod latest;
mod series;

pub use latest::{Change, LatestChange};
pub use series::{headline_stat, Series, SeriesPoint};
