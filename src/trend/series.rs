//! Per-point series over the history: one line per (point, quantity, GPU), with the median's
//! 95% band and each run's verdict against the previous run on the same GPU.

use crate::artifact::Status;
use crate::compare::{judge, Direction, Judgement, Options};
use crate::history::{History, HistoryPoint, StatBrief};
use crate::identity::Identity;
use serde::Serialize;
use std::collections::BTreeMap;

/// The quantity a dashboard plots for a row: `time_us` when present, otherwise the first
/// duration (`*_us`, `*_ms`, `*_s` without `_per_`), otherwise the first sampled quantity.
pub fn headline_stat(row: &HistoryPoint) -> Option<&str> {
    if row.stats.contains_key("time_us") {
        return Some("time_us");
    }
    row.stats
        .keys()
        .find(|k| Direction::of_stat(k) == Direction::LowerIsBetter)
        .or_else(|| row.stats.keys().next())
        .map(|k| k.as_str())
}

/// One run's value on a series.
#[derive(Debug, Clone, Serialize)]
pub struct SeriesPoint {
    /// Index into `History::runs`.
    pub run: usize,
    pub run_id: String,
    /// History file, relative to the history folder: what "show this run" opens.
    pub file: String,
    pub commit: Option<String>,
    pub started_utc: String,
    pub n: usize,
    pub p50: f64,
    /// The band: distribution-free 95% confidence interval of the median.
    pub median_ci95: [f64; 2],
    /// Against the previous point of this series (same GPU); None on the first.
    pub vs_previous: Option<Judgement>,
}

/// One line of a history chart.
#[derive(Debug, Clone, Serialize)]
pub struct Series {
    pub point: Identity,
    /// The sampled quantity, e.g. `time_us`.
    pub stat: String,
    /// Whether `stat` is the row's headline (see [`headline_stat`]).
    pub headline: bool,
    pub direction: Direction,
    pub gpu: String,
    /// Oldest first.
    pub points: Vec<SeriesPoint>,
}

impl History {
    /// Every series in the history, sorted by point, quantity and GPU. Failed or skipped
    /// rows leave a gap (no point). `opts` gives the verdict rule's minimum effect and the
    /// parameters left out of a point's identity (`Options::default()`: 3%, none).
    pub fn series(&self, opts: &Options) -> Vec<Series> {
        let mut map: BTreeMap<(Identity, String, String), Series> = BTreeMap::new();
        // Per series, the previous point's stats block (a run's rows are read once).
        let mut last: BTreeMap<(Identity, String, String), &StatBrief> = BTreeMap::new();
        for (i, run) in self.runs.iter().enumerate() {
            let gpu = run.gpu();
            let mut seen = std::collections::BTreeSet::new();
            for row in &run.record.points {
                if row.status != Status::Ok {
                    continue;
                }
                let key = row.identity(run.kind(), &opts.ignore_params);
                // A run that measured the point under several settings: follow its first row.
                if !seen.insert(key.clone()) {
                    continue;
                }
                let headline = headline_stat(row);
                for (stat, s) in &row.stats {
                    let id = (key.clone(), stat.clone(), gpu.clone());
                    let series = map.entry(id.clone()).or_insert_with(|| Series {
                        point: key.clone(),
                        stat: stat.clone(),
                        headline: headline == Some(stat.as_str()),
                        direction: Direction::of_stat(stat),
                        gpu: gpu.clone(),
                        points: Vec::new(),
                    });
                    let vs_previous = last
                        .insert(id, s)
                        .map(|base| judge(base, s, series.direction, opts.min_effect));
                    series.points.push(SeriesPoint {
                        run: i,
                        run_id: run.run_id().to_string(),
                        file: run.file.clone(),
                        commit: run.commit().map(String::from),
                        started_utc: run.started_utc().to_string(),
                        n: s.n,
                        p50: s.p50,
                        median_ci95: s.median_ci95,
                        vs_previous,
                    });
                }
            }
        }
        map.into_values().collect()
    }
}
