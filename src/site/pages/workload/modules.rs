//! Kernel time per NVTX range: the module paths of python/opbench/trace_modules.py
//! ("model.layers.3.self_attn") and any other range, inclusive and self, as a table.

use super::rows::{dims, m0, p_str, WorkloadRows};
use crate::site::fmt;
use crate::site::pages::common::NamedTable;
use crate::site::pages::plain_table;

pub fn table(rows: &WorkloadRows) -> NamedTable {
    let body = rows
        .of("trace_range")
        .into_iter()
        .map(|p| {
            let cells = vec![
                p_str(p, "range"),
                fmt::count(m0(p, "instances")),
                fmt::count(m0(p, "kernels")),
                fmt::num(m0(p, "kernel_time_us")),
                fmt::count(m0(p, "self_kernels")),
                fmt::num(m0(p, "self_kernel_time_us")),
                fmt::count(m0(p, "window_kernels")),
                fmt::num(m0(p, "window_kernel_time_us")),
                fmt::num(m0(p, "range_time_us")),
            ];
            (cells, dims(&rows.workload, None))
        })
        .collect();
    NamedTable {
        id: "wt-modules".into(),
        title: "Kernel time per module (NVTX range)".into(),
        caption: "By thread: a kernel belongs to the ranges open on the host thread that \
                  launched it (its launch call, by correlation id), as nsys projects NVTX ranges \
                  onto the GPU; inclusive: every enclosing range counts it (once per name); \
                  self: only the innermost. By window: every kernel any thread of the process \
                  launched while the range was open, as torch.profiler counts a step (PyTorch \
                  launches backward kernels from its autograd thread, so a backward range opened \
                  on the main thread holds them by window only). Range time: the ranges' summed \
                  host durations. From trace_range, by the larger kernel time."
            .into(),
        table: plain_table(
            &[
                "range",
                "instances",
                "kernels",
                "kernel time (µs)",
                "self kernels",
                "self kernel time (µs)",
                "kernels by window",
                "kernel time by window (µs)",
                "range time (µs)",
            ],
            body,
        ),
    }
}
