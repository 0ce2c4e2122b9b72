//! End-to-end rendering of the dashboard: hostile artifact text stays text, the site works
//! with no artifacts, downloads and assets are written, and the pinned Plotly is the vendored one.

use base64::Engine;
use opbench::site::{self, Options, PlotlyMode};
use sha2::Digest;
use std::path::{Path, PathBuf};

const EVIL: &str = "</script><img src=x onerror=alert(1)>";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn render(artifacts: PathBuf, plotly: PlotlyMode) -> (tempfile::TempDir, site::Outcome) {
    let out = tempfile::tempdir().unwrap();
    let o = site::run(&Options {
        artifacts,
        out: out.path().to_path_buf(),
        plotly,
        dump_context: true,
        strict: true,
        history: Default::default(),
    })
    .unwrap();
    (out, o)
}

fn html_files(dir: &Path) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "html"))
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().to_string(),
                std::fs::read_to_string(&p).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn hostile_artifact_text_never_becomes_markup() {
    let (out, _) = render(root().join("tests/fixtures/hostile"), PlotlyMode::Cdn);
    let pages = html_files(out.path());
    assert!(pages.len() >= 5, "expected every page, got {}", pages.len());
    let mut shown_escaped = 0;
    for (name, html) in &pages {
        assert!(
            !html.contains("<img"),
            "{name}: an <img> tag reached the page"
        );
        assert!(
            !html.contains(EVIL),
            "{name}: the raw hostile string is in the page"
        );
        // Every closing script tag closes one of ours.
        assert_eq!(
            html.matches("</script>").count(),
            html.matches("<script").count(),
            "{name}: a </script> that is not ours"
        );
        if html.contains("&lt;&#x2F;script&gt;&lt;img src=x onerror=alert(1)&gt;") {
            shown_escaped += 1;
        }
        // The embedded data still holds the string exactly, for the charts to show as text.
        let start = html.find("id=\"opbench-data\">").unwrap() + "id=\"opbench-data\">".len();
        let end = start + html[start..].find("</script>").unwrap();
        let data: serde_json::Value = serde_json::from_str(&html[start..end]).unwrap();
        assert!(data.is_object(), "{name}: embedded data is not JSON");
        if name == "gemm.html" {
            assert!(html[start..end].contains("\\u003c/script\\u003e"));
            assert!(
                data.to_string().contains(EVIL),
                "gemm.html: the data lost the name"
            );
        }
    }
    assert!(
        shown_escaped >= 3,
        "the hostile names should show, escaped, on several pages"
    );
    // The hostile kind got a safe file name.
    assert!(out
        .path()
        .join("kind-script-img-src-x-onerror-alert-1.html")
        .exists());
    // Both recorded hostile runs reach the history page (a refused record would leave it empty).
    for kind in ["gemm", "script-img-src-x-onerror-alert-1"] {
        let data = out.path().join(format!("data/history-{kind}.js"));
        assert!(data.exists(), "{} is missing", data.display());
    }
}

#[test]
fn an_empty_folder_renders_every_page_with_what_to_run() {
    let empty = tempfile::tempdir().unwrap();
    let (out, o) = render(empty.path().to_path_buf(), PlotlyMode::Cdn);
    assert_eq!(o.artifacts, 0);
    let pages = html_files(out.path());
    let names: Vec<&str> = pages.iter().map(|p| p.0.as_str()).collect();
    assert_eq!(
        names,
        [
            "comm.html",
            "gemm.html",
            "history.html",
            "index.html",
            "kernels.html",
            "layernorm.html",
            "llm-trace.html",
            "llm.html",
            "traces.html"
        ]
    );
    for (name, html) in &pages {
        assert!(
            html.contains("No ") && html.contains("cargo run --release"),
            "{name}"
        );
        // No chart, so no Plotly to load.
        assert!(
            !html.contains("plotly"),
            "{name} loads Plotly without a chart"
        );
    }
    assert!(out.path().join("summary.json").exists() && out.path().join("summary.csv").exists());
}

#[test]
fn a_missing_folder_is_a_warning_and_an_empty_site() {
    let dir = tempfile::tempdir().unwrap();
    let (_, o) = render(dir.path().join("nope"), PlotlyMode::Cdn);
    assert_eq!(o.warnings.len(), 1);
    assert!(o.warnings[0].contains("does not exist"));
}

#[test]
fn an_invalid_artifact_is_named_in_strict_mode_and_skipped_otherwise() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        root().join("tests/fixtures/artifacts/softmax-fixture.json"),
        dir.path().join("ok.json"),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("bad.json"),
        "{\"schema_version\": 1, \"kind\": ",
    )
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut opts = Options {
        artifacts: dir.path().to_path_buf(),
        out: out.path().to_path_buf(),
        plotly: PlotlyMode::Cdn,
        dump_context: false,
        strict: true,
        history: Default::default(),
    };
    let e = format!("{:#}", site::run(&opts).unwrap_err());
    assert!(e.contains("bad.json"), "{e}");
    opts.strict = false;
    let o = site::run(&opts).unwrap();
    assert_eq!(o.artifacts, 1);
    assert!(o.warnings[0].contains("bad.json"));
    let index = std::fs::read_to_string(out.path().join("index.html")).unwrap();
    assert!(index.contains("left out") && index.contains("bad.json"));
}

