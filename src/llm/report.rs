//! A plain-text table of generate rows for the terminal (and the notes' results table).

use crate::artifact::{ResultRow, Status};

/// One line per row: model, batch, P, TTFT, decode tokens/s, step P50/P99, % of bound.
pub fn table(rows: &[ResultRow]) -> String {
    let mut s = format!(
        "| {:<16} | {:<18} | {:>5} | {:>5} | {:>9} | {:>10} | {:>9} | {:>9} | {:>7} |\n",
        "model", "impl", "batch", "P", "TTFT ms", "decode t/s", "step p50", "step p99", "% bound"
    );
    s.push_str(&format!("|{}|\n", ["-"; 9].map(|_| "---").join("|")));
    for r in rows.iter().filter(|r| r.benchmark == "generate") {
        let g = |k: &str| r.param_str(k).unwrap_or_default();
        if r.status != Status::Ok {
            s.push_str(&format!(
                "| {:<16} | {:<18} | {:>5} | {:>5} | {:?}: {} |\n",
                g("model"),
                r.implementation,
                g("batch"),
                g("prompt_len"),
                r.status,
                r.notes.join("; ")
            ));
            continue;
        }
        let m = |k: &str| r.metrics.get(k).map_or("-".into(), |v| format!("{v:.1}"));
        let st = |k: &str, f: fn(&crate::stats::Summary) -> f64| {
            r.stats
                .get(k)
                .map_or("-".into(), |x| format!("{:.2}", f(x)))
        };
        s.push_str(&format!(
            "| {:<16} | {:<18} | {:>5} | {:>5} | {:>9} | {:>10} | {:>9} | {:>9} | {:>7} |\n",
            g("model"),
            r.implementation,
            g("batch"),
            g("prompt_len"),
            st("ttft_ms", |x| x.p50),
            m("decode_tokens_per_s"),
            st("decode_step_ms", |x| x.p50),
            st("decode_step_ms", |x| x.p99),
            m("pct_of_bandwidth_bound"),
        ));
    }
    s
}
