//! "Prefill vs decode": tokens/s of each phase per configuration, prefill hatched.

use super::rows::LlmRows;
use crate::site::chart::{pt_cat, ChartView, Trace, TraceSet};
use crate::site::fmt;
use crate::site::measured;
use crate::site::names;
use crate::site::pages::common::{gpu_pattern, series};
use crate::site::palette::Palette;

pub fn chart(rows: &LlmRows, pal: &Palette) -> ChartView {
    let mut pd = ChartView::new(
        "llm-prefill-decode",
        "Prefill vs decode",
        "Tokens per second in each phase: prefill processes the whole prompt at once \
         (compute-bound), decode one token per sequence per step (bandwidth- or \
         overhead-bound). Log scale.",
        "configuration",
        "tokens/s",
    );
    pd.log_y = true;
    pd.x_order = rows.configs.clone();
    let mut set = TraceSet::default();
    for (p, (phase, v)) in rows.charted.iter().flat_map(|p| {
        [
            ("prefill", names::prefill_tps(p.row)),
            ("decode", names::decode_tps(p.row)),
        ]
        .into_iter()
        .filter_map(move |(ph, v)| Some((p, (ph, v?))))
    }) {
        let name = format!("{} · {phase}", series(p.imp(), p, rows.multi));
        let pt = pt_cat(
            &rows.config(p),
            v,
            rows.hover(p, &[format!("{} tokens/s", fmt::num(v))]),
            p.dims(),
        );
        set.get(&name, || {
            let mut t = Trace::new(&name, pal.of(p.imp()), "bar");
            t.pattern = if phase == "prefill" {
                Some("/".into())
            } else {
                gpu_pattern(p, &rows.gpu_list)
            };
            t
        })
        .points
        .push(pt);
    }
    pd.traces = set.into_vec();
    pd.measured(&rows.charted, measured::MEDIAN_RATE)
        .finish("No prefill or decode point carries tokens/s.")
}
