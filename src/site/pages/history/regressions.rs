//! The regressions table: per kind and GPU, the newest commit's run against its predecessor's
//! (or a chosen commit's), every point judged by `compare`; SLOWER and FASTER lines only, the
//! full comparison as a CSV download.

use super::change::{time_change, TimeChange};
use super::links::{commit_link, CommitLink};
use crate::compare::{render::fmt_num, Change as Verdicted, Line, Options, Side, Verdict};
use crate::history::History;
use anyhow::Result;
use serde::Serialize;
use std::path::Path;

/// One SLOWER or FASTER point.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub verdict: String,
    pub slower: bool,
    pub kind: String,
    pub gpu: String,
    /// "benchmark · implementation".
    pub point: String,
    pub params: String,
    pub quantity: String,
    pub base_commit: CommitLink,
    pub head_commit: CommitLink,
    /// "12.3 [12.1, 12.6]"
    pub base: String,
    pub head: String,
    /// "+4.1%"
    pub change: String,
    /// Settings that differ between the two rows ("mem_sampled: - -> true").
    pub settings: String,
    /// The rule that decided the verdict ("drift: controls moved ...").
    pub rule: String,
    /// Its name, the text before its first colon ("drift"), shown with the rule collapsed.
    pub rule_name: String,
    /// Library code (cuBLAS, candle, ...): its move is the machine's drift.
    pub library: bool,
}

/// The verdict counts of one (kind, GPU): its newest run against its base, for the overview.
#[derive(Debug, Clone, Serialize)]
pub struct GroupCount {
    pub kind: String,
    pub gpu: String,
    pub base_commit: Option<String>,
    pub head_commit: Option<String>,
    pub judged: usize,
    /// Our implementations' SLOWER and FASTER lines (library code's moves are drift).
    pub slower: usize,
    pub faster: usize,
    /// Our lines compare could not decide (intervals too wide, or held back by a rule).
    pub uncertain: usize,
    /// Library lines judged SLOWER or FASTER: how far the machine itself moved.
    pub library_moved: usize,
    /// Points measured in the base whose check failed in the head.
    pub failed: usize,
    /// Points measured in the base that the head did not measure (another size range or rank
    /// count, or a point left out).
    pub removed: usize,
    /// Our code's geometric-mean time change with its interval.
    pub change: Option<TimeChange>,
    /// When each side's run started (RFC 3339).
    pub base_started_utc: String,
    pub head_started_utc: String,
    /// The head's points not measured at full clocks.
    pub head_throttled: usize,
    /// The head run's board ("GPU-5f1943ff"), and whether the base ran on the same one.
    pub head_board: Option<String>,
    pub same_board: bool,
}

/// The table against one base.
#[derive(Debug, Clone, Serialize)]
pub struct Table {
    pub id: String,
    pub title: String,
    pub caption: String,
    pub rows: Vec<Row>,
    pub slower: usize,
    pub faster: usize,
    /// Points judged in all (every verdict).
    pub judged: usize,
    /// (kind, GPU) pairs compared.
    pub groups: usize,
    /// Each pair's counts (the overview's regressions strip; not on the history page).
    #[serde(skip)]
    pub counts: Vec<GroupCount>,
    /// The CSV of every judged line (written as a download, not into the page).
    #[serde(skip)]
    pub csv: String,
}

fn side(s: &Option<Side>) -> String {
    s.as_ref().map_or("-".into(), |s| {
        format!(
            "{} [{}, {}]",
            fmt_num(s.p50),
            fmt_num(s.median_ci95[0]),
            fmt_num(s.median_ci95[1])
        )
    })
}

/// The verdict rule, as the caption states it.
pub fn rule(min_effect: f64) -> String {
    format!(
        "A point is SLOWER or FASTER when the 95% confidence intervals of the two medians do not \
         overlap and the medians differ by at least {:.0}%, and, for our code, by more than the \
         library implementations and ceilings of the same runs moved; a point not measured at \
         full clocks is never either (compare's rules, named on each row).",
        min_effect * 100.0
    )
}

