//! Checks on the two sides before they are compared: they hold runs of a common benchmark
//! kind and are not the same runs, `--control` and `--ignore-params` name what the runs hold,
//! and `--out` is none of the files they were read from.

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

/// Refuses two sides that are the same runs: every line would compare a run with itself.
pub fn check_distinct(base: &Resolved, head: &Resolved) -> Result<()> {
    let ids = |s: &Resolved| -> BTreeSet<String> {
        s.runs.iter().map(|r| r.run_id().to_string()).collect()
    };
    let b = ids(base);
    if b == ids(head) {
        let shown: Vec<&str> = b.iter().take(3).map(String::as_str).collect();
        bail!(
            "--base {} ({}) and --head {} ({}) are the same {} run(s) ({}{}): a run compared \
             with itself says nothing; give two sides with different runs (e.g. two commits)",
            base.label,
            base.how,
            head.label,
            head.how,
            b.len(),
            shown.join(", "),
            if b.len() > 3 { ", ..." } else { "" }
        );
    }
    Ok(())
}

/// What one side's rows name (implementations, parameter names).
fn named<'a>(
    side: &'a Resolved,
    names: impl Fn(&'a crate::history::HistoryPoint) -> Vec<&'a str>,
) -> BTreeSet<&'a str> {
    side.runs
        .iter()
        .flat_map(|r| r.record.points.iter())
        .flat_map(names)
        .collect()
}

fn listed(names: &BTreeSet<&str>) -> String {
    if names.is_empty() {
        "none".to_string()
    } else {
        names.iter().copied().collect::<Vec<_>>().join(", ")
    }
}

/// Refuses a `--control` implementation or an `--ignore-params` parameter that the two sides
/// do not both hold: a typo would silently switch the drift guard or the matching off.
pub fn check_names(
    base: &Resolved,
    head: &Resolved,
    control: Option<&str>,
    ignore_params: &[String],
) -> Result<()> {
    if let Some(c) = control {
        // A control is judged only where both sides measured it.
        let of = |s| named(s, |p| vec![p.implementation.as_str()]);
        let impls: BTreeSet<&str> = of(base).intersection(&of(head)).copied().collect();
        if !impls.contains(c) {
            bail!(
                "--control {c:?} is no implementation that both --base {} and --head {} \
                 measured: give one of {}",
                base.label,
                head.label,
                listed(&impls)
            );
        }
    }
    // A parameter one side lacks is what --ignore-params is for: either side will do.
    let of = |s| named(s, |p| p.params.keys().map(String::as_str).collect());
    let params: BTreeSet<&str> = of(base).union(&of(head)).copied().collect();
    for k in ignore_params {
        if !params.contains(k.as_str()) {
            bail!(
                "--ignore-params {k:?} is no parameter of the rows of --base {} or --head {}: \
                 give names among {}",
                base.label,
                head.label,
                listed(&params)
            );
        }
    }
    Ok(())
}
