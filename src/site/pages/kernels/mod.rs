//! The page for user CUDA kernels (`kernel_bench`, kind `kernels`): time heatmap over two
//! parameters, the comparison along one parameter, speedup against a chosen baseline kernel,
//! the ncu profiler metrics per kernel, and the roofline against the run's ceilings.

use super::super::chart::{
    pt_cat, pt_num, Cell, ChartKind, ChartView, Dims, HLine, Trace, TraceSet,
};
use super::super::fmt;
use super::super::measured;
use super::super::names;
use super::super::palette::Palette;
use super::super::points::Point;
use super::common::*;
use super::{plain_table, PageContext};

mod profile;
use crate::artifact::Param;
use std::collections::{BTreeMap, BTreeSet};

/// The swept parameters of a row: every param but `block`, numbers first.
fn sweep(p: &Point) -> Vec<(String, f64)> {
    p.row
        .params
        .iter()
        .filter(|(k, _)| k.as_str() != "block")
        .filter_map(|(k, v)| match v {
            Param::Int(i) => Some((k.clone(), *i as f64)),
            Param::Float(f) => Some((k.clone(), *f)),
            _ => None,
        })
        .collect()
}

fn block(p: &Point) -> String {
    names::param_str(p.row, &["block"]).unwrap_or_else(|| "—".into())
}

/// "M=512 N=1024 K=1024" without the named parameters.
fn pset_text(p: &Point, without: &[&str]) -> String {
    sweep(p)
        .iter()
        .filter(|(k, _)| !without.contains(&k.as_str()))
        .map(|(k, v)| format!("{k}={}", fmt::num(*v).replace(',', "")))
        .collect::<Vec<_>>()
        .join(" ")
}

fn dims(p: &Point) -> Dims {
    let mut d = p.dims();
    d.insert("block".into(), block(p));
    d.insert("pset".into(), pset_text(p, &[]));
    d
}

fn p50(p: &Point) -> Option<f64> {
    names::stat(p.row, &["time_us"]).map(|(_, s)| s.p50)
}

fn hover(p: &Point) -> String {
    let s = names::stat(p.row, &["time_us"]).map(|(_, s)| s);
    let mut h = format!("{} block {}\n{}", p.imp(), block(p), pset_text(p, &[]));
    if let Some(s) = s {
        h += &format!(
            "\nP50 {} µs (P5 {}, P95 {}, n={})",
            fmt::num(s.p50),
            fmt::num(s.p5),
            fmt::num(s.p95),
            s.n
        );
    }
    if let Some(t) = names::metric(p.row, &["tflops"]) {
        h += &format!("\n{} TFLOP/s", fmt::num(t));
    }
    h + &format!("\n{}", p.gpu())
}

/// The two parameters with the most values (ties: M before N before others by name).
fn axes(points: &[Point]) -> Vec<String> {
    let mut vals: BTreeMap<String, BTreeSet<u64>> = BTreeMap::new();
    for p in points {
        for (k, v) in sweep(p) {
            vals.entry(k).or_default().insert(v.to_bits());
        }
    }
    let pref = |k: &str| match k {
        "M" => 0,
        "N" => 1,
        _ => 2,
    };
    let mut v: Vec<(String, usize)> = vals.into_iter().map(|(k, s)| (k, s.len())).collect();
    v.sort_by(|a, b| {
        b.1.cmp(&a.1)
            .then(pref(&a.0).cmp(&pref(&b.0)))
            .then(a.0.cmp(&b.0))
    });
    v.into_iter()
        .filter(|(_, n)| *n >= 2)
        .map(|(k, _)| k)
        .collect()
}

fn param_of(p: &Point, k: &str) -> Option<f64> {
    sweep(p).into_iter().find(|(n, _)| n == k).map(|(_, v)| v)
}

fn num_label(v: f64) -> String {
    fmt::num(v).replace(',', "")
}