/// Compares, per kind and GPU, the newest run with its base (see `History::changes`).
pub fn table(
    dir: &Path,
    against: Option<&str>,
    repo_url: Option<&str>,
    id: &str,
) -> Result<Option<Table>> {
    let h = History::load_pairs(dir, against, true)?;
    let opts = Options::default();
    let changes = h.changes(against, &opts);
    if changes.is_empty() {
        return Ok(None);
    }
    let mut rows = Vec::new();
    let mut csv = csv::Writer::from_writer(Vec::new());
    csv.write_record([
        "verdict",
        "kind",
        "gpu",
        "benchmark",
        "implementation",
        "params",
        "quantity",
        "base_commit",
        "head_commit",
        "base_p50",
        "base_ci_lo",
        "base_ci_hi",
        "head_p50",
        "head_ci_lo",
        "head_ci_hi",
        "head_over_base",
        "settings_differ",
    ])?;
    let mut judged = 0;
    let mut counts = Vec::new();
    for c in &changes {
        let (bc, hc) = (c.base.commit(), c.head.commit());
        let mut n = GroupCount {
            kind: c.kind.clone(),
            gpu: c.gpu.clone(),
            base_commit: bc.map(str::to_string),
            head_commit: hc.map(str::to_string),
            judged: c.report.lines.len(),
            slower: 0,
            faster: 0,
            uncertain: 0,
            library_moved: 0,
            failed: 0,
            removed: 0,
            change: time_change(&c.report.lines),
            base_started_utc: c.base.started_utc().to_string(),
            head_started_utc: c.head.started_utc().to_string(),
            head_throttled: c
                .head
                .record
                .points
                .iter()
                .filter(|p| p.throttled())
                .count(),
            head_board: c.head.board(),
            same_board: c.head.board().is_some() && c.head.board() == c.base.board(),
        };
        for l in &c.report.lines {
            judged += 1;
            write_csv(&mut csv, l, &c.kind, bc, hc)?;
            match l.change {
                Verdicted::Failed => n.failed += 1,
                Verdicted::Removed => n.removed += 1,
                _ => {}
            }
            let Verdicted::Compared(j) = &l.change else {
                continue;
            };
            let library = crate::identity::is_library(&l.point.implementation);
            match j.verdict {
                Verdict::Slower | Verdict::Faster if library => n.library_moved += 1,
                Verdict::Slower => n.slower += 1,
                Verdict::Faster => n.faster += 1,
                Verdict::Uncertain if !library => n.uncertain += 1,
                _ => {}
            }
            if !matches!(j.verdict, Verdict::Slower | Verdict::Faster) {
                continue;
            }
            rows.push(Row {
                verdict: j.verdict.to_string(),
                slower: j.verdict == Verdict::Slower,
                kind: c.kind.clone(),
                gpu: c.gpu.trim_start_matches("NVIDIA ").to_string(),
                point: format!("{} · {}", l.point.benchmark, l.point.implementation),
                params: l.point.params.clone(),
                quantity: l.stat.clone(),
                base_commit: commit_link(bc, repo_url),
                head_commit: commit_link(hc, repo_url),
                base: side(&l.base),
                head: side(&l.head),
                change: j
                    .ratio
                    .map_or("-".into(), |r| format!("{:+.1}%", (r - 1.0) * 100.0)),
                settings: l.settings.join("; "),
                rule: l.rule.clone().unwrap_or_default(),
                rule_name: rule_name(l.rule.as_deref().unwrap_or_default()),
                library,
            });
        }
        counts.push(n);
    }
    // Our slower points first, then ours faster, then library moves.
    rows.sort_by(|a, b| (a.library, !a.slower, &a.kind).cmp(&(b.library, !b.slower, &b.kind)));
    let slower = rows.iter().filter(|r| r.slower && !r.library).count();
    let faster = rows.iter().filter(|r| !r.slower && !r.library).count();
    let what = match against {
        None => "its predecessor (the newest commit before it, on the same board when that \
                 commit ran there)"
            .to_string(),
        Some(rev) => format!("commit {rev}"),
    };
    Ok(Some(Table {
        id: id.into(),
        title: match against {
            None => "Newest commit against its predecessor".into(),
            Some(rev) => format!("Newest commit against {rev}"),
        },
        caption: format!(
            "Per kind and GPU, the newest run against {what}, point by point. {} Library code (cuBLAS, candle, PyTorch) is \
             listed last: its moves are the machine's drift, never regressions.",
            rule(opts.min_effect)
        ),
        faster,
        slower,
        rows,
        judged,
        groups: changes.len(),
        counts,
        csv: String::from_utf8(csv.into_inner()?)?,
    }))
}

/// The name of a rule text: before its first colon when that is a few words, else "rule".
fn rule_name(rule: &str) -> String {
    match rule.split_once(':') {
        Some((name, _)) if name.chars().count() <= 24 => name.to_string(),
        _ => "rule".into(),
    }
}

/// A text cell a spreadsheet would not run as a formula.
pub fn cell(s: &str) -> String {
    if s.starts_with(['=', '+', '-', '@']) {
        format!("'{s}")
    } else {
        s.to_string()
    }
}

fn write_csv(
    w: &mut csv::Writer<Vec<u8>>,
    l: &Line,
    kind: &str,
    bc: Option<&str>,
    hc: Option<&str>,
) -> Result<()> {
    let num = |s: &Option<Side>, f: fn(&Side) -> f64| {
        s.as_ref().map_or(String::new(), |s| f(s).to_string())
    };
    w.write_record([
        l.label().to_string(),
        cell(kind),
        cell(&l.gpu),
        cell(&l.point.benchmark),
        cell(&l.point.implementation),
        cell(&l.point.params),
        cell(&l.stat),
        bc.unwrap_or("").to_string(),
        hc.unwrap_or("").to_string(),
        num(&l.base, |s| s.p50),
        num(&l.base, |s| s.median_ci95[0]),
        num(&l.base, |s| s.median_ci95[1]),
        num(&l.head, |s| s.p50),
        num(&l.head, |s| s.median_ci95[0]),
        num(&l.head, |s| s.median_ci95[1]),
        l.ratio().map_or(String::new(), |r| r.to_string()),
        cell(&l.settings.join("; ")),
    ])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::rule_name;

    #[test]
    fn a_rule_is_named_by_its_first_words() {
        assert_eq!(rule_name("drift: controls moved -0.1%"), "drift");
        assert_eq!(rule_name("intervals apart by 4%"), "rule");
        assert_eq!(rule_name(&format!("{}: x", "w".repeat(40))), "rule");
    }
}
