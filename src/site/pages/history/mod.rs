//! The history page: one small chart per headline quantity and kind (a line per GPU with the
//! median's 95% band, markers where compare's rule calls a change against the previous commit),
//! the regressions table of the newest commit, and downloads. The charts' data is one
//! `<script src>` file per kind (`data/history-<kind>.js`), loaded when its section scrolls into
//! view, so the page opens at once from file:// whatever the history's length.

pub mod calibration;
pub mod change;
mod data;
mod digest;
mod headline;
mod links;
mod marks;
pub mod regressions;
mod series;
mod y_range;

use super::{DataFile, Empty, PageContext};
use crate::history::HISTORY_DIR;
use serde::Serialize;
use series::KindData;
use std::path::Path;

pub use links::commit_url;

/// Commits shown by default (the range control offers more).
pub const DEFAULT_WINDOW: usize = 50;

/// Where the browser finds a kind's data: `window.OPBENCH_HISTORY[kind]`.
pub const DATA_GLOBAL: &str = "OPBENCH_HISTORY";

/// GPU colors, in the order GPUs first appear in the history.
const GPU_COLORS: &[&str] = &[
    "#2563eb", "#d97706", "#7c3aed", "#059669", "#db2777", "#0891b2", "#65a30d", "#dc2626",
];

