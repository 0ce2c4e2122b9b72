//! The overview's cards: one per benchmark kind and GPU, the GPUs of a kind side by side, each
//! linking to the chart it summarises; a kind with no figures gets one muted card.

use super::{comm_card, decode_card, gemm_card, kernels_card, layernorm_card, traces_card};
use crate::site::chart::Dims;
use crate::site::pages::common::gpus;
use crate::site::pages::Card;
use crate::site::points::{Point, Store};

/// What a kind's card is made from: its figure from one GPU's points, and every GPU's points of
/// the kind (for a figure that must compare alike on each GPU).
type Maker = fn(&str, &[Point], &[Point]) -> Option<Card>;

/// (kind, title when muted, page, benchmark binary, maker), in display order.
const SPECS: [(&str, &str, &str, &str, Maker); 6] = [
    (
        "layernorm",
        "LayerNorm speedup",
        "layernorm.html",
        "layernorm_bench",
        layernorm_card::card,
    ),
    (
        "llm",
        "LLM decode",
        "llm.html",
        "llm_bench",
        decode_card::card,
    ),
    (
        "gemm",
        "Hand-written GEMM",
        "gemm.html",
        "gemm_bench",
        gemm_card::card,
    ),
    (
        "comm",
        "Collectives",
        "comm.html",
        "comm_bench",
        comm_card::card,
    ),
    (
        "kernels",
        "Your kernels",
        "kernels.html",
        "kernel_bench",
        kernels_card::card,
    ),
    (
        "trace",
        "Traced workloads",
        "traces.html",
        "opbench trace",
        traces_card::card,
    ),
];

/// Every card: per kind, its GPUs (sorted) side by side.
pub fn cards(store: &Store) -> Vec<Card> {
    let mut out = Vec::new();
    let mut muted_cards = Vec::new();
    for (kind, title, page, bin, make) in SPECS {
        let pts = store.of_kind(kind);
        let mut gpu_list = gpus(&pts);
        gpu_list.sort();
        let before = out.len();
        for gpu in gpu_list {
            let mine: Vec<Point> = pts.iter().filter(|p| p.gpu() == gpu).copied().collect();
            out.extend(make(&gpu, &mine, &pts));
        }
        if out.len() == before {
            let why = if pts.is_empty() {
                format!("no data yet: run {bin}")
            } else {
                "artifacts present, but no point has the figures".into()
            };
            muted_cards.push(Card {
                title: title.into(),
                value: "—".into(),
                stat: String::new(),
                details: vec![why],
                link: page.into(),
                f: Dims::new(),
                muted: true,
            });
        }
    }
    out.extend(muted_cards);
    out
}

/// The filter coordinates of a card of one GPU.
pub fn gpu_dims(gpu: &str) -> Dims {
    [("gpu".to_string(), gpu.to_string())].into_iter().collect()
}

/// "layernorm.html#chart=fig-ln-speedup&gpu=NVIDIA%20H200": the page, the chart to scroll to
/// (`dashboard.js` reads `chart`) and the GPU filter.
pub fn link(page: &str, chart_id: &str, gpu: &str) -> String {
    format!(
        "{page}#chart=fig-{}&gpu={}",
        uri_component(chart_id),
        uri_component(gpu)
    )
}

/// "llm.html#gpu=NVIDIA%20H200": the page filtered to the GPU.
pub fn page_link(page: &str, gpu: &str) -> String {
    format!("{page}#gpu={}", uri_component(gpu))
}

/// JavaScript's `encodeURIComponent`: every byte but the unreserved ASCII ones as %XX.
fn uri_component(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_encode_the_gpu_as_the_browser_reads_it() {
        assert_eq!(
            link("gemm.html", "gemm-ladder", "NVIDIA H100 80GB&HBM3"),
            "gemm.html#chart=fig-gemm-ladder&gpu=NVIDIA%20H100%2080GB%26HBM3"
        );
    }
}
