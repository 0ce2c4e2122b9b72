//! What the GEMM charts read from a row: its shape, TFLOP/s, intensity, roof and % of cuBLAS,
//! with the hover that names them.

use crate::site::fmt;
use crate::site::names;
use crate::site::pages::common::{p50_us, params_text, peer_key, rank, DTYPE_ORDER};
use crate::site::points::Point;
use std::collections::HashMap;

pub fn mnk(p: &Point) -> Option<(f64, f64, f64)> {
    let r = p.row;
    Some((
        names::param_f64(r, names::GEMM_M)?,
        names::param_f64(r, names::GEMM_N)?,
        names::param_f64(r, names::GEMM_K)?,
    ))
}

/// Whether B is stored [N, K] (param `b_layout` = "nk").
fn b_transposed(p: &Point) -> bool {
    names::param_str(p.row, names::B_LAYOUT).as_deref() == Some("nk")
}

/// "4096³", "128×2048×2048", with the layer op in front when the shape comes from a model and
/// "B[N,K]" behind when B is stored [N, K] (as gemm_bench's own labels say).
pub fn shape(p: &Point) -> String {
    let s = problem_shape(p);
    if b_transposed(p) {
        format!("{s} B[N,K]")
    } else {
        s
    }
}

/// The kernel with " B[N,K]" when it read B stored [N, K]: a heatmap row, so each cell holds
/// one layout.
pub fn kernel_layout(p: &Point) -> String {
    if b_transposed(p) {
        format!("{} B[N,K]", p.imp())
    } else {
        p.imp().to_string()
    }
}

/// The shape and dtype without the B layout: a heatmap column.
pub fn problem_dtype(p: &Point) -> String {
    match p.dtype() {
        Some(d) => format!("{} {d}", problem_shape(p)),
        None => problem_shape(p),
    }
}

/// Which roofline a dtype goes on: the 32-bit inputs (the CUDA-core ladder; cuBLAS also as
/// TF32) or the 16-bit ones (tensor cores). One roofline of every dtype has too many kernels
/// for its legend.
pub fn dtype_family(p: &Point) -> String {
    match p.dtype().as_deref() {
        Some("f32" | "tf32" | "f64") | None => "32-bit inputs".into(),
        Some(_) => "16-bit inputs".into(),
    }
}

fn problem_shape(p: &Point) -> String {
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

pub fn shape_key(p: &Point) -> Vec<f64> {
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
        if b_transposed(p) { 1.0 } else { 0.0 },
    ]
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
pub fn roof(p: &Point, x: f64) -> Option<f64> {
    let c = &p.artifact().ceilings;
    let mem = c.copy_gbps.map(|g| g * x / 1e3);
    let peak = p.dtype().and_then(|d| c.matmul_tflops.get(&d).copied());
    match (mem, peak) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// cuBLAS's P50 time (µs) at each peer key (GPU and problem).
pub fn cublas_times(ok: &[Point]) -> HashMap<String, f64> {
    ok.iter()
        .filter(|p| names::is_cublas(p.imp()))
        .filter_map(|p| Some((peer_key(p), p50_us(p)?)))
        .collect()
}

/// A row's figures, each `None` when the row lacks what it needs.
pub struct Figures {
    pub tflops: Option<f64>,
    pub intensity: Option<f64>,
    pub pct_cublas: Option<f64>,
    pub hover: String,
}

pub fn figures(p: &Point, cublas_us: &HashMap<String, f64>) -> Figures {
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
