//! "Every ncu metric": the profiled points' Nsight Compute figures as a table.

use super::fields::{block, dims, pset_text};
use crate::site::fmt;
use crate::site::names;
use crate::site::pages::common::NamedTable;
use crate::site::pages::plain_table;
use crate::site::points::Point;

/// The table of the profiled points `prof`; `None` when there are none.
pub fn table(prof: &[Point]) -> Option<NamedTable> {
    let rows = prof
        .iter()
        .map(|p| {
            let m = |k: &str| {
                names::metric(p.row, &[k])
                    .map(fmt::num)
                    .unwrap_or_else(|| "—".into())
            };
            let bytes = |k: &str| {
                names::metric(p.row, &[k])
                    .map(fmt::bytes)
                    .unwrap_or_else(|| "—".into())
            };
            (
                vec![
                    p.imp().to_string(),
                    block(p),
                    pset_text(p, &[]),
                    m("ncu_duration_us"),
                    m("ncu_memory_throughput_pct"),
                    m("ncu_compute_throughput_pct"),
                    m("ncu_achieved_occupancy_pct"),
                    m("ncu_sm_efficiency_pct"),
                    bytes("ncu_dram_bytes"),
                    bytes("bytes_count"),
                    m("ncu_dram_gbps"),
                    m("ncu_achieved_tflops"),
                    m("ncu_registers_per_thread"),
                ],
                dims(p),
            )
        })
        .collect::<Vec<_>>();
    if rows.is_empty() {
        return None;
    }
    Some(NamedTable {
        id: "ncu-metrics".into(),
        title: "Every ncu metric".into(),
        caption: "DRAM bytes as measured by ncu beside the model's byte count: where \
                  they differ, caches absorbed (or added) traffic."
            .into(),
        table: plain_table(
            &[
                "kernel",
                "block",
                "parameter set",
                "ncu duration (µs)",
                "memory %",
                "compute %",
                "occupancy %",
                "SM efficiency %",
                "DRAM bytes (ncu)",
                "model bytes",
                "DRAM GB/s (ncu)",
                "TFLOP/s (ncu)",
                "registers/thread",
            ],
            rows,
        ),
    })
}
