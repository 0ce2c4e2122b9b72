//! The overview's list of artifacts, newest first.

use super::cards::gpu_dims;
use crate::artifact::Status;
use crate::site::chart::{TableRow, TableView};
use crate::site::fmt;
use crate::site::points::Store;

/// Most artifacts listed on the overview (newest first); summary.json lists them all.
pub const MAX_ARTIFACT_ROWS: usize = 300;

/// The newest artifacts (at most `MAX_ARTIFACT_ROWS`) and how many were left out.
pub fn table(store: &Store) -> (TableView, usize) {
    let mut ls: Vec<&crate::artifact::Loaded> = store.loaded.iter().collect();
    ls.sort_by(|a, b| {
        (&b.artifact.run.finished_utc, &b.file).cmp(&(&a.artifact.run.finished_utc, &a.file))
    });
    let hidden = ls.len().saturating_sub(MAX_ARTIFACT_ROWS);
    let rows = ls
        .into_iter()
        .take(MAX_ARTIFACT_ROWS)
        .map(|l| {
            let a = &l.artifact;
            let n = |s: Status| a.results.iter().filter(|r| r.status == s).count();
            TableRow {
                cells: vec![
                    l.file.clone(),
                    a.kind.clone(),
                    a.run.id.clone(),
                    a.env.label(),
                    fmt::commit(a.run.git_commit.as_deref(), a.run.git_dirty),
                    fmt::time_utc(&a.run.finished_utc),
                    if a.run.complete {
                        "yes"
                    } else {
                        "no (interrupted)"
                    }
                    .into(),
                    format!(
                        "{} ok · {} failed · {} skipped",
                        n(Status::Ok),
                        n(Status::Failed),
                        n(Status::Skipped)
                    ),
                    a.notes.join("; "),
                ],
                f: gpu_dims(&a.env.label()),
                raw: Vec::new(),
            }
        })
        .collect();
    let t = TableView {
        columns: [
            "file", "kind", "run", "GPU", "commit", "finished", "complete", "results", "notes",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
        rows,
    };
    (t, hidden)
}
