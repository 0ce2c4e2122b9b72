//! The GEMM roofline: achieved TFLOP/s against arithmetic intensity, a colour per kernel and
//! a marker symbol per GPU, under each GPU's measured roof per dtype, labelled on the line.

use super::figures::{roof, Figures};
use crate::site::chart::{pt_num, ChartView, Trace, TraceSet};
use crate::site::fmt;
use crate::site::measured;
use crate::site::pages::common::gpus;
use crate::site::palette::{self, Palette};
use crate::site::points::Point;
use crate::site::rules;
use std::collections::BTreeSet;

/// "H200 bf16 771 TF/s": the roof's label, written on its flat end.
fn roof_label(gpu: &str, dtype: &str, peak: Option<f64>) -> String {
    match peak {
        Some(p) => format!("{} {dtype} {} TF/s", rules::short_gpu(gpu), fmt::num(p)),
        None => format!("{} {dtype} copy bound", rules::short_gpu(gpu)),
    }
}

/// Roofs whose flat parts lie within this factor of each other share one label (one line
/// each), so labels never print over each other.
const NEAR: f64 = 2.5;

/// Merges the labels of near roofs into the label of the highest: (trace index, peak).
fn merge_labels(traces: &mut [Trace], roofs: &[(usize, f64)]) {
    let mut sorted = roofs.to_vec();
    sorted.sort_by(|a, b| b.1.total_cmp(&a.1));
    let mut head: Option<(usize, f64)> = None;
    for (i, peak) in sorted {
        match head {
            Some((h, hp)) if hp / peak <= NEAR => {
                let line = traces[i].label.take().unwrap_or_default();
                if let Some(l) = traces[h].label.as_mut() {
                    l.push('\n');
                    l.push_str(&line);
                }
                traces[i].label = Some(String::new());
            }
            _ => head = Some((i, peak)),
        }
    }
}

pub fn chart(ok: &[Point], figs: &[Figures], pal: &Palette) -> ChartView {
    let gpu_list = gpus(ok);
    let key: Vec<String> = gpu_list
        .iter()
        .enumerate()
        .map(|(i, g)| format!("{} {}", rules::gpu_symbol(i), rules::short_gpu(g)))
        .collect();
    let mut c = ChartView::new(
        "gemm-roofline",
        "Roofline",
        &format!(
            "One marker per kernel and shape: arithmetic intensity (FLOPs / bytes of A, B and \
             C) against achieved TFLOP/s (P50 time), log-log; colour: kernel, marker: GPU ({}). \
             Red lines: the roof per GPU and dtype, min(copy GB/s × intensity, best matmul \
             TFLOP/s), both measured in the same run, labelled at their right end.",
            key.join(", ")
        ),
        "arithmetic intensity (FLOP/byte)",
        "TFLOP/s",
    );
    c.log_x = true;
    c.log_y = true;
    let mut set = TraceSet::default();
    let mut xs: Vec<f64> = Vec::new();
    let mut named: BTreeSet<String> = BTreeSet::new();
    for (p, f) in ok.iter().zip(figs) {
        let (Some(x), Some(y)) = (f.intensity, f.tflops) else {
            continue;
        };
        xs.push(x);
        let gi = gpu_list.iter().position(|g| *g == p.gpu()).unwrap_or(0);
        // One series per kernel and GPU, named by the kernel: the symbol tells the GPU.
        let id = format!("{}\u{1f}{gi}", p.imp());
        let first = !named.contains(p.imp());
        let t = set.get(&id, || {
            let mut t = Trace::new(p.imp(), pal.of(p.imp()), "markers");
            t.symbol = Some(rules::gpu_symbol(gi).into());
            t.no_legend = !first;
            t
        });
        named.insert(p.imp().to_string());
        t.points.push(pt_num(x, y, f.hover.clone(), p.dims()));
    }
    let (Some(lo), Some(hi)) = (
        xs.iter().copied().reduce(f64::min),
        xs.iter().copied().reduce(f64::max),
    ) else {
        c.traces = set.into_vec();
        return c
            .measured(ok, measured::AT_MEDIAN)
            .finish("No GEMM point carries TFLOP/s and the m, n, k or intensity to place it.");
    };
    let (x0, x1) = ((lo / 2.0).max(1e-3), hi * 2.0);
    let mut done: BTreeSet<(String, String)> = BTreeSet::new();
    let mut peaks: Vec<(String, f64)> = Vec::new();
    for p in ok {
        let (gpu, Some(dt)) = (p.gpu(), p.dtype()) else {
            continue;
        };
        if !done.insert((gpu.clone(), dt.clone())) {
            continue;
        }
        let ceil = &p.artifact().ceilings;
        let peak = ceil.matmul_tflops.get(&dt).copied();
        let mut px = vec![x0];
        if let (Some(g), Some(pk)) = (ceil.copy_gbps, peak) {
            let ridge = pk * 1e3 / g;
            if ridge > x0 && ridge < x1 {
                px.push(ridge);
            }
        }
        px.push(x1);
        let label = roof_label(&gpu, &dt, peak);
        let mut t = Trace::new(format!("roof {dt} · {gpu}"), palette::CEILING, "lines");
        t.dash = Some(if dt == "f32" { "dot" } else { "dash" }.into());
        t.guide = true;
        t.label = Some(label.clone());
        t.f = [("gpu", gpu.clone()), ("dtype", dt.clone())]
            .into_iter()
            .map(|(a, b)| (a.to_string(), b))
            .collect();
        for x in px {
            if let Some(y) = roof(p, x) {
                let hover = format!(
                    "roof: {label}, copy {} GB/s\n{} TFLOP/s at {} FLOP/B",
                    ceil.copy_gbps.map(fmt::num).unwrap_or("?".into()),
                    fmt::num(y),
                    fmt::num(x)
                );
                t.points.push(pt_num(x, y, hover, Default::default()));
            }
        }
        if t.points.len() >= 2 {
            let id = format!("roof\u{1f}{dt}\u{1f}{gpu}");
            set.get(&id, || t.clone());
            peaks.push((id, peak.unwrap_or(0.0)));
        }
    }
    c.traces = set.into_vec();
    let roofs: Vec<(usize, f64)> = peaks
        .iter()
        .filter_map(|(id, pk)| {
            let name = id.split('\u{1f}').collect::<Vec<_>>();
            let i = c
                .traces
                .iter()
                .position(|t| t.guide && t.name == format!("roof {} · {}", name[1], name[2]))?;
            Some((i, *pk))
        })
        .collect();
    merge_labels(&mut c.traces, &roofs);
    c.measured(ok, measured::AT_MEDIAN)
        .finish("No GEMM point carries TFLOP/s and the m, n, k or intensity to place it.")
}
