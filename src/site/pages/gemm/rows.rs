//! The GEMM page's context: the ok rows with their figures and the kernel order.

use super::figures::{cublas_times, figures, Figures};
use super::order::kernel_order;
use crate::site::points::Point;

pub struct GemmRows<'a> {
    /// The ok rows, and the figures of each.
    pub ok: Vec<Point<'a>>,
    pub figs: Vec<Figures>,
    /// Kernels in ladder order, cuBLAS last.
    pub kernels: Vec<String>,
}

impl<'a> GemmRows<'a> {
    /// The rows of `points` that are ok; % of cuBLAS compares within them, so a subset must
    /// keep cuBLAS's rows of the same GPU and dtype (a GPU's or a dtype family's rows do).
    pub fn new(points: &[Point<'a>]) -> Self {
        let ok: Vec<Point> = points.iter().filter(|p| p.ok()).copied().collect();
        let cublas_us = cublas_times(&ok);
        GemmRows {
            figs: ok.iter().map(|p| figures(p, &cublas_us)).collect(),
            kernels: kernel_order(&ok),
            ok,
        }
    }
}