#[test]
fn the_site_has_downloads_assets_contexts_and_the_pinned_plotly() {
    let (out, _) = render(root().join("tests/fixtures/artifacts"), PlotlyMode::Inline);
    let p = out.path();
    for f in [
        "summary.json",
        "summary.csv",
        "assets/dashboard.js",
        "assets/style.css",
        "assets/plotly-cartesian-4.1.1.min.js",
        "assets/plotly-LICENSE.txt",
        "_context/index.json",
        "_context/gemm.json",
    ] {
        assert!(p.join(f).is_file(), "{f} missing");
    }
    let index = std::fs::read_to_string(p.join("index.html")).unwrap();
    assert!(index.contains("href=\"summary.json\"") && index.contains("href=\"summary.csv\""));
    let gemm = std::fs::read_to_string(p.join("gemm.html")).unwrap();
    assert!(gemm.contains("src=\"assets&#x2F;plotly-cartesian-4.1.1.min.js\""));
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["artifacts"].as_array().unwrap().len(), 10);

    let (cdn, _) = render(root().join("tests/fixtures/artifacts"), PlotlyMode::Cdn);
    let gemm = std::fs::read_to_string(cdn.path().join("gemm.html")).unwrap();
    // Attribute values are HTML-escaped ("/" as "&#x2F;"); the browser reads them unescaped.
    let gemm = gemm.replace("&#x2F;", "/");
    assert!(gemm.contains(site::plotly::SRI) && gemm.contains("crossorigin=\"anonymous\""));
    assert!(!cdn
        .path()
        .join("assets/plotly-cartesian-4.1.1.min.js")
        .exists());
}

#[test]
fn the_sri_hash_is_the_vendored_file_s() {
    let digest = sha2::Sha384::digest(site::plotly::VENDORED_JS.as_bytes());
    let b64 = base64::engine::general_purpose::STANDARD.encode(digest);
    assert_eq!(site::plotly::SRI, format!("sha384-{b64}"));
    assert!(site::plotly::VENDORED_JS.starts_with("/**\n* plotly.js (cartesian - minified) v4.1.1"));
    assert!(site::plotly::CDN_URL.contains(&format!("@{}/", site::plotly::VERSION)));
}

/// The history page loads its data per kind with `<script src>` (it works from file://, no
/// fetch): each section names a data file that was written and parses, the page itself holds
/// no chart data, and `--repo-url` links the commits of the regressions table.
#[test]
fn the_history_page_loads_a_data_file_per_kind() {
    let out = tempfile::tempdir().unwrap();
    site::run(&Options {
        artifacts: root().join("tests/fixtures/artifacts"),
        out: out.path().to_path_buf(),
        plotly: PlotlyMode::Cdn,
        dump_context: false,
        strict: true,
        history: site::HistoryOptions {
            repo_url: Some("https://example.org/o/r".into()),
            against: None,
        },
    })
    .unwrap();
    let html = std::fs::read_to_string(out.path().join("history.html")).unwrap();
    assert!(html.contains("<script src=\"assets/history.js\"></script>"));
    assert!(!html.contains("fetch("));
    // Attribute values as the browser reads them (Tera escapes '/').
    let files: Vec<String> = html
        .split("data-file=\"")
        .skip(1)
        .map(|s| s.split('"').next().unwrap().replace("&#x2F;", "/"))
        .collect();
    assert_eq!(
        files,
        ["data/history-layernorm.js"],
        "one per kind in the history"
    );
    for f in files {
        let text = std::fs::read_to_string(out.path().join(&f)).unwrap();
        let json = text
            .split_once("(window.OPBENCH_HISTORY = window.OPBENCH_HISTORY || {})[\"layernorm\"] = ")
            .unwrap()
            .1;
        let data: serde_json::Value =
            serde_json::from_str(json.trim_end().trim_end_matches(';')).unwrap();
        assert_eq!(data["commits"].as_array().unwrap().len(), 3);
        assert!(!data["charts"].as_object().unwrap().is_empty());
        // The values live in the data file, not in the page.
        let first = data["charts"]["h-layernorm-0"]["lines"][0]["t"][0]
            .as_str()
            .unwrap();
        assert!(!html.contains(first), "{first} is in the page");
    }
    let runs = std::fs::read_to_string(out.path().join("data/history-runs.csv")).unwrap();
    assert_eq!(runs.lines().count(), 1 + 5);
    assert!(out.path().join("data/history-regressions.csv").is_file());
    assert!(html.contains("href=\"data&#x2F;history-runs.csv\" download"));
}
