//! Composition rules every chart follows, written once: how many legend entries a chart may
//! have, how GPUs are told apart, and which parameters a label shows.
//! `docs/notes/pages.md` states the same rules for readers of the code.

use super::chart::ChartView;

/// A chart shows at most this many legend entries, at every width. A chart with more hides
/// its legend (the hover names every series), which the browser test refuses where three or
/// more colours are drawn: a page should rather facet the chart (`pages::common::per_gpu`),
/// move a dimension (the GPU) to the marker symbol, or put what the colour would say on the x
/// axis.
pub const MAX_LEGEND_ENTRIES: usize = 12;

/// Marker symbols per GPU, in first-seen order, where a chart tells GPUs apart by symbol
/// (colour stays the implementation's, `super::palette`).
pub const GPU_SYMBOLS: &[&str] = &["circle", "diamond", "square", "triangle-up", "cross"];

/// The legend entries a chart would show: its traces, less labelled guide lines (their name
/// is written on the line) and traces sharing an earlier one's entry.
pub fn legend_entries(c: &ChartView) -> usize {
    c.traces
        .iter()
        .filter(|t| !t.no_legend && (!t.guide || t.label.is_none()))
        .count()
}

/// Applies the legend rule: too many entries, no legend.
pub fn enforce(c: &mut ChartView) {
    if legend_entries(c) > MAX_LEGEND_ENTRIES {
        c.hide_legend = true;
    }
}

/// The symbol of the `i`-th GPU.
pub fn gpu_symbol(i: usize) -> &'static str {
    GPU_SYMBOLS[i % GPU_SYMBOLS.len()]
}

/// A GPU's short name for labels on lines: "NVIDIA H100 80GB HBM3" -> "H100". Only the
/// vendor, the memory size and type and a parenthesised note go, so two GPUs that differ in
/// another word ("FIXTURE GPU A", "FIXTURE GPU B"; "H100 PCIe") keep distinct names.
pub fn short_gpu(gpu: &str) -> String {
    let g = gpu.strip_prefix("NVIDIA ").unwrap_or(gpu);
    let g = g.split('(').next().unwrap_or(g);
    let memory = |w: &str| {
        w.starts_with("HBM")
            || w.strip_suffix("GB")
                .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
    };
    let short: Vec<&str> = g.split_whitespace().filter(|w| !memory(w)).collect();
    if short.is_empty() {
        gpu.trim().to_string()
    } else {
        short.join(" ")
    }
}

/// Labels that show only what varies: each label's parts in a fixed order; a part equal in
/// every label is left out of the labels and returned apart, for the subtitle.
pub fn varying(labels: &[Vec<String>]) -> (Vec<String>, Vec<String>) {
    let n = labels.iter().map(Vec::len).max().unwrap_or(0);
    let constant: Vec<bool> = (0..n)
        .map(|i| {
            let first = labels.first().and_then(|l| l.get(i));
            labels.len() > 1 && labels.iter().all(|l| l.get(i) == first)
        })
        .collect();
    let shown = labels
        .iter()
        .map(|l| {
            l.iter()
                .enumerate()
                .filter(|(i, _)| !constant[*i])
                .map(|(_, s)| s.as_str())
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    let common = labels
        .first()
        .map(|l| {
            l.iter()
                .enumerate()
                .filter(|(i, s)| constant[*i] && !s.is_empty())
                .map(|(_, s)| s.clone())
                .collect()
        })
        .unwrap_or_default();
    (shown, common)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::site::chart::Trace;

    #[test]
    fn too_many_series_hide_the_legend_labelled_guides_do_not_count() {
        let mut c = ChartView::new("c", "t", "", "x", "y");
        for i in 0..MAX_LEGEND_ENTRIES {
            c.traces
                .push(Trace::new(format!("s{i}"), "#000", "markers"));
        }
        let mut roof = Trace::new("roof", "#000", "lines");
        roof.guide = true;
        roof.label = Some("H200 bf16 771 TF/s".into());
        c.traces.push(roof);
        enforce(&mut c);
        assert!(!c.hide_legend);
        c.traces.push(Trace::new("one more", "#000", "markers"));
        enforce(&mut c);
        assert!(c.hide_legend);
    }

    #[test]
    fn labels_keep_only_the_parts_that_vary() {
        let l = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let (shown, common) = varying(&[
            l(&["llama-9m", "f16", "b1", "128+128"]),
            l(&["llama-24m", "f16", "b1", "128+128"]),
        ]);
        assert_eq!(shown, ["llama-9m", "llama-24m"]);
        assert_eq!(common, ["f16", "b1", "128+128"]);
        assert_eq!(short_gpu("NVIDIA H100 80GB HBM3"), "H100");
        assert_eq!(short_gpu("NVIDIA H200"), "H200");
        assert_eq!(short_gpu("NVIDIA H100 PCIe"), "H100 PCIe");
        assert_eq!(short_gpu("FIXTURE GPU A (synthetic data)"), "FIXTURE GPU A");
    }
}
