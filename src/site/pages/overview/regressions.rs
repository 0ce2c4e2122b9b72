//! The overview's first screen: per kind and GPU, the newest commit's run against the commit
//! before, as one signed change of our code's time with its interval, compare's verdict counts,
//! both commits with their dates, the gate's measured false-alarm rate and the flags a reader
//! must see first (throttled points, failed checks, another board).

use crate::site::fmt;
use crate::site::pages::history::{
    calibration::{gate_note, View as CalibrationView},
    change::TimeChange,
    regressions::{rule, GroupCount},
    Prepared,
};
use crate::site::pages::{HISTORY_FILE, KIND_PAGES};
use serde::Serialize;

/// One (kind, GPU): its change, its verdict counts and where to look.
#[derive(Debug, Clone, Serialize)]
pub struct StripItem {
    /// "LayerNorm · H200".
    pub title: String,
    /// "+1.2%", "−0.4%" (our code's time: + is slower), or "—" when nothing of ours was judged.
    pub change: String,
    /// "time, geometric mean of 48 points; 95% interval −0.9% to +0.1%".
    pub interval: String,
    /// "2 SLOWER · 3 FASTER of 48 points".
    pub verdicts: String,
    /// "0123456789 (2026-11-20) → fedcba9876 (2026-12-02)".
    pub commits: String,
    /// What a reader must know before trusting the change: throttled points, failed checks,
    /// points not measured, another board, the library's moves.
    pub flags: Vec<String>,
    /// The gate's measured false-alarm rate for such a comparison, when calibrated.
    pub gate: String,
    /// Something of ours got slower, or a check failed (points the newer run did not measure
    /// are counted, not flagged: runs of one kind may measure different ranges).
    pub bad: bool,
    /// Something of ours got faster and nothing slower.
    pub good: bool,
    /// The kind's page, filtered to the GPU.
    pub page: String,
    pub gpu: String,
}

/// The strip: its items and the rule they were judged by.
#[derive(Debug, Clone, Serialize)]
pub struct RegressionStrip {
    pub caption: String,
    /// compare's rule in words, shown on request.
    pub rule: String,
    pub history_link: String,
    pub items: Vec<StripItem>,
}

/// The strip from the history's newest-commit comparison; `None` without a history.
pub fn strip(hist: &Prepared) -> Option<RegressionStrip> {
    let view = hist.view.as_ref()?;
    let table = view.tables.first()?;
    let mut items: Vec<StripItem> = table
        .counts
        .iter()
        .map(|c| item(c, view.calibration.as_ref()))
        .collect();
    // The answer first: slower or failed kinds on top, then the page order.
    let page_order = |i: &StripItem| {
        KIND_PAGES
            .iter()
            .position(|(_, f, _)| i.page.starts_with(f))
            .unwrap_or(KIND_PAGES.len())
    };
    items.sort_by_key(|i| (!i.bad, page_order(i)));
    Some(RegressionStrip {
        caption: "Per kind and GPU: our code's time in the newest commit's run against the \
                  commit before (geometric mean over its points; + is slower), and compare's \
                  verdicts."
            .into(),
        rule: rule(crate::compare::Options::default().min_effect),
        history_link: format!("{HISTORY_FILE}#regressions"),
        items,
    })
}

/// "+1.2%" with a real minus sign for a decrease.
fn signed(pct: f64) -> String {
    let s = format!("{pct:+.1}%");
    s.replacen('-', "\u{2212}", 1)
}

fn change_text(c: Option<&TimeChange>) -> (String, String) {
    match c {
        None => (
            "—".into(),
            "no point of our code judged in both runs".into(),
        ),
        Some(c) => (
            signed(c.pct),
            format!(
                "our code's time, geometric mean of {} points; 95% interval {} to {}",
                c.points,
                signed(c.lo_pct),
                signed(c.hi_pct)
            ),
        ),
    }
}

/// "8032e5c1c3 (2026-12-02)".
fn commit_and_date(commit: Option<&str>, started_utc: &str) -> String {
    format!(
        "{} ({})",
        fmt::commit(commit, None),
        started_utc.get(..10).unwrap_or(started_utc)
    )
}

