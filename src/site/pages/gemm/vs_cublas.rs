//! Our kernels against cuBLAS: each kernel's P50-time ratio to cuBLAS at every shape it ran,
//! summarised per GPU and dtype as the median over shapes with its P5–P95 spread. The ladder
//! chart draws it and the overview's GEMM card quotes it.

use super::figures::Figures;
use super::order::kernel_order;
use crate::site::chart::{ChartView, HLine, Pt, Trace, TraceSet};
use crate::site::fmt;
use crate::site::measured;
use crate::site::names;
use crate::site::pages::common::{gpu_pattern, gpus, multi_gpu, rank, DTYPE_ORDER};
use crate::site::pages::spread::Spread;
use crate::site::palette::Palette;
use crate::site::points::Point;
use std::collections::BTreeMap;

/// One kernel's % of cuBLAS over the shapes of one dtype it ran on one GPU.
pub struct KernelVsCublas<'a> {
    pub gpu: String,
    pub dtype: String,
    pub kernel: String,
    pub spread: Spread,
    pub rows: Vec<Point<'a>>,
}

/// Every (GPU, dtype, kernel) with a cuBLAS time at some shape, cuBLAS itself left out, in
/// (GPU, dtype order, kernel) order. `pct` is each row's % of cuBLAS, if it has one.
pub fn per_kernel<'a>(
    ok: &[Point<'a>],
    pct: impl Fn(usize) -> Option<f64>,
) -> Vec<KernelVsCublas<'a>> {
    type Key = (String, (u64, String), String);
    let mut groups: BTreeMap<Key, (Vec<f64>, Vec<Point<'a>>)> = BTreeMap::new();
    for (i, p) in ok.iter().enumerate() {
        let Some(v) = pct(i).filter(|_| !names::is_cublas(p.imp())) else {
            continue;
        };
        let dt = p.dtype().unwrap_or_default();
        let key = (
            p.gpu(),
            (rank(&dt, DTYPE_ORDER) as u64, dt),
            p.imp().to_string(),
        );
        let e = groups.entry(key).or_default();
        e.0.push(v);
        e.1.push(*p);
    }
    groups
        .into_iter()
        .filter_map(|((gpu, (_, dtype), kernel), (values, rows))| {
            Some(KernelVsCublas {
                gpu,
                dtype,
                kernel,
                spread: Spread::of(&values)?,
                rows,
            })
        })
        .collect()
}

/// Each row's % of cuBLAS at its shape (`super::figures`).
pub fn pct_of_rows(ok: &[Point]) -> Vec<Option<f64>> {
    let cublas_us = super::figures::cublas_times(ok);
    ok.iter()
        .map(|p| super::figures::figures(p, &cublas_us).pct_cublas)
        .collect()
}

/// The ladder chart: per kernel, one bar per dtype (and GPU, by fill pattern) at the median %
/// of cuBLAS over the shapes it ran, whiskers P5–P95 over those shapes.
pub(super) fn ladder_chart(ok: &[Point], figs: &[Figures], pal: &Palette) -> ChartView {
    let groups = per_kernel(ok, |i| figs[i].pct_cublas);
    let mut c = ChartView::new(
        "gemm-ladder",
        "Kernel ladder as % of cuBLAS",
        "Each kernel's P50 time against cuBLAS's at the same shape, dtype and GPU (100% = as \
         fast as cuBLAS; metrics.pct_of_cublas when recorded): the bar is the median over the \
         shapes the kernel ran, the whiskers P5 to P95 over them. The heatmap above has \
         every shape.",
        "kernel",
        "% of cuBLAS (median over shapes)",
    );
    let order = kernel_order(ok);
    c.x_order = order
        .into_iter()
        .filter(|k| groups.iter().any(|g| g.kernel == *k))
        .collect();
    c.hlines.push(HLine {
        y: 100.0,
        label: "cuBLAS (100%)".into(),
        color: pal.of("cublas"),
        f: Default::default(),
    });
    let multi = multi_gpu(ok);
    let gpu_list = gpus(ok);
    let dtypes: Vec<&str> = {
        let mut v: Vec<&str> = groups.iter().map(|g| g.dtype.as_str()).collect();
        v.sort_by(|a, b| rank(a, DTYPE_ORDER).total_cmp(&rank(b, DTYPE_ORDER)));
        v.dedup();
        v
    };
    let mut set = TraceSet::default();
    for g in &groups {
        let s = g.spread;
        // One legend entry per dtype: the GPU is the fill pattern, named in the caption.
        // (the solid bars of the first GPU carry it, where that GPU ran the dtype).
        let name = g.dtype.clone();
        let on_first = |h: &KernelVsCublas| h.dtype == g.dtype && Some(&h.gpu) == gpu_list.first();
        let in_legend = on_first(g) || !groups.iter().any(on_first);
        let first = g.rows[0];
        let mut f = first.dims();
        f.remove("model");
        f.remove("shape_set");
        let hover = format!(
            "{}, {}\nmedian {} of cuBLAS over {} shapes\n{}\n{}",
            g.kernel,
            g.dtype,
            fmt::pct(s.median),
            s.n,
            s.interval(fmt::pct),
            g.gpu
        );
        let pt = Pt {
            lo: Some(s.p5),
            hi: Some(s.p95),
            ..crate::site::chart::pt_cat(&g.kernel, s.median, hover, f)
        };
        let i = dtypes.iter().position(|d| *d == g.dtype).unwrap_or(0);
        set.get(&format!("{name}\u{1f}{}", g.gpu), || {
            let mut t = Trace::new(&name, Palette::nth(i), "bar");
            t.pattern = gpu_pattern(&first, &gpu_list);
            t.no_legend = !in_legend;
            t
        })
        .points
        .push(pt);
    }
    c.traces = set.into_vec();
    if multi {
        let fills: Vec<String> = gpu_list
            .iter()
            .enumerate()
            .map(|(i, g)| match i {
                0 => format!("solid: {g}"),
                _ => format!("hatched: {g}"),
            })
            .collect();
        c.caption.push_str(&format!(" Bars {}.", fills.join(", ")));
    }
    let rows: Vec<Point> = groups.iter().flat_map(|g| g.rows.iter().copied()).collect();
    c.measured(&rows, measured::RATIO_OF_MEDIANS)
        .finish("No kernel has a cuBLAS time at the same shape to compare with.")
}
