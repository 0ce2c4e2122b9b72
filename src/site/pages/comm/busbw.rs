//! "Bus bandwidth by message size": one chart per collective and world size, a line per
//! implementation and dtype, under the peer-copy ceiling of that world size's run.

use super::rows::{comm_rows, line_by_implementation, CommRow};
use crate::site::chart::{pt_num, ChartView, HLine, TraceSet};
use crate::site::fmt;
use crate::site::measured;
use crate::site::names;
use crate::site::pages::common::facets;
use crate::site::palette::{self, Palette};
use crate::site::points::Point;

/// The charts of `collective`: one per world size, smallest first, each with the ceiling of
/// its own runs and its world size as a chart-wide filter coordinate.
pub fn charts(
    collective: &str,
    points: &[Point],
    multi_gpu: bool,
    pal: &Palette,
) -> Vec<ChartView> {
    let mut mine: Vec<Point> = points
        .iter()
        .filter(|p| names::param_str(p.row, &["collective"]).as_deref() == Some(collective))
        .copied()
        .collect();
    let ranks = |p: &Point| names::param_f64(p.row, &["world_size"]).unwrap_or(0.0);
    mine.sort_by(|a, b| ranks(a).total_cmp(&ranks(b)));
    let ranks_dim = |p: &Point| p.dims().get("ranks").cloned().unwrap_or_default();
    facets(&mine, ranks_dim, |rows| {
        let mut c = chart(collective, &comm_rows(rows), multi_gpu, pal);
        if let Some(p) = rows.first() {
            if let Some(r) = p.dims().get("ranks") {
                c.f.insert("ranks".into(), r.clone());
            }
        }
        c
    })
}

fn chart(collective: &str, rows: &[CommRow], multi_gpu: bool, pal: &Palette) -> ChartView {
    let mut c = ChartView::new(
        &format!("comm-busbw-{}", collective.replace('_', "-")),
        &format!("{collective}: bus bandwidth by message size"),
        "Bus bandwidth (metrics.busbw_gbps: bytes / P50 time x nccl-tests' factor for the \
         collective) against the message size (params.bytes). Colour: the implementation; solid: 4 GPUs, dotted: 2; diamonds: bf16. Red: \
         the peer-to-peer copy bandwidth between two GPUs of the run (ceilings.peer_copy_gbps, \
         median over pairs).",
        "message size (bytes)",
        "bus bandwidth (GB/s)",
    );
    c.log_x = true;
    c.log_y = true;
    c.compact = true;
    let mine: Vec<&CommRow> = rows.iter().filter(|r| r.collective == collective).collect();
    let mut seen: Vec<(String, u64)> = Vec::new();
    let mut set = TraceSet::default();
    let mut named = std::collections::BTreeSet::new();
    for r in &mine {
        let Some(b) = r.busbw_gbps else { continue };
        let key = (r.p.gpu(), r.ranks);
        if let (false, Some(ceil)) = (seen.contains(&key), r.peer_copy_gbps()) {
            c.hlines.push(HLine {
                y: ceil,
                label: format!("peer copy {} GB/s · {} GPUs", fmt::num(ceil), r.ranks),
                color: palette::CEILING.into(),
                f: [("gpu".to_string(), key.0.clone())].into_iter().collect(),
            });
            seen.push(key);
        }
        let extra = r
            .peer_copy_gbps()
            .map(|c| format!("{} of the peer-copy ceiling", fmt::pct(100.0 * b / c)))
            .unwrap_or_default();
        line_by_implementation(&mut set, r, multi_gpu, pal, &mut named)
            .points
            .push(pt_num(r.bytes, b, r.hover(&extra), r.p.dims()));
    }
    c.traces = set.into_vec();
    let pts: Vec<_> = mine.iter().map(|r| r.p).collect();
    c.measured(&pts, measured::AT_MEDIAN)
        .finish(&format!("No timed {collective} point carries busbw_gbps."))
}
