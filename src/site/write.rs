//! Writing the site: rendered pages, static assets, Plotly (inline mode), the summary
//! downloads, and the template contexts when asked.

use super::embed::script_json;
use super::pages::PageContext;
use super::plotly::{self, PlotlyMode};
use super::templates::{Templates, STATIC_FILES};
use crate::artifact::Loaded;
use crate::summary;
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

/// Writes every page and asset into a new folder and swaps it in for `out` (see
/// [`super::swap::replace_dir`]): a failure part-way leaves the previous site whole. Returns
/// the page paths.
pub fn write_site(
    out: &Path,
    pages: &[PageContext],
    loaded: &[Loaded],
    mode: PlotlyMode,
    dump_context: bool,
) -> Result<Vec<PathBuf>> {
    write_site_with(out, pages, loaded, mode, dump_context, &write)
}

/// [`write_site`] with the function that writes one file given (tests make it fail).
fn write_site_with(
    out: &Path,
    pages: &[PageContext],
    loaded: &[Loaded],
    mode: PlotlyMode,
    dump_context: bool,
    write: &dyn Fn(&Path, &[u8]) -> Result<()>,
) -> Result<Vec<PathBuf>> {
    super::swap::replace_dir(out, |dir| {
        render_into(dir, pages, loaded, mode, dump_context, write)
    })?;
    Ok(pages.iter().map(|p| out.join(&p.file)).collect())
}

/// Writes the whole site into the empty folder `dir`.
fn render_into(
    dir: &Path,
    pages: &[PageContext],
    loaded: &[Loaded],
    mode: PlotlyMode,
    dump_context: bool,
    write: &dyn Fn(&Path, &[u8]) -> Result<()>,
) -> Result<()> {
    let templates = Templates::new()?;
    // summary.csv is the slowest part on a long history: build it on the other core meanwhile.
    std::thread::scope(|scope| -> Result<()> {
        let csv = scope.spawn(|| summary::to_csv(loaded));
        for page in pages {
            let html = render_page(&templates, page)?;
            write(&dir.join(&page.file), html.as_bytes())?;
            for f in &page.files {
                write(&dir.join(&f.path), f.text.as_bytes())?;
            }
            if dump_context {
                let json = serde_json::to_vec_pretty(page)?;
                let stem = page.file.trim_end_matches(".html");
                write(&dir.join("_context").join(format!("{stem}.json")), &json)?;
            }
        }
        for (name, text) in STATIC_FILES {
            write(&dir.join(name), text.as_bytes())?;
        }
        if mode == PlotlyMode::Inline {
            write(
                &dir.join(plotly::LOCAL_PATH),
                plotly::VENDORED_JS.as_bytes(),
            )?;
            write(
                &dir.join(plotly::LOCAL_LICENSE_PATH),
                plotly::LICENSE.as_bytes(),
            )?;
        }
        // Compact: the download is for programs; `summarize` writes the pretty one.
        let doc = summary::build(loaded);
        write(&dir.join(summary::SUMMARY_JSON), &serde_json::to_vec(&doc)?)?;
        let csv = csv
            .join()
            .map_err(|_| anyhow::anyhow!("building summary.csv panicked"))??;
        write(&dir.join(summary::SUMMARY_CSV), &csv)?;
        Ok(())
    })
}

/// Plain writes into the staging folder (readable by a web server, unlike temporary files):
/// the folder is swapped in whole, so a file is never seen half-written.
fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    fn fixtures(generated_utc: &str) -> (Vec<Loaded>, Vec<PageContext>) {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/artifacts");
        let (loaded, warnings) = super::super::load(&dir, false).unwrap();
        let pages = super::super::build_pages(
            &loaded,
            &warnings,
            "artifacts",
            PlotlyMode::Cdn,
            generated_utc,
        );
        (loaded, pages)
    }

    fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
        let mut v: Vec<(PathBuf, Vec<u8>)> = walkdir::WalkDir::new(dir)
            .into_iter()
            .map(|e| e.unwrap())
            .filter(|e| e.file_type().is_file())
            .map(|e| {
                let rel = e.path().strip_prefix(dir).unwrap().to_path_buf();
                (rel, std::fs::read(e.path()).unwrap())
            })
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_render_that_fails_part_way_leaves_the_previous_site_whole() {
        let (loaded, pages) = fixtures("2026-01-01T00:00:00Z");
        assert!(pages.len() > 2);
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("site");
        write_site(&out, &pages, &loaded, PlotlyMode::Cdn, false).unwrap();
        let before = snapshot(&out);
        assert!(before.iter().any(|(p, _)| p == Path::new("index.html")));
        // The disk fills up at the third file: two pages are written, the rest are not.
        let written = Cell::new(0);
        let full_disk = |path: &Path, bytes: &[u8]| -> Result<()> {
            written.set(written.get() + 1);
            if written.get() == 3 {
                anyhow::bail!("writing {}: No space left on device", path.display());
            }
            write(path, bytes)
        };
        // A later render: every page differs (the time it shows).
        let (loaded2, pages2) = fixtures("2026-02-02T00:00:00Z");
        let e = write_site_with(&out, &pages2, &loaded2, PlotlyMode::Cdn, false, &full_disk)
            .unwrap_err();
        assert!(format!("{e:#}").contains("No space left"), "{e:#}");
        assert_eq!(written.get(), 3);
        assert!(snapshot(&out) == before, "the previous site changed");
        let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "no staging folder left behind");
    }
}
