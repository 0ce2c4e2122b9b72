//! Page view models: one builder per page, all producing the same serializable `PageContext`.

mod comm;
mod common;
mod gemm;
mod generic;
mod history;
mod kernels;
mod layernorm;
mod llm;
mod overview;
mod spread;
mod trace;
mod workload;

pub use common::{NamedTable, Section};
pub use history::{commit_url, HistoryOptions, HistoryView};

use super::chart::{ChartView, Dims, TableView};
use super::filters::FilterView;
use super::palette::Palette;
use super::plotly::PlotlyTag;
use super::points::Store;
use serde::Serialize;

/// Facts about the whole site that every page shows.
#[derive(Debug, Clone, Serialize)]
pub struct SiteMeta {
    pub generated_utc: String,
    pub artifacts_dir: String,
    pub artifact_count: usize,
    pub result_count: usize,
    /// Points drawn after keeping the newest run of each.
    pub point_count: usize,
    pub superseded: usize,
    /// Files that were left out, and why.
    pub warnings: Vec<String>,
    pub plotly: PlotlyTag,
}

/// One entry of the navigation bar (a traced workload's page is reached from the Traces
/// index, so the bar keeps one entry however many workloads there are).
#[derive(Debug, Clone, Serialize)]
pub struct NavItem {
    pub file: String,
    pub title: String,
    pub active: bool,
    pub points: usize,
}

/// What to do when a page has nothing to show.
#[derive(Debug, Clone, Serialize)]
pub struct Empty {
    pub message: String,
    pub command: String,
}

/// A highlight card of the overview.
#[derive(Debug, Clone, Serialize)]
pub struct Card {
    pub title: String,
    pub value: String,
    /// The statistic the value is and its spread: "median over 48 points …; P5–P95 …".
    pub stat: String,
    pub details: Vec<String>,
    pub link: String,
    pub f: Dims,
    /// No data: the value is a dash and the details say which benchmark to run.
    pub muted: bool,
}

/// One environment's system panel.
#[derive(Debug, Clone, Serialize)]
pub struct EnvView {
    pub title: String,
    /// "Throttled: SW_POWER_CAP (in 2 of 5 runs)", shown above the panel; empty when no run
    /// saw a throttle reason.
    pub throttled: String,
    pub rows: Vec<(String, String)>,
    pub f: Dims,
}

/// Everything one page's template displays; numbers are already formatted.
#[derive(Debug, Clone, Serialize)]
pub struct PageContext {
    /// File name in the site, e.g. "gemm.html".
    pub file: String,
    pub template: String,
    pub title: String,
    pub intro: String,
    pub nav: Vec<NavItem>,
    pub site: SiteMeta,
    pub filters: Vec<FilterView>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub empty: Option<Empty>,
    pub cards: Vec<Card>,
    /// The overview's regressions strip.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub regressions: Option<overview::RegressionStrip>,
    pub envs: Vec<EnvView>,
    pub sections: Vec<Section>,
    /// The history page's small charts and tables.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub history: Option<HistoryView>,
    /// The Traces index's table.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub traces: Option<workload::index::Index>,
    /// Files written beside the pages for this one (data loaded on demand, CSV downloads).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<DataFile>,
}

/// A file a page needs beside it, path relative to the site root.
#[derive(Debug, Clone, Serialize)]
pub struct DataFile {
    pub path: String,
    pub text: String,
}

impl PageContext {
    /// Every chart of the page, in order.
    pub fn charts(&self) -> impl Iterator<Item = &ChartView> {
        self.sections.iter().flat_map(|s| s.charts.iter())
    }

