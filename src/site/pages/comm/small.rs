//! "All-reduce time for small messages": P50 time per call up to 256 KiB, where latency
//! decides (tensor-parallel decode), NCCL beside our one-shot kernel and torch.

use super::rows::{line_by_implementation, CommRow};
use crate::site::chart::{pt_num, ChartView, TraceSet};
use crate::site::measured;
use crate::site::palette::Palette;

/// The largest message the chart shows.
pub const SMALL_MAX_BYTES: f64 = 256.0 * 1024.0;

pub fn chart(rows: &[CommRow], multi_gpu: bool, pal: &Palette) -> ChartView {
    let mut c = ChartView::new(
        "comm-small",
        "All-reduce time for small messages",
        "P50 time of one all-reduce (stats.time_us, samples of back-to-back calls divided by the \
         count), whiskers P5–P95, up to 256 KiB; log scale. Lower is better. Colour: the \
         implementation; solid: 4 GPUs, dotted: 2; diamonds: bf16 (the hover names each line).",
        "message size (bytes)",
        "time per all-reduce (µs)",
    );
    c.log_x = true;
    c.log_y = true;
    let mine: Vec<&CommRow> = rows
        .iter()
        .filter(|r| r.collective == "all_reduce" && r.bytes <= SMALL_MAX_BYTES)
        .collect();
    let mut set = TraceSet::default();
    let mut named = std::collections::BTreeSet::new();
    for r in &mine {
        let mut pt = pt_num(r.bytes, r.p50_us, r.hover(""), r.p.dims());
        pt.lo = Some(r.p5_us);
        pt.hi = Some(r.p95_us);
        line_by_implementation(&mut set, r, multi_gpu, pal, &mut named)
            .points
            .push(pt);
    }
    c.traces = set.into_vec();
    let pts: Vec<_> = mine.iter().map(|r| r.p).collect();
    c.measured(&pts, measured::MEDIAN_P5_P95)
        .finish("No timed all-reduce point of 256 KiB or less.")
}
