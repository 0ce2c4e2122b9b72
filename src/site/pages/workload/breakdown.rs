//! The temporal breakdown (Holistic Trace Analysis) as numbers: per process and GPU, its traced
//! span and the shares of it spent in computation, communication, memory operations and idle.
//! A table, not a 100%-stacked bar: on a mostly idle trace the bar is one grey block.

use super::rows::{dims, m0, process_label, WorkloadRows};
use crate::site::fmt;
use crate::site::pages::common::NamedTable;
use crate::site::pages::plain_table;

/// (metric prefix, column); the shares add up to 100% of the span.
const PARTS: [(&str, &str); 4] = [
    ("compute", "computation"),
    ("communication", "communication"),
    ("memory", "memory"),
    ("idle", "idle"),
];

/// One row per process and GPU: span (µs), then each part as "% (µs)".
pub fn table(rows: &WorkloadRows) -> NamedTable {
    let body = rows
        .of("trace_temporal")
        .into_iter()
        .map(|p| {
            let mut cells = vec![process_label(p), fmt::num(m0(p, "span_us"))];
            for (key, _) in PARTS {
                cells.push(format!(
                    "{} ({} µs)",
                    fmt::pct(m0(p, &format!("{key}_pct"))),
                    fmt::num(m0(p, &format!("{key}_us")))
                ));
            }
            (cells, dims(&rows.workload, None))
        })
        .collect();
    let mut columns = vec!["process".to_string(), "span (µs)".to_string()];
    columns.extend(PARTS.iter().map(|(_, c)| format!("{c} (% of span)")));
    let columns: Vec<&str> = columns.iter().map(String::as_str).collect();
    NamedTable {
        id: "wt-breakdown".into(),
        title: "Temporal breakdown per process and GPU".into(),
        caption: "Each row is one process on one GPU, its traced span (first to last GPU \
                  activity) split as Holistic Trace Analysis does: computation (kernels other \
                  than communication), communication (NCCL kernels not under a computation \
                  kernel), memory (copies and memsets under neither) and idle (no GPU \
                  activity), from trace_temporal."
            .into(),
        table: plain_table(&columns, body),
    }
}
