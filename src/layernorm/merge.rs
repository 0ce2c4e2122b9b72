//! `layernorm_bench --merge PEERS.json --out ARTIFACT`: the peers' rows added to a layernorm
//! artifact of the same GPU, all or nothing.

use super::peers::{self, PeerRow};
use super::report::{KIND, OPBENCH};
use crate::artifact::peer::{self as peer_file, PeerFile};
use crate::artifact::{read_artifact_of_kind, ResultRow, Status};
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// Adds the rows of each peer file to the artifact at `out` and writes it back; a row of the
/// same implementation and point replaces the old one. Nothing is written when any file is
/// malformed, ran on another GPU or names a point the artifact lacks. Returns one line per row.
pub fn merge(out: &Path, files: &[PathBuf]) -> Result<Vec<String>> {
    let mut a = read_artifact_of_kind(out, KIND).context("--out: the artifact to merge into")?;
    let mut said = Vec::new();
    for f in files {
        let pf: PeerFile<PeerRow> = peer_file::read(f)?;
        peer_file::check_device(f, pf.device.as_ref(), out, &a)?;
        let rows = pf
            .rows
            .into_iter()
            .enumerate()
            .map(|(i, p)| peers::to_row(p, &format!("{}: rows[{i}]", f.display()), &a))
            .collect::<Result<Vec<_>>>()?;
        said.push(format!("{}: {} row(s)", f.display(), rows.len()));
        for row in rows {
            said.push(describe(&row, &a));
            let same = |r: &ResultRow| {
                r.implementation == row.implementation && peers::at_point(r, &row.params)
            };
            match a.results.iter().position(same) {
                Some(i) => a.results[i] = row,
                None => a.results.push(row),
            }
        }
        a.notes.extend(pf.notes);
    }
    peer_file::write_merged(out, &mut a)?;
    Ok(said)
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
