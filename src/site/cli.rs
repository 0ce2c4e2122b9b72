//! `dashboard`'s command line: its arguments, and the site they render.

use super::{Options, PlotlyMode};
use clap::Parser;
use std::path::PathBuf;

/// Render every benchmark artifact (*.json, searched recursively) into a static dashboard:
/// an overview with highlight cards, tables and system panels, and one page per benchmark kind
/// (LLM, LayerNorm, GEMM, and a generic page for other kinds) with interactive Plotly charts,
/// filters kept in the URL, and every chart's data as a table. The pages open from file:// and
/// need no server; summary.json and summary.csv are written beside them for download.
///
/// Set OPBENCH_DUMP_CONTEXT=1 (or pass --dump-context) to also write each page's template
/// context as JSON under OUT/_context/, to see exactly what a template was given.
#[derive(Parser)]
#[command(
    version,
    after_help = "Example:\n  dashboard --artifacts artifacts --out site\n  (then open \
                  site/index.html in a browser)"
)]
pub struct Args {
    /// Folder to read artifacts from (searched recursively).
    #[arg(long, default_value = "artifacts")]
    artifacts: PathBuf,
    /// Folder to write the site into (created if missing). The new site is rendered beside it
    /// and swapped in whole, so a failed render leaves the previous site as it was; files of
    /// the old folder that the site does not write are kept.
    #[arg(long, default_value = "site")]
    out: PathBuf,
    /// Where the pages load Plotly.js from: `inline` (the default: the vendored copy written
    /// into OUT/assets and loaded from there; works offline) or `cdn` (pinned version with an
    /// integrity hash; needs the network when viewing).
    #[arg(long, value_enum, default_value_t = PlotlyMode::Inline)]
    plotly: PlotlyMode,
    /// Write each page's template context as JSON under OUT/_context/.
    #[arg(long)]
    dump_context: bool,
    /// Fail on an invalid artifact instead of leaving it out with a warning.
    #[arg(long)]
    strict: bool,
    /// The repository's web address (e.g. https://github.com/OWNER/REPO): the history page
    /// links each commit to REPO_URL/commit/HASH. CI passes
    /// ${GITHUB_SERVER_URL}/${GITHUB_REPOSITORY}.
    #[arg(long, value_parser = crate::text::url::http_url)]
    repo_url: Option<String>,
    /// Also compare the history's newest commit with this commit (a hash prefix of 4 or more
    /// hex digits, e.g. the last release's) in a second regressions table. It must name
    /// exactly one commit of ARTIFACTS/history.
    #[arg(long)]
    against: Option<String>,
    /// Replace an index.html in --out that the dashboard did not write (without this flag such
    /// a file is left alone and nothing is written).
    #[arg(long)]
    overwrite: bool,
}

/// Whether an index.html is a page of this dashboard (its generator tag, in the head).
fn is_our_index(b: &[u8]) -> bool {
    let head = &b[..b.len().min(4096)];
    let tag = br#"<meta name="generator" content="opbench dashboard">"#;
    head.windows(tag.len()).any(|w| w == tag)
}

/// `--out` passes the output guard: not the artifacts folder (nor inside it: the pages would
/// mix with the inputs, and summary.json land among them), and its index.html the dashboard's
/// own (or absent) unless `--overwrite`.
fn check_out(a: &Args) -> anyhow::Result<()> {
    use crate::cli::output::{check_output_dir, DirFile, OutputDir};
    let full =
        |p: &std::path::Path| crate::cli::output::full_path(p).unwrap_or_else(|| p.to_path_buf());
    let (out, arts) = (full(&a.out), full(&a.artifacts));
    if out.starts_with(&arts) {
        anyhow::bail!(
            "--out {} is {}the --artifacts folder {}: write the site into a folder of its own, \
             e.g. --out site",
            a.out.display(),
            if out == arts { "" } else { "inside " },
            a.artifacts.display()
        );
    }
    let files = [DirFile {
        name: "index.html",
        what: "a page of the opbench dashboard",
        ours: is_our_index,
    }];
    let o = OutputDir {
        flag: "--out",
        path: &a.out,
        files: &files,
    };
    check_output_dir(&o, &[], a.overwrite)
}

/// Runs the command with its parsed arguments.
pub fn run(a: Args) -> anyhow::Result<()> {
    check_out(&a)?;
    if let Some(rev) = &a.against {
        let dir = a.artifacts.join(crate::history::HISTORY_DIR);
        crate::history::find_commit(&dir, "--against", rev)?;
    }
    let o = super::run(&Options {
        artifacts: a.artifacts,
        out: a.out.clone(),
        plotly: a.plotly,
        dump_context: a.dump_context,
        strict: a.strict,
        history: super::HistoryOptions {
            repo_url: a.repo_url,
            against: a.against,
        },
    })?;
    for w in &o.warnings {
        eprintln!("warning: {w}");
    }
    println!(
        "rendered {} pages from {} artifacts ({} results, {} points shown) into {}",
        o.pages.len(),
        o.artifacts,
        o.results,
        o.points,
        a.out.join("index.html").display()
    );
    Ok(())
}
