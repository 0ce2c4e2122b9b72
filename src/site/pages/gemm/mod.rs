//! The GEMM page: roofline with measured ceilings, heatmaps, split charts, speedup against a
//! chosen baseline, and the kernel ladder as % of cuBLAS.

use super::super::chart::{pt_cat, Cell, ChartKind, ChartView, Trace, TraceSet};
use super::super::fmt;
use super::super::measured;
use super::super::names;
use super::super::palette::Palette;
use super::super::points::Point;
use super::common::*;

mod mn_heatmap;
mod roofline;
pub mod vs_cublas;
use super::PageContext;
use std::collections::{BTreeSet, HashMap};

fn mnk(p: &Point) -> Option<(f64, f64, f64)> {
    let r = p.row;
    Some((
        names::param_f64(r, names::GEMM_M)?,
        names::param_f64(r, names::GEMM_N)?,
        names::param_f64(r, names::GEMM_K)?,
    ))
}

/// "4096³", "128×2048×2048", with the layer op in front when the shape comes from a model.
fn shape(p: &Point) -> String {
    let s = match mnk(p) {
        Some((m, n, k)) if m == n && n == k => format!("{m}³"),
        Some((m, n, k)) => format!("{m}×{n}×{k}"),
        None => params_text(p),
    };
    match names::param_str(p.row, names::LAYER_OP) {
        Some(op) => format!("{op} {s}"),
        None => s,
    }
}

/// Shape and dtype: one column of the kernels × shapes heatmap.
fn shape_dtype(p: &Point) -> String {
    match p.dtype() {
        Some(d) => format!("{} {d}", shape(p)),
        None => shape(p),
    }
}

fn shape_key(p: &Point) -> Vec<f64> {
    let (m, n, k) = mnk(p).unwrap_or((0.0, 0.0, 0.0));
    vec![
        rank(&p.dtype().unwrap_or_default(), DTYPE_ORDER),
        rank(
            &names::param_str(p.row, names::SHAPE_SET).unwrap_or_default(),
            &["square", "tinyllama"],
        ),
        k,
        n,
        m,
    ]
}

/// Kernels in ladder order, then the rest by name, cuBLAS last.
fn kernel_order(points: &[Point]) -> Vec<String> {
    let imps: BTreeSet<&str> = points.iter().map(|p| p.imp()).collect();
    let mut v: Vec<&str> = imps.into_iter().collect();
    // A kernel's ladder and step, when the rows record them (impl_kind, ladder_step).
    let mut step: HashMap<&str, (String, f64)> = HashMap::new();
    for p in points {
        if let Some(s) = names::param_f64(p.row, names::LADDER_STEP) {
            let kind = names::param_str(p.row, names::IMPL_KIND).unwrap_or_default();
            step.insert(p.imp(), (kind, s));
        }
    }
    v.sort_by(|a, b| {
        let key = |i: &str| {
            let (kind, s) = step.get(i).cloned().unwrap_or((String::new(), f64::MAX));
            let pos = names::GEMM_LADDER.iter().position(|l| *l == i);
            (
                names::is_cublas(i),
                i == "candle",
                kind,
                s,
                pos.unwrap_or(usize::MAX),
            )
        };
        let (ka, kb) = (key(a), key(b));
        ka.0.cmp(&kb.0)
            .then(ka.1.cmp(&kb.1))
            .then(ka.2.cmp(&kb.2))
            .then(ka.3.total_cmp(&kb.3))
            .then(ka.4.cmp(&kb.4))
            .then(a.cmp(b))
    });
    v.into_iter().map(String::from).collect()
}

fn tflops(p: &Point) -> Option<f64> {
    names::metric(p.row, names::TFLOPS).or_else(|| {
        let (m, n, k) = mnk(p)?;
        Some(2.0 * m * n * k / (p50_us(p)? * 1e6))
    })
}

