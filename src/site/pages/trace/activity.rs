//! One activity (kernel, memcpy, memset) of the compact trace: its lane, place and hover.

use super::short_name::short_name;
use crate::site::fmt;
use serde_json::Value;

/// Column positions of the compact trace's rows.
pub struct Columns {
    step: usize,
    kind: usize,
    name: usize,
    class: usize,
    layer: usize,
    start: usize,
    dur: usize,
    grid: Option<usize>,
    block: Option<usize>,
}

fn col(t: &Value, name: &str) -> Option<usize> {
    t.get("columns")?
        .as_array()?
        .iter()
        .position(|c| c.as_str() == Some(name))
}

impl Columns {
    /// `None` when the trace lacks a required column.
    pub fn of(t: &Value) -> Option<Self> {
        Some(Columns {
            step: col(t, "step")?,
            kind: col(t, "kind")?,
            name: col(t, "name")?,
            class: col(t, "class")?,
            layer: col(t, "layer")?,
            start: col(t, "start_ns")?,
            dur: col(t, "dur_ns")?,
            grid: col(t, "grid"),
            block: col(t, "block"),
        })
    }
}

/// The trace's look-up tables: activity names, classes and kind names.
pub struct Tables<'t> {
    pub names: Vec<&'t str>,
    pub classes: Vec<&'t str>,
    pub kinds: Option<&'t Value>,
}

/// One drawn activity: its class, start and duration (µs from the step's start) and hover.
pub struct Activity<'t> {
    pub class: &'t str,
    pub x: f64,
    pub w: f64,
    pub hover: String,
}

/// The activity of row `r` if it belongs to step `step_index`; `s0` is the step's start (ns).
pub fn activity<'t>(
    r: &[Value],
    c: &Columns,
    tables: &Tables<'t>,
    step_index: usize,
    s0: f64,
) -> Option<Activity<'t>> {
    if r.get(c.step).and_then(Value::as_u64) != Some(step_index as u64) {
        return None;
    }
    let start = r.get(c.start).and_then(Value::as_f64)?;
    let dur = r.get(c.dur).and_then(Value::as_f64)?;
    let class = r
        .get(c.class)
        .and_then(Value::as_u64)
        .and_then(|i| tables.classes.get(i as usize).copied())
        .unwrap_or("other");
    let name = r
        .get(c.name)
        .and_then(Value::as_u64)
        .and_then(|i| tables.names.get(i as usize).copied())
        .unwrap_or("?");
    let kind = r
        .get(c.kind)
        .and_then(Value::as_str)
        .map(|k| {
            tables
                .kinds
                .and_then(|m| m.get(k))
                .and_then(Value::as_str)
                .unwrap_or(k)
                .to_string()
        })
        .unwrap_or_default();
    let layer = match r.get(c.layer) {
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
        hover += &format!("\ngrid {} block {}", dims3(c.grid), dims3(c.block));
    }
    Some(Activity { class, x, w, hover })
}
