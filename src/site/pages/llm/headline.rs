//! The LLM headline table, as docs/results.md gives it: per GPU and configuration, each
//! implementation's decode rate, time to first token, decode step P50 / P99, % of the
//! bandwidth bound and peak memory.

use super::config::{base_config, config_key, MIN_SAMPLES_P99};
use super::latency::first_per_identity;
use crate::site::chart::{TableRow, TableView};
use crate::site::fmt;
use crate::site::names;
use crate::site::pages::common::NamedTable;
use crate::site::points::Point;

/// "2.07 GB" of device memory, or the allocator's peak where only that was recorded.
fn peak_memory(p: &Point) -> String {
    match (
        names::metric(p.row, names::PEAK_DEVICE_MEMORY),
        names::metric(p.row, names::PEAK_ALLOCATOR),
    ) {
        (Some(b), _) => fmt::bytes(b),
        (None, Some(b)) => format!("{} (allocator)", fmt::bytes(b)),
        _ => "–".into(),
    }
}

/// "0.75 / 0.76": the decode step's P50 and P99 in ms, the P99 only from enough samples.
fn step(p: &Point) -> String {
    let Some((k, s)) = names::stat(p.row, names::DECODE_STEP) else {
        return "–".into();
    };
    let ms = names::to_us(k) / 1e3;
    if s.n >= MIN_SAMPLES_P99 {
        format!("{} / {}", fmt::num(s.p50 * ms), fmt::num(s.p99 * ms))
    } else {
        format!("{} / – (n={})", fmt::num(s.p50 * ms), s.n)
    }
}

fn ttft(p: &Point) -> String {
    names::stat(p.row, names::TTFT)
        .map(|(k, s)| fmt::num(s.p50 * names::to_us(k) / 1e3))
        .unwrap_or_else(|| "–".into())
}

/// % of the bound, from the row or from its rate and bound.
fn pct_bound(p: &Point) -> Option<f64> {
    names::metric(p.row, names::PCT_BOUND).or_else(|| {
        Some(100.0 * names::decode_tps(p.row)? / names::metric(p.row, names::BOUND_TPS)?)
    })
}

/// Rows with a decode rate, by GPU, configuration, then fastest implementation first.
pub fn table(charted: &[Point]) -> Option<NamedTable> {
    let mut pts: Vec<Point> = first_per_identity(charted)
        .into_iter()
        .filter(|p| names::decode_tps(p.row).is_some())
        .collect();
    pts.sort_by(|a, b| {
        a.gpu()
            .cmp(&b.gpu())
            .then(
                config_key(a)
                    .partial_cmp(&config_key(b))
                    .unwrap_or(std::cmp::Ordering::Equal),
            )
            .then(base_config(a).cmp(&base_config(b)))
            .then(
                names::decode_tps(b.row)
                    .unwrap_or(0.0)
                    .total_cmp(&names::decode_tps(a.row).unwrap_or(0.0)),
            )
    });
    let rows: Vec<TableRow> = pts
        .iter()
        .map(|p| TableRow {
            cells: vec![
                crate::site::rules::short_gpu(&p.gpu()),
                base_config(p),
                p.imp().to_string(),
                names::decode_tps(p.row).map(fmt::num).unwrap_or_default(),
                ttft(p),
                step(p),
                pct_bound(p).map(fmt::pct).unwrap_or_else(|| "–".into()),
                peak_memory(p),
            ],
            f: p.dims(),
            raw: Vec::new(),
        })
        .collect();
    (!rows.is_empty()).then(|| NamedTable {
        id: "llm-headline".into(),
        title: "Decode, first token and memory per implementation".into(),
        caption: format!(
            "The median of each point's repeats; the step P99 where a point has at least \
             {MIN_SAMPLES_P99} steps. % of bound: decode tokens/s over the rate of reading \
             every weight once per step at the copy bandwidth measured in the same run. Peak \
             memory: the device's used memory at its peak during the run, or the framework \
             allocator's peak where only that was recorded. The filters apply."
        ),
        table: TableView {
            columns: [
                "GPU",
                "configuration",
                "implementation",
                "decode tokens/s",
                "TTFT P50 (ms)",
                "step P50 / P99 (ms)",
                "% of bandwidth bound",
                "peak memory",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect(),
            rows,
        },
    })
}
