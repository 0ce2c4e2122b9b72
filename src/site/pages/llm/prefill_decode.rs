//! "Prefill vs decode": tokens/s of each phase per configuration, a colour per implementation
//! and a marker per phase (triangle prefill, circle decode, as on the latency chart).

use super::rows::LlmRows;
use crate::site::chart::{pt_cat, ChartView, Trace, TraceSet};
use crate::site::fmt;
use crate::site::measured;
use crate::site::names;
use crate::site::palette::Palette;
use std::collections::BTreeSet;

pub fn chart(rows: &LlmRows, pal: &Palette) -> ChartView {
    let mut pd = ChartView::new(
        "llm-prefill-decode",
        "Prefill vs decode",
        "Tokens per second in each phase, triangles prefill and circles decode, a colour per \
         implementation: prefill processes the whole prompt at once (compute-bound), decode \
         one token per sequence per step (bandwidth- or overhead-bound). The phases and \
         implementations sit side by side at each configuration. Log scale.",
        "configuration",
        "tokens/s",
    );
    pd.log_y = true;
    pd.offset_markers = true;
    pd.x_order = rows.configs.clone();
    let mut set = TraceSet::default();
    let mut named = BTreeSet::new();
    for (p, (phase, v)) in rows.charted.iter().flat_map(|p| {
        [
            ("prefill", names::prefill_tps(p.row)),
            ("decode", names::decode_tps(p.row)),
        ]
        .into_iter()
        .filter_map(move |(ph, v)| Some((p, (ph, v?))))
    }) {
        let pt = pt_cat(
            &rows.config(p),
            v,
            rows.hover(p, &[format!("{phase}: {} tokens/s", fmt::num(v))]),
            p.dims(),
        );
        // One legend entry per implementation; the phase is the marker, named in the caption.
        let first = named.insert(p.imp().to_string());
        set.get(&format!("{}\u{1f}{phase}", p.imp()), || {
            let mut t = Trace::new(p.imp(), pal.of(p.imp()), "markers");
            t.symbol = Some(
                if phase == "prefill" {
                    "triangle-up"
                } else {
                    "circle"
                }
                .into(),
            );
            t.no_legend = !first;
            t
        })
        .points
        .push(pt);
    }
    pd.traces = set.into_vec();
    pd.measured(&rows.charted, measured::MEDIAN_RATE)
        .finish("No prefill or decode point carries tokens/s.")
}