/// One (kind, GPU)'s item.
fn item(c: &GroupCount, calibration: Option<&CalibrationView>) -> StripItem {
    let (file, title) = KIND_PAGES
        .iter()
        .find(|(k, _, _)| *k == c.kind)
        .map_or((HISTORY_FILE, c.kind.as_str()), |(_, f, t)| (*f, *t));
    let gpu = c.gpu.trim_start_matches("NVIDIA ");
    let mut verdicts = format!("{} SLOWER · {} FASTER", c.slower, c.faster);
    if c.uncertain > 0 {
        verdicts.push_str(&format!(" · {} UNCERTAIN", c.uncertain));
    }
    if c.failed > 0 {
        verdicts.push_str(&format!(" · {} failed", c.failed));
    }
    verdicts.push_str(&format!(" of {} points", c.judged));
    let mut flags = Vec::new();
    if c.head_throttled > 0 {
        flags.push(format!(
            "{} points of the newer run not at full clocks (never SLOWER or FASTER)",
            c.head_throttled
        ));
    }
    if c.removed > 0 {
        flags.push(format!(
            "{} points not measured in the newer run",
            c.removed
        ));
    }
    if c.library_moved > 0 {
        flags.push(format!(
            "{} library {} moved: the machine drifted",
            c.library_moved,
            if c.library_moved == 1 {
                "line"
            } else {
                "lines"
            }
        ));
    }
    if !c.same_board {
        flags.push("the two runs ran on different boards".into());
    }
    let (change, interval) = change_text(c.change.as_ref());
    StripItem {
        title: format!("{title} · {gpu}"),
        change,
        interval,
        verdicts,
        commits: format!(
            "{} → {}",
            commit_and_date(c.base_commit.as_deref(), &c.base_started_utc),
            commit_and_date(c.head_commit.as_deref(), &c.head_started_utc)
        ),
        flags,
        gate: calibration
            .and_then(|v| gate_note(v, &c.kind, gpu, c.same_board))
            .unwrap_or_default(),
        bad: c.slower + c.failed > 0,
        good: c.slower + c.failed == 0 && c.faster > 0,
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
            uncertain: 0,
            library_moved: 0,
            failed,
            removed,
            change: Some(TimeChange {
                pct: -1.25,
                lo_pct: -2.5,
                hi_pct: 0.04,
                points: 40,
            }),
            base_started_utc: "2026-11-20T10:00:00Z".into(),
            head_started_utc: "2026-12-02T09:00:00Z".into(),
            head_throttled: 0,
            head_board: Some("GPU-5f1943ff".into()),
            same_board: true,
        }
    }

    #[test]
    fn points_the_newer_run_left_out_are_counted_but_do_not_flag_the_item() {
        let i = item(&count(0, 0, 64), None);
        assert_eq!(i.title, "Collectives · H200");
        assert_eq!(i.flags, ["64 points not measured in the newer run"]);
        assert!(!i.verdicts.contains("failed"), "{}", i.verdicts);
        assert!(!i.bad);
        let failed = item(&count(0, 2, 0), None);
        assert!(failed.verdicts.contains("2 failed") && failed.bad);
        assert!(item(&count(1, 0, 0), None).bad);
    }

    #[test]
    fn the_change_is_signed_with_its_interval_and_both_commits_carry_their_dates() {
        let i = item(&count(0, 0, 0), None);
        assert_eq!(i.change, "\u{2212}1.2%");
        assert!(
            i.interval.contains("40 points") && i.interval.contains("\u{2212}2.5% to +0.0%"),
            "{}",
            i.interval
        );
        assert_eq!(
            i.commits,
            "1bf3facae2 (2026-11-20) → 70bba52926 (2026-12-02)"
        );
        let mut other = count(0, 0, 0);
        other.same_board = false;
        other.head_throttled = 3;
        other.change = None;
        let o = item(&other, None);
        assert_eq!(o.change, "—");
        assert!(
            o.flags.iter().any(|f| f.contains("3 points")),
            "{:?}",
            o.flags
        );
        assert!(o.flags.iter().any(|f| f.contains("different boards")));
    }
}
