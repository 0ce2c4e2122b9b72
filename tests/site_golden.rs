//! Golden tests of the dashboard's template contexts for the fixture artifacts.
//!
//! Each page's context (every pre-formatted figure, chart point and table row the template
//! is given) is compared with `tests/golden/<page>.json`. The generation time is fixed, so
//! the whole context is meaningful. After an intended change, refresh with
//! `UPDATE_GOLDEN=1 cargo test --test site_golden` and review the diff.

use opbench::site::{build_pages, load, PlotlyMode};
use std::path::Path;

const FIXTURES: &str = "tests/fixtures/artifacts";
const GOLDEN: &str = "tests/golden";

fn first_difference(a: &str, b: &str) -> String {
    for (i, (x, y)) in a.lines().zip(b.lines()).enumerate() {
        if x != y {
            return format!("line {}:\n  golden: {x}\n  actual: {y}", i + 1);
        }
    }
    format!(
        "one is a prefix of the other ({} vs {} lines)",
        a.lines().count(),
        b.lines().count()
    )
}

#[test]
fn page_contexts_match_the_golden_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (loaded, warnings) = load(&root.join(FIXTURES), true).unwrap();
    assert!(
        warnings.is_empty(),
        "fixtures must all be valid: {warnings:?}"
    );
    let pages = build_pages(
        &loaded,
        &warnings,
        FIXTURES,
        PlotlyMode::Cdn,
        "2026-11-22T06:00:00Z",
    );
    let update = std::env::var("UPDATE_GOLDEN").is_ok_and(|v| v == "1");
    let mut names = Vec::new();
    let mut failures = Vec::new();
    for page in &pages {
        let stem = page.file.trim_end_matches(".html");
        names.push(format!("{stem}.json"));
        let path = root.join(GOLDEN).join(format!("{stem}.json"));
        let actual = serde_json::to_string_pretty(page).unwrap() + "\n";
        if update {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &actual).unwrap();
            continue;
        }
        match std::fs::read_to_string(&path) {
            Err(_) => failures.push(format!("{} is missing", path.display())),
            Ok(golden) if golden != actual => failures.push(format!(
                "{} differs at {}",
                path.display(),
                first_difference(&golden, &actual)
            )),
            Ok(_) => {}
        }
    }
    // No stale golden file for a page that is no longer rendered.
    for entry in std::fs::read_dir(root.join(GOLDEN)).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().to_string();
        if name.ends_with(".json") && !names.contains(&name) {
            failures.push(format!("tests/golden/{name} belongs to no page"));
        }
    }
    assert!(
        failures.is_empty(),
        "{}\n(after an intended change: UPDATE_GOLDEN=1 cargo test --test site_golden)",
        failures.join("\n")
    );
}

