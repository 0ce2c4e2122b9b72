//! The kernel page's context: the timed rows, the swept parameters, and the page intro.

use super::fields::{axes, dims, p50};
use crate::site::chart::{ChartView, Dims};
use crate::site::filters::{self, FilterView};
use crate::site::names;
use crate::site::pages::common::multi_gpu;
use crate::site::points::Point;
use std::collections::BTreeSet;

pub struct KernelRows<'a, 'p> {
    pub points: &'p [Point<'a>],
    /// The ok rows with a time.
    pub ok: Vec<Point<'a>>,
    /// The swept parameters with at least two values, the most values first.
    pub axes: Vec<String>,
    /// More than one GPU: series names carry the GPU.
    pub multi: bool,
}

impl<'a, 'p> KernelRows<'a, 'p> {
    pub fn new(points: &'p [Point<'a>]) -> Self {
        let ok: Vec<Point> = points
            .iter()
            .copied()
            .filter(|p| p.ok() && p50(p).is_some())
            .collect();
        KernelRows {
            points,
            axes: axes(&ok),
            ok,
            multi: multi_gpu(points),
        }
    }

    /// The timed rows that carry ncu metrics.
    pub fn profiled(&self) -> Vec<Point<'a>> {
        self.ok
            .iter()
            .copied()
            .filter(|p| names::metric(p.row, &["ncu_memory_throughput_pct"]).is_some())
            .collect()
    }

    pub fn intro(&self) -> String {
        let kernels: BTreeSet<&str> = self.ok.iter().map(|p| p.imp()).collect();
        format!(
            "{} points of {} kernel(s) from kernel_bench, each checked against the reference \
             before timing (CUDA events, median of the samples). Times are P50 of time_us; \
             parameters swept: {}.",
            self.points.len(),
            kernels.len(),
            if self.axes.is_empty() {
                "none".to_string()
            } else {
                self.axes.join(", ")
            }
        )
    }

    /// The page's filters; `fixed` (the other parameters' values) only exists when one of
    /// the time `charts` uses it.
    pub fn filters(&self, charts: &[ChartView]) -> Vec<FilterView> {
        let d: Vec<Dims> = self.points.iter().map(dims).collect();
        let mut out = filters::collect(d.iter(), &["gpu", "impl", "block", "pset"]);
        let fixed: Vec<Dims> = charts
            .iter()
            .flat_map(|c| {
                c.cells.iter().map(|x| x.f.clone()).chain(
                    c.traces
                        .iter()
                        .flat_map(|t| t.points.iter().map(|p| p.f.clone())),
                )
            })
            .collect();
        out.extend(filters::collect(fixed.iter(), &["fixed"]));
        out
    }
}
