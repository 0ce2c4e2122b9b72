//! The run history: every finished run kept as one small file, keyed by commit, GPU and time.
//!
//! Layout (see docs/history.md): `artifacts/history/<kind>/<YYYYmmddTHHMMSSZ>-<commit12>-<gpu-slug>-<run-suffix>.json.gz`,
//! one file per run, written once by [`record`] and never modified, so machines that add runs
//! in parallel never touch the same file. Each file is the artifact itself (statistics per
//! point, no raw samples) in a compact form: numbers rounded to 6 significant digits,
//! minified, gzip-compressed. [`History::load`] reads it back; [`History::series`] gives the
//! per-point lines of the dashboard's history page; [`merge_newest`] is how `summarize` sees it.

mod latest;
mod load;
mod naming;
mod series;
mod store;
pub mod synthetic;

pub use latest::LatestChange;
pub use load::{index, merge_newest, History, HistoryRun, IndexEntry, HISTORY_DIR};
pub use naming::{gpu_label, gpu_slug, slug, HistoryName, DIRTY_MARK, HISTORY_EXT, NO_COMMIT};
pub use series::{headline_stat, Series, SeriesPoint};
pub use store::{
    compact, encode, history_path, is_history_file, read_any, read_history_file, record,
    record_artifact, round_sig, RecordOptions, Recorded, COMPACT_NOTE, SIGNIFICANT_DIGITS,
};

#[cfg(test)]
mod tests;
