//! The traces card: how many workloads `trace` recorded on one GPU, and the newest of them
//! with its headline figures (GPU busy share and top kernel), linking to the Traces index.

use super::cards::gpu_dims;
use crate::site::fmt;
use crate::site::pages::workload::{index::figures, rows::WorkloadRows, workloads};
use crate::site::pages::{Card, TRACES_FILE};
use crate::site::points::Point;

/// The card of one GPU's trace points.
pub fn card(gpu: &str, pts: &[Point], _all: &[Point]) -> Option<Card> {
    let names = workloads(pts);
    let newest = names.iter().max_by_key(|w| {
        pts.iter()
            .find(|p| p.imp() == w.as_str())
            .map(|p| p.artifact().run.started_utc.clone())
    })?;
    let mine: Vec<Point> = pts.iter().filter(|p| p.imp() == newest).copied().collect();
    let f = figures(&WorkloadRows::new(newest, &mine));
    let mut details = vec![format!(
        "newest: {newest} ({}, commit {})",
        f.date, f.commit
    )];
    if let Some(b) = f.busy_pct {
        details.push(format!("GPU busy {} of its traced span", fmt::pct(b)));
    }
    if let Some((k, share)) = &f.top_kernel {
        let short: String = k.chars().take(48).collect();
        details.push(format!("top kernel {short} ({})", fmt::pct(*share)));
    }
    details.push(gpu.to_string());
    Some(Card {
        title: "Traced workloads".into(),
        value: names.len().to_string(),
        stat: format!(
            "{} kernels recorded in all; every workload has its page",
            fmt::count(
                names
                    .iter()
                    .map(|w| {
                        let m: Vec<Point> = pts
                            .iter()
                            .filter(|p| p.imp() == w.as_str())
                            .copied()
                            .collect();
                        figures(&WorkloadRows::new(w, &m)).kernels
                    })
                    .sum()
            )
        ),
        details,
        link: TRACES_FILE.into(),
        f: gpu_dims(gpu),
        muted: false,
    })
}