    /// The data `dashboard.js` reads: filters, charts (no captions) and each chart's data
    /// table, which the browser builds (a table equal to an earlier chart's is sent once, as
    /// `{"same_as": id}`).
    pub fn browser_data(&self) -> serde_json::Value {
        let mut tables = serde_json::Map::new();
        let mut sent: Vec<(&str, &TableView)> = Vec::new();
        for c in self.charts().filter(|c| c.empty.is_none()) {
            let same = sent.iter().find(|(_, t)| {
                t.columns == c.table.columns
                    && t.rows.len() == c.table.rows.len()
                    && t.rows
                        .iter()
                        .zip(&c.table.rows)
                        .all(|(a, b)| a.cells == b.cells && a.f == b.f)
            });
            let v = match same {
                Some((id, _)) => serde_json::json!({ "same_as": id }),
                None => {
                    sent.push((&c.id, &c.table));
                    serde_json::to_value(&c.table).unwrap_or_default()
                }
            };
            tables.insert(c.id.clone(), v);
        }
        let mut v = serde_json::json!({
            "page": self.file,
            "filters": self.filters.iter().map(|f| &f.dim).collect::<Vec<_>>(),
            "charts": self.charts().map(|c| c.browser_data()).collect::<Vec<_>>(),
            "tables": tables,
        });
        if let Some(h) = &self.history {
            v["history"] = serde_json::json!({
                "window": h.window,
                "repo_url": h.repo_url,
                "gpus": h.gpus,
                "kinds": h.kinds,
                "global": history::DATA_GLOBAL,
            });
        }
        v
    }
}

/// Known kinds with their own page: (kind, file, title).
pub const KIND_PAGES: &[(&str, &str, &str)] = &[
    ("llm", "llm.html", "LLM"),
    ("layernorm", "layernorm.html", "LayerNorm"),
    ("gemm", "gemm.html", "GEMM"),
    ("kernels", "kernels.html", "Kernels"),
    ("llm_trace", "llm-trace.html", "LLM trace"),
    ("comm", "comm.html", "Collectives"),
];

/// The history page's file (not a kind: it reads `<artifacts>/history/`).
pub const HISTORY_FILE: &str = "history.html";

/// The entry key of the history page (no artifact kind contains a NUL).
const HISTORY_KIND: &str = "\u{0}history";

/// The artifact kind of `trace` (workload traces): one page per workload, not per kind.
const WORKLOAD_TRACE_KIND: &str = "trace";

/// The entry key of a workload's trace page: this prefix, then the workload.
const WORKLOAD_KEY: &str = "\u{0}trace:";

/// The entry key of the Traces index (one row per traced workload).
const TRACES_KIND: &str = "\u{0}traces";

/// The Traces index's file.
pub const TRACES_FILE: &str = "traces.html";

