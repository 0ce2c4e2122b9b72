//! Comparing two sets of runs point by point, with a statistical verdict per point.
//!
//! [`compare`] matches points on kind, benchmark, implementation and parameters and judges
//! each sampled quantity with [`judge`] (non-overlapping 95% CIs of the median plus a minimum
//! effect, see `verdict`). [`resolve`] turns a command-line spec (folder, file, run id,
//! commit, GPU) into runs, and [`check_kinds`] and [`check_out`] refuse sides that cannot be
//! compared and an output over an input; [`render`] prints the report as text or Markdown.

mod control;
mod diff;
mod inputs;
pub mod render;
mod resolve;
mod verdict;

pub use diff::{
    compare, counts, params_text, Change, Line, Options, PointKey, Report, RunUsed, Side,
};
pub use inputs::{check_kinds, check_out};
pub use resolve::{resolve, Resolved};
pub use verdict::{judge, Direction, Judgement, Verdict, DEFAULT_MIN_EFFECT};

#[cfg(test)]
mod tests;
