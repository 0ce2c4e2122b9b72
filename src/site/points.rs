//! The measured points the pages draw: every result row, with the newest run of each point kept.
//!
//! When several artifacts measured the same point (same identity, `crate::identity`, and
//! GPU), the detail pages show the newest one (latest `finished_utc`, then file
//! name); the older ones are counted as superseded and stay in summary.json / summary.csv.

use super::names;
use crate::artifact::Loaded;
use crate::artifact::{Artifact, ResultRow, Status};
use crate::identity::Identity;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// One result row with the artifact it came from.
#[derive(Debug, Clone, Copy)]
pub struct Point<'a> {
    pub loaded: &'a Loaded,
    pub row: &'a ResultRow,
}

impl<'a> Point<'a> {
    /// Every row of one loaded artifact as a point, in file order.
    pub fn all_of(loaded: &'a Loaded) -> Vec<Point<'a>> {
        loaded
            .artifact
            .results
            .iter()
            .map(|row| Point { loaded, row })
            .collect()
    }

    pub fn artifact(&self) -> &'a Artifact {
        &self.loaded.artifact
    }

    /// The GPU name, or "CPU: <model>" for CPU runs.
    pub fn gpu(&self) -> String {
        self.artifact().env.label()
    }

    pub fn ok(&self) -> bool {
        self.row.status == Status::Ok
    }

    pub fn imp(&self) -> &'a str {
        &self.row.implementation
    }

    /// The point's identity (`crate::identity`).
    pub fn identity(&self) -> Identity {
        let r = self.row;
        Identity::of(
            &self.artifact().kind,
            &r.benchmark,
            &r.implementation,
            &r.params,
        )
    }

    pub fn dtype(&self) -> Option<String> {
        names::param_str(self.row, names::DTYPE)
    }

    /// The filter coordinates this point has (see `filters::DIMS`).
    pub fn dims(&self) -> BTreeMap<String, String> {
        let r = self.row;
        let mut d = BTreeMap::new();
        d.insert("gpu".to_string(), self.gpu());
        d.insert("impl".to_string(), r.implementation.clone());
        for (dim, keys) in [
            ("dtype", names::DTYPE),
            ("model", names::MODEL),
            ("batch", names::BATCH),
            ("mode", names::MODE),
            ("shape_set", names::SHAPE_SET),
        ] {
            if let Some(v) = names::param_str(r, keys) {
                d.insert(dim.to_string(), v);
            }
        }
        // Collectives: how many GPUs (ranks) took part.
        if let Some(n) = names::param_f64(r, &["world_size"]) {
            d.insert("ranks".to_string(), format!("{n} GPUs"));
        }
        // How the clocks went: shown in every hover (dashboard.js `NOTES`), not a filter.
        if let Some(sm) = r.timing.as_ref().and_then(|t| t.sampling.as_ref()) {
            match r.clocks() {
                Some("throttled") => {
                    d.insert(
                        "throttled".to_string(),
                        format!(
                            "{} of {} samples; not measured at full clocks, never judged \
                             FASTER or SLOWER",
                            sm.throttled_samples,
                            sm.samples_taken.unwrap_or_else(|| r
                                .stats
                                .values()
                                .next()
                                .map_or(0, |s| s.n))
                        ),
                    );
                }
                Some("recovered") => {
                    let sustained = sm
                        .sustained_p50_us
                        .map(|us| format!("; back to back under the power limit: {us:.1} us"))
                        .unwrap_or_default();
                    d.insert(
                        "clocks".to_string(),
                        format!("each sample taken after the clocks recovered{sustained}"),
                    );
                }
                _ => {}
            }
        }
        // A GEMM row without `b_layout` has B stored [K, N].
        if self.artifact().kind == "gemm" {
            let layout = names::param_str(r, names::B_LAYOUT).unwrap_or_else(|| "kn".into());
            d.insert("b_layout".to_string(), layout);
        }
        d
    }
}

/// Every point of every loaded artifact, newest run per point.
pub struct Store<'a> {
    pub loaded: &'a [Loaded],
    /// Kept points, in artifact (path) order then row order.
    pub points: Vec<Point<'a>>,
    /// Rows left out because a newer artifact measured the same point.
    pub superseded: usize,
}

impl<'a> Store<'a> {
    pub fn new(loaded: &'a [Loaded]) -> Self {
        // Newest artifact first wins each point key.
        let mut order: Vec<usize> = (0..loaded.len()).collect();
        order.sort_by(|&a, &b| {
            let (la, lb) = (&loaded[a], &loaded[b]);
            (&lb.artifact.run.finished_utc, &lb.file)
                .cmp(&(&la.artifact.run.finished_utc, &la.file))
        });
        let mut owner: HashMap<(String, Identity), usize> = HashMap::new();
        let mut keep: Vec<Vec<bool>> = loaded
            .iter()
            .map(|l| vec![false; l.artifact.results.len()])
            .collect();
        let mut superseded = 0;
        for &ai in &order {
            let l = &loaded[ai];
            let gpu = l.artifact.env.label();
            for (ri, row) in l.artifact.results.iter().enumerate() {
                let p = Point { loaded: l, row };
                let key = (gpu.clone(), p.identity());
                match owner.get(&key) {
                    Some(&o) if o != ai => superseded += 1,
                    _ => {
                        owner.insert(key, ai);
                        keep[ai][ri] = true;
                    }
                }
            }
        }
        let mut points = Vec::new();
        for (ai, l) in loaded.iter().enumerate() {
            for (ri, row) in l.artifact.results.iter().enumerate() {
                if keep[ai][ri] {
                    points.push(Point { loaded: l, row });
                }
            }
        }
        Store {
            loaded,
            points,
            superseded,
        }
    }

    /// Points of one artifact kind.
    pub fn of_kind(&self, kind: &str) -> Vec<Point<'a>> {
        self.points
            .iter()
            .filter(|p| p.artifact().kind == kind)
            .copied()
            .collect()
    }

    /// Kinds present, sorted.
    pub fn kinds(&self) -> BTreeSet<&'a str> {
        self.loaded
            .iter()
            .map(|l| l.artifact.kind.as_str())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn art(id: &str, finished: &str, t: f64) -> Loaded {
        let mut row = ResultRow::new("gemm", "cublas").param("m", 64usize);
        row.metrics.insert("tflops".into(), t);
        crate::artifact::fixture::loaded("gemm", id, finished, vec![row])
    }

    #[test]
    fn the_newest_run_of_a_point_wins() {
        let loaded = vec![
            art("a", "2026-01-02T00:00:00Z", 2.0),
            art("b", "2026-01-01T00:00:00Z", 1.0),
        ];
        let s = Store::new(&loaded);
        assert_eq!(s.points.len(), 1);
        assert_eq!(s.superseded, 1);
        assert_eq!(s.points[0].row.metrics["tflops"], 2.0);
    }
}
