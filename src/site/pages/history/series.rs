//! The small charts' data: per kind, its commits in order and, per chart and GPU, one value per
//! commit (the newest run of that commit) with its band and its verdict against the previous
//! commit on the same line (compare's rule applied to the charted value). A line's charted
//! values are aggregates over a run's points (a geometric mean of ratios to cuBLAS, a median %
//! of copy), beyond the reach of compare's drift rules, so a marker is set only between two
//! runs on one board; across boards the table of the newest commit's changes judges point by
//! point.

use super::digest::RunDigest;
use super::headline::{ChartMeta, Value};
use crate::compare::{judge, Direction, Verdict, DEFAULT_MIN_EFFECT};
use std::collections::BTreeMap;

/// Charts per kind at most; the rest are in the downloads.
pub const MAX_CHARTS: usize = 12;

/// A commit on a kind's x axis.
#[derive(Debug, Clone, PartialEq)]
pub struct Commit {
    pub hash: Option<String>,
    /// Start of its first run of this kind.
    pub started_utc: String,
}

/// One GPU's line on a chart: parallel arrays, `x` indexing the kind's commits.
#[derive(Debug, Clone, Default)]
pub struct GpuLine {
    pub gpu: String,
    pub x: Vec<usize>,
    pub values: Vec<Value>,
    /// Against the previous point of the line: SLOWER or FASTER, else None (also when the two
    /// runs are on different boards).
    pub verdicts: Vec<Option<Verdict>>,
    /// The board of each point's run.
    pub boards: Vec<Option<String>>,
}

#[derive(Debug, Clone)]
pub struct ChartData {
    pub meta: ChartMeta,
    pub lines: Vec<GpuLine>,
}

#[derive(Debug, Clone)]
pub struct KindData {
    pub kind: String,
    pub commits: Vec<Commit>,
    pub charts: Vec<ChartData>,
    /// Charts left out past [`MAX_CHARTS`].
    pub more: usize,
    /// The chart group shown (LLM: the model), empty for kinds without groups.
    pub group: String,
    pub runs: usize,
}

/// Groups the digests (oldest first) by kind; within a kind, the newest run of each commit and
/// GPU gives that commit's values.
pub fn by_kind(runs: &[RunDigest]) -> Vec<KindData> {
    let mut kinds: BTreeMap<&str, Vec<&RunDigest>> = BTreeMap::new();
    for r in runs {
        kinds.entry(&r.kind).or_default().push(r);
    }
    let mut out: Vec<KindData> = kinds
        .into_iter()
        .map(|(k, rs)| kind_data(k, &rs))
        .filter(|k| !k.charts.is_empty())
        .collect();
    out.sort_by_key(|k| {
        KIND_ORDER
            .iter()
            .position(|o| *o == k.kind)
            .unwrap_or(KIND_ORDER.len())
    });
    out
}

/// The order of the kinds on the page; others follow by name.
const KIND_ORDER: &[&str] = &["layernorm", "gemm", "llm", "kernels"];

