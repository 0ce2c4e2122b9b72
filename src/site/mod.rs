//! The static dashboard: artifacts in, HTML pages with embedded data and Plotly charts out.
//!
//! `load_dir` reads the artifacts, `points::Store` keeps the newest run of each point,
//! `pages::build_all` turns them into pre-formatted view models (one `PageContext` per page),
//! and `write::write_site` renders those through the embedded Tera templates into a new
//! folder that `swap` puts in place of the old site.

pub mod chart;
pub mod cli;
pub mod display;
pub mod embed;
pub mod filters;
pub mod fmt;
pub mod measured;
pub mod names;
pub mod pages;
pub mod palette;
pub mod plotly;
pub mod points;
pub mod rules;
pub mod swap;
pub mod templates;
pub mod write;

pub use pages::{HistoryOptions, PageContext, SiteMeta};
pub use plotly::PlotlyMode;

use crate::artifact::{load_dir_with_hint, Loaded};
use anyhow::Result;
use std::path::{Path, PathBuf};

/// Set to 1 to write each page's template context as JSON under `<out>/_context/`.
pub const DUMP_CONTEXT_ENV: &str = "OPBENCH_DUMP_CONTEXT";

/// What `dashboard` was asked to do.
#[derive(Debug, Clone)]
pub struct Options {
    pub artifacts: PathBuf,
    pub out: PathBuf,
    pub plotly: PlotlyMode,
    /// Also write `<out>/_context/<page>.json` (the template contexts).
    pub dump_context: bool,
    /// Fail on an invalid artifact instead of leaving it out with a warning.
    pub strict: bool,
    /// Commit links and the extra comparison of the history page.
    pub history: HistoryOptions,
}

/// What was written.
#[derive(Debug)]
pub struct Outcome {
    pub pages: Vec<PathBuf>,
    pub artifacts: usize,
    pub results: usize,
    pub points: usize,
    pub warnings: Vec<String>,
}

/// Loads the artifacts (a missing folder is a warning: the site then says how to make some).
pub fn load(artifacts: &Path, strict: bool) -> Result<(Vec<Loaded>, Vec<String>)> {
    if !artifacts.exists() {
        return Ok((
            Vec::new(),
            vec![format!(
                "artifacts folder {} does not exist: rendering the empty site (pass --artifacts DIR)",
                artifacts.display()
            )],
        ));
    }
    load_dir_with_hint(
        artifacts,
        !strict,
        "leave out --strict to skip bad files with a warning and go on",
    )
}

/// The view models of every page, with `generated_utc` given (tests pass a fixed one). Names
/// longer than `text::DISPLAY_MAX_CHARS` are elided on the pages (see `display`).
pub fn build_pages(
    loaded: &[Loaded],
    warnings: &[String],
    artifacts_dir: &str,
    plotly: PlotlyMode,
    generated_utc: &str,
) -> Vec<PageContext> {
    build_pages_with(
        loaded,
        warnings,
        artifacts_dir,
        plotly,
        generated_utc,
        &HistoryOptions::default(),
    )
}

/// [`build_pages`] with the history page's options.
pub fn build_pages_with(
    loaded: &[Loaded],
    warnings: &[String],
    artifacts_dir: &str,
    plotly: PlotlyMode,
    generated_utc: &str,
    history: &HistoryOptions,
) -> Vec<PageContext> {
    let shown = display::artifacts(loaded);
    let loaded: &[Loaded] = &shown;
    let store = points::Store::new(loaded);
    let meta = SiteMeta {
        generated_utc: generated_utc.to_string(),
        artifacts_dir: artifacts_dir.to_string(),
        artifact_count: loaded.len(),
        result_count: loaded.iter().map(|l| l.artifact.results.len()).sum(),
        point_count: store.points.len(),
        superseded: store.superseded,
        // A parse error can quote the value at fault: bound what one warning adds to a page.
        warnings: warnings
            .iter()
            .map(|w| crate::text::elide_to(w, 8 * crate::text::DISPLAY_MAX_CHARS).into_owned())
            .collect(),
        plotly: plotly.tag(),
    };
    pages::build_all(&store, &meta, history)
}

/// A page larger than this gets a warning: browsers parse its embedded data slowly, and a
/// phone may not open it at all (docs/artifacts.md, "The dashboard").
pub const PAGE_WARN_BYTES: u64 = 20 << 20;

