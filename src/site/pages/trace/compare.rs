//! The implementations side by side in one table per phase: kernels, busy and idle time, the
//! untraced step, and the GPU time of every operation class.

use super::classes::class_rank;
use super::rows::{gpu_us, m, p_str, phase_of, shown, untraced_us, TraceRows, PHASES};
use crate::site::chart::Dims;
use crate::site::fmt;
use crate::site::pages::common::NamedTable;
use crate::site::pages::plain_table;
use crate::site::points::Point;

/// (label, metric, formatter) of the step rows the table shows.
type StepLine = (&'static str, fn(&Point) -> Option<f64>, fn(f64) -> String);

const STEP_LINES: &[StepLine] = &[
    ("kernels per step", |p| m(p, "kernels"), fmt::count),
    ("wall, traced (µs)", |p| m(p, "wall_us"), fmt::num),
    ("GPU busy (µs)", |p| m(p, "busy_us"), fmt::num),
    ("idle share, traced", |p| m(p, "idle_pct"), fmt::pct),
    ("untraced step (µs, timed repeats)", untraced_us, fmt::num),
    (
        "GPU busy share of the untraced step",
        |p| m(p, "untraced_busy_pct"),
        fmt::pct,
    ),
    ("gap P50 (µs)", |p| m(p, "gap_p50_us"), fmt::num),
    ("mean kernel (µs)", |p| m(p, "mean_kernel_us"), fmt::num),
];

/// One table per phase with a step row, decode first; ids `trace-compare-decode`, ...
pub fn tables(rows: &TraceRows) -> Vec<NamedTable> {
    PHASES
        .iter()
        .filter_map(|phase| table(rows, phase))
        .collect()
}

fn table(rows: &TraceRows, phase: &str) -> Option<NamedTable> {
    let steps: Vec<Option<&Point>> = rows.impls.iter().map(|i| rows.step_row(i, phase)).collect();
    let label = p_str(steps.iter().flatten().next()?, "step");
    let cell = |v: Option<f64>, f: fn(f64) -> String| v.map(f).unwrap_or_else(|| "—".into());
    let mut lines: Vec<(Vec<String>, Dims)> = STEP_LINES
        .iter()
        .map(|(name, get, f)| {
            let mut cells = vec![name.to_string()];
            cells.extend(steps.iter().map(|p| cell(p.and_then(get), *f)));
            (cells, Dims::new())
        })
        .collect();
    let class_rows: Vec<&Point> = rows
        .points
        .iter()
        .filter(|p| p.ok() && p.row.benchmark == "trace_class" && shown(p) && phase_of(p) == phase)
        .collect();
    let mut classes: Vec<String> = class_rows.iter().map(|p| p_str(p, "class")).collect();
    classes.sort_by_key(|c| class_rank(c));
    classes.dedup();
    for class in classes {
        let mut cells = vec![format!("{class}: busy µs (kernels; summed µs)")];
        for imp in &rows.impls {
            let r = class_rows
                .iter()
                .find(|p| p.imp() == imp && p_str(p, "class") == class);
            let fig = r.and_then(|p| Some((gpu_us(p)?, m(p, "count")?, m(p, "time_us")?)));
            cells.push(match fig {
                Some((b, n, t)) => format!("{} ({}; {})", fmt::num(b), fmt::count(n), fmt::num(t)),
                None => "—".into(),
            });
        }
        let mut f = Dims::new();
        f.insert("class".into(), class);
        lines.push((cells, f));
    }
    let mut columns = vec!["quantity"];
    columns.extend(rows.impls.iter().map(String::as_str));
    Some(NamedTable {
        id: format!("trace-compare-{phase}"),
        title: format!("Side by side: {label}"),
        caption: "Traced figures from the trace_step and trace_class rows of each \
                  implementation's own traced generation (same model, batch, prompt and \
                  steps); the untraced step is the same point's p50 from its timed repeats, \
                  and the GPU busy share of it is busy / untraced step. A class's busy µs is \
                  what its kernels add to the busy time (the classes sum to GPU busy); summed \
                  µs adds their durations, which counts kernels that overlap (opbench's \
                  programmatic dependent launch) twice."
            .into(),
        table: plain_table(&columns, lines),
    })
}