/// Builds every page: the overview, one per known kind (with or without data), one per
/// other kind present.
pub fn build_all(store: &Store, meta: &SiteMeta, hopts: &HistoryOptions) -> Vec<PageContext> {
    let hist = history::prepare(std::path::Path::new(&meta.artifacts_dir), hopts);
    let history_runs = hist.runs;
    // A traced workload's name is no implementation: it takes no colour from the others.
    let palette = Palette::new(
        store
            .points
            .iter()
            .filter(|p| p.artifact().kind != WORKLOAD_TRACE_KIND)
            .map(|p| p.imp()),
    );
    let mut entries: Vec<(String, String, String)> = vec![(
        String::new(),
        "index.html".to_string(),
        "Overview".to_string(),
    )];
    for (kind, file, title) in KIND_PAGES {
        entries.push((kind.to_string(), file.to_string(), title.to_string()));
    }
    entries.push((
        HISTORY_KIND.to_string(),
        HISTORY_FILE.to_string(),
        "History".to_string(),
    ));
    entries.push((
        TRACES_KIND.to_string(),
        TRACES_FILE.to_string(),
        "Traces".to_string(),
    ));
    let mut used: Vec<String> = entries.iter().map(|e| e.1.clone()).collect();
    let traces = store.of_kind(WORKLOAD_TRACE_KIND);
    for w in workload::workloads(&traces) {
        let file = unique_file(&workload::file_stem(&w), &used);
        used.push(file.clone());
        entries.push((format!("{WORKLOAD_KEY}{w}"), file, format!("Trace: {w}")));
    }
    for kind in store.kinds() {
        if KIND_PAGES.iter().any(|(k, _, _)| *k == kind) || kind == WORKLOAD_TRACE_KIND {
            continue;
        }
        let file = unique_file(&format!("kind-{}", slug(kind)), &used);
        used.push(file.clone());
        entries.push((kind.to_string(), file, kind.to_string()));
    }
    let workload_files: Vec<(String, String)> = entries
        .iter()
        .filter_map(|(k, f, _)| {
            k.strip_prefix(WORKLOAD_KEY)
                .map(|w| (w.to_string(), f.clone()))
        })
        .collect();
    let workload_count = workload_files.len();
    // A workload's page lights up the Traces entry.
    let nav_for = |active_key: &str, active: &str| -> Vec<NavItem> {
        entries
            .iter()
            .filter(|(kind, _, _)| !kind.starts_with(WORKLOAD_KEY))
            .map(|(kind, file, title)| NavItem {
                file: file.clone(),
                title: title.clone(),
                active: file == active
                    || (kind == TRACES_KIND && active_key.starts_with(WORKLOAD_KEY)),
                points: if kind.is_empty() {
                    store.points.len()
                } else if kind == HISTORY_KIND {
                    history_runs
                } else if kind == TRACES_KIND {
                    workload_count
                } else {
                    store
                        .points
                        .iter()
                        .filter(|p| p.artifact().kind == *kind)
                        .count()
                },
            })
            .collect()
    };
    let mut pages = Vec::new();
    for (kind, file, title) in &entries {
        let mut page = PageContext {
            file: file.clone(),
            template: "kind.html".into(),
            title: title.clone(),
            intro: String::new(),
            nav: nav_for(kind, file),
            site: meta.clone(),
            filters: Vec::new(),
            empty: None,
            cards: Vec::new(),
            regressions: None,
            envs: Vec::new(),
            sections: Vec::new(),
            history: None,
            traces: None,
            files: Vec::new(),
        };
        let points = store.of_kind(kind);
        match kind.as_str() {
            "" => overview::build(&mut page, store, &hist),
            "llm" => llm::build(&mut page, &points, &palette),
            "layernorm" => layernorm::build(&mut page, &points, &palette),
            "gemm" => gemm::build(&mut page, &points, &palette),
            "kernels" => kernels::build(&mut page, &points, &palette),
            "llm_trace" => trace::build(&mut page, &points, &palette),
            "comm" => comm::build(&mut page, &points, &palette),
            HISTORY_KIND => history::build(&mut page, &hist),
            TRACES_KIND => workload::index::build(&mut page, &traces, &workload_files),
            k if k.starts_with(WORKLOAD_KEY) => {
                workload::build(&mut page, &k[WORKLOAD_KEY.len()..], &traces)
            }
            other => generic::build(&mut page, other, &points, &palette),
        }
        pages.push(page);
    }
    pages
}

/// A file-name-safe form of an artifact kind: ASCII letters, digits and '-'.
pub fn slug(kind: &str) -> String {
    let mut s = String::new();
    for c in kind.chars() {
        if c.is_ascii_alphanumeric() {
            s.push(c.to_ascii_lowercase());
        } else if !s.ends_with('-') {
            s.push('-');
        }
    }
    let s: String = s.trim_matches('-').chars().take(40).collect();
    if s.is_empty() {
        "other".into()
    } else {
        s
    }
}

fn unique_file(stem: &str, used: &[String]) -> String {
    let mut name = format!("{stem}.html");
    let mut i = 2;
    while used.contains(&name) {
        name = format!("{stem}-{i}.html");
        i += 1;
    }
    name
}

/// A table with no filter coordinates from plain string rows.
pub fn plain_table(columns: &[&str], rows: Vec<(Vec<String>, Dims)>) -> TableView {
    TableView {
        columns: columns.iter().map(|c| c.to_string()).collect(),
        rows: rows
            .into_iter()
            .map(|(cells, f)| super::chart::TableRow::text(cells, f))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_become_safe_unique_file_names() {
        assert_eq!(slug("</script><img src=x>"), "script-img-src-x");
        assert_eq!(slug("***"), "other");
        let used = vec!["kind-a.html".to_string()];
        assert_eq!(unique_file("kind-a", &used), "kind-a-2.html");
    }
}
