//! "Decode against its bandwidth bound": measured decode tokens/s beside the rate of reading
//! every weight once per step at the measured copy bandwidth.

use super::rows::LlmRows;
use crate::site::chart::{pt_cat, ChartView, Trace, TraceSet};
use crate::site::fmt;
use crate::site::measured;
use crate::site::names;
use crate::site::pages::common::series;
use crate::site::palette::{self, Palette};
use crate::site::points::Point;
use std::collections::HashMap;

pub fn chart(rows: &LlmRows, pal: &Palette) -> ChartView {
    let mut bound = ChartView::new(
        "llm-bound",
        "Decode against its bandwidth bound",
        "Dots: measured decode tokens/s, side by side per implementation. Red dashes: the \
         bound if every step only read the weights once at the measured copy bandwidth \
         (metrics.bandwidth_bound_tokens_per_s); hover gives the fraction reached. Log scale.",
        "configuration",
        "decode tokens/s",
    );
    bound.log_y = true;
    bound.offset_markers = true;
    bound.x_order = rows.configs.clone();
    let mut set = TraceSet::default();
    let mut bound_seen: HashMap<String, ()> = HashMap::new();
    for p in &rows.decode {
        let v = names::decode_tps(p.row);
        let b = names::metric(p.row, names::BOUND_TPS);
        let pct = names::metric(p.row, names::PCT_BOUND).or_else(|| Some(100.0 * v? / b?));
        if let Some(v) = v {
            let mut extra = vec![format!("{} tokens/s", fmt::num(v))];
            if let (Some(b), Some(pc)) = (b, pct) {
                extra.push(format!(
                    "{} of the {} tokens/s bound",
                    fmt::pct(pc),
                    fmt::num(b)
                ));
            }
            let name = series(p.imp(), p, rows.multi);
            let pt = pt_cat(&rows.config(p), v, rows.hover(p, &extra), p.dims());
            rows.push_dot(&mut set, &name, p, pal, pt);
        }
        if let Some(b) = b {
            // One bound marker per configuration and GPU, whatever the implementation.
            let key = format!("{}\u{1f}{}", rows.config(p), p.gpu());
            if bound_seen.insert(key, ()).is_none() {
                bound_marker(rows, &mut set, p, b);
            }
        }
    }
    bound.traces = set.into_vec();
    bound
        .measured(&rows.decode, measured::MEDIAN_RATE)
        .finish("No decode point carries tokens/s.")
}

/// The bound `b` of the row's configuration and GPU, as a dash on the ceiling series.
fn bound_marker(rows: &LlmRows, set: &mut TraceSet, p: &Point, b: f64) {
    let name = if rows.multi {
        format!("bandwidth bound · {}", p.gpu())
    } else {
        "bandwidth bound".to_string()
    };
    let mut dims = p.dims();
    dims.remove("impl");
    let h = format!(
        "{}\nbound {} tokens/s\n{}",
        rows.config(p),
        fmt::num(b),
        p.gpu()
    );
    let t = set.get(&name, || {
        let mut t = Trace::new(&name, palette::CEILING, "markers");
        t.symbol = Some("line-ew-open".into());
        t
    });
    t.points.push(pt_cat(&rows.config(p), b, h, dims));
}
