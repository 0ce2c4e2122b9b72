//! The top kernels, as Nsight Systems' cuda_gpu_kern_sum report lists them (time %, total,
//! instances, avg, med, min, max, stddev, name), and the time per kernel class.

use super::rows::{dims, m0, p_str, WorkloadRows, TRACED};
use crate::site::chart::{pt_cat, ChartView, Trace};
use crate::site::fmt;
use crate::site::pages::common::NamedTable;
use crate::site::pages::plain_table;
use crate::site::pages::trace::classes::class_color;

/// The kern_sum table of the artifact's top kernels (trace_kernel, by total time).
pub fn table(rows: &WorkloadRows) -> NamedTable {
    let body = rows
        .of("trace_kernel")
        .into_iter()
        .map(|p| {
            let cells = vec![
                fmt::pct(m0(p, "time_pct")),
                fmt::num(m0(p, "total_us")),
                fmt::count(m0(p, "instances")),
                fmt::num(m0(p, "avg_us")),
                fmt::num(m0(p, "med_us")),
                fmt::num(m0(p, "min_us")),
                fmt::num(m0(p, "max_us")),
                fmt::num(m0(p, "stddev_us")),
                p_str(p, "kernel"),
            ];
            (cells, dims(&rows.workload, None))
        })
        .collect();
    NamedTable {
        id: "wt-kernels".into(),
        title: "Top kernels (cuda_gpu_kern_sum)".into(),
        caption: "The columns of nsys' cuda_gpu_kern_sum, times in µs, by demangled name, \
                  every process together; the artifact keeps the top 100 by total time and \
                  trace.sqlite every kernel (nsys' SQL runs on it unchanged)."
            .into(),
        table: plain_table(
            &[
                "Time (%)",
                "Total Time (µs)",
                "Instances",
                "Avg (µs)",
                "Med (µs)",
                "Min (µs)",
                "Max (µs)",
                "StdDev (µs)",
                "Name",
            ],
            body,
        ),
    }
}

/// GPU time per kernel class (classes by name, as the analyses make them), one bar each.
pub fn classes_chart(rows: &WorkloadRows) -> ChartView {
    let mut c = ChartView::new(
        "wt-classes",
        "GPU time per kernel class",
        "Summed durations of the kernels, copies and memsets of each class (by name: gemm, \
         attention, norm, elementwise, communication, ...), largest first, every process \
         together, from trace_class; hover: the share of all GPU time and the count.",
        "class",
        "GPU time (µs)",
    );
    c.compact = true;
    // The artifact lists the classes by time, largest first.
    for p in rows.of("trace_class") {
        let class = p_str(p, "class");
        let mut t = Trace::new(class.as_str(), class_color(&class), "bar");
        let hover = format!(
            "{class}: {} µs, {} of GPU time, {} activities",
            fmt::num(m0(p, "time_us")),
            fmt::pct(m0(p, "time_pct")),
            fmt::count(m0(p, "count"))
        );
        t.points.push(pt_cat(
            &class,
            m0(p, "time_us"),
            hover,
            dims(&rows.workload, Some(&class)),
        ));
        c.x_order.push(class);
        c.traces.push(t);
    }
    c.measured(rows.points, TRACED)
        .finish("No trace_class rows in the artifact.")
}
