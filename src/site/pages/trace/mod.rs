//! The LLM kernel-trace page (`llm_bench --trace`, kind `llm_trace`): a timeline of the
//! prefill and of one decode step from the compact trace beside the artifact, the time per
//! operation class and per layer, and the idle share of each step.

use super::super::chart::{pt_cat, pt_num, ChartKind, ChartView, Dims, Trace};
use super::super::fmt;
use super::super::names;
use super::super::palette::Palette;
use super::super::points::Point;
use super::common::*;
use super::{plain_table, PageContext};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// What the trace charts draw: CUPTI activity times of the traced steps, not repeats.
const TRACED: &str = "CUPTI activity times of the traced steps (one run, no repeats)";

/// The compact trace's `format` field.
pub const TRACE_FORMAT: &str = "opbench_kernel_trace";

/// Operation classes in display order (the trace's own list wins when present).
const CLASSES: &[&str] = &[
    "matmul",
    "attention",
    "kv_copy",
    "rmsnorm",
    "rope",
    "elementwise",
    "sampling",
    "embedding",
    "memcpy",
    "memset",
    "other",
];

fn class_color(class: &str) -> String {
    let i = CLASSES
        .iter()
        .position(|c| *c == class)
        .unwrap_or(CLASSES.len());
    Palette::nth(i)
}

fn p_str(p: &Point, k: &str) -> String {
    names::param_str(p.row, &[k]).unwrap_or_default()
}

fn m(p: &Point, k: &str) -> Option<f64> {
    names::metric(p.row, &[k])
}

/// `_ZN8cublasLt19splitKreduce_kernelILi32E...` -> `cublasLt::splitKreduce_kernel`; other
/// names are cut at 60 characters.
pub fn short_name(name: &str) -> String {
    if let Some(rest) = name.strip_prefix("_Z") {
        let rest = rest.strip_prefix('N').unwrap_or(rest);
        let b = rest.as_bytes();
        let mut i = 0;
        let mut parts = Vec::new();
        while i < b.len() && b[i].is_ascii_digit() {
            let mut j = i;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            let n: usize = rest[i..j].parse().unwrap_or(0);
            if n == 0 || j + n > b.len() {
                break;
            }
            parts.push(&rest[j..j + n]);
            i = j + n;
        }
        if !parts.is_empty() {
            return parts.join("::").chars().take(60).collect();
        }
    }
    let s: String = name.chars().take(60).collect();
    if name.chars().count() > 60 {
        s + "…"
    } else {
        s
    }
}

/// Finds the compact kernel trace (`*.trace.json` with `format: opbench_kernel_trace`) in the
/// folder of the artifact `file` under `artifacts`.
pub fn find_trace(artifacts: &Path, file: &str) -> Option<(PathBuf, Value)> {
    let dir = artifacts.join(file).parent()?.to_path_buf();
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with(".trace.json"))
        })
        .collect();
    names.sort();
    for path in names {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        // Cheap check before parsing a Chrome trace of several MB.
        if !text.contains(TRACE_FORMAT) {
            continue;
        }
        if let Ok(v) = serde_json::from_str::<Value>(&text) {
            if v.get("format").and_then(Value::as_str) == Some(TRACE_FORMAT) {
                return Some((path, v));
            }
        }
    }
    None
}

fn col(t: &Value, name: &str) -> Option<usize> {
    t.get("columns")?
        .as_array()?
        .iter()
        .position(|c| c.as_str() == Some(name))
}

