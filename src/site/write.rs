//! Writing the site: rendered pages, static assets, Plotly (inline mode), the summary
//! downloads, and the template contexts when asked.

use super::embed::script_json;
use super::pages::PageContext;
use super::plotly::{self, PlotlyMode};
use super::templates::{Templates, STATIC_FILES};
use crate::summary::{self, Loaded};
use anyhow::{Context, Result};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// A page's context plus its embedded data, as the template sees it.
#[derive(Serialize)]
struct Rendered<'a> {
    #[serde(flatten)]
    page: &'a PageContext,
    /// Escaped JSON for the `<script type="application/json">` block.
    data_json: String,
    /// Whether the page loads Plotly at all.
    has_charts: bool,
}

/// Renders one page to HTML.
pub fn render_page(templates: &Templates, page: &PageContext) -> Result<String> {
    let data_json = script_json(&page.browser_data())?;
    let has_charts = page.charts().any(|c| c.empty.is_none()) || page.history.is_some();
    templates.render(
        &page.template,
        &Rendered {
            page,
            data_json,
            has_charts,
        },
    )
}

/// Writes every page and asset under `out`; returns the page paths.
pub fn write_site(
    out: &Path,
    pages: &[PageContext],
    loaded: &[Loaded],
    mode: PlotlyMode,
    dump_context: bool,
) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(out)
        .with_context(|| format!("creating the output folder {} (--out)", out.display()))?;
    let templates = Templates::new()?;
    // summary.csv is the slowest part on a long history: build it on the other core meanwhile.
    std::thread::scope(|scope| -> Result<Vec<PathBuf>> {
        let csv = scope.spawn(|| summary::to_csv(loaded));
        let mut written = Vec::new();
        for page in pages {
            let html = render_page(&templates, page)?;
            let path = out.join(&page.file);
            write(&path, html.as_bytes())?;
            written.push(path);
            for f in &page.files {
                write(&out.join(&f.path), f.text.as_bytes())?;
            }
            if dump_context {
                let json = serde_json::to_vec_pretty(page)?;
                let stem = page.file.trim_end_matches(".html");
                write(&out.join("_context").join(format!("{stem}.json")), &json)?;
            }
        }
        for (name, text) in STATIC_FILES {
            write(&out.join(name), text.as_bytes())?;
        }
        if mode == PlotlyMode::Inline {
            write(
                &out.join(plotly::LOCAL_PATH),
                plotly::VENDORED_JS.as_bytes(),
            )?;
            write(
                &out.join(plotly::LOCAL_LICENSE_PATH),
                plotly::LICENSE.as_bytes(),
            )?;
        }
        // Compact: the download is for programs; `summarize` writes the pretty one.
        let doc = summary::build(loaded);
        write(&out.join(summary::SUMMARY_JSON), &serde_json::to_vec(&doc)?)?;
        let csv = csv
            .join()
            .map_err(|_| anyhow::anyhow!("building summary.csv panicked"))??;
        write(&out.join(summary::SUMMARY_CSV), &csv)?;
        Ok(written)
    })
}

/// Plain writes (readable by a web server, unlike temporary files): the site is regenerated
/// whole, so a crash leaves nothing worth protecting.
fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))
}
