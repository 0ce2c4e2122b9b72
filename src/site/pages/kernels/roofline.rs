//! The kernel roofline: model and ncu-measured points at their arithmetic intensity under
//! each run's memory and matmul roofs.

use super::fields::{dims, hover};
use crate::site::chart::{pt_num, ChartView, Dims, HLine, Trace, TraceSet};
use crate::site::fmt;
use crate::site::measured;
use crate::site::names;
use crate::site::pages::common::series;
use crate::site::palette::Palette;
use crate::site::points::Point;
use std::collections::BTreeSet;

pub fn chart(ok: &[Point], multi: bool, pal: &Palette) -> ChartView {
    let mut c = ChartView::new(
        "kern-roofline",
        "Roofline (log-log)",
        "Filled markers: x = flop_count / bytes_count (model intensity), y = tflops from \
         the P50 time. Open markers: the ncu measurement, x = ncu_flop_count / \
         ncu_dram_bytes, y = ncu_achieved_tflops. Dashed: the memory roof (copy GB/s × \
         intensity) and the FP32 matmul roof (cuBLAS SGEMM), both measured in the same run.",
        "arithmetic intensity (FLOP/byte)",
        "TFLOP/s",
    );
    c.log_x = true;
    c.log_y = true;
    let mut set = TraceSet::default();
    let mut xs: Vec<f64> = Vec::new();
    for p in ok {
        let (Some(x), Some(y)) = (
            names::metric(p.row, &["flop_per_byte"]),
            names::metric(p.row, &["tflops"]),
        ) else {
            continue;
        };
        xs.push(x);
        let name = series(p.imp(), p, multi);
        set.get(&name, || Trace::new(&name, pal.of(p.imp()), "markers"))
            .points
            .push(pt_num(x, y, hover(p), dims(p)));
        if let (Some(fl), Some(by), Some(t)) = (
            names::metric(p.row, &["ncu_flop_count"]),
            names::metric(p.row, &["ncu_dram_bytes"]),
            names::metric(p.row, &["ncu_achieved_tflops"]),
        ) {
            if by > 0.0 && t > 0.0 {
                xs.push(fl / by);
                let n2 = format!("{name} (ncu)");
                let mut tr = Trace::new(&n2, pal.of(p.imp()), "markers");
                tr.symbol = Some("circle-open".into());
                set.get(&n2, || tr).points.push(pt_num(
                    fl / by,
                    t,
                    format!(
                        "ncu: {} FLOP/byte, {} TFLOP/s\n{}",
                        fmt::num(fl / by),
                        fmt::num(t),
                        hover(p)
                    ),
                    dims(p),
                ));
            }
        }
    }
    let mut traces = set.into_vec();
    let lo = xs
        .iter()
        .copied()
        .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.min(v))));
    let hi = xs
        .iter()
        .copied()
        .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
    if let (Some(lo), Some(hi)) = (lo, hi) {
        roofs(ok, lo, hi, &mut traces, &mut c.hlines);
    }
    c.traces = traces;
    c.measured(ok, measured::AT_MEDIAN)
        .finish("No point carries flop_per_byte and tflops.")
}

/// The roofs of each run (ceilings of each artifact) over intensities `lo`..`hi`: the memory
/// roof as a dashed guide trace, each matmul roof as a horizontal line.
fn roofs(ok: &[Point], lo: f64, hi: f64, traces: &mut Vec<Trace>, hlines: &mut Vec<HLine>) {
    let mut seen = BTreeSet::new();
    for p in ok {
        if !seen.insert(p.loaded.file.clone()) {
            continue;
        }
        let ceil = &p.artifact().ceilings;
        let top = ceil.matmul_tflops.values().copied().fold(0.0, f64::max);
        // From below the ridge point (where the roofs meet) to past the points.
        let ridge = ceil
            .copy_gbps
            .filter(|_| top > 0.0)
            .map(|bw| top * 1000.0 / bw);
        let (lo, hi) = (ridge.map_or(lo, |r| lo.min(r)) / 4.0, hi * 4.0);
        let mut gf = Dims::new();
        gf.insert("gpu".into(), p.gpu());
        if let Some(bw) = ceil.copy_gbps {
            let mut t = Trace::new(
                format!("memory roof {} GB/s", fmt::num(bw)),
                "#6b7280",
                "lines",
            );
            t.dash = Some("dash".into());
            t.guide = true;
            t.f = gf.clone();
            let n = 24;
            for i in 0..=n {
                let x = lo * (hi / lo).powf(i as f64 / n as f64);
                let y = bw * x / 1000.0;
                if top > 0.0 && y > top {
                    if let Some(r) = ridge {
                        t.points.push(pt_num(
                            r,
                            top,
                            format!("ridge point: {} FLOP/byte", fmt::num(r)),
                            Dims::new(),
                        ));
                    }
                    break;
                }
                t.points.push(pt_num(
                    x,
                    y,
                    format!(
                        "memory roof: {} TFLOP/s at {} FLOP/byte",
                        fmt::num(y),
                        fmt::num(x)
                    ),
                    Dims::new(),
                ));
            }
            traces.push(t);
        }
        for (dt, tf) in &ceil.matmul_tflops {
            hlines.push(HLine {
                y: *tf,
                label: format!("{dt} matmul roof {} TFLOP/s ({})", fmt::num(*tf), p.gpu()),
                color: "#b91c1c".into(),
                f: gf.clone(),
            });
        }
    }
}