/// One warning per page of `(path, bytes)` above `limit` bytes.
pub fn page_size_warnings(pages: &[(PathBuf, u64)], limit: u64) -> Vec<String> {
    pages
        .iter()
        .filter(|(_, n)| *n > limit)
        .map(|(p, n)| {
            format!(
                "{} is {:.1} MB, above the {} MB a page should stay under: it opens slowly or \
                 not at all; render fewer or smaller artifacts (e.g. one --artifacts folder per \
                 GPU, or move old runs into the history)",
                p.display(),
                *n as f64 / 1e6,
                limit >> 20
            )
        })
        .collect()
}

/// Refuses to render when artifacts were found but every one is invalid: a site "from 0
/// artifacts" would hide that every input is broken. An empty folder (or one of symbolic
/// links only, named in warnings) renders the empty site.
fn check_some_loaded(dir: &Path, loaded: &[Loaded], warnings: &[String]) -> Result<()> {
    let left_out: Vec<&String> = warnings
        .iter()
        .filter(|w| w.starts_with(crate::artifact::SKIPPED_PREFIX))
        .collect();
    if !loaded.is_empty() || left_out.is_empty() {
        return Ok(());
    }
    let shown: Vec<String> = left_out
        .iter()
        .take(10)
        .map(|w| crate::text::elide_to(w, 8 * crate::text::DISPLAY_MAX_CHARS).into_owned())
        .collect();
    anyhow::bail!(
        "no usable artifact under {}: {} invalid file(s) left out:\n  {}{}\nfix or remove \
         them (an empty folder renders the empty site)",
        dir.display(),
        left_out.len(),
        shown.join("\n  "),
        if left_out.len() > shown.len() {
            format!("\n  and {} more", left_out.len() - shown.len())
        } else {
            String::new()
        }
    )
}

/// The whole `dashboard` command.
pub fn run(opts: &Options) -> Result<Outcome> {
    let (loaded, mut warnings) = load(&opts.artifacts, opts.strict)?;
    if opts.artifacts.exists() {
        check_some_loaded(&opts.artifacts, &loaded, &warnings)?;
    }
    let pages = build_pages_with(
        &loaded,
        &warnings,
        &opts.artifacts.display().to_string(),
        opts.plotly,
        &crate::env::now_utc(),
        &opts.history,
    );
    // Pages add their own (the history page: files of the history left out); say them too.
    for p in &pages {
        for w in &p.site.warnings {
            if !warnings.contains(w) {
                warnings.push(w.clone());
            }
        }
    }
    let dump =
        opts.dump_context || std::env::var(DUMP_CONTEXT_ENV).is_ok_and(|v| v == "1" || v == "true");
    let written = write::write_site(&opts.out, &pages, &loaded, opts.plotly, dump)?;
    let sizes: Vec<(PathBuf, u64)> = written
        .iter()
        .map(|p| (p.clone(), std::fs::metadata(p).map_or(0, |m| m.len())))
        .collect();
    warnings.extend(page_size_warnings(&sizes, PAGE_WARN_BYTES));
    Ok(Outcome {
        pages: written,
        artifacts: loaded.len(),
        results: loaded.iter().map(|l| l.artifact.results.len()).sum(),
        points: pages.first().map(|p| p.site.point_count).unwrap_or(0),
        warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_over_the_limit_is_named_with_its_size() {
        let pages = [
            (PathBuf::from("site/index.html"), 1_000),
            (PathBuf::from("site/kind-x.html"), 134_000_000),
        ];
        let w = page_size_warnings(&pages, PAGE_WARN_BYTES);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].starts_with("site/kind-x.html is 134.0 MB") && w[0].contains("20 MB"),
            "{w:?}"
        );
    }

    #[test]
    fn only_left_out_files_and_nothing_loaded_is_an_error() {
        let dir = Path::new("arts");
        check_some_loaded(dir, &[], &[]).unwrap();
        check_some_loaded(dir, &[], &["arts/l.json: a symbolic link".into()]).unwrap();
        let e = check_some_loaded(dir, &[], &["skipped arts/a.json: bad".into()])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("no usable artifact under arts") && e.contains("arts/a.json: bad"),
            "{e}"
        );
    }
}
