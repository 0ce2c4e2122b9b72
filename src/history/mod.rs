//! The run history: every finished run kept as one small file, keyed by commit, GPU and time.
//!
//! Layout (docs/history.md): `artifacts/history/<kind>/<YYYYmmddTHHMMSSZ>-<commit12>-<gpu-slug>-<run-suffix>.json.gz`,
//! one file per run, written once by [`record`] and never modified, so machines that add runs
//! in parallel never touch the same file. Each file is a [`HistoryRecord`]: the run's identity
//! and environment and, per point, the median with its 95% interval, P5/P95, n and the derived
//! metrics (no raw samples), rounded, minified and gzip-compressed. [`History::load`] reads
//! them back; `trend` judges them over time (the history page's series, the regressions
//! `summary.json` lists).

pub mod cli;
mod commit_prefix;
mod load;
mod naming;
mod record;
mod store;
pub mod synth;
pub mod synthetic;

pub use commit_prefix::{find_commit, full_hash, MIN_PREFIX_DIGITS};
pub use load::{index, is_base, History, HistoryRun, IndexEntry, HISTORY_DIR};
pub use naming::{gpu_label, gpu_slug, slug, HistoryName, DIRTY_MARK, HISTORY_EXT, NO_COMMIT};
pub use record::{
    round_sig, HistoryPoint, HistoryRecord, StatBrief, HISTORY_FORMAT, METRIC_DIGITS, STAT_DIGITS,
};
pub use store::{
    encode, history_path, is_history_file, read_any, read_history_file, record, record_artifact,
    record_record, RecordOptions, Recorded,
};
