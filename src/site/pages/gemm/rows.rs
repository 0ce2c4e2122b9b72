//! The GEMM page's context: the ok rows with their figures, the kernel and shape orders.

use super::figures::{cublas_times, figures, shape_dtype, shape_key, Figures};
use super::order::kernel_order;
use crate::site::chart::Trace;
use crate::site::pages::common::{gpu_pattern, gpus, multi_gpu, ordered_categories};
use crate::site::palette::Palette;
use crate::site::points::Point;

pub struct GemmRows<'a> {
    /// The ok rows, and the figures of each.
    pub ok: Vec<Point<'a>>,
    pub figs: Vec<Figures>,
    /// Kernels in ladder order, cuBLAS last.
    pub kernels: Vec<String>,
    /// "shape dtype" categories, by dtype then size.
    pub shapes: Vec<String>,
    /// More than one GPU: series names carry the GPU.
    pub multi: bool,
    gpu_list: Vec<String>,
}

impl<'a> GemmRows<'a> {
    pub fn new(points: &[Point<'a>]) -> Self {
        let ok: Vec<Point> = points.iter().filter(|p| p.ok()).copied().collect();
        let cublas_us = cublas_times(&ok);
        GemmRows {
            figs: ok.iter().map(|p| figures(p, &cublas_us)).collect(),
            kernels: kernel_order(&ok),
            shapes: ordered_categories(ok.iter().map(|p| (shape_key(p), shape_dtype(p))).collect()),
            multi: multi_gpu(points),
            gpu_list: gpus(points),
            ok,
        }
    }

    /// A series in the implementation's colour, with a fill pattern per GPU after the first.
    pub fn new_trace(&self, name: &str, p: &Point, mode: &str, pal: &Palette) -> Trace {
        let mut t = Trace::new(name, pal.of(p.imp()), mode);
        t.pattern = gpu_pattern(p, &self.gpu_list);
        t
    }
}
