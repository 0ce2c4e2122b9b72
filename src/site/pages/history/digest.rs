//! Reading a long history without holding it: each run file is parsed, reduced to its headline
//! values and the facts the runs table needs, and dropped (on every core, file order kept).

use super::headline::{self, ChartMeta, Value};
use crate::history::{gpu_label, index, read_history_file, IndexEntry};
use anyhow::Result;
use std::path::Path;

/// What the history page keeps of one run.
#[derive(Debug, Clone)]
pub struct RunDigest {
    pub kind: String,
    pub run_id: String,
    pub commit: Option<String>,
    pub dirty: Option<bool>,
    pub started_utc: String,
    pub gpu: String,
    /// The board ("GPU-9e9eaf8d"), for GPU runs.
    pub board: Option<String>,
    /// Relative to the history folder.
    pub file: String,
    pub points: usize,
    pub values: Vec<(ChartMeta, Value)>,
    /// Drawn by `history synth`, not measured.
    pub synthetic: bool,
}

impl RunDigest {
    /// The run id as the page shows it: synthetic runs say so.
    pub fn label(&self) -> String {
        if self.synthetic {
            format!("{}{SYNTHETIC_LABEL}", self.run_id)
        } else {
            self.run_id.clone()
        }
    }
}

/// Appended to a synthetic run's id wherever the page names the run.
pub const SYNTHETIC_LABEL: &str = " (SYNTHETIC, not measured)";

/// Every run under `dir`, oldest first, with the warnings of the files left out.
pub fn load(dir: &Path) -> Result<(Vec<RunDigest>, Vec<String>)> {
    let (entries, mut warnings) = index(dir)?;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = entries.len().div_ceil(threads).max(1);
    let parts: Vec<Vec<Result<RunDigest, String>>> = std::thread::scope(|s| {
        let handles: Vec<_> = entries
            .chunks(chunk)
            .map(|c| s.spawn(move || c.iter().map(digest).collect::<Vec<_>>()))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a history reader panicked"))
            .collect()
    });
    let mut runs = Vec::with_capacity(entries.len());
    for r in parts.into_iter().flatten() {
        match r {
            Ok(d) => runs.push(d),
            Err(w) => warnings.push(w),
        }
    }
    Ok((runs, warnings))
}

fn digest(e: &IndexEntry) -> Result<RunDigest, String> {
    let mut r = read_history_file(&e.path).map_err(|err| format!("skipped {err:#}"))?;
    // The page shows names elided, like every other page.
    crate::site::display::history_record(&mut r);
    Ok(RunDigest {
        kind: r.kind.clone(),
        run_id: r.run.id.clone(),
        commit: r.run.git_commit.clone(),
        dirty: r.run.git_dirty,
        started_utc: r.run.started_utc.clone(),
        gpu: gpu_label(&r.env),
        board: r.env.gpu.as_ref().map(|g| g.board_label()),
        file: e.file.clone(),
        points: r.points.len(),
        values: headline::of_run(&r),
        synthetic: r.synthetic(),
    })
}
