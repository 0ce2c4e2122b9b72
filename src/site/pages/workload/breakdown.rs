//! The temporal breakdown (Holistic Trace Analysis): per process and GPU, the share of the
//! traced span spent in computation, communication, memory operations and idle, stacked.

use super::rows::{dims, m0, process_label, WorkloadRows, TRACED};
use crate::site::chart::{pt_cat, ChartView, Trace};
use crate::site::fmt;

/// (metric prefix, legend, colour); the shares add up to 100% of the span.
const PARTS: [(&str, &str, &str); 4] = [
    ("compute", "computation", "#1f77b4"),
    ("communication", "communication", "#637939"),
    ("memory", "memory", "#8c564b"),
    ("idle", "idle", "#c7c7c7"),
];

pub fn chart(rows: &WorkloadRows) -> ChartView {
    let mut c = ChartView::new(
        "wt-breakdown",
        "Temporal breakdown per process and GPU",
        "Each bar is one process on one GPU, its traced span (first to last GPU activity) split \
         as Holistic Trace Analysis does: computation (kernels other than communication), \
         communication (NCCL kernels not under a computation kernel), memory (copies and \
         memsets under neither) and idle (no GPU activity), from trace_temporal.",
        "process",
        "% of the traced span",
    );
    c.stacked = true;
    let temporal = rows.of("trace_temporal");
    let xs: Vec<String> = temporal.iter().map(|p| process_label(p)).collect();
    for (key, legend, color) in PARTS {
        let mut t = Trace::new(legend, color, "bar");
        for (p, x) in temporal.iter().zip(&xs) {
            let hover = format!(
                "{x}: {legend} {} ({} µs of a {} µs span)",
                fmt::pct(m0(p, &format!("{key}_pct"))),
                fmt::num(m0(p, &format!("{key}_us"))),
                fmt::num(m0(p, "span_us"))
            );
            t.points.push(pt_cat(
                x,
                m0(p, &format!("{key}_pct")),
                hover,
                dims(&rows.workload, None),
            ));
        }
        c.traces.push(t);
    }
    c.x_order = xs;
    c.measured(rows.points, TRACED)
        .finish("No trace_temporal rows: no process recorded GPU activity.")
}