fn intensity(p: &Point) -> Option<f64> {
    names::metric(p.row, names::INTENSITY).or_else(|| {
        let (m, n, k) = mnk(p)?;
        let bytes = names::metric(p.row, names::BYTES_MOVED)
            .or_else(|| Some(names::dtype_bytes(&p.dtype()?)? * (m * k + k * n + m * n)))?;
        Some(2.0 * m * n * k / bytes)
    })
}

/// The roof at intensity `x` for this point's GPU and dtype, in TFLOP/s.
fn roof(p: &Point, x: f64) -> Option<f64> {
    let c = &p.artifact().ceilings;
    let mem = c.copy_gbps.map(|g| g * x / 1e3);
    let peak = p.dtype().and_then(|d| c.matmul_tflops.get(&d).copied());
    match (mem, peak) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// cuBLAS's P50 time (µs) at each peer key (GPU and problem).
fn cublas_times(ok: &[Point]) -> HashMap<String, f64> {
    ok.iter()
        .filter(|p| names::is_cublas(p.imp()))
        .filter_map(|p| Some((peer_key(p), p50_us(p)?)))
        .collect()
}

struct Figures {
    tflops: Option<f64>,
    intensity: Option<f64>,
    pct_cublas: Option<f64>,
    hover: String,
}

fn figures(p: &Point, cublas_us: &HashMap<String, f64>) -> Figures {
    let tf = tflops(p);
    let ai = intensity(p);
    let pct_cublas = names::metric(p.row, names::PCT_CUBLAS).or_else(|| {
        let base = cublas_us.get(&peer_key(p))?;
        Some(100.0 * base / p50_us(p)?)
    });
    let pct_ceiling =
        names::metric(p.row, names::PCT_CEILING).or_else(|| Some(100.0 * tf? / roof(p, ai?)?));
    let mut lines = vec![
        p.imp().to_string(),
        format!("{} {}", shape(p), p.dtype().unwrap_or_default()),
    ];
    if let Some(t) = p50_us(p) {
        lines.push(format!("P50 {} µs", fmt::num(t)));
    }
    if let Some(v) = tf {
        lines.push(format!("{} TFLOP/s", fmt::num(v)));
    }
    if let Some(v) = ai {
        lines.push(format!("intensity {} FLOP/B", fmt::num(v)));
    }
    if let Some(v) = pct_ceiling {
        lines.push(format!("{} of the roofline ceiling", fmt::pct(v)));
    }
    if let Some(v) = pct_cublas {
        lines.push(format!("{} of cuBLAS", fmt::pct(v)));
    }
    lines.push(p.gpu());
    Figures {
        tflops: tf,
        intensity: ai,
        pct_cublas,
        hover: lines.join("\n"),
    }
}

pub fn build(page: &mut PageContext, points: &[Point], pal: &Palette) {
    page.intro = "Matrix multiply: cuBLAS, candle and each hand-written kernel of the ladder, \
                  as achieved TFLOP/s against the memory and compute ceilings measured in the \
                  same run."
        .into();
    if points.is_empty() {
        empty_kind(page, "GEMM", "gemm_bench");
        return;
    }
    page.filters = filters(points, &["gpu", "dtype", "impl", "shape_set", "model"]);
    let multi = multi_gpu(points);
    let gpu_list = gpus(points);
    let ok: Vec<Point> = points.iter().filter(|p| p.ok()).copied().collect();
    let cublas_us = cublas_times(&ok);
    let figs: Vec<Figures> = ok.iter().map(|p| figures(p, &cublas_us)).collect();
    let kernels = kernel_order(&ok);
    let shapes = ordered_categories(ok.iter().map(|p| (shape_key(p), shape_dtype(p))).collect());
    let new_trace = |name: &str, p: &Point, mode: &str| {
        let mut t = Trace::new(name, pal.of(p.imp()), mode);
        t.pattern = gpu_pattern(p, &gpu_list);
        t
    };

    let rl = roofline::chart(&ok, &figs, pal);

    // Heatmap: kernels × shapes.
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
    hm.x_order = shapes.clone();
    hm.y_order = kernels.clone();
    for (p, f) in ok.iter().zip(&figs) {
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
    let hm = hm
        .measured(&ok, measured::AT_MEDIAN)
        .finish("No GEMM point carries TFLOP/s.");

    let mn_charts = mn_heatmap::charts(&ok, &figs);

    // Split charts: intensity per kernel, performance per kernel (one marker per shape).
    let split = |id: &str,
                 title: &str,
                 caption: &str,
                 y: &str,
                 stat: &str,
                 pick: &dyn Fn(&Figures) -> Option<f64>| {
        let mut c = ChartView::new(id, title, caption, "kernel", y);
        c.log_y = true;
        c.compact = true;
        c.x_order = kernels.clone();
        let mut set = TraceSet::default();
        for (p, f) in ok.iter().zip(&figs) {
            let Some(v) = pick(f) else { continue };
            let name = series(p.imp(), p, multi);
            set.get(&name, || new_trace(&name, p, "markers"))
                .points
                .push(pt_cat(p.imp(), v, f.hover.clone(), p.dims()));
        }
        c.traces = set.into_vec();
        c.measured(&ok, stat)
            .finish("No point carries this figure.")
    };
    let ai_chart = split(
        "gemm-intensity",
        "Arithmetic intensity per kernel",
        "FLOPs per byte of A, B and C (metrics.intensity_flop_per_byte), one marker per shape \
         and dtype the kernel ran; hover names the shape. Left of the ridge point a kernel is \
         memory-bound.",
        "FLOP/byte",
        "FLOPs over the bytes of A, B and C of each shape (no timing)",
        &|f| f.intensity,
    );
    let perf_chart = split(
        "gemm-performance",
        "Performance per kernel",
        "Achieved TFLOP/s at the P50 time, one marker per shape and dtype the kernel ran.",
        "TFLOP/s",
        measured::AT_MEDIAN,
        &|f| f.tflops,
    );

    // Speedup against a chosen baseline.
    let mut sp = ChartView::new(
        "gemm-speedup",
        "Speedup against a chosen baseline",
        "P50 time of the baseline divided by each kernel's P50 time at the same shape, dtype \
         and GPU. Pick the baseline above the chart; above 1× is faster than it.",
        "shape · dtype",
        "speedup (×)",
    );
    sp.kind = ChartKind::Speedup;
    sp.log_y = true;
    sp.x_order = shapes.clone();
    sp.baselines = kernels.iter().rev().cloned().collect();
    let mut set = TraceSet::default();
    for (p, f) in ok.iter().zip(&figs) {
        let Some(t) = p50_us(p) else { continue };
        let name = series(p.imp(), p, multi);
        let mut pt = pt_cat(&shape_dtype(p), t, f.hover.clone(), p.dims());
        pt.g = Some(peer_key(p));
        set.get(&name, || new_trace(&name, p, "markers"))
            .points
            .push(pt);
    }
    sp.traces = set.into_vec();
    let sp = sp
        .measured(&ok, measured::RATIO_OF_MEDIANS)
        .finish("No GEMM point carries a time.");

    let ld = vs_cublas::ladder_chart(&ok, &figs, pal);

    let mut s1 = Section::new(
        "roofline",
        "Roofline",
        "Where each kernel sits against the machine's measured limits.",
    );
    s1.charts.push(rl);
    let mut s2 = Section::new("heatmaps", "Heatmaps", "");
    s2.charts.push(hm);
    s2.charts.extend(mn_charts);
    let mut s3 = Section::new(
        "split",
        "Intensity and performance per kernel",
        "The roofline's two axes, one kernel at a time.",
    );
    s3.charts.push(ai_chart);
    s3.charts.push(perf_chart);
    let mut s4 = Section::new("comparison", "Speedup and the ladder", "");
    s4.charts.push(sp);
    s4.charts.push(ld);
    s4.tables.extend(not_ok_table(points));
    page.sections = vec![s1, s2, s3, s4];
}
