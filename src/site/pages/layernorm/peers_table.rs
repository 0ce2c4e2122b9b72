//! "Ours against the fastest peer": at every point of 64 MiB and more (read x + write y), our
//! kernel's bandwidth beside the fastest other implementation's of the same run, so a reader
//! sees at once where ours is ahead and where a peer is.

use super::rows::LnRows;
use crate::identity::is_library;
use crate::site::chart::{TableRow, TableView};
use crate::site::fmt;
use crate::site::names;
use crate::site::pages::common::{p50_us, peer_key, NamedTable};
use crate::site::points::Point;

/// Points that move at least this many bytes are the large ones the table covers.
pub const LARGE_BYTES: f64 = 64.0 * 1024.0 * 1024.0;

/// Bytes a LayerNorm point moves: x read once and y written once.
fn bytes(p: &Point) -> Option<f64> {
    let rows = names::param_f64(p.row, &["rows"])?;
    let cols = names::param_f64(p.row, &["cols"])?;
    Some(2.0 * rows * cols * names::dtype_bytes(&p.dtype()?)?)
}

/// One large point of ours and the fastest other implementation of the same run there.
pub struct Against<'a> {
    pub ours: Point<'a>,
    pub peer: Point<'a>,
    /// The peer's P50 time over ours: above 1 ours is faster.
    pub ratio: f64,
    /// Implementations at this point ("ours" or a peer's name) not measured at full clocks.
    /// A throttled peer reads slower than it is, so any of them leaves the point undecided.
    pub held: Vec<String>,
}

/// Every ok point of ours of at least [`LARGE_BYTES`] that has a peer in its own run.
pub fn against_fastest_peer<'a>(ok: &[Point<'a>]) -> Vec<Against<'a>> {
    let mut out = Vec::new();
    for ours in ok.iter().filter(|p| !is_library(p.imp())) {
        if bytes(ours).is_none_or(|b| b < LARGE_BYTES) {
            continue;
        }
        let key = peer_key(ours);
        let peers: Vec<(f64, &Point)> = ok
            .iter()
            .filter(|p| is_library(p.imp()) && peer_key(p) == key)
            .filter(|p| std::ptr::eq(p.artifact(), ours.artifact()))
            .filter_map(|p| Some((p50_us(p)?, p)))
            .collect();
        let fastest = peers.iter().min_by(|a, b| a.0.total_cmp(&b.0));
        if let (Some((peer_us, peer)), Some(ours_us)) = (fastest, p50_us(ours)) {
            let held = ours
                .row
                .throttled()
                .then(|| "ours".to_string())
                .into_iter()
                .chain(
                    peers
                        .iter()
                        .filter(|(_, p)| p.row.throttled())
                        .map(|(_, p)| p.imp().to_string()),
                )
                .collect();
            out.push(Against {
                ours: *ours,
                peer: **peer,
                ratio: peer_us / ours_us,
                held,
            });
        }
    }
    out
}

impl Against<'_> {
    /// Who at this point was not measured at full clocks ("ours", "triton", "ours and
    /// triton"), if anyone: such a point says nothing about who is faster and is not counted.
    pub fn throttled(&self) -> Option<String> {
        (!self.held.is_empty()).then(|| self.held.join(" and "))
    }
}

/// One GPU's count of large points.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    /// Points where ours is ahead, of those measured at full clocks on both sides.
    pub ahead: usize,
    /// Points measured at full clocks on both sides.
    pub judged: usize,
    /// Points where ours or the peer was not measured at full clocks (not counted).
    pub throttled: usize,
}

impl Tally {
    /// "20 of 26 points": where ours leads, of the points judged.
    pub fn text(&self) -> String {
        format!("{} of {} points", self.ahead, self.judged)
    }

    /// "" or " (3 more not measured at full clocks, not counted)".
    pub fn left_out(&self) -> String {
        match self.throttled {
            0 => String::new(),
            n => format!(" ({n} more not measured at full clocks, not counted)"),
        }
    }
}

