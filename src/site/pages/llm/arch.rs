//! "Model architectures": layers, attention heads, KV heads and hidden size of each model
//! measured, smallest model first.

use crate::llm::configs;
use crate::site::chart::{pt_cat, ChartView, Dims, Trace, TraceSet};
use crate::site::fmt;
use crate::site::measured;
use crate::site::names;
use crate::site::palette::Palette;
use crate::site::points::Point;

/// One model's numbers: from the row's params, else from the named config of that name
/// (`crate::llm::configs`), which the LLM benchmark ran.
struct Arch {
    model: String,
    params: Option<f64>,
    numbers: Vec<(&'static str, f64)>,
}

fn arch(model: &str, p: &Point) -> Arch {
    let r = p.row;
    let named = configs::named(model).ok();
    let from_row = |keys: &[&str]| names::param_f64(r, keys);
    let n = |v: usize| Some(v as f64);
    let numbers = [
        (
            "layers",
            from_row(names::LAYERS).or(named.as_ref().and_then(|a| n(a.num_hidden_layers))),
        ),
        (
            "attention heads",
            from_row(names::HEADS).or(named.as_ref().and_then(|a| n(a.num_attention_heads))),
        ),
        (
            "KV heads",
            from_row(&["num_key_value_heads", "kv_heads"])
                .or(named.as_ref().and_then(|a| n(a.num_key_value_heads))),
        ),
        (
            "hidden size",
            from_row(names::HIDDEN).or(named.as_ref().and_then(|a| n(a.hidden_size))),
        ),
    ]
    .into_iter()
    .filter_map(|(k, v)| Some((k, v?)))
    .collect();
    let params =
        names::param_f64(r, names::PARAMS_COUNT).or(named.as_ref().map(|a| a.param_count() as f64));
    Arch {
        model: model.to_string(),
        params,
        numbers,
    }
}

/// The chart: dots side by side on one log axis (layers and heads are tens, hidden sizes
/// thousands), models ordered by parameter count.
pub fn chart(points: &[Point]) -> ChartView {
    let mut c = ChartView::new(
        "llm-arch",
        "Model architectures",
        "Layers, attention heads, KV heads and hidden size of each model measured (log \
         scale), smallest model first; parameter counts in the hover.",
        "model",
        "count (log scale)",
    );
    c.compact = true;
    c.log_y = true;
    c.offset_markers = true;
    let mut models: Vec<Arch> = Vec::new();
    for p in points {
        if let Some(m) = names::param_str(p.row, names::MODEL) {
            if !models.iter().any(|a| a.model == m) {
                models.push(arch(&m, p));
            }
        }
    }
    models.sort_by(|a, b| {
        let size = |x: &Arch| x.params.unwrap_or(f64::INFINITY);
        size(a).total_cmp(&size(b)).then(a.model.cmp(&b.model))
    });
    let mut set = TraceSet::default();
    for a in &models {
        let f: Dims = [("model".to_string(), a.model.clone())]
            .into_iter()
            .collect();
        let params = a
            .params
            .map(|v| format!("{} parameters", fmt::count(v)))
            .unwrap_or_default();
        for (name, v) in &a.numbers {
            let i = ["layers", "attention heads", "KV heads", "hidden size"]
                .iter()
                .position(|n| n == name)
                .unwrap_or(0);
            let hover = format!("{}\n{name} {}\n{params}", a.model, fmt::num(*v));
            set.get(name, || Trace::new(*name, Palette::nth(i + 3), "markers"))
                .points
                .push(pt_cat(&a.model, *v, hover, f.clone()));
        }
    }
    c.x_order = models.iter().map(|a| a.model.clone()).collect();
    c.traces = set.into_vec();
    c.measured(points, measured::PARAMETERS)
        .finish("No point names its model.")
}
