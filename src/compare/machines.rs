//! Which board and host each side of a comparison ran on, in words for the report's notes.

use crate::history::HistoryRun;
use std::collections::BTreeSet;

/// "GPU-9e9eaf8d (700 W, ECC on, MIG off)", or None for a run without a GPU block.
fn board(r: &HistoryRun) -> Option<String> {
    let g = r.record.env.gpu.as_ref()?;
    let settings = g
        .board
        .as_ref()
        .map(|b| b.settings_text())
        .filter(|t| !t.is_empty());
    Some(match settings {
        Some(t) => format!("{} ({t})", g.board_label()),
        None => g.board_label(),
    })
}

/// "Intel(R) Xeon(R) Processor, 16 cores".
fn host(r: &HistoryRun) -> String {
    let h = &r.record.env.host;
    format!("{}, {} cores", h.cpu_model, h.cores)
}

fn list(set: &BTreeSet<String>) -> String {
    set.iter().cloned().collect::<Vec<_>>().join(", ")
}

/// The notes on one GPU pair: the boards of each side (same or different) and the hosts when
/// they differ.
pub fn note(gpu: &str, base: &[&HistoryRun], head: &[&HistoryRun]) -> Vec<String> {
    let mut out = Vec::new();
    let boards = |runs: &[&HistoryRun]| {
        runs.iter()
            .filter_map(|r| board(r))
            .collect::<BTreeSet<_>>()
    };
    let (bb, hb) = (boards(base), boards(head));
    if !bb.is_empty() && !hb.is_empty() {
        out.push(if bb == hb && bb.len() == 1 {
            format!("{gpu}: both sides ran on one board, {}", list(&bb))
        } else {
            format!(
                "{gpu}: base ran on board {}, head on {}: different boards, so our verdicts \
                 are judged against the drift of the controls (library code, ceilings)",
                list(&bb),
                list(&hb)
            )
        });
    }
    let hosts = |runs: &[&HistoryRun]| runs.iter().map(|r| host(r)).collect::<BTreeSet<_>>();
    let (bh, hh) = (hosts(base), hosts(head));
    if bh != hh {
        out.push(format!(
            "{gpu}: hosts differ (base {}, head {}): host-side quantities are judged against \
             the library implementations' own",
            list(&bh),
            list(&hh)
        ));
    }
    out
}

/// Whether both sides ran on one machine: one board, the same on both sides, and the same host.
/// Runs without a board block (CPU runs, old artifacts) compare by host alone.
pub fn same_machine(base: &[&HistoryRun], head: &[&HistoryRun]) -> bool {
    let boards = |runs: &[&HistoryRun]| runs.iter().map(|r| board(r)).collect::<BTreeSet<_>>();
    let hosts = |runs: &[&HistoryRun]| runs.iter().map(|r| host(r)).collect::<BTreeSet<_>>();
    let (bb, hb) = (boards(base), boards(head));
    bb == hb && bb.len() == 1 && hosts(base) == hosts(head)
}
