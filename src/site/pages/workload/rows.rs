//! The rows of one traced workload (`trace` artifacts, kind `trace`) by benchmark, and the
//! look-ups every chart and table of its page shares.

use crate::site::chart::Dims;
use crate::site::names;
use crate::site::points::Point;

/// What the workload page draws: CUPTI records of one traced run, not repeats.
pub const TRACED: &str = "CUPTI records of one traced run of the command (no repeats)";

/// The ok rows of one workload.
pub struct WorkloadRows<'a, 'p> {
    pub workload: String,
    pub points: &'p [Point<'a>],
    pub gpu: String,
}

impl<'a, 'p> WorkloadRows<'a, 'p> {
    /// `points`: the workload's rows (one artifact's), not empty.
    pub fn new(workload: &str, points: &'p [Point<'a>]) -> Self {
        WorkloadRows {
            workload: workload.to_string(),
            points,
            gpu: points[0].gpu(),
        }
    }

    /// The ok rows of `benchmark`, in the artifact's order.
    pub fn of(&self, benchmark: &str) -> Vec<&'p Point<'a>> {
        self.points
            .iter()
            .filter(|p| p.ok() && p.row.benchmark == benchmark)
            .collect()
    }
}

pub fn m(p: &Point, k: &str) -> Option<f64> {
    names::metric(p.row, &[k])
}

/// Metric `k`, 0 when absent (counts and times the analyses always write).
pub fn m0(p: &Point, k: &str) -> f64 {
    m(p, k).unwrap_or(0.0)
}

pub fn p_str(p: &Point, k: &str) -> String {
    names::param_str(p.row, &[k]).unwrap_or_default()
}

/// "pid 4101 GPU 0" of a per-process, per-device row.
pub fn process_label(p: &Point) -> String {
    format!("pid {} GPU {}", p_str(p, "pid"), p_str(p, "device"))
}

/// Filter coordinates: the workload, and the kernel class when given.
pub fn dims(workload: &str, class: Option<&str>) -> Dims {
    let mut f = Dims::new();
    f.insert("impl".into(), workload.to_string());
    if let Some(c) = class {
        f.insert("class".into(), c.to_string());
    }
    f
}
