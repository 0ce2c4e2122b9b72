//! Names written to attack the outputs: HTML, line breaks and @mentions in the PR comment,
//! spreadsheet formulas in summary.csv, and names long enough to blow up every page.

mod common;

use common::{fixture_artifact, run_bin, write_fixture};
use opbench::artifact::limits::NAME_MAX_CHARS;
use opbench::artifact::Artifact;
use opbench::site::{self, PlotlyMode};
use opbench::text::DISPLAY_MAX_CHARS;
use std::path::Path;

fn compare(args: &[&str], cwd: &Path) -> (Option<i32>, String, String) {
    run_bin(env!("CARGO_BIN_EXE_compare"), args, cwd)
}

/// The fixture with its passing row renamed.
fn named(implementation: &str, id: &str) -> Artifact {
    let mut a = fixture_artifact("layernorm", id);
    a.results[0].implementation = implementation.to_string();
    a
}

const EVIL: &str =
    "<details open><summary>x</summary><img src=x onerror=alert(1)>\n\n## @octocat @org/team|`";

#[test]
fn the_markdown_comment_escapes_html_line_breaks_and_mentions() {
    let d = tempfile::tempdir().unwrap();
    let base = write_fixture(d.path(), "base.json", &named(EVIL, "b1"));
    let head = write_fixture(d.path(), "head.json", &named(EVIL, "h1"));
    let (rc, md, err) = compare(
        &[
            "--base",
            base.to_str().unwrap(),
            "--head",
            head.to_str().unwrap(),
            "--base-name",
            "<b>main</b> @admin",
            "--format",
            "markdown",
        ],
        d.path(),
    );
    assert_eq!(rc, Some(0), "{err}");
    for raw in [
        "<details", "<img", "<summary", "<b>", "@octocat", "@org", "@admin",
    ] {
        assert!(!md.contains(raw), "{raw:?} reached the comment:\n{md}");
    }
    assert!(md.contains("&lt;details open&gt;"), "{md}");
    assert!(md.contains("@\u{200d}octocat"), "{md}");
    // The name stays on its table line: no line of the comment starts a heading from it.
    assert!(
        !md.lines().any(|l| l.trim_start().starts_with("## ")),
        "{md}"
    );
    let row = md.lines().find(|l| l.contains("&lt;img")).unwrap();
    assert!(row.starts_with("| ") && row.contains("\\|\\`"), "{row}");
    // Every table line has the same number of unescaped cell separators.
    let cells = |l: &str| l.replace("\\|", "").matches('|').count();
    let table: Vec<&str> = md.lines().filter(|l| l.starts_with('|')).collect();
    assert!(table.iter().all(|l| cells(l) == cells(table[0])), "{md}");
}

#[test]
fn summary_csv_defuses_formulas_and_keeps_negative_numbers_numeric() {
    let d = tempfile::tempdir().unwrap();
    let arts = d.path().join("artifacts");
    let mut a = named("=HYPERLINK(\"http://evil\",\"x\")", "c1");
    a.results[0]
        .params
        .insert("label".into(), "+cmd|' /C calc'!A0".into());
    a.results[0].params.insert("offset".into(), (-3i64).into());
    a.results[0].metrics.insert("speedup_delta".into(), -0.25);
    a.results[0].notes.push("@SUM(A1:A9)".into());
    write_fixture(&arts, "c.json", &a);
    let o = opbench::summary::run(&arts, &d.path().join("out"), false).unwrap();
    let csv = std::fs::read_to_string(o.csv).unwrap();
    let mut r = csv::Reader::from_reader(csv.as_bytes());
    let headers = r.headers().unwrap().clone();
    let col = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
    let row = rows
        .iter()
        .find(|x| x[col("implementation")].contains("HYPERLINK"))
        .unwrap();
    assert_eq!(
        &row[col("implementation")],
        "'=HYPERLINK(\"http://evil\",\"x\")"
    );
    assert_eq!(&row[col("param.label")], "'+cmd|' /C calc'!A0");
    assert_eq!(&row[col("notes")], "'@SUM(A1:A9)");
    assert_eq!(&row[col("param.offset")], "-3");
    assert_eq!(&row[col("metric.speedup_delta")], "-0.25");
}

#[test]
fn absurdly_long_names_are_rejected_long_ones_shown_cut() {
    let d = tempfile::tempdir().unwrap();
    let arts = d.path().join("artifacts");
    // 10 MB: refused by validation, with a short message.
    let huge = "x".repeat(10_000_000);
    write_fixture(&arts, "huge.json", &named(&huge, "z1"));
    let e = format!(
        "{:#}",
        opbench::artifact::read_artifact(&arts.join("huge.json")).unwrap_err()
    );
    assert!(
        e.contains("field `results[0].implementation` is 10000000 characters long")
            && e.contains(&format!("at most {NAME_MAX_CHARS}")),
        "{}",
        &e[..e.len().min(400)]
    );
    assert!(e.len() < 1000, "the error quotes the whole name");
    // The dashboard leaves it out with a warning instead of a 240 MB page (beside a valid
    // artifact: with every artifact invalid it refuses to render).
    write_fixture(&arts, "ok.json", &named("fine", "ok1"));
    let out = d.path().join("site");
    let o = site::run(&site::Options {
        artifacts: arts.clone(),
        out: out.clone(),
        plotly: PlotlyMode::Cdn,
        dump_context: false,
        strict: false,
        history: Default::default(),
    })
    .unwrap();
    assert!(
        o.warnings.iter().any(|w| w.contains("huge.json")),
        "{:?}",
        o.warnings
    );
    let biggest = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .max()
        .unwrap();
    assert!(biggest < 2_000_000, "a page of {biggest} bytes");

    // 200 characters: valid, kept whole in the summary, cut on the pages and in compare.
    std::fs::remove_file(arts.join("huge.json")).unwrap();
    std::fs::remove_file(arts.join("ok.json")).unwrap();
    let long = format!("impl_{}", "y".repeat(195));
    write_fixture(&arts, "long.json", &named(&long, "l1"));
    let o = site::run(&site::Options {
        artifacts: arts.clone(),
        out: out.clone(),
        plotly: PlotlyMode::Cdn,
        dump_context: false,
        strict: true,
        history: Default::default(),
    })
    .unwrap();
    assert!(o.warnings.is_empty(), "{:?}", o.warnings);
    let cut: String = long.chars().take(DISPLAY_MAX_CHARS - 1).collect();
    let page = std::fs::read_to_string(out.join("layernorm.html")).unwrap();
    assert!(!page.contains(&long), "the whole name is on the page");
    assert!(page.contains(&format!("{cut}…")), "the cut name is missing");
    let csv = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert!(csv.contains(&long), "summary.csv keeps the name whole");
    let f = arts.join("long.json");
    // Another run of the same point: compare refuses a run against itself.
    let g = write_fixture(d.path(), "head/long.json", &named(&long, "l2"));
    let (rc, txt, err) = compare(
        &["--base", f.to_str().unwrap(), "--head", g.to_str().unwrap()],
        d.path(),
    );
    assert_eq!(rc, Some(0), "{err}");
    assert!(
        !txt.contains(&long) && txt.contains(&format!("{cut}…")),
        "{txt}"
    );
}
