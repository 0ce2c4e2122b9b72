//! A commit named by a hash prefix on the command line, checked against the history's file
//! names: hex, 4 digits or more, and the prefix of exactly one commit the history holds.

use super::load::index;
use anyhow::{bail, Result};
use std::collections::BTreeMap;
use std::path::Path;

/// The fewest hex digits a commit prefix may have (git's own short minimum).
pub const MIN_PREFIX_DIGITS: usize = 4;

/// The 12-digit commit (as history file names keep it) that `rev`, given to `flag`, names
/// among the runs under `dir`. Refuses a `rev` that is not 4 to 40 hex digits, that no run's
/// commit starts with, or that starts several commits (listing them). Only the first 12
/// digits are checked: file names keep no more.
pub fn find_commit(dir: &Path, flag: &str, rev: &str) -> Result<String> {
    let hex = rev.chars().all(|c| c.is_ascii_hexdigit());
    if !hex || !(MIN_PREFIX_DIGITS..=40).contains(&rev.len()) {
        bail!(
            "{flag} {rev:?} is not a commit hash prefix: give {MIN_PREFIX_DIGITS} to 40 hex \
             digits of a commit the history holds (`history list` shows them)"
        );
    }
    let want = rev.to_lowercase();
    let want = &want[..want.len().min(12)];
    // Each commit once, with the start of its newest run (for the list of recent ones).
    let mut commits: BTreeMap<String, String> = BTreeMap::new();
    for e in index(dir)?.0 {
        if let Some(c) = e.name.commit12 {
            let started = e.name.started.to_rfc3339();
            let newest = commits.entry(c).or_default();
            if *newest < started {
                *newest = started;
            }
        }
    }
    let matches: Vec<&String> = commits.keys().filter(|c| c.starts_with(want)).collect();
    match matches.as_slice() {
        [one] => Ok((*one).clone()),
        [] => {
            let mut recent: Vec<(&String, &String)> = commits.iter().map(|(c, t)| (t, c)).collect();
            recent.sort();
            let recent: Vec<&str> = recent
                .iter()
                .rev()
                .take(5)
                .map(|(_, c)| c.as_str())
                .collect();
            bail!(
                "{flag} {rev}: no run in {} has a commit starting with it ({} commits there; \
                 newest: {}); give a commit the history holds (`history list` shows them)",
                dir.display(),
                commits.len(),
                if recent.is_empty() {
                    "none".to_string()
                } else {
                    recent.join(", ")
                }
            )
        }
        several => bail!(
            "{flag} {rev} is ambiguous: it starts {} commits in {} ({}); give more digits",
            several.len(),
            dir.display(),
            several
                .iter()
                .map(|c| c.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The full hash of `commit` when it is an abbreviated hash (7 to 39 hex digits) of a commit
/// the git repository at `repo` holds (`git rev-parse`); None otherwise, and where git or the
/// repository is missing. A device run names its commit as it was given
/// (`OPBENCH_GIT_COMMIT`), and runs of one commit must not be kept under two names.
pub fn full_hash(repo: &Path, commit: &str) -> Option<String> {
    if !(7..40).contains(&commit.len()) || !commit.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["rev-parse", "--verify", "--quiet"])
        .arg(format!("{commit}^{{commit}}"))
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let full = String::from_utf8(out.stdout).ok()?.trim().to_lowercase();
    (out.status.success()
        && matches!(full.len(), 40 | 64)
        && full.starts_with(&commit.to_lowercase()))
    .then_some(full)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A history folder whose files are named for `commits` (the index reads names only).
    fn history(commits: &[&str]) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("gemm")).unwrap();
        for (i, c) in commits.iter().enumerate() {
            let name = format!("2026010{}T000000Z-{c}-nvidia-h100-abcd{i}.json.gz", i + 1);
            std::fs::write(d.path().join("gemm").join(name), b"").unwrap();
        }
        d
    }

    #[test]
    fn a_prefix_must_be_hex_long_enough_and_name_one_commit() {
        let d = history(&[
            "0123456789ab",
            "b111111111aa",
            "b222222222aa",
            "bb33333333aa",
        ]);
        let find = |rev: &str| find_commit(d.path(), "--against", rev);
        assert_eq!(find("0123").unwrap(), "0123456789ab");
        assert_eq!(find("0123456789ABCDEF").unwrap(), "0123456789ab");
        for bad in ["", "zz", "b", "abc", "0123g", &"0".repeat(41)] {
            let e = find(bad).unwrap_err().to_string();
            assert!(
                e.contains("--against") && e.contains("not a commit hash prefix"),
                "{bad}: {e}"
            );
        }
        let e = find("deadbeef").unwrap_err().to_string();
        assert!(
            e.contains("no run in") && e.contains("4 commits") && e.contains("bb33333333aa"),
            "{e}"
        );
        assert_eq!(find("b111").unwrap(), "b111111111aa");
        let e = find("bb34").unwrap_err().to_string();
        assert!(e.contains("no run"), "{e}");
        let d2 = history(&["b111aaaaaaaa", "b111bbbbbbbb"]);
        let e = find_commit(d2.path(), "--against", "b111")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("ambiguous") && e.contains("b111aaaaaaaa, b111bbbbbbbb"),
            "{e}"
        );
    }
}
