//! "Performance heatmap: kernels × shapes": achieved TFLOP/s of each kernel at each shape.

use super::figures::shape_dtype;
use super::rows::GemmRows;
use crate::site::chart::{Cell, ChartKind, ChartView};
use crate::site::fmt;
use crate::site::measured;

pub fn chart(rows: &GemmRows) -> ChartView {
    let mut hm = ChartView::new(
        "gemm-heatmap",
        "Performance heatmap: kernels × shapes",
        "Achieved TFLOP/s of each kernel (rows) at each shape and dtype (columns); the color \
         scale is logarithmic so the f32 ladder and the tensor-core kernels both read.",
        "shape · dtype",
        "kernel",
    );
    hm.kind = ChartKind::Heatmap;
    hm.log_z = true;
    hm.z_title = "TFLOP/s".into();
    hm.x_order = rows.shapes.clone();
    hm.y_order = rows.kernels.clone();
    for (p, f) in rows.ok.iter().zip(&rows.figs) {
        if let Some(z) = f.tflops {
            hm.cells.push(Cell {
                x: shape_dtype(p),
                y: p.imp().to_string(),
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
