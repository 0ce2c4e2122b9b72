//! Checks on the two sides before they are compared: they hold runs of a common benchmark
//! kind, and `--out` is none of the files they were read from.

use super::resolve::Resolved;
use anyhow::{bail, Result};
use std::collections::BTreeSet;
use std::path::Path;

/// Refuses an output path that is one of the inputs: `--out` must not overwrite what
/// `--base` or `--head` read.
pub fn check_out(out: &Path, base: &Resolved, head: &Resolved) -> Result<()> {
    for (flag, side) in [("--base", base), ("--head", head)] {
        if side.reads(out) {
            bail!(
                "--out {} is a file that {flag} {} reads: refusing to write the comparison over \
                 an input; give --out another path",
                out.display(),
                side.label
            );
        }
    }
    Ok(())
}

/// The kinds of a side's runs, each with the files that hold it: "layernorm (a.json)".
fn kinds(side: &Resolved) -> (BTreeSet<&str>, String) {
    let kinds: BTreeSet<&str> = side.runs.iter().map(|r| r.kind()).collect();
    let text = kinds
        .iter()
        .map(|k| {
            let files: Vec<&str> = side
                .runs
                .iter()
                .filter(|r| r.kind() == *k)
                .map(|r| r.file.as_str())
                .collect();
            let shown = files.iter().take(3).copied().collect::<Vec<_>>().join(", ");
            match files.len() {
                n if n > 3 => format!("{k} ({shown} and {} more)", n - 3),
                _ => format!("{k} ({shown})"),
            }
        })
        .collect::<Vec<_>>()
        .join(", ");
    (kinds, text)
}

/// Refuses two sides that share no benchmark kind: every point would be ADDED or REMOVED,
/// which says nothing about performance.
pub fn check_kinds(base: &Resolved, head: &Resolved) -> Result<()> {
    let (b, b_text) = kinds(base);
    let (h, h_text) = kinds(head);
    if b.is_disjoint(&h) {
        bail!(
            "--base {} holds {b_text} and --head {} holds {h_text}: different benchmarks share \
             no point, so there is nothing to compare; give two sides with runs of the same kind",
            base.label,
            head.label
        );
    }
    Ok(())
}
