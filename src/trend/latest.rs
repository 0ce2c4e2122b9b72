//! Regressions of the newest run of each kind and GPU against the previous commit's run on
//! the same GPU (on the same board when that commit has a run there; the report's notes say
//! when the boards differ): what `summary.json` lists under `regressions`.

use crate::compare::{compare, Line, Options, Report};
use crate::history::{is_base, History, HistoryRun};
use serde::Serialize;
use std::collections::BTreeMap;

/// The newest run of one kind on one GPU, judged against the run before it.
#[derive(Debug, Clone, Serialize)]
pub struct LatestChange {
    pub kind: String,
    pub gpu: String,
    pub base_run_id: String,
    pub base_commit: Option<String>,
    pub head_run_id: String,
    pub head_commit: Option<String>,
    /// Counts of every verdict, e.g. "1 SLOWER, 40 SAME".
    pub tally: String,
    /// Only the SLOWER and FAILED lines.
    pub regressions: Vec<Line>,
}

impl History {
    /// For each (kind, GPU) with at least two commits in the history: the newest run against
    /// the newest run of an earlier commit on the same GPU.
    pub fn latest_changes(&self, opts: &Options) -> Vec<LatestChange> {
        self.changes(None, opts)
            .into_iter()
            .map(|c| LatestChange {
                tally: c.report.tally(),
                regressions: c.report.regressions().cloned().collect(),
                kind: c.kind,
                gpu: c.gpu,
                base_run_id: c.base.run_id().to_string(),
                base_commit: c.base.commit().map(String::from),
                head_run_id: c.head.run_id().to_string(),
                head_commit: c.head.commit().map(String::from),
            })
            .collect()
    }

    /// For each (kind, GPU): the newest run against its base, the newest run of another
    /// commit or, with `against`, of the commit whose hash starts with it. Groups without a
    /// base are left out.
    pub fn changes(&self, against: Option<&str>, opts: &Options) -> Vec<Change<'_>> {
        let mut groups: BTreeMap<(String, String), Vec<&HistoryRun>> = BTreeMap::new();
        for r in &self.runs {
            groups
                .entry((r.kind().to_string(), r.gpu()))
                .or_default()
                .push(r);
        }
        let mut out = Vec::new();
        for ((kind, gpu), runs) in groups {
            // self.runs is oldest first, so each group is too.
            let head = runs[runs.len() - 1];
            let Some(newest_base) = runs
                .iter()
                .rev()
                .find(|r| is_base(&r.name, &head.name, against))
            else {
                continue;
            };
            // Among that commit's runs, one on the head's own board when there is one.
            let board = |r: &HistoryRun| r.record.env.gpu.as_ref().map(|g| g.uuid.clone());
            let base = runs
                .iter()
                .rev()
                .filter(|r| r.commit() == newest_base.commit())
                .find(|r| board(r).is_some() && board(r) == board(head))
                .unwrap_or(newest_base);
            let report = compare(
                base.run_id(),
                std::slice::from_ref(*base),
                head.run_id(),
                std::slice::from_ref(head),
                opts,
            );
            out.push(Change {
                kind,
                gpu,
                base,
                head,
                report,
            });
        }
        out
    }
}

/// The newest run of one kind on one GPU against its base, every point judged.
pub struct Change<'a> {
    pub kind: String,
    pub gpu: String,
    pub base: &'a HistoryRun,
    pub head: &'a HistoryRun,
    pub report: Report,
}

#[cfg(test)]
mod tests {
    use crate::compare::Options;
    use crate::history::synthetic::{self, RunSpec};
    use crate::history::{History, HistoryRecord, HistoryRun};

    /// A gemm run of `commit` on the board of `seed` (its UUID), started `at`.
    fn run(commit: usize, seed: u64, at: &str) -> HistoryRun {
        let spec = RunSpec::new("gemm", &synthetic::commit(commit), "NVIDIA H100", at, seed);
        HistoryRun::new(
            format!("{seed}.json"),
            HistoryRecord::of(&synthetic::run(&spec)),
        )
        .unwrap()
    }

    #[test]
    fn the_base_is_the_previous_commits_run_on_the_heads_board() {
        // Commit 0 ran on boards 1 and 2 (board 2 later); commit 1 on board 1.
        let runs = vec![
            run(0, 1, "2026-01-01T00:00:00Z"),
            run(0, 2, "2026-01-01T01:00:00Z"),
            run(1, 1, "2026-01-02T00:00:00Z"),
        ];
        let board = |r: &HistoryRun| r.record.env.gpu.as_ref().unwrap().uuid.clone();
        let h = History {
            root: "h".into(),
            runs,
            warnings: vec![],
        };
        let c = h.changes(None, &Options::default());
        assert_eq!(c.len(), 1);
        assert_eq!(board(c[0].base), board(c[0].head));
        assert_eq!(
            c[0].base.record.run.git_commit,
            h.runs[0].record.run.git_commit
        );
        // Without a run on its board the newest run of the commit before is the base, and
        // the report says the boards differ.
        let h = History {
            root: "h".into(),
            runs: vec![
                run(0, 2, "2026-01-01T01:00:00Z"),
                run(1, 1, "2026-01-02T00:00:00Z"),
            ],
            warnings: vec![],
        };
        let c = h.changes(None, &Options::default());
        assert_ne!(board(c[0].base), board(c[0].head));
        assert!(
            c[0].report
                .notes
                .iter()
                .any(|n| n.contains("different boards")),
            "{:?}",
            c[0].report.notes
        );
    }
}