/// Per GPU: how many large points ours leads, of those measured at full clocks.
pub fn tally(rows: &[Against]) -> std::collections::BTreeMap<String, Tally> {
    let mut t: std::collections::BTreeMap<String, Tally> = Default::default();
    for a in rows {
        let e = t.entry(a.ours.gpu()).or_default();
        if a.throttled().is_some() {
            e.throttled += 1;
            continue;
        }
        e.judged += 1;
        if a.ratio >= 1.0 {
            e.ahead += 1;
        }
    }
    t
}

/// The table, or None when no large point has both ours and a peer.
pub fn table(rows: &LnRows) -> Option<NamedTable> {
    let found = against_fastest_peer(&rows.ok);
    let tally = tally(&found);
    let mut lines: Vec<(String, String, TableRow)> = Vec::new();
    for a in &found {
        let (ours, peer, ratio) = (&a.ours, &a.peer, a.ratio);
        let gbps = |p: &Point| names::metric(p.row, names::GBPS);
        let verdict = if let Some(who) = a.throttled() {
            format!("not counted: {who} not measured at full clocks")
        } else if ratio >= 1.0 {
            format!("ours ahead by {}", fmt::pct((ratio - 1.0) * 100.0))
        } else {
            format!(
                "{} ahead by {}",
                peer.imp(),
                fmt::pct((1.0 / ratio - 1.0) * 100.0)
            )
        };
        let mut f = ours.dims();
        f.retain(|k, _| k == "gpu" || k == "dtype" || k == "mode");
        let opt = |v: Option<f64>| v.map_or("—".to_string(), fmt::num);
        lines.push((
            ours.gpu(),
            rows.lab(ours),
            TableRow {
                cells: vec![
                    ours.gpu(),
                    rows.lab(ours),
                    opt(gbps(ours)),
                    peer.imp().to_string(),
                    opt(gbps(peer)),
                    fmt::times(ratio),
                    verdict,
                ],
                f,
                raw: vec![None, None, gbps(ours), None, gbps(peer), Some(ratio), None],
            },
        ));
    }
    if lines.is_empty() {
        return None;
    }
    let order: Vec<&String> = rows.x_order.iter().collect();
    lines.sort_by_key(|(gpu, lab, _)| {
        (
            gpu.clone(),
            order.iter().position(|o| *o == lab).unwrap_or(usize::MAX),
        )
    });
    Some(NamedTable {
        id: "ln-peers-large".into(),
        title: "Ours against the fastest peer, 64 MiB and more".into(),
        caption: format!(
            "Ours ahead at {}. Each row: our kernel and the fastest of \
             the other implementations (torch, torch.compile, Triton, candle) at the same \
             shape, dtype, L2 mode and GPU, from the same run; the ratio is the peer's P50 \
             time over ours (above 1× ours is faster).",
            tally
                .iter()
                .map(|(gpu, t)| format!("{} on the {gpu}{}", t.text(), t.left_out()))
                .collect::<Vec<_>>()
                .join(" and ")
        ),
        table: TableView {
            columns: [
                "GPU",
                "point",
                "ours GB/s",
                "fastest peer",
                "peer GB/s",
                "peer time / ours",
                "verdict",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect(),
            rows: lines.into_iter().map(|(_, _, r)| r).collect(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artifact::ResultRow;

    fn row(imp: &str, shape: (i64, i64), us: f64) -> ResultRow {
        let mut r = ResultRow::new("layernorm_forward", imp)
            .param("rows", shape.0)
            .param("cols", shape.1)
            .param("dtype", "f32")
            .param("mode", "warm")
            .param("shape", format!("{}x{}", shape.0, shape.1).as_str());
        let samples: Vec<f64> = (0..20).map(|i| us * (1.0 + i as f64 * 1e-4)).collect();
        r.stats
            .insert("time_us".into(), crate::stats::summarize(&samples).unwrap());
        let bytes = 2.0 * (shape.0 * shape.1) as f64 * 4.0;
        let p50 = r.stats["time_us"].p50;
        r.metrics.insert("gbps".into(), bytes / p50 / 1e3);
        r
    }

    #[test]
    fn names_the_fastest_peer_and_who_is_ahead_at_large_points_only() {
        let loaded = crate::artifact::fixture::loaded(
            "layernorm",
            "a",
            "2026-01-01T00:00:00Z",
            vec![
                // 32768x4096 f32 moves 1 GiB: torch-compile 4% ahead of ours.
                row("opbench", (32768, 4096), 260.0),
                row("torch-compile", (32768, 4096), 250.0),
                row("triton", (32768, 4096), 270.0),
                // 4096x4096 f32 moves 128 MiB: ours ahead of candle by 2x.
                row("opbench", (4096, 4096), 40.0),
                row("candle", (4096, 4096), 80.0),
                // 4096x1024 f32 moves 32 MiB: left out however it compares.
                row("opbench", (4096, 1024), 40.0),
                row("triton", (4096, 1024), 10.0),
            ],
        );

        let points = Point::all_of(&loaded);
        let rows = LnRows::new(&points);
        let t = table(&rows).expect("two large points");
        assert_eq!(t.table.rows.len(), 2);
        let cells: Vec<&Vec<String>> = t.table.rows.iter().map(|r| &r.cells).collect();
        let big = cells.iter().find(|c| c[1].starts_with("32768")).unwrap();
        assert_eq!(big[3], "torch-compile");
        assert_eq!(big[6], "torch-compile ahead by 4.0%");
        let mid = cells.iter().find(|c| c[1].starts_with("4096")).unwrap();
        assert_eq!(mid[3], "candle");
        assert_eq!(mid[6], "ours ahead by 100%");
        assert!(
            t.caption.starts_with("Ours ahead at 1 of 2 points on the"),
            "{}",
            t.caption
        );
    }

    /// `r` sampled `n` times back to back, `throttled` of them under held-back clocks.
    fn clocked(mut r: ResultRow, clocks: &str) -> ResultRow {
        r.timing = Some(crate::artifact::Timing {
            method: "cuda_events_held".into(),
            warmup: 10,
            launches_per_sample: 20,
            l2_cleared: false,
            sampling: Some(crate::artifact::SamplingRecord {
                stopped_by: "fixed_count".into(),
                target_median_ci_pct: 0.0,
                min_samples: 20,
                max_samples: 20,
                budget_ms: None,
                throttled_samples: if clocks == "throttled" { 20 } else { 0 },
                clocks: Some(clocks.into()),
                samples_taken: Some(20),
                sustained_p50_us: None,
                recovery_wait_ms: None,
            }),
        });
        r
    }

    #[test]
    fn a_point_not_measured_at_full_clocks_on_either_side_is_shown_but_not_counted() {
        let loaded = crate::artifact::fixture::loaded(
            "layernorm",
            "a",
            "2026-01-01T00:00:00Z",
            vec![
                // A throttled peer reads slower than it is: here slower than ours and than the
                // fastest peer, which ours leads; at full clocks it might lead both.
                clocked(row("opbench", (32768, 4096), 250.0), "steady"),
                clocked(row("torch", (32768, 4096), 260.0), "steady"),
                clocked(row("triton", (32768, 4096), 300.0), "throttled"),
                // Both at full clocks: counted.
                clocked(row("opbench", (4096, 4096), 40.0), "steady"),
                clocked(row("torch", (4096, 4096), 50.0), "steady"),
            ],
        );
        let points = Point::all_of(&loaded);
        let rows = LnRows::new(&points);
        let t = table(&rows).expect("two large points");
        let cells: Vec<&Vec<String>> = t.table.rows.iter().map(|r| &r.cells).collect();
        let big = cells.iter().find(|c| c[1].starts_with("32768")).unwrap();
        assert_eq!(big[3], "torch");
        assert_eq!(big[6], "not counted: triton not measured at full clocks");
        let mid = cells.iter().find(|c| c[1].starts_with("4096")).unwrap();
        assert_eq!(mid[6], "ours ahead by 25.0%");
        assert!(
            t.caption.starts_with("Ours ahead at 1 of 1 points on the")
                && t.caption
                    .contains("(1 more not measured at full clocks, not counted). Each row"),
            "{}",
            t.caption
        );
    }
}