/// One step's timeline from the compact trace; `None` when the trace lacks the step.
fn timeline(t: &Value, step_index: usize, id: &str, gpu: &str) -> Option<ChartView> {
    let step = t.get("steps")?.as_array()?.get(step_index)?;
    let label = step.get("label")?.as_str()?.to_string();
    let s0 = step.get("start_ns")?.as_f64()?;
    let s1 = step.get("end_ns")?.as_f64()?;
    let names_tbl: Vec<&str> = t
        .get("names")?
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let classes: Vec<&str> = t
        .get("classes")?
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let kinds = t.get("kinds");
    let (c_step, c_kind, c_name, c_class, c_layer, c_start, c_dur) = (
        col(t, "step")?,
        col(t, "kind")?,
        col(t, "name")?,
        col(t, "class")?,
        col(t, "layer")?,
        col(t, "start_ns")?,
        col(t, "dur_ns")?,
    );
    let (c_grid, c_block) = (col(t, "grid"), col(t, "block"));
    let mut per_class: Vec<Trace> = Vec::new();
    let mut n = 0usize;
    for r in t.get("rows")?.as_array()? {
        let Some(r) = r.as_array() else { continue };
        if r.get(c_step).and_then(Value::as_u64) != Some(step_index as u64) {
            continue;
        }
        let (Some(start), Some(dur)) = (
            r.get(c_start).and_then(Value::as_f64),
            r.get(c_dur).and_then(Value::as_f64),
        ) else {
            continue;
        };
        let class = r
            .get(c_class)
            .and_then(Value::as_u64)
            .and_then(|i| classes.get(i as usize).copied())
            .unwrap_or("other");
        let name = r
            .get(c_name)
            .and_then(Value::as_u64)
            .and_then(|i| names_tbl.get(i as usize).copied())
            .unwrap_or("?");
        let kind = r
            .get(c_kind)
            .and_then(Value::as_str)
            .map(|k| {
                kinds
                    .and_then(|m| m.get(k))
                    .and_then(Value::as_str)
                    .unwrap_or(k)
                    .to_string()
            })
            .unwrap_or_default();
        let layer = match r.get(c_layer) {
            Some(Value::String(s)) => s.clone(),
            Some(v) if !v.is_null() => v.to_string(),
            _ => "—".into(),
        };
        let dims3 = |c: Option<usize>| {
            c.and_then(|c| r.get(c))
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .map(|v| v.to_string())
                        .collect::<Vec<_>>()
                        .join("×")
                })
                .unwrap_or_default()
        };
        let x = (start - s0) / 1000.0;
        let w = dur / 1000.0;
        let mut hover = format!(
            "{}\n{kind}, class {class}, layer {layer}\nstart {} µs, duration {} µs",
            short_name(name),
            fmt::num(x),
            fmt::num(w)
        );
        if kind == "kernel" {
            hover += &format!("\ngrid {} block {}", dims3(c_grid), dims3(c_block));
        }
        let mut f = Dims::new();
        f.insert("class".into(), class.to_string());
        let tr = match per_class.iter_mut().position(|t| t.name == class) {
            Some(i) => &mut per_class[i],
            None => {
                per_class.push(Trace::new(class, class_color(class), "bar"));
                per_class.last_mut().expect("pushed")
            }
        };
        tr.points.push(pt_num(x, w, hover, f));
        n += 1;
    }
    per_class.sort_by_key(|t| CLASSES.iter().position(|c| *c == t.name).unwrap_or(99));
    let wall = (s1 - s0) / 1000.0;
    let mut c = ChartView::new(
        id,
        &format!(
            "Timeline of {label} ({n} activities, {} µs wall)",
            fmt::num(wall)
        ),
        &format!(
            "Each bar is one kernel, memcpy or memset on the GPU ({gpu}, CUPTI device \
             timestamps), from its start to its end; x = µs since the step's window opened. \
             The top lane holds every activity, so its white gaps are the time the GPU ran \
             nothing; below, one lane per operation class. Dotted frame: the step's wall \
             window (host: before the first launch to after the synchronize). With more than \
             150 activities the chart opens on the first 150 (at full width, 2 µs kernels and \
             4 µs gaps merge into one block): the autoscale button of the chart's mode bar \
             shows the whole step; drag to zoom, double-click to come back."
        ),
        "time since the step started (µs)",
        "duration (µs)",
    );
    c.kind = ChartKind::Timeline;
    let mut frame = Trace::new("step window", "#6b7280", "lines");
    frame.guide = true;
    frame
        .points
        .push(pt_num(0.0, 0.0, String::new(), Dims::new()));
    frame
        .points
        .push(pt_num(wall, 0.0, String::new(), Dims::new()));
    c.traces = per_class;
    c.traces.push(frame);
    Some(c.finish("The trace has no activity in this step."))
}

