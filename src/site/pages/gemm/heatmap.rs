//! "Performance heatmap: kernels × shapes": achieved TFLOP/s of each kernel at each shape,
//! one heatmap per GPU and shape set, so a cell is one measured point.

use super::figures::{kernel_layout, problem_dtype, shape_key};
use super::rows::GemmRows;
use crate::site::chart::{Cell, ChartKind, ChartView};
use crate::site::fmt;
use crate::site::measured;
use crate::site::pages::common::ordered_categories;

/// The rows of one GPU and shape set: kernels (each B layout its own row) × shape and dtype.
pub fn chart(rows: &GemmRows) -> ChartView {
    let mut hm = ChartView::new(
        "gemm-heatmap",
        "Performance heatmap: kernels × shapes",
        "Achieved TFLOP/s of each kernel (rows; \"B[N,K]\": B stored [N, K]) at each shape and \
         dtype (columns), one GPU and shape set per heatmap, so each cell is one point. The \
         color scale is logarithmic so the f32 ladder and the tensor-core kernels both read.",
        "shape · dtype",
        "kernel",
    );
    hm.kind = ChartKind::Heatmap;
    hm.log_z = true;
    hm.z_title = "TFLOP/s".into();
    hm.x_order = ordered_categories(
        rows.ok
            .iter()
            .map(|p| (shape_key(p), problem_dtype(p)))
            .collect(),
    );
    let mut y = Vec::new();
    for k in &rows.kernels {
        for layout in [k.clone(), format!("{k} B[N,K]")] {
            if rows.ok.iter().any(|p| kernel_layout(p) == layout) {
                y.push(layout);
            }
        }
    }
    hm.y_order = y;
    for (p, f) in rows.ok.iter().zip(&rows.figs) {
        if let Some(z) = f.tflops {
            hm.cells.push(Cell {
                x: problem_dtype(p),
                y: kernel_layout(p),
                z,
                label: fmt::num(z),
                hover: f.hover.clone(),
                f: p.dims(),
            });
        }
    }
    hm.measured(&rows.ok, measured::AT_MEDIAN)
        .finish("No GEMM point carries TFLOP/s.")
}
