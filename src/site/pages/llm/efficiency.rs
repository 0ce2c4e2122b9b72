//! Efficiency: decode tokens/s per transformer layer and per billion parameters.

use super::rows::LlmRows;
use crate::site::chart::{pt_cat, ChartView, TraceSet};
use crate::site::fmt;
use crate::site::measured;
use crate::site::names;
use crate::site::pages::common::series;
use crate::site::palette::Palette;

/// Decode tokens/s divided by the row's `keys` param over `scale`.
fn chart(
    rows: &LlmRows,
    pal: &Palette,
    (id, title, caption, y): (&str, &str, &str, &str),
    keys: &[&str],
    scale: f64,
) -> ChartView {
    let mut c = ChartView::new(id, title, caption, "configuration", y);
    c.compact = true;
    c.x_order = rows.configs.clone();
    let mut set = TraceSet::default();
    for p in &rows.decode {
        let (Some(v), Some(d)) = (
            names::decode_tps(p.row),
            names::param_f64(p.row, keys).filter(|d| *d > 0.0),
        ) else {
            continue;
        };
        let y_val = v / (d / scale);
        let h = rows.hover(p, &[format!("{} {y}", fmt::num(y_val))]);
        let name = series(p.imp(), p, rows.multi);
        rows.push(
            &mut set,
            &name,
            p,
            pal,
            pt_cat(&rows.config(p), y_val, h, p.dims()),
        );
    }
    c.traces = set.into_vec();
    c.measured(&rows.decode, measured::MEDIAN_RATE)
        .finish("No decode point carries tokens/s with this model size.")
}

pub fn per_layer(rows: &LlmRows, pal: &Palette) -> ChartView {
    chart(
        rows,
        pal,
        (
            "llm-eff-layer",
            "Efficiency per layer",
            "Decode tokens/s divided by the number of transformer layers.",
            "tokens/s per layer",
        ),
        names::LAYERS,
        1.0,
    )
}

pub fn per_param(rows: &LlmRows, pal: &Palette) -> ChartView {
    chart(
        rows,
        pal,
        (
            "llm-eff-params",
            "Efficiency per parameter",
            "Decode tokens/s divided by the parameter count in billions.",
            "tokens/s per B params",
        ),
        names::PARAMS_COUNT,
        1e9,
    )
}