/// What `dashboard` passes to the history page.
#[derive(Debug, Clone, Default)]
pub struct HistoryOptions {
    /// The repository's web address: commits link to `<repo_url>/commit/<hash>`.
    pub repo_url: Option<String>,
    /// Also compare the newest commit with this one (a hash prefix, e.g. the last release's).
    pub against: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct GpuView {
    pub name: String,
    /// Legend label: the name without the vendor.
    pub label: String,
    pub color: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct ChartSpec {
    pub id: String,
    pub title: String,
    pub quantity: String,
    pub higher_is_better: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct KindView {
    pub kind: String,
    pub id: String,
    pub title: String,
    pub caption: String,
    /// The data file, relative to the page.
    pub file: String,
    pub charts: Vec<ChartSpec>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Download {
    pub label: String,
    pub path: String,
}

/// Everything the history template and `history.js` need (the data itself is in the files).
#[derive(Debug, Clone, Serialize)]
pub struct HistoryView {
    pub window: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repo_url: Option<String>,
    pub gpus: Vec<GpuView>,
    pub kinds: Vec<KindView>,
    pub tables: Vec<regressions::Table>,
    /// The gate's measured false alarms and power (`<artifacts>/calibration.json`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calibration: Option<calibration::View>,
    pub downloads: Vec<Download>,
    pub summary: String,
}

/// The history read and reduced: what the page and the overview show.
pub struct Prepared {
    pub view: Option<HistoryView>,
    pub files: Vec<DataFile>,
    pub runs: usize,
    pub problem: Option<String>,
    pub warnings: Vec<String>,
    /// History files left out (unreadable, truncated, symlinked): named in `warnings`.
    pub left_out: usize,
    pub dir: String,
}

/// Reads `<artifacts>/history/` and builds the page's view and data files.
pub fn prepare(artifacts: &Path, opts: &HistoryOptions) -> Prepared {
    let dir = artifacts.join(HISTORY_DIR);
    let mut p = Prepared {
        view: None,
        files: Vec::new(),
        runs: 0,
        problem: None,
        warnings: Vec::new(),
        left_out: 0,
        dir: dir.display().to_string(),
    };
    if !dir.is_dir() {
        return p;
    }
    let (runs, warnings) = match digest::load(&dir) {
        Ok(r) => r,
        Err(e) => {
            p.problem = Some(format!("reading {}: {e:#}", p.dir));
            return p;
        }
    };
    // A parse error can quote the value at fault: bound what one warning adds to the page.
    let cap = 8 * crate::text::DISPLAY_MAX_CHARS;
    p.warnings = warnings
        .iter()
        .map(|w| crate::text::elide_to(w, cap).into_owned())
        .collect();
    p.left_out = warnings.len();
    p.runs = runs.len();
    if runs.is_empty() {
        return p;
    }
    let synthetic = runs.iter().filter(|r| r.synthetic).count();
    if synthetic > 0 {
        p.warnings.push(format!(
            "{synthetic} of the {} runs in {} are SYNTHETIC (drawn by `history synth` from a \
             random generator, not measured): marked SYNTHETIC in the runs table and hovers",
            runs.len(),
            p.dir
        ));
    }
    let repo = opts.repo_url.as_deref();
    let mut tables = Vec::new();
    for (against, id) in [(None, "regressions"), (opts.against.as_deref(), "against")] {
        if id == "against" && against.is_none() {
            continue;
        }
        match regressions::table(&dir, against, repo, id) {
            Ok(Some(t)) => tables.push(t),
            Ok(None) => {}
            Err(e) => p.warnings.push(format!("regressions table: {e:#}")),
        }
    }
    let mut gpu_names: Vec<&str> = Vec::new();
    for r in &runs {
        if !gpu_names.contains(&r.gpu.as_str()) {
            gpu_names.push(&r.gpu);
        }
    }
    let gpus: Vec<GpuView> = gpu_names
        .iter()
        .enumerate()
        .map(|(i, g)| GpuView {
            name: g.to_string(),
            label: g.trim_start_matches("NVIDIA ").to_string(),
            color: GPU_COLORS[i % GPU_COLORS.len()].into(),
        })
        .collect();
    let kinds = series::by_kind(&runs);
    let mut views = Vec::new();
    let counts = tables
        .iter()
        .find(|t| t.id == "regressions")
        .map_or(&[][..], |t| &t.counts[..]);
    for k in &kinds {
        let (view, file) = data::kind_files(k, &gpu_names, counts);
        views.push(view);
        p.files.push(file);
    }
    let mut downloads = vec![Download {
        label: format!("every run ({} rows)", runs.len()),
        path: "data/history-runs.csv".into(),
    }];
    p.files.push(DataFile {
        path: "data/history-runs.csv".into(),
        text: data::runs_csv(&runs, repo),
    });
    for t in &tables {
        let path = format!("data/history-{}.csv", t.id);
        downloads.push(Download {
            label: format!("{}: every point judged ({} rows)", t.title, t.judged),
            path: path.clone(),
        });
        p.files.push(DataFile {
            path,
            text: t.csv.clone(),
        });
    }
    let commits: std::collections::BTreeSet<Option<&str>> =
        runs.iter().map(|r| r.commit.as_deref()).collect();
    p.view = Some(HistoryView {
        window: DEFAULT_WINDOW,
        repo_url: opts.repo_url.clone(),
        summary: format!(
            "{} of {} on {}, in {HISTORY_DIR}/.",
            count(runs.len(), "run"),
            count(commits.len(), "commit"),
            count(gpus.len(), "GPU")
        ),
        gpus,
        kinds: views,
        tables,
        calibration: calibration::read(artifacts, &mut p.warnings),
        downloads,
    });
    p
}

/// "1 run", "3 runs".
fn count(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

fn kind_title(kind: &str) -> String {
    super::KIND_PAGES
        .iter()
        .find(|(k, _, _)| *k == kind)
        .map_or(kind.to_string(), |(_, _, t)| t.to_string())
}

fn kind_caption(k: &KindData) -> String {
    let llm = format!(
        "decode tokens/s (batch × 1000 / P50 decode step) of {}, the model measured at the \
         most batch sizes and implementations",
        k.group
    );
    let what = match k.kind.as_str() {
        "layernorm" => {
            "our kernels' achieved bandwidth as % of the device copy bandwidth, \
                        median over the cold-L2 shapes of each dtype (as the overview's card)"
        }
        "gemm" => {
            "at each shape, the best of our kernels as % of cuBLAS (cuBLAS time / our \
                   time), geometric mean over the shapes of each dtype"
        }
        "llm" => &llm,
        _ => "the geometric mean over its points of each implementation's headline time",
    };
    let mut c = format!(
        "{} over {}. Each chart: {what}.",
        count(k.runs, "run"),
        count(k.commits.len(), "commit")
    );
    if k.more > 0 {
        c.push_str(&format!(
            " {} more charts are not drawn (see the CSV downloads).",
            k.more
        ));
    }
    c
}

/// Fills the history page.
pub fn build(page: &mut PageContext, p: &Prepared) {
    page.template = "history.html".into();
    page.intro = "Every recorded run (artifacts/history, one file per run) over commits: one \
                  small chart per headline quantity, a line per GPU, the shaded band its 95% \
                  interval (from the medians' intervals); ▲ red: SLOWER than the previous \
                  commit on that line, ▼ green: FASTER (compare's rule on the charted value, \
                  only between two runs on one board: across boards the table below judges \
                  point by point against the drift of the same runs' controls); ◆ on the \
                  newest commit: the table below judged our points there SLOWER (red) or only \
                  FASTER (green). The y axis spans every band and at least ±6% (twice the rule's \
                  3%), so noise below a change the rule would call stays small. Hover a point for its commit; click it to make that commit the baseline of \
                  the normalised view. The newest commit's changes point by point are in the \
                  table below the charts."
        .into();
    page.site.warnings.extend(p.warnings.iter().cloned());
    match &p.view {
        Some(v) => page.history = Some(v.clone()),
        None => {
            page.empty = Some(Empty {
                message: match &p.problem {
                    Some(e) => format!("The history could not be read: {e}"),
                    None if p.left_out > 0 => format!(
                        "No run of {} could be read: {} file(s) were left out (the warnings \
                         above say why). Re-record those runs with `history record`, then \
                         render the site again.",
                        p.dir, p.left_out
                    ),
                    None => format!(
                        "No runs recorded in {} yet. Record a benchmark run into the history, \
                         then render the site again.",
                        p.dir
                    ),
                },
                command: "cargo run --release --bin history -- record artifacts/layernorm.json \
                          && cargo run --release --bin dashboard"
                    .into(),
            })
        }
    }
    page.files = p.files.clone();
}