pub fn build(page: &mut PageContext, points: &[Point]) {
    if points.is_empty() {
        empty_kind(
            page,
            "LLM kernel-trace (llm_bench --trace)",
            "llm_bench -- --trace",
        );
        page.intro = "Where a decode step's time goes, kernel by kernel: recorded with \
                      `llm_bench --trace` (CUPTI)."
            .into();
        return;
    }
    let gpu = points[0].gpu();
    let steps: Vec<&Point> = points
        .iter()
        .filter(|p| p.ok() && p.row.benchmark == "trace_step")
        .collect();
    let untraced = points[0]
        .artifact()
        .notes
        .iter()
        .find(|n| n.contains("untraced"))
        .cloned();
    let headline: Vec<String> = steps
        .iter()
        .filter(|p| p_str(p, "scope") == "decode_mean" || p_str(p, "phase") == "prefill")
        .filter_map(|p| {
            Some(format!(
                "{}: idle {} of {} µs wall ({} kernels, busy {} µs)",
                p_str(p, "step"),
                fmt::pct(m(p, "idle_pct")?),
                fmt::num(m(p, "wall_us")?),
                fmt::count(m(p, "kernels").unwrap_or(0.0)),
                fmt::num(m(p, "busy_us").unwrap_or(0.0)),
            ))
        })
        .collect();
    page.intro = format!(
        "One traced generation of {} on {gpu} (llm_bench --trace, CUPTI activity API). {}. \
         The walls are traced (CUPTI adds launch cost){}",
        p_str(&points[0], "model"),
        headline.join("; "),
        untraced
            .map(|u| format!("; {u}."))
            .unwrap_or_else(|| ".".into())
    );

    // Timelines from the compact trace beside the artifact.
    let mut s_tl = Section::new(
        "timeline",
        "Timelines",
        "The prefill and the first traced decode step, kernel by kernel.",
    );
    let artifacts = Path::new(&page.site.artifacts_dir).to_path_buf();
    match find_trace(&artifacts, &points[0].loaded.file) {
        Some((path, t)) => {
            let steps_json = t
                .get("steps")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let prefill = steps_json
                .iter()
                .position(|s| s.get("phase").and_then(Value::as_str) == Some("prefill"));
            let decode = steps_json
                .iter()
                .position(|s| s.get("phase").and_then(Value::as_str) == Some("decode"));
            for (i, id) in [(decode, "tl-decode"), (prefill, "tl-prefill")] {
                if let Some(c) = i.and_then(|i| timeline(&t, i, id, &gpu)) {
                    let c = c.measured(points, TRACED);
                    s_tl.charts.push(c);
                }
            }
            s_tl.intro = format!(
                "From {} (the compact trace: one row per activity). The prefill and the first \
                 traced decode step are drawn; the other decode steps are in the file and in \
                 the per-step table below. The operation-class filter keeps one class.",
                path.file_name()
                    .map(|n| n.to_string_lossy().to_string())
                    .unwrap_or_default()
            );
            if let Some(a) = t.get("attribution").and_then(Value::as_str) {
                s_tl.intro += &format!(" Attribution: {a}");
            }
        }
        None => {
            s_tl.intro = "No compact kernel trace (*.trace.json with format \
                          opbench_kernel_trace) beside the artifact: run llm_bench --trace \
                          with --trace-compact DIR/llm_kernels.trace.json to draw the \
                          timelines."
                .into();
        }
    }

    // Breakdown by class, idle included, per phase.
    let mut s_cls = Section::new(
        "classes",
        "Time per operation class",
        "GPU time of each operation class per phase, stacked, plus the idle time, so the \
         whole bar is the step's traced wall time.",
    );
    let phase_label = |p: &Point| p_str(p, "step");
    let shown = |p: &Point| p_str(p, "phase") == "prefill" || p_str(p, "scope") == "decode_mean";
    {
        let mut c = ChartView::new(
            "trace-classes",
            "Step time by operation class",
            "y: µs per step; stacked: each class's summed kernel time (trace_class time_us) and \
             the idle time (trace_step idle_us = wall − busy). Decode: mean of the traced steps.",
            "phase",
            "time per step (µs)",
        );
        c.stacked = true;
        c.compact = true;
        let mut traces: Vec<Trace> = Vec::new();
        let mut xs: Vec<String> = Vec::new();
        for p in points.iter().filter(|p| p.ok() && shown(p)) {
            let x = phase_label(p);
            let (name, y, extra) = match p.row.benchmark.as_str() {
                "trace_class" => {
                    let Some(t) = m(p, "time_us") else { continue };
                    let mut extra = format!(
                        "{} kernels, {} of busy",
                        fmt::count(m(p, "count").unwrap_or(0.0)),
                        fmt::pct(m(p, "pct_of_busy").unwrap_or(f64::NAN))
                    );
                    if let (Some(g), Some(pc)) = (m(p, "floor_gbps"), m(p, "floor_pct_of_copy_bw"))
                    {
                        extra += &format!(
                            "\nmust-move bytes / time: {} GB/s ({} of copy bandwidth)",
                            fmt::num(g),
                            fmt::pct(pc)
                        );
                    }
                    (p_str(p, "class"), t, extra)
                }
                "trace_step" => {
                    let Some(t) = m(p, "idle_us") else { continue };
                    (
                        "idle".to_string(),
                        t,
                        format!(
                            "idle {} of {} µs wall; gap P50 {} µs",
                            fmt::pct(m(p, "idle_pct").unwrap_or(f64::NAN)),
                            fmt::num(m(p, "wall_us").unwrap_or(f64::NAN)),
                            fmt::num(m(p, "gap_p50_us").unwrap_or(f64::NAN))
                        ),
                    )
                }
                _ => continue,
            };
            if !xs.contains(&x) {
                xs.push(x.clone());
            }
            let mut f = Dims::new();
            f.insert("class".into(), name.clone());
            let hover = format!("{x}\n{name}: {} µs\n{extra}", fmt::num(y));
            let color = if name == "idle" {
                "#d1d5db".to_string()
            } else {
                class_color(&name)
            };
            let i = match traces.iter().position(|t| t.name == name) {
                Some(i) => i,
                None => {
                    traces.push(Trace::new(&name, color, "bar"));
                    traces.len() - 1
                }
            };
            traces[i].points.push(pt_cat(&x, y, hover, f));
        }
        traces.sort_by_key(|t| {
            if t.name == "idle" {
                100
            } else {
                CLASSES.iter().position(|c| *c == t.name).unwrap_or(99)
            }
        });
        c.x_order = xs;
        c.traces = traces;
        s_cls.charts.push(
            c.measured(points, TRACED)
                .finish("No trace_class rows in the artifact."),
        );
    }
    // Idle share per step.
    {
        let mut c = ChartView::new(
            "trace-idle",
            "Idle share of each traced step",
            "y: idle_pct = (wall − busy) / wall of each traced step, from trace_step; hover: \
             the busy and wall times, kernel count and the gap P50.",
            "step",
            "idle (% of wall)",
        );
        c.compact = true;
        let mut t = Trace::new("idle share", "#6b7280", "bar");
        for p in &steps {
            let Some(v) = m(p, "idle_pct") else { continue };
            let x = p_str(p, "step");
            let hover = format!(
                "{x}\nidle {} ({} µs of {} µs wall)\nbusy {} µs, {} kernels, gap P50 {} µs, \
                 {} µs of wall per kernel",
                fmt::pct(v),
                fmt::num(m(p, "idle_us").unwrap_or(f64::NAN)),
                fmt::num(m(p, "wall_us").unwrap_or(f64::NAN)),
                fmt::num(m(p, "busy_us").unwrap_or(f64::NAN)),
                fmt::count(m(p, "kernels").unwrap_or(0.0)),
                fmt::num(m(p, "gap_p50_us").unwrap_or(f64::NAN)),
                fmt::num(m(p, "wall_us_per_kernel").unwrap_or(f64::NAN)),
            );
            t.points.push(pt_cat(&x, v, hover, Dims::new()));
        }
        c.traces = vec![t];
        s_cls.charts.push(
            c.measured(points, TRACED)
                .finish("No trace_step rows in the artifact."),
        );
    }
    let step_rows = steps
        .iter()
        .map(|p| {
            let v = |k: &str| m(p, k).map(fmt::num).unwrap_or_else(|| "—".into());
            (
                vec![
                    p_str(p, "step"),
                    m(p, "idle_pct").map(fmt::pct).unwrap_or_else(|| "—".into()),
                    v("wall_us"),
                    v("busy_us"),
                    v("idle_us"),
                    v("kernels"),
                    v("memcpys"),
                    v("gap_p50_us"),
                    v("gap_p95_us"),
                    v("gap_max_us"),
                    v("wall_us_per_kernel"),
                ],
                Dims::new(),
            )
        })
        .collect::<Vec<_>>();
    if !step_rows.is_empty() {
        s_cls.tables.push(NamedTable {
            id: "trace-steps".into(),
            title: "Per traced step".into(),
            caption: "wall: host window of the step; busy: union of GPU activity; idle = wall − \
                      busy; gaps: idle time between consecutive activities."
                .into(),
            table: plain_table(
                &[
                    "step",
                    "idle share",
                    "wall (µs)",
                    "busy (µs)",
                    "idle (µs)",
                    "kernels",
                    "memcpys",
                    "gap P50 (µs)",
                    "gap P95 (µs)",
                    "gap max (µs)",
                    "wall per kernel (µs)",
                ],
                step_rows,
            ),
        });
    }

    // Breakdown by layer, one chart per phase, stacked by class.
    let mut s_layer = Section::new(
        "layers",
        "Time per layer",
        "GPU time per layer (embedding, decoder layers, head), stacked by operation class.",
    );
    let mut phases: Vec<String> = Vec::new();
    for p in points
        .iter()
        .filter(|p| p.row.benchmark == "trace_layer" && shown(p))
    {
        let x = phase_label(p);
        if !phases.contains(&x) {
            phases.push(x);
        }
    }
    for (pi, phase) in phases.iter().enumerate() {
        let mut c = ChartView::new(
            &format!("trace-layers-{pi}"),
            &format!("GPU time per layer: {phase}"),
            "x: layer; y: µs of GPU time in that layer, stacked by class (the trace_layer \
             <class>_time_us metrics); hover: the matmuls' must-move bytes / time.",
            "layer",
            "GPU time (µs)",
        );
        c.stacked = true;
        let mut traces: Vec<Trace> = Vec::new();
        let mut cats: Vec<(Vec<f64>, String)> = Vec::new();
        for p in points.iter().filter(|p| {
            p.ok() && p.row.benchmark == "trace_layer" && shown(p) && phase_label(p) == *phase
        }) {
            let layer = p_str(p, "layer");
            let key = match layer.as_str() {
                "embedding" => -1.0,
                "head" => 1e6,
                l => l.parse().unwrap_or(1e5),
            };
            cats.push((vec![key], layer.clone()));
            for (k, v) in &p.row.metrics {
                let Some(class) = k.strip_suffix("_time_us") else {
                    continue;
                };
                let mut hover = format!(
                    "layer {layer}\n{class}: {} µs (layer total {} µs, {} of busy)",
                    fmt::num(*v),
                    fmt::num(m(p, "time_us").unwrap_or(f64::NAN)),
                    fmt::pct(m(p, "pct_of_busy").unwrap_or(f64::NAN))
                );
                if let (Some(g), Some(pc)) = (
                    m(p, "matmul_floor_gbps"),
                    m(p, "matmul_floor_pct_of_copy_bw"),
                ) {
                    hover += &format!(
                        "\nmatmul must-move bytes / time: {} GB/s ({} of copy bandwidth)",
                        fmt::num(g),
                        fmt::pct(pc)
                    );
                }
                let mut f = Dims::new();
                f.insert("class".into(), class.to_string());
                let i = match traces.iter().position(|t| t.name == class) {
                    Some(i) => i,
                    None => {
                        traces.push(Trace::new(class, class_color(class), "bar"));
                        traces.len() - 1
                    }
                };
                traces[i].points.push(pt_cat(&layer, *v, hover, f));
            }
        }
        traces.sort_by_key(|t| CLASSES.iter().position(|c| *c == t.name).unwrap_or(99));
        c.x_order = ordered_categories(cats);
        c.traces = traces;
        s_layer.charts.push(
            c.measured(points, TRACED)
                .finish("No trace_layer rows with class times."),
        );
    }
    page.filters = {
        let d: Vec<Dims> = s_tl
            .charts
            .iter()
            .chain(&s_cls.charts)
            .chain(&s_layer.charts)
            .flat_map(|c| {
                c.traces
                    .iter()
                    .flat_map(|t| t.points.iter().map(|p| p.f.clone()))
            })
            .collect();
        super::super::filters::collect(d.iter(), &["class"])
    };
    let mut sections = vec![s_tl, s_cls, s_layer];
    if let Some(t) = not_ok_table(points) {
        let mut s = Section::new("failed", "Failed and skipped points", "");
        s.tables.push(t);
        sections.push(s);
    }
    page.sections = sections;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mangled_names_are_shortened() {
        assert_eq!(
            short_name("_ZN8cublasLt19splitKreduce_kernelILi32ELi16EifEEvNS_18c"),
            "cublasLt::splitKreduce_kernel"
        );
        assert_eq!(short_name("_Z14gemvNSP_kernelIffffLi1E"), "gemvNSP_kernel");
        assert_eq!(short_name("rmsnorm_f16"), "rmsnorm_f16");
        assert_eq!(short_name(&"x".repeat(70)).chars().count(), 61);
    }
}
