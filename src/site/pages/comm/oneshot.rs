//! "Our all-reduce against NCCL": NCCL's P50 time over ours (each of our kernels:
//! every implementation that is not library code) at each size, both from the same run (one
//! process group on one machine), against the 1.5x goal.

use super::rows::{line, CommRow};
use crate::site::chart::{pt_num, ChartView, HLine, TraceSet};
use crate::site::fmt;
use crate::site::measured;
use crate::site::palette::{self, Palette};
use std::collections::HashMap;

/// What our kernel has to reach at every size it runs.
pub const GOAL: f64 = 1.5;

pub fn chart(rows: &[CommRow], multi_gpu: bool, pal: &Palette) -> ChartView {
    let caption = format!(
        "NCCL's P50 time / ours at the same size, dtype and rank count, both measured in the \
         same run. Above 1 ours is faster; the upper dashed line is the 1.5x goal. opbench: our \
         all-reduce (the one-shot push kernel; on 3 GPUs and more the two-shot one from the size \
         each run's notes give, {} KiB by default); opbench-oneshot, opbench-twoshot: one of \
         the two at every size; opbench-pull: the pull kernel. Solid: 4 GPUs, dotted: 2; \
         diamonds: bf16.",
        crate::comm::ours::DEFAULT_TWOSHOT_FROM_BYTES >> 10
    );
    let mut c = ChartView::new(
        "comm-oneshot",
        "Our all-reduce: speedup over NCCL",
        &caption,
        "message size (bytes)",
        "NCCL time / ours",
    );
    c.log_x = true;
    c.hlines.push(HLine {
        y: GOAL,
        label: format!("goal {}", fmt::times(GOAL)),
        color: palette::GUIDE.into(),
        f: Default::default(),
    });
    c.hlines.push(HLine {
        y: 1.0,
        label: "parity".into(),
        color: palette::GUIDE.into(),
        f: Default::default(),
    });
    // NCCL's row of each (run, dtype, bytes, ranks).
    let key = |r: &CommRow| {
        (
            r.p.loaded.file.clone(),
            r.p.dtype().unwrap_or_default(),
            r.bytes.to_bits(),
            r.ranks,
        )
    };
    let nccl: HashMap<_, &CommRow> = rows
        .iter()
        .filter(|r| r.collective == "all_reduce" && r.p.imp() == "nccl")
        .map(|r| (key(r), r))
        .collect();
    let mut set = TraceSet::default();
    let mut drawn = Vec::new();
    for r in rows
        .iter()
        .filter(|r| r.collective == "all_reduce" && !crate::identity::is_library(r.p.imp()))
    {
        let Some(n) = nccl.get(&key(r)) else { continue };
        let x = n.p50_us / r.p50_us;
        let extra = format!(
            "NCCL {} µs / ours {} µs = {}",
            fmt::num(n.p50_us),
            fmt::num(r.p50_us),
            fmt::times(x)
        );
        line(&mut set, &r.series(multi_gpu), r, pal)
            .points
            .push(pt_num(r.bytes, x, r.hover(&extra), r.p.dims()));
        drawn.push(r.p);
        drawn.push(n.p);
    }
    c.traces = set.into_vec();
    c.measured(&drawn, measured::RATIO_OF_MEDIANS)
        .finish("No run timed our one-shot all-reduce beside NCCL (comm_bench --ours-max-bytes).")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artifact::ResultRow;
    use crate::site::pages::comm::rows::comm_rows;
    use crate::site::points::Point;

    fn row(imp: &str, bytes: i64, ranks: i64, us: f64) -> ResultRow {
        let mut r = ResultRow::new("comm", imp)
            .param("collective", "all_reduce")
            .param("dtype", "f32")
            .param("bytes", bytes)
            .param("world_size", ranks);
        let samples: Vec<f64> = (0..20).map(|i| us * (1.0 + i as f64 * 1e-4)).collect();
        r.stats
            .insert("time_us".into(), crate::stats::summarize(&samples).unwrap());
        r
    }

    #[test]
    fn ours_is_divided_into_nccls_time_of_the_same_run_size_and_rank_count_only() {
        let run = crate::artifact::fixture::loaded(
            "comm",
            "a",
            "2026-01-01T00:00:00Z",
            vec![
                row("nccl", 1024, 2, 12.0),
                row("opbench", 1024, 2, 8.0),
                // Another rank count: its own pair.
                row("nccl", 1024, 4, 10.0),
                row("opbench", 1024, 4, 10.0),
                // No NCCL row at this size: not drawn.
                row("opbench", 2048, 2, 8.0),
            ],
        );
        let other_run = crate::artifact::fixture::loaded(
            "comm",
            "b",
            "2026-01-02T00:00:00Z",
            vec![row("nccl", 2048, 2, 100.0)],
        );
        let mut points = Point::all_of(&run);
        points.extend(Point::all_of(&other_run));
        let rows = comm_rows(&points);
        let c = chart(&rows, false, &Palette::new(["nccl", "opbench"].into_iter()));
        let ys: Vec<(String, f64)> = c
            .traces
            .iter()
            .flat_map(|t| t.points.iter().map(move |p| (t.name.clone(), p.y)))
            .collect();
        assert_eq!(ys.len(), 2, "{ys:?}");
        let y = |name: &str| ys.iter().find(|(n, _)| n == name).map(|(_, y)| *y);
        assert!(
            (y("opbench · 2 GPUs · f32").unwrap() - 1.5).abs() < 1e-9,
            "{ys:?}"
        );
        assert!(
            (y("opbench · 4 GPUs · f32").unwrap() - 1.0).abs() < 1e-9,
            "{ys:?}"
        );
        assert!(c.hlines.iter().any(|h| h.y == GOAL));
    }
}
