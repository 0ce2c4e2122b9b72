//! The LayerNorm page: baseline vs ours per shape, speedup, GB/s against the copy ceiling,
//! and the correctness of every point.

use super::super::chart::{pt_cat, ChartView, HLine, Pt, Trace, TraceSet};
use super::super::fmt;
use super::super::measured;
use super::super::names;
use super::super::palette::{self, Palette};
use super::super::points::Point;
use super::common::*;
use super::PageContext;

/// "4096×8192 bf16 cold": the point's coordinates (implementation and GPU aside).
fn label(p: &Point) -> String {
    let r = p.row;
    let mut parts = Vec::new();
    match (
        names::param_str(r, names::ROWS),
        names::param_str(r, names::COLS),
    ) {
        (Some(a), Some(b)) => parts.push(format!("{a}×{b}")),
        _ => parts.push(params_text(p)),
    }
    parts.extend(p.dtype());
    parts.extend(names::param_str(r, names::MODE));
    parts.join(" ")
}

fn sort_key(p: &Point) -> Vec<f64> {
    let r = p.row;
    let rows = names::param_f64(r, names::ROWS).unwrap_or(0.0);
    let cols = names::param_f64(r, names::COLS).unwrap_or(0.0);
    vec![
        rank(&p.dtype().unwrap_or_default(), DTYPE_ORDER),
        rank(
            &names::param_str(r, names::MODE).unwrap_or_default(),
            &["warm", "cold"],
        ),
        rows * cols,
        rows,
    ]
}

/// Achieved GB/s: the metric, else bytes moved over the P50 time, else 2·rows·cols·elt.
fn gbps(p: &Point) -> Option<f64> {
    if let Some(v) = names::metric(p.row, names::GBPS) {
        return Some(v);
    }
    let t = p50_us(p)?;
    let bytes = names::metric(p.row, names::BYTES_MOVED).or_else(|| {
        let r = p.row;
        Some(
            2.0 * names::param_f64(r, names::ROWS)?
                * names::param_f64(r, names::COLS)?
                * names::dtype_bytes(&p.dtype()?)?,
        )
    })?;
    Some(bytes / (t * 1e3))
}

fn hover(p: &Point, label: &str, extra: &[String]) -> String {
    let mut lines = vec![p.imp().to_string(), label.to_string()];
    if let Some((k, s)) = names::primary_stat(p.row) {
        let u = names::unit_label(k);
        lines.push(format!(
            "P50 {} {u} (P5 {}, P95 {}, n={})",
            fmt::num(s.p50),
            fmt::num(s.p5),
            fmt::num(s.p95),
            s.n
        ));
    }
    lines.extend(extra.iter().cloned());
    if let Some(t) = &p.row.timing {
        lines.push(if t.l2_cleared {
            "L2 cleared before each launch".into()
        } else {
            format!("warm L2, {} launches per sample", t.launches_per_sample)
        });
    }
    lines.push(p.gpu());
    lines.join("\n")
}