pub fn build(page: &mut PageContext, points: &[Point], pal: &Palette) {
    if points.is_empty() {
        empty_kind(page, "user-kernel (kernel_bench)", "kernel_bench");
        page.intro = "Your own CUDA kernels, swept over their parameters with kernel_bench: \
                      time heatmaps, comparisons along one parameter, speedups, profiler \
                      metrics and the roofline."
            .into();
        return;
    }
    let ok: Vec<Point> = points
        .iter()
        .copied()
        .filter(|p| p.ok() && p50(p).is_some())
        .collect();
    let axes = axes(&ok);
    let kernels: BTreeSet<&str> = ok.iter().map(|p| p.imp()).collect();
    page.intro = format!(
        "{} points of {} kernel(s) from kernel_bench, each checked against the reference \
         before timing (CUDA events, median of the samples). Times are P50 of time_us; \
         parameters swept: {}.",
        points.len(),
        kernels.len(),
        if axes.is_empty() {
            "none".to_string()
        } else {
            axes.join(", ")
        }
    );
    page.filters = {
        let d: Vec<Dims> = points.iter().map(dims).collect();
        super::super::filters::collect(d.iter(), &["gpu", "impl", "block", "pset"])
    };
    let multi = multi_gpu(points);
    let mut s_time = Section::new(
        "time",
        "Execution time",
        "Each kernel's time over the parameter grid and along one parameter.",
    );
    // 1. Heatmaps: one per (kernel, block) over the two main parameters, other params fixed.
    if axes.len() >= 2 {
        let (ax, ay) = (axes[0].clone(), axes[1].clone());
        let mut groups: BTreeMap<(String, String), Vec<Point>> = BTreeMap::new();
        for p in &ok {
            groups
                .entry((p.imp().to_string(), block(p)))
                .or_default()
                .push(*p);
        }
        for (i, ((imp, blk), pts)) in groups.iter().enumerate() {
            let mut c = ChartView::new(
                &format!("kern-heat-{i}"),
                &format!("{imp} (block {blk}): P50 time over {ax} × {ay}"),
                &format!(
                    "Colour and label: P50 of time_us in µs (log colour scale) at each \
                     ({ax}, {ay}). Where other parameters take several values, a cell shows \
                     the slowest of them: narrow with the parameter set filter."
                ),
                &ax,
                &ay,
            );
            c.kind = ChartKind::Heatmap;
            c.z_title = "P50 time (µs)".into();
            c.log_z = true;
            c.compact = true;
            let mut xs: Vec<f64> = Vec::new();
            let mut ys: Vec<f64> = Vec::new();
            for p in pts {
                let (Some(x), Some(y), Some(t)) = (param_of(p, &ax), param_of(p, &ay), p50(p))
                else {
                    continue;
                };
                xs.push(x);
                ys.push(y);
                let f = dims(p);
                c.cells.push(Cell {
                    x: num_label(x),
                    y: num_label(y),
                    z: t,
                    label: fmt::num(t),
                    hover: hover(p),
                    f,
                });
            }
            let order = |mut v: Vec<f64>| -> Vec<String> {
                v.sort_by(|a, b| a.total_cmp(b));
                v.dedup();
                v.into_iter().map(num_label).collect()
            };
            c.x_order = order(xs);
            c.y_order = order(ys);
            s_time.charts.push(
                c.measured(pts, measured::MEDIAN)
                    .finish("No timed point of this kernel."),
            );
        }
    }
    // 2. Along one parameter, the others fixed (a filter), one line per kernel and block.
    if let Some(ax) = axes.first() {
        let mut c = ChartView::new(
            "kern-along",
            &format!("P50 time along {ax}"),
            &format!(
                "x: {ax}; y: P50 of time_us (log), whiskers P5 to P95. One line per kernel, \
                 block and setting of the other parameters; pick one setting with the \
                 'other parameters' filter."
            ),
            ax,
            "P50 time (µs)",
        );
        c.log_x = true;
        c.log_y = true;
        let mut set = TraceSet::default();
        let mut sorted = ok.clone();
        sorted.sort_by(|a, b| {
            param_of(a, ax)
                .unwrap_or(0.0)
                .total_cmp(&param_of(b, ax).unwrap_or(0.0))
        });
        for p in &sorted {
            let (Some(x), Some(s)) = (param_of(p, ax), names::stat(p.row, &["time_us"])) else {
                continue;
            };
            let fixed = pset_text(p, &[ax]);
            let mut f = dims(p);
            f.insert("fixed".into(), fixed.clone());
            let mut pt = pt_num(x, s.1.p50, hover(p), f);
            pt.lo = Some(s.1.p5);
            pt.hi = Some(s.1.p95);
            let name = series(&format!("{} {} · {fixed}", p.imp(), block(p)), p, multi);
            set.get(&name, || {
                Trace::new(&name, pal.of(p.imp()), "lines+markers")
            })
            .points
            .push(pt);
        }
        c.traces = set.into_vec();
        s_time.charts.push(
            c.measured(&ok, measured::MEDIAN_P5_P95)
                .finish("No timed point has a numeric parameter."),
        );
    }
    // The "fixed" filter only exists when some chart uses it.
    let fixed_dims: Vec<Dims> = s_time
        .charts
        .iter()
        .flat_map(|c| {
            c.cells.iter().map(|x| x.f.clone()).chain(
                c.traces
                    .iter()
                    .flat_map(|t| t.points.iter().map(|p| p.f.clone())),
            )
        })
        .collect();
    let fixed_filter = super::super::filters::collect(fixed_dims.iter(), &["fixed"]);
    page.filters.extend(fixed_filter);

    // 3. Speedup against a chosen baseline kernel, per parameter set (best block of each).
    let mut s_speed = Section::new(
        "speedup",
        "Speedup against a baseline kernel",
        "Choose the baseline kernel: each bar is P50(baseline) / P50(kernel) at the same \
         parameter set, each kernel at its fastest block (above 1: faster than the baseline).",
    );
    {
        let mut best: BTreeMap<(String, String, String), Point> = BTreeMap::new();
        for p in &ok {
            let key = (p.gpu(), pset_text(p, &[]), p.imp().to_string());
            let better = best
                .get(&key)
                .is_none_or(|q| p50(p).unwrap_or(f64::MAX) < p50(q).unwrap_or(f64::MAX));
            if better {
                best.insert(key, *p);
            }
        }
        let mut c = ChartView::new(
            "kern-speedup",
            "Speedup against the baseline kernel",
            "y: P50(baseline) / P50(kernel) at the same parameter set and GPU, each kernel at \
             its fastest block; the table holds the P50 times.",
            "parameter set",
            "speedup (×)",
        );
        c.kind = ChartKind::Speedup;
        // Baseline default: the slowest kernel overall (the seed's naive kernel).
        let mut total: BTreeMap<&str, f64> = BTreeMap::new();
        for p in best.values() {
            *total.entry(p.imp()).or_default() += p50(p).unwrap_or(0.0);
        }
        let mut bl: Vec<(&str, f64)> = total.into_iter().collect();
        bl.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
        c.baselines = bl.iter().map(|(k, _)| k.to_string()).collect();
        let mut set = TraceSet::default();
        let mut cats: Vec<(Vec<f64>, String)> = Vec::new();
        for p in best.values() {
            let label = pset_text(p, &[]);
            cats.push((sweep(p).iter().map(|(_, v)| *v).collect(), label.clone()));
            let mut pt = pt_cat(&label, p50(p).unwrap_or(f64::NAN), hover(p), p.dims());
            pt.g = Some(format!("{}\u{1f}{label}", p.gpu()));
            let name = series(p.imp(), p, multi);
            set.get(&name, || Trace::new(&name, pal.of(p.imp()), "bar"))
                .points
                .push(pt);
        }
        c.x_order = ordered_categories(cats);
        c.traces = set.into_vec();
        c.hlines.push(HLine {
            y: 1.0,
            label: "same as baseline".into(),
            color: "#6b7280".into(),
            f: Dims::new(),
        });
        s_speed.charts.push(
            c.measured(&ok, measured::RATIO_OF_MEDIANS)
                .finish("No timed points to compare."),
        );
    }

    // 4. Profiler metrics per kernel.
    let mut s_prof = Section::new(
        "profile",
        "Nsight Compute metrics",
        "From one extra profiled launch per point (ncu --clock-control none).",
    );
    let prof: Vec<Point> = ok
        .iter()
        .copied()
        .filter(|p| names::metric(p.row, &["ncu_memory_throughput_pct"]).is_some())
        .collect();
    s_prof.charts.extend(profile::charts(&prof));
    {
        let rows = prof
            .iter()
            .map(|p| {
                let m = |k: &str| {
                    names::metric(p.row, &[k])
                        .map(fmt::num)
                        .unwrap_or_else(|| "—".into())
                };
                (
                    vec![
                        p.imp().to_string(),
                        block(p),
                        pset_text(p, &[]),
                        m("ncu_duration_us"),
                        m("ncu_memory_throughput_pct"),
                        m("ncu_compute_throughput_pct"),
                        m("ncu_achieved_occupancy_pct"),
                        m("ncu_sm_efficiency_pct"),
                        names::metric(p.row, &["ncu_dram_bytes"])
                            .map(fmt::bytes)
                            .unwrap_or_else(|| "—".into()),
                        names::metric(p.row, &["bytes_count"])
                            .map(fmt::bytes)
                            .unwrap_or_else(|| "—".into()),
                        m("ncu_dram_gbps"),
                        m("ncu_achieved_tflops"),
                        m("ncu_registers_per_thread"),
                    ],
                    dims(p),
                )
            })
            .collect::<Vec<_>>();
        if !rows.is_empty() {
            s_prof.tables.push(NamedTable {
                id: "ncu-metrics".into(),
                title: "Every ncu metric".into(),
                caption: "DRAM bytes as measured by ncu beside the model's byte count: where \
                          they differ, caches absorbed (or added) traffic."
                    .into(),
                table: plain_table(
                    &[
                        "kernel",
                        "block",
                        "parameter set",
                        "ncu duration (µs)",
                        "memory %",
                        "compute %",
                        "occupancy %",
                        "SM efficiency %",
                        "DRAM bytes (ncu)",
                        "model bytes",
                        "DRAM GB/s (ncu)",
                        "TFLOP/s (ncu)",
                        "registers/thread",
                    ],
                    rows,
                ),
            });
        }
    }

    // 5. Roofline.
    let mut s_roof = Section::new(
        "roofline",
        "Roofline",
        "Each point at its arithmetic intensity against the run's measured ceilings.",
    );
    {
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
        for p in &ok {
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
        // Roofs per GPU run (ceilings of each artifact).
        let mut seen = BTreeSet::new();
        if let (Some(lo), Some(hi)) = (
            xs.iter()
                .copied()
                .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.min(v)))),
            xs.iter()
                .copied()
                .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v)))),
        ) {
            for p in &ok {
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
                    c.hlines.push(HLine {
                        y: *tf,
                        label: format!("{dt} matmul roof {} TFLOP/s ({})", fmt::num(*tf), p.gpu()),
                        color: "#b91c1c".into(),
                        f: gf.clone(),
                    });
                }
            }
        }
        c.traces = traces;
        s_roof.charts.push(
            c.measured(&ok, measured::AT_MEDIAN)
                .finish("No point carries flop_per_byte and tflops."),
        );
    }
    let mut sections = vec![s_time, s_speed, s_prof, s_roof];
    if let Some(t) = not_ok_table(points) {
        let mut s = Section::new("failed", "Failed and skipped points", "");
        s.tables.push(t);
        sections.push(s);
    }
    let mut all = Section::new("all", "All results", "");
    all.tables
        .extend(other_rows_table("all-results", "Every result", points));
    sections.push(all);
    page.sections = sections;
}
