//! The sweep's points as JSON rows (`--device cpu --plan-json`): what a GPU run would launch,
//! for tools that drive kernel_bench (python/opbench/kernels.py) without a GPU.

use super::manifest::block_label;
use super::sweep::Plan;
use serde::Serialize;
use std::collections::BTreeMap;

/// One planned launch.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlannedPoint {
    pub id: usize,
    pub kernel: String,
    pub params: BTreeMap<String, i64>,
    pub block: String,
    pub grid: [u32; 3],
    pub shared_bytes: u32,
    /// Bytes the kernel must move (the manifest's `bytes`, or each buffer once).
    pub bytes_count: f64,
    pub flop_count: Option<f64>,
    pub reference: bool,
}

/// Every point of the plan, in launch order.
pub fn points(plan: &Plan) -> Vec<PlannedPoint> {
    let m = &plan.manifest;
    plan.groups
        .iter()
        .flat_map(|g| {
            g.points.iter().map(move |p| PlannedPoint {
                id: p.id,
                kernel: m.kernels[p.kernel].name.clone(),
                params: g.params.clone(),
                block: block_label(p.block),
                grid: p.grid,
                shared_bytes: p.shared_bytes,
                bytes_count: g.bytes_moved,
                flop_count: g.flops,
                reference: m.kernels[p.kernel].name == m.reference,
            })
        })
        .collect()
}