pub fn build(page: &mut PageContext, points: &[Point], pal: &Palette) {
    page.intro = "LayerNorm forward: candle's layer_norm (the baseline) against opbench's \
                  kernel at each shape, dtype and L2 mode, with the achieved bandwidth as a \
                  fraction of the device-to-device copy ceiling measured in the same run."
        .into();
    if points.is_empty() {
        empty_kind(page, "LayerNorm", "layernorm_bench");
        return;
    }
    page.filters = filters(points, &["gpu", "dtype", "impl", "mode"]);
    let multi = multi_gpu(points);
    let gpu_list = gpus(points);
    let ok: Vec<Point> = points.iter().filter(|p| p.ok()).copied().collect();
    let extras = distinguishing(points, label);
    let lab = |p: &Point| with_extra(label(p), p, &extras);
    let x_order = ordered_categories(points.iter().map(|p| (sort_key(p), lab(p))).collect());
    let peers = peer_index(points, peer_key);
    let baseline = names::LN_BASELINE[0];

    let push = |set: &mut TraceSet, p: &Point, mode: &str, pt: Pt| {
        let name = series(p.imp(), p, multi);
        set.get(&name, || {
            let mut t = Trace::new(&name, pal.of(p.imp()), mode);
            t.pattern = gpu_pattern(p, &gpu_list);
            t
        })
        .points
        .push(pt);
    };

    // Latency.
    let mut lat = ChartView::new(
        "ln-latency",
        "Latency per shape: baseline vs ours",
        "Bars: P50 kernel time; whiskers: P5 to P95 of the samples (stats.time_us). Log scale.",
        "shape · dtype · L2 mode",
        "time (µs)",
    );
    lat.log_y = true;
    lat.x_order = x_order.clone();
    let mut set = TraceSet::default();
    for p in &ok {
        let Some((k, s)) = names::primary_stat(p.row) else {
            continue;
        };
        let f = names::to_us(k);
        let mut pt = pt_cat(&lab(p), s.p50 * f, hover(p, &lab(p), &[]), p.dims());
        pt.lo = Some(s.p5 * f);
        pt.hi = Some(s.p95 * f);
        push(&mut set, p, "bar", pt);
    }
    lat.traces = set.into_vec();
    let lat = lat
        .measured(&ok, measured::MEDIAN_P5_P95)
        .finish("No timed LayerNorm point carries a time statistic.");

    // Speedup.
    let mut sp = ChartView::new(
        "ln-speedup",
        &format!("Speedup over {baseline}"),
        &format!(
            "P50 time of {baseline} divided by P50 time of each other implementation at the \
             same shape, dtype, mode and GPU (metrics.speedup_vs_candle when recorded). Above \
             the dashed line at 1× is faster."
        ),
        "shape · dtype · L2 mode",
        &format!("speedup over {baseline} (×)"),
    );
    sp.x_order = x_order.clone();
    sp.hlines.push(HLine {
        y: 1.0,
        label: format!("{baseline} (1×)"),
        color: palette::GUIDE.into(),
        f: Default::default(),
    });
    let mut set = TraceSet::default();
    for p in ok.iter().filter(|p| p.imp() != baseline) {
        let base = peers
            .get(&(peer_key(p), baseline.to_string()))
            .and_then(p50_us);
        let v = names::metric(p.row, names::SPEEDUP_LN)
            .or_else(|| Some(base? / p50_us(p)?))
            .filter(|v| v.is_finite());
        let Some(v) = v else { continue };
        let extra = vec![
            format!("speedup {}", fmt::times(v)),
            match base {
                Some(b) => format!("{baseline} P50 {} µs", fmt::num(b)),
                None => format!("{baseline} time not in the artifacts"),
            },
        ];
        push(
            &mut set,
            p,
            "bar",
            pt_cat(&lab(p), v, hover(p, &lab(p), &extra), p.dims()),
        );
    }
    sp.traces = set.into_vec();
    let sp = sp
        .measured(&ok, measured::RATIO_OF_MEDIANS)
        .finish(&format!(
            "No point has both a {baseline} time and another implementation's time."
        ));

    // Bandwidth against the copy ceiling.
    let mut bw = ChartView::new(
        "ln-bandwidth",
        "Achieved bandwidth vs the copy ceiling",
        "Bars: bytes read + written per second at the P50 time (metrics.gbps). Red line: the \
         device-to-device copy bandwidth measured in the same run (ceilings.copy_gbps).",
        "shape · dtype · L2 mode",
        "GB/s",
    );
    bw.x_order = x_order.clone();
    let mut seen_gpu: Vec<String> = Vec::new();
    for p in points {
        let g = p.gpu();
        if let (false, Some(c)) = (seen_gpu.contains(&g), p.artifact().ceilings.copy_gbps) {
            bw.hlines.push(HLine {
                y: c,
                label: format!("copy ceiling {} GB/s · {g}", fmt::num(c)),
                color: palette::CEILING.into(),
                f: [("gpu".to_string(), g.clone())].into_iter().collect(),
            });
            seen_gpu.push(g);
        }
    }
    let mut set = TraceSet::default();
    for p in &ok {
        let Some(v) = gbps(p) else { continue };
        let pct = names::metric(p.row, names::PCT_COPY)
            .or_else(|| Some(100.0 * v / p.artifact().ceilings.copy_gbps?));
        let extra = vec![format!(
            "{} GB/s{}",
            fmt::num(v),
            pct.map(|c| format!(" = {} of copy", fmt::pct(c)))
                .unwrap_or_default()
        )];
        push(
            &mut set,
            p,
            "bar",
            pt_cat(&lab(p), v, hover(p, &lab(p), &extra), p.dims()),
        );
    }
    bw.traces = set.into_vec();
    let bw = bw
        .measured(&ok, measured::AT_MEDIAN)
        .finish("No point carries GB/s or the bytes and time to compute it.");

    // Correctness.
    let mut cor = ChartView::new(
        "ln-correctness",
        "Correctness of every point",
        "Relative error ||y − ref||₂ / ||ref||₂ against the float64 CPU reference (markers), \
         and the tolerance it was judged by (dashes). Red crosses failed and were not timed.",
        "shape · dtype · L2 mode",
        "relative error",
    );
    cor.log_y = true;
    cor.x_order = x_order;
    let mut set = TraceSet::default();
    for p in points {
        let Some(c) = &p.row.correctness else {
            continue;
        };
        let name = if c.passed {
            series(p.imp(), p, multi)
        } else {
            "failed check".to_string()
        };
        let color = if c.passed {
            pal.of(p.imp())
        } else {
            palette::FAIL.to_string()
        };
        let extra = vec![correctness_text(p)];
        let t = set.get(&name, || {
            let mut t = Trace::new(&name, color, "markers");
            if !c.passed {
                t.symbol = Some("x".into());
            }
            t
        });
        t.points.push(pt_cat(
            &lab(p),
            c.rel_err.max(1e-12),
            hover(p, &lab(p), &extra),
            p.dims(),
        ));
        let tol = set.get("tolerance", || {
            let mut t = Trace::new("tolerance", palette::GUIDE, "markers");
            t.symbol = Some("line-ew-open".into());
            t
        });
        tol.points.push(pt_cat(
            &lab(p),
            c.tolerance,
            hover(p, &lab(p), &[]),
            p.dims(),
        ));
    }
    cor.traces = set.into_vec();
    let cor = cor
        .measured(points, measured::CHECK)
        .finish("No point carries a correctness check.");

    let mut s1 = Section::new(
        "latency",
        "Latency and speedup",
        "Lower time is better; each bar is one (shape, dtype, mode) point.",
    );
    s1.charts.push(lat);
    s1.charts.push(sp);
    let mut s2 = Section::new(
        "bandwidth",
        "Bandwidth",
        "LayerNorm reads x and writes y once: it is memory-bound, so the copy ceiling is its floor.",
    );
    s2.charts.push(bw);
    let mut s3 = Section::new("correctness", "Correctness", "");
    s3.charts.push(cor);
    s3.tables.extend(not_ok_table(points));
    page.sections = vec![s1, s2, s3];
}
