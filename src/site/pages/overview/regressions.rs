//! The overview's regressions strip: per kind and GPU, the newest commit's run against the
//! commit before, counted by compare's rule (the history page's regressions table, reused).

use crate::site::fmt;
use crate::site::pages::history::{
    regressions::{rule, GroupCount},
    Prepared,
};
use crate::site::pages::{HISTORY_FILE, KIND_PAGES};
use serde::Serialize;

/// One (kind, GPU): its verdict counts and where to look.
#[derive(Debug, Clone, Serialize)]
pub struct StripItem {
    /// "LayerNorm · H200".
    pub title: String,
    /// "2 SLOWER · 3 FASTER of 48 points".
    pub verdicts: String,
    /// "0123456789 → fedcba9876".
    pub commits: String,
    /// Something of ours got slower, or a check failed (points the newer run did not measure
    /// are counted, not flagged: runs of one kind may measure different ranges).
    pub bad: bool,
    /// The kind's page, filtered to the GPU.
    pub page: String,
    pub gpu: String,
}

/// The strip: its items and the rule they were judged by.
#[derive(Debug, Clone, Serialize)]
pub struct RegressionStrip {
    pub caption: String,
    pub history_link: String,
    pub items: Vec<StripItem>,
}

/// The strip from the history's newest-commit comparison; `None` without a history.
pub fn strip(hist: &Prepared) -> Option<RegressionStrip> {
    let table = hist.view.as_ref()?.tables.first()?;
    let items = table.counts.iter().map(item).collect();
    Some(RegressionStrip {
        caption: format!(
            "Per kind and GPU, the newest commit's run against the commit before. {}",
            rule(crate::compare::Options::default().min_effect)
        ),
        history_link: format!("{HISTORY_FILE}#regressions"),
        items,
    })
}

/// One (kind, GPU)'s strip item: its verdict counts in words and where to look.
fn item(c: &GroupCount) -> StripItem {
    let (file, title) = KIND_PAGES
        .iter()
        .find(|(k, _, _)| *k == c.kind)
        .map_or((HISTORY_FILE, c.kind.as_str()), |(_, f, t)| (*f, *t));
    let mut verdicts = format!("{} SLOWER · {} FASTER", c.slower, c.faster);
    if c.failed > 0 {
        verdicts.push_str(&format!(" · {} failed", c.failed));
    }
    if c.removed > 0 {
        verdicts.push_str(&format!(" · {} not measured in the newer run", c.removed));
    }
    if c.library_moved > 0 {
        verdicts.push_str(&format!(" · {} library moves (drift)", c.library_moved));
    }
    verdicts.push_str(&format!(" of {} points", c.judged));
    StripItem {
        title: format!("{title} · {}", c.gpu.trim_start_matches("NVIDIA ")),
        verdicts,
        commits: format!(
            "{} → {}",
            fmt::commit(c.base_commit.as_deref(), None),
            fmt::commit(c.head_commit.as_deref(), None)
        ),
        bad: c.slower + c.failed > 0,
        page: super::cards::page_link(file, &c.gpu),
        gpu: c.gpu.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(slower: usize, failed: usize, removed: usize) -> GroupCount {
        GroupCount {
            kind: "comm".into(),
            gpu: "NVIDIA H200".into(),
            base_commit: Some("1bf3facae28b".into()),
            head_commit: Some("70bba5292610".into()),
            judged: 192,
            slower,
            faster: 0,
            library_moved: 0,
            failed,
            removed,
        }
    }

    #[test]
    fn points_the_newer_run_left_out_are_counted_but_do_not_flag_the_item() {
        let i = item(&count(0, 0, 64));
        assert_eq!(i.title, "Collectives · H200");
        assert!(
            i.verdicts.contains("64 not measured in the newer run"),
            "{}",
            i.verdicts
        );
        assert!(!i.verdicts.contains("failed"), "{}", i.verdicts);
        assert!(!i.bad);
        let failed = item(&count(0, 2, 0));
        assert!(failed.verdicts.contains("2 failed") && failed.bad);
        assert!(item(&count(1, 0, 0)).bad);
    }
}
