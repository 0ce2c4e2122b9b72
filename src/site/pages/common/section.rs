//! The blocks a page is made of: titled sections of charts and tables, and the empty page.

use crate::site::chart::{ChartView, TableView};
use crate::site::pages::{Empty, PageContext};
use serde::Serialize;

/// A titled group of charts and tables.
#[derive(Debug, Clone, Serialize)]
pub struct Section {
    pub id: String,
    pub title: String,
    pub intro: String,
    pub charts: Vec<ChartView>,
    pub tables: Vec<NamedTable>,
}

impl Section {
    pub fn new(id: &str, title: &str, intro: &str) -> Self {
        Section {
            id: id.into(),
            title: title.into(),
            intro: intro.into(),
            charts: Vec::new(),
            tables: Vec::new(),
        }
    }
}

/// A table that is not a chart's data.
#[derive(Debug, Clone, Serialize)]
pub struct NamedTable {
    pub id: String,
    pub title: String,
    pub caption: String,
    pub table: TableView,
}

/// The "no data yet" page body for a kind.
pub fn empty_kind(page: &mut PageContext, what: &str, bin: &str) {
    page.empty = Some(Empty {
        message: format!(
            "No {what} artifacts in {} yet. Run the benchmark on a GPU machine, put its JSON \
             under the artifacts folder, then render the site again.",
            page.site.artifacts_dir
        ),
        command: format!(
            "cargo run --release --features cuda --bin {bin} && cargo run --release --bin dashboard"
        ),
    });
}
