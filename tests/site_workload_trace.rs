//! The dashboard's side of `trace` artifacts: the workload's own page from the fixture trace
//! (tests/fixtures/artifacts/workload-trace, made by tests/fixtures/make_trace_fixture.py), and
//! two recorded runs of it on the history page, one chart per workload.

use opbench::artifact::{read_artifact, write_json_atomic};
use opbench::history::{record, RecordOptions};
use opbench::site::{build_pages, load, PlotlyMode};
use std::path::Path;

const FIXTURE: &str = "tests/fixtures/artifacts/workload-trace";

#[test]
fn a_trace_gets_its_workload_page_and_its_runs_a_history_chart() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::tempdir().unwrap();
    let arts = tmp.path().join("artifacts");
    let dir = arts.join("tiny");
    std::fs::create_dir_all(&dir).unwrap();
    for f in ["trace.json", "timeline.trace.json"] {
        std::fs::copy(root.join(FIXTURE).join(f), dir.join(f)).unwrap();
    }
    // Two runs of two commits (the second with its attention kernel 20% slower).
    let a = read_artifact(&dir.join("trace.json")).unwrap();
    let mut runs = [a.clone(), a];
    for (i, r) in runs.iter_mut().enumerate() {
        r.run.id = format!("20261122T08000{i}Z-f1x7w0r{i}");
        r.run.started_utc = format!("2026-11-2{}T08:00:00Z", 2 + i);
        r.run.finished_utc = format!("2026-11-2{}T08:00:05Z", 2 + i);
        r.run.git_commit = Some(format!("f1a7c0de{i}{}", "0".repeat(31)));
    }
    for row in runs[1].results.iter_mut() {
        if row
            .param_str("kernel")
            .is_some_and(|k| k.contains("flash_fwd"))
        {
            // Every time of the statistics scales; counts and the cv do not.
            let s = row.stats.get_mut("time_us").unwrap();
            let mut v = serde_json::to_value(&*s).unwrap();
            for (k, x) in v.as_object_mut().unwrap() {
                let scale = |x: &mut serde_json::Value| {
                    if let Some(f) = x.as_f64() {
                        *x = (f * 1.2).into();
                    }
                };
                match k.as_str() {
                    "n" | "outliers_tukey" | "cv" => {}
                    "median_ci95" => x.as_array_mut().unwrap().iter_mut().for_each(scale),
                    _ => scale(x),
                }
            }
            *s = serde_json::from_value(v).unwrap();
        }
    }
    let hist = arts.join("history");
    for (i, r) in runs.iter().enumerate() {
        let p = tmp.path().join(format!("run{i}.json"));
        write_json_atomic(&p, r).unwrap();
        record(&p, &hist, RecordOptions::default()).unwrap();
    }
    let (loaded, warnings) = load(&arts, true).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let arts_s = arts.to_str().unwrap();
    let pages = build_pages(&loaded, &warnings, arts_s, PlotlyMode::Cdn, "t");
    let page = pages
        .iter()
        .find(|p| p.file == "trace-tiny-llm-2rank.html")
        .expect("the workload's page");
    assert_eq!(page.title, "Trace: tiny-llm-2rank");
    let ids: Vec<&str> = page.sections.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "summary",
            "timeline",
            "classes",
            "processes",
            "modules",
            "launch"
        ]
    );
    // The timeline of both processes: 45 kernels and 1 copy each.
    let tl = page.charts().find(|c| c.id == "wt-timeline").unwrap();
    let drawn: usize = tl
        .traces
        .iter()
        .filter(|t| !t.guide)
        .map(|t| t.points.len())
        .sum();
    assert_eq!(drawn, 92);
    // The process whose recording stopped says so, with when.
    let last = page
        .sections
        .iter()
        .flat_map(|s| &s.tables)
        .flat_map(|t| &t.table.rows)
        .filter_map(|r| r.cells.last())
        .find(|c| c.starts_with("INCOMPLETE"))
        .expect("a process row marked INCOMPLETE");
    assert!(
        last.starts_with("INCOMPLETE: recording stopped 0.4 ms"),
        "{last}"
    );
    assert!(
        page.intro
            .contains("Not everything was recorded: 1 of 2 processes are incomplete: pid 4102"),
        "{}",
        page.intro
    );
    // Nothing of the kind lands on a generic page.
    assert!(pages.iter().all(|p| p.file != "kind-trace.html"));
    let h = pages
        .iter()
        .find(|p| p.file == "history.html")
        .and_then(|p| p.history.as_ref())
        .expect("a history view");
    let kind = h
        .kinds
        .iter()
        .find(|k| k.kind == "trace")
        .expect("traces in history");
    let titles: Vec<&str> = kind.charts.iter().map(|c| c.title.as_str()).collect();
    assert_eq!(titles, ["tiny-llm-2rank: GPU time of its top kernels"]);
}
