//! `layernorm_bench --merge PEERS.json --out ARTIFACT`: the peers' rows added to a layernorm
//! artifact of the same GPU, all or nothing.

use super::peers;
use super::report::{KIND, OPBENCH};
use crate::artifact::peer as peer_file;
use crate::artifact::{ResultRow, Status};
use anyhow::Result;
use std::path::{Path, PathBuf};

/// Adds the rows of each peer file to the artifact at `out` and writes it back (all or nothing,
/// see [`peer_file::merge_files`]). Returns one line per file and per row.
pub fn merge(out: &Path, files: &[PathBuf]) -> Result<Vec<String>> {
    peer_file::merge_files(
        out,
        files,
        &peer_file::Merger {
            kind: KIND,
            to_row: &peers::to_row,
            same: &|old, new| {
                old.implementation == new.implementation && peers::at_point(old, &new.params)
            },
            describe: &describe,
        },
    )
}

/// One line on a merged row: its median, GB/s, and opbench's time at the same point.
fn describe(row: &ResultRow, a: &crate::artifact::Artifact) -> String {
    let at = format!(
        "{} {} {} {}",
        row.implementation,
        row.param_str("shape").unwrap_or_default(),
        row.param_str("dtype").unwrap_or_default(),
        row.param_str("mode").unwrap_or_default()
    );
    let Some(p50) = row.p50("time_us").filter(|_| row.status == Status::Ok) else {
        return format!(
            "{at}: {}, not timed",
            format!("{:?}", row.status).to_lowercase()
        );
    };
    let gbps = row.metrics.get("gbps").copied().unwrap_or(f64::NAN);
    let ours = peers::row_at(a, OPBENCH, &row.params)
        .filter(|r| r.status == Status::Ok)
        .and_then(|r| r.p50("time_us"))
        .map(|o| format!("; opbench {o:.2} us (peer / opbench {:.2})", p50 / o))
        .unwrap_or_default();
    format!("{at}: p50 {p50:.2} us, {gbps:.0} GB/s{ours}")
}

#[cfg(test)]
#[path = "merge_tests.rs"]
mod tests;