#[test]
fn the_fixture_site_has_the_pages_and_charts_it_promises() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (loaded, warnings) = load(&root.join(FIXTURES), true).unwrap();
    let pages = build_pages(&loaded, &warnings, FIXTURES, PlotlyMode::Cdn, "t");
    let files: Vec<&str> = pages.iter().map(|p| p.file.as_str()).collect();
    assert_eq!(
        files,
        [
            "index.html",
            "llm.html",
            "layernorm.html",
            "gemm.html",
            "kernels.html",
            "llm-trace.html",
            "comm.html",
            "history.html",
            "traces.html",
            "trace-tiny-llm-2rank.html",
            "kind-softmax.html"
        ]
    );
    for p in &pages[1..] {
        assert!(p.empty.is_none(), "{} should have data", p.file);
        for c in p.charts() {
            assert!(
                c.empty.is_none(),
                "{}: chart {} is empty: {:?}",
                p.file,
                c.id,
                c.empty
            );
            assert_eq!(
                c.table.rows.len(),
                c.traces
                    .iter()
                    .filter(|t| !t.guide)
                    .map(|t| t.points.len())
                    .sum::<usize>()
                    + c.cells.len(),
                "{}: chart {} table and points disagree",
                p.file,
                c.id
            );
        }
    }
    let overview = &pages[0];
    let cards: Vec<&str> = overview.cards.iter().map(|c| c.value.as_str()).collect();
    assert_eq!(
        cards.len(),
        8,
        "LayerNorm and LLM on two GPUs; GEMM, collectives, kernels and traces on one: {cards:?}"
    );
    assert!(overview.cards.iter().all(|c| !c.muted));
    // The traces card counts workloads and opens the Traces index.
    let (traced, figures): (Vec<_>, Vec<_>) =
        overview.cards.iter().partition(|c| c.link == "traces.html");
    assert_eq!(traced.len(), 1, "{traced:?}");
    assert_eq!(traced[0].value, "1");
    // Every other card is a median with its spread and links to a chart of its page.
    for c in figures {
        assert!(
            c.stat.contains("median") && c.stat.contains("P5–P95"),
            "{c:?}"
        );
        let (file, hash) = c.link.split_once("#chart=fig-").expect("a chart link");
        let id = hash.split('&').next().unwrap();
        let page = pages.iter().find(|p| p.file == file).unwrap();
        // The chart, or its panel of the card's GPU (`pages::common::per_gpu`), or a panel
        // of another split that draws every GPU (LayerNorm's per dtype and L2 mode).
        assert!(
            page.charts().any(|ch| ch.id == id
                || (ch.id.starts_with(&format!("{id}-"))
                    && ch.f.get("gpu").is_none_or(|g| c.f.get("gpu") == Some(g)))),
            "{file} has no chart {id} for {:?}",
            c.f
        );
    }
    // The regressions strip: the history's newest commit per kind and GPU.
    let strip = overview.regressions.as_ref().expect("a regressions strip");
    assert_eq!(strip.items.len(), 2, "LayerNorm on two GPUs: {strip:?}");
    // The fixture's one move is candle's (library code): drift, not a verdict on our code.
    assert!(
        strip.items[0].verdicts.contains("0 FASTER")
            && strip.items[0]
                .flags
                .contains(&"1 library line moved: the machine drifted".to_string()),
        "{strip:?}"
    );
    // Each item is our code's change, signed, with its interval and both commits dated.
    for i in &strip.items {
        assert!(
            i.change.ends_with('%') && i.interval.contains("95% interval"),
            "{i:?}"
        );
        assert!(
            i.commits.contains(" (20") && i.commits.contains('→'),
            "{i:?}"
        );
    }
    // The two GPUs of the LayerNorm fixtures and the comm fixture's H200.
    assert_eq!(overview.envs.len(), 3);
    let comm = pages.iter().find(|p| p.file == "comm.html").unwrap();
    let comm_ids: Vec<&str> = comm.charts().map(|c| c.id.as_str()).collect();
    assert_eq!(
        comm_ids,
        [
            "comm-small",
            "comm-oneshot",
            "comm-busbw-all-reduce",
            "comm-busbw-all-gather",
            "comm-busbw-reduce-scatter",
            "comm-busbw-broadcast"
        ]
    );
    // Kernel-specific params (impl_kind, ladder_step, block_threads) must not keep a kernel
    // from its cuBLAS or candle comparison point.
    let gemm = &pages[3];
    let ladder = gemm.charts().find(|c| c.id == "gemm-ladder").unwrap();
    assert!(ladder.traces.iter().map(|t| t.points.len()).sum::<usize>() >= 9);
    let ln = &pages[2];
    // One speedup panel per dtype and L2 mode; together they hold every point.
    let n: usize = ln
        .charts()
        .filter(|c| c.id.starts_with("ln-speedup"))
        .flat_map(|c| &c.traces)
        .map(|t| t.points.len())
        .sum();
    assert_eq!(
        n, 50,
        "every opbench point with a candle twin has a speedup"
    );
    // The new pages: every view of the kernels page, both timelines from the compact trace
    // beside the artifact, and the history with its SLOWER mark and both fixture GPUs.
    let page = |f: &str| pages.iter().find(|p| p.file == f).unwrap();
    let ids = |f: &str| -> Vec<String> { page(f).charts().map(|c| c.id.clone()).collect() };
    let k = ids("kernels.html");
    for id in [
        "kern-heat-0",
        "kern-along",
        "kern-speedup",
        "kern-ncu",
        "kern-roofline",
    ] {
        assert!(
            k.iter()
                .any(|c| c == id || c.starts_with(&format!("{id}-"))),
            "kernels.html lacks {id}: {k:?}"
        );
    }
    let t = ids("llm-trace.html");
    for id in [
        "tl-decode-candle",
        "tl-prefill-candle",
        "tl-decode-opbench",
        "tl-prefill-opbench",
        "trace-classes",
        "trace-kernels",
        "trace-idle",
        "trace-layers-cmp-decode",
        "trace-layers-0",
    ] {
        assert!(
            t.iter().any(|c| c == id),
            "llm-trace.html lacks {id}: {t:?}"
        );
    }
    let tl = page("llm-trace.html")
        .charts()
        .find(|c| c.id == "tl-decode-candle")
        .unwrap();
    assert_eq!(
        tl.traces
            .iter()
            .filter(|t| !t.guide)
            .map(|t| t.points.len())
            .sum::<usize>(),
        27,
        "every activity of the first decode step"
    );
    // The history page: a data file per kind, referenced by its section and parsed from
    // the `<script src>` form the browser loads; a line per GPU on each small chart.
    let h = page("history.html");
    let view = h.history.as_ref().unwrap();
    assert!(!view.kinds.is_empty());
    for k in &view.kinds {
        let f = h.files.iter().find(|f| f.path == k.file).unwrap();
        let (head, json) = f.text.split_once("] = ").unwrap();
        assert!(head.contains("window.OPBENCH_HISTORY"), "{head}");
        let data: serde_json::Value =
            serde_json::from_str(json.trim_end().trim_end_matches(';')).unwrap();
        assert!(!k.charts.is_empty());
        for c in &k.charts {
            let lines = data["charts"][&c.id]["lines"].as_array().unwrap();
            assert_eq!(lines.len(), 2, "{}: a line per GPU", c.id);
        }
    }
    assert!(view.tables[0].rows.iter().any(|r| r.verdict == "FASTER"));
    assert!(h.files.iter().any(|f| f.path == "data/history-runs.csv"));
    // Run settings never split a peer comparison: labels carry problem parameters only.
    let llm = &pages[1];
    for peer in llm.charts().filter(|c| c.id.starts_with("llm-peer")) {
        assert!(!peer.x_order.iter().any(|x| x.contains("event_tracking=")));
    }
}
