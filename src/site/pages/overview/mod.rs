//! The overview: one card per benchmark kind and GPU (a median with its spread, linking to the
//! chart it summarises), the regressions strip from the history, a table of every benchmark's
//! headline figures, one system panel per environment, and the list of artifacts.

mod artifacts;
mod cards;
mod comm_card;
mod decode_card;
mod gemm_card;
mod kernels_card;
mod layernorm_card;
mod regressions;
mod summary_table;
mod systems;
mod traces_card;

pub use regressions::RegressionStrip;

use super::common::{filters, NamedTable, Section};
use super::history::Prepared;
use super::{Empty, PageContext};
use crate::site::points::Store;

pub fn build(page: &mut PageContext, store: &Store, hist: &Prepared) {
    page.template = "overview.html".into();
    page.intro = "GPU operator benchmarks, read from the JSON artifacts the benchmarks wrote: \
                  first what the newest commit changed, then each kind's headline figure (a \
                  median with its spread, linking to its chart)."
        .into();
    if store.loaded.is_empty() {
        page.empty = Some(Empty {
            message: format!(
                "No artifacts in {} yet. Run a benchmark on a GPU machine (it writes a JSON \
                 artifact under artifacts/), then render the site again.",
                page.site.artifacts_dir
            ),
            command: "cargo run --release --features cuda --bin layernorm_bench && cargo run --release --bin dashboard".into(),
        });
    }
    page.filters = filters(&store.points, &["gpu"]);
    page.cards = cards::cards(store);
    page.regressions = regressions::strip(hist);
    page.envs = systems::panels(store);
    let mut s1 = Section::new(
        "benchmarks",
        "Benchmarks",
        "One row per benchmark, implementation and GPU: how many points were measured, the \
         best headline figure and the point it was measured at (the pages chart every point: a \
         median over shapes from one token to 8192³ would mean nothing), the range of P50 \
         times and the correctness checks.",
    );
    s1.tables.push(NamedTable {
        id: "summary".into(),
        title: "Headline figures".into(),
        caption: String::new(),
        table: summary_table::table(store),
    });
    let (t, hidden) = artifacts::table(store);
    let mut s2 = Section::new("artifacts", "Artifacts", "");
    s2.tables.push(NamedTable {
        id: "artifacts".into(),
        title: "Runs, newest first".into(),
        caption: if hidden > 0 {
            format!(
                "The {} newest of {} artifacts; summary.json lists all.",
                artifacts::MAX_ARTIFACT_ROWS,
                store.loaded.len()
            )
        } else {
            String::new()
        },
        table: t,
    });
    page.sections = vec![s1, s2];
}