fn kind_data(kind: &str, runs: &[&RunDigest]) -> KindData {
    let mut commits: Vec<Commit> = Vec::new();
    let mut at: BTreeMap<Option<&str>, usize> = BTreeMap::new();
    // (GPU, commit index) -> the newest run's values.
    let mut cells: BTreeMap<(&str, usize), &RunDigest> = BTreeMap::new();
    for r in runs {
        let i = *at.entry(r.commit.as_deref()).or_insert_with(|| {
            commits.push(Commit {
                hash: r.commit.clone(),
                started_utc: r.started_utc.clone(),
            });
            commits.len() - 1
        });
        cells.insert((&r.gpu, i), r);
    }
    // LLM: the model with the most charts (then the most values) is the one shown.
    let mut groups: BTreeMap<&str, (std::collections::BTreeSet<&ChartMeta>, usize)> =
        BTreeMap::new();
    for r in cells.values() {
        for (m, _) in &r.values {
            let g = groups.entry(&m.group).or_default();
            g.0.insert(m);
            g.1 += 1;
        }
    }
    let group = groups
        .iter()
        .max_by(|a, b| (a.1 .0.len(), a.1 .1, b.0).cmp(&(b.1 .0.len(), b.1 .1, a.0)))
        .map(|(g, _)| g.to_string())
        .unwrap_or_default();
    let mut charts: BTreeMap<&ChartMeta, BTreeMap<&str, GpuLine>> = BTreeMap::new();
    for ((gpu, i), r) in &cells {
        for (m, v) in r.values.iter().filter(|(m, _)| m.group == group) {
            let line = charts.entry(m).or_default().entry(gpu).or_default();
            line.gpu = gpu.to_string();
            let dir = if m.higher_is_better {
                Direction::HigherIsBetter
            } else {
                Direction::LowerIsBetter
            };
            let same_board = line
                .boards
                .last()
                .is_some_and(|b| b.is_some() && *b == r.board);
            let verdict = line.values.last().filter(|_| same_board).and_then(|prev| {
                let j = judge(&prev.brief(), &v.brief(), dir, DEFAULT_MIN_EFFECT);
                matches!(j.verdict, Verdict::Slower | Verdict::Faster).then_some(j.verdict)
            });
            line.x.push(*i);
            line.values.push(*v);
            line.verdicts.push(verdict);
            line.boards.push(r.board.clone());
        }
    }
    let total = charts.len();
    let charts: Vec<ChartData> = charts
        .into_iter()
        .take(MAX_CHARTS)
        .map(|(m, lines)| ChartData {
            meta: m.clone(),
            lines: lines.into_values().collect(),
        })
        .collect();
    KindData {
        kind: kind.to_string(),
        commits,
        more: total - charts.len(),
        charts,
        group,
        runs: runs.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(title: &str, group: &str) -> ChartMeta {
        ChartMeta {
            order: title.into(),
            title: title.into(),
            quantity: "q".into(),
            higher_is_better: true,
            group: group.into(),
        }
    }

    fn v(x: f64) -> Value {
        Value {
            v: x,
            lo: x * 0.99,
            hi: x * 1.01,
            points: 1,
        }
    }

    fn run(commit: &str, gpu: &str, values: Vec<(ChartMeta, Value)>) -> RunDigest {
        RunDigest {
            kind: "llm".into(),
            run_id: format!("{commit}-{gpu}"),
            commit: Some(commit.into()),
            dirty: None,
            started_utc: "2026-01-01T00:00:00Z".into(),
            gpu: gpu.into(),
            board: Some(format!("GPU-{gpu}")),
            file: String::new(),
            points: 1,
            values,
            synthetic: false,
        }
    }

    #[test]
    fn lines_per_gpu_take_the_newest_run_of_each_commit_and_mark_changes() {
        let a = || meta("candle · batch 1", "big");
        let runs = vec![
            run(
                "c1",
                "H100",
                vec![(a(), v(100.0)), (meta("x", "small"), v(1.0))],
            ),
            run("c1", "H100", vec![(a(), v(110.0))]),
            run("c1", "H200", vec![(a(), v(200.0))]),
            run("c2", "H100", vec![(a(), v(90.0))]),
            run("c3", "H100", vec![(a(), v(91.0))]),
        ];
        let k = &by_kind(&runs)[0];
        assert_eq!(k.commits.len(), 3);
        assert_eq!(k.group, "big", "the model with the most charts and values");
        assert_eq!(k.charts.len(), 1);
        let lines = &k.charts[0].lines;
        assert_eq!(lines.len(), 2, "a line per GPU");
        let h100 = lines.iter().find(|l| l.gpu == "H100").unwrap();
        assert_eq!(h100.x, [0, 1, 2]);
        assert_eq!(h100.values[0].v, 110.0, "the newer run of c1");
        // Higher is better: 110 -> 90 is SLOWER, 90 -> 91 within 3% is not marked.
        assert_eq!(h100.verdicts, [None, Some(Verdict::Slower), None]);
    }

    #[test]
    fn no_marker_between_two_boards() {
        let a = || meta("candle · batch 1", "big");
        let mut moved = run("c2", "H100", vec![(a(), v(90.0))]);
        moved.board = Some("GPU-other".into());
        let runs = vec![run("c1", "H100", vec![(a(), v(110.0))]), moved];
        let k = &by_kind(&runs)[0];
        assert_eq!(k.charts[0].lines[0].verdicts, [None, None]);
    }
}
