//! Comparing two sets of runs point by point, with a statistical verdict per point.
//!
//! [`compare`] matches points on their identity (`crate::identity`) and judges
//! each sampled quantity with [`judge`] (non-overlapping 95% CIs of the median plus a minimum
//! effect, see `verdict`). [`resolve`] turns a command-line spec (folder, file, run id,
//! commit, GPU) into runs, and [`check_kinds`] and [`check_out`] refuse sides that cannot be
//! compared and an output over an input; [`render`] prints the report as text or Markdown,
//! [`html`] as a self-contained page. [`drift`] judges our code against the move of the
//! library implementations and ceilings of the same runs, so verdicts hold across boards and
//! hosts, and [`boards`] judges a point that only a change of board moved against its own range
//! across boards in the history; [`machines`] says which board and host each side ran on.

mod boards;
pub mod calibrate;
pub mod cli;
mod code;
mod control;
mod diff;
pub(crate) mod drift;
pub mod html;
mod inputs;
mod line;
mod machines;
pub mod processes;
pub mod render;
mod resolve;
mod states;
mod verdict;

pub use diff::{compare, counts, params_text, Options, Report, RunUsed};
pub use inputs::{check_distinct, check_kinds, check_names, check_out};
pub use line::{Change, Line, Side};
pub use resolve::{pool, resolve, Resolved};
pub use verdict::{judge, Direction, Judgement, Verdict, DEFAULT_MIN_EFFECT};

#[cfg(test)]
mod tests;
