//! The trace page with two traced implementations (the fixture artifacts) and with an artifact
//! written before traces had an implementation dimension (candle only, compact trace version 1).

use opbench::site::{build_pages, load, PageContext, PlotlyMode};
use std::path::Path;

fn trace_page(folder: &str) -> PageContext {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (loaded, warnings) = load(&root.join(folder), true).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let pages = build_pages(
        &loaded,
        &warnings,
        folder,
        PlotlyMode::Cdn,
        "2026-11-22T06:00:00Z",
    );
    pages
        .into_iter()
        .find(|p| p.file == "llm-trace.html")
        .expect("a trace page")
}

fn points(p: &PageContext, id: &str) -> Vec<(String, usize)> {
    let c = p.charts().find(|c| c.id == id).unwrap_or_else(|| {
        panic!(
            "no chart {id}: {:?}",
            p.charts().map(|c| &c.id).collect::<Vec<_>>()
        )
    });
    assert!(c.empty.is_none(), "{id}: {:?}", c.empty);
    c.traces
        .iter()
        .filter(|t| !t.guide)
        .map(|t| (t.name.clone(), t.points.len()))
        .collect()
}

#[test]
fn both_implementations_are_drawn_side_by_side() {
    let p = trace_page("tests/fixtures/artifacts");
    // Kernels per step and idle share: one bar per implementation and traced step.
    for id in ["trace-kernels", "trace-idle"] {
        assert_eq!(
            points(&p, id),
            vec![("candle".into(), 4), ("opbench".into(), 4)],
            "{id}"
        );
    }
    // Class charts: x is the implementation, both bars present in every class stack.
    let c = p.charts().find(|c| c.id == "trace-classes").unwrap();
    assert_eq!(c.x_order, vec!["candle", "opbench"]);
    let idle = c.traces.iter().find(|t| t.name == "idle").unwrap();
    assert_eq!(idle.points.len(), 2);
    assert!(p.charts().any(|c| c.id == "trace-classes-prefill"));
    // Layers: the side-by-side chart, then one stacked chart per implementation and phase.
    assert_eq!(
        points(&p, "trace-layers-cmp-decode"),
        vec![("candle".into(), 4), ("opbench".into(), 4)]
    );
    let stacked: Vec<String> = p
        .charts()
        .filter(|c| c.id.starts_with("trace-layers-") && !c.id.contains("cmp"))
        .map(|c| c.title.clone())
        .collect();
    assert_eq!(stacked.len(), 4, "{stacked:?}");
    assert!(stacked[1].contains("opbench"), "{stacked:?}");
    // Timelines of each implementation's first decode step: every activity.
    let n = |id: &str| points(&p, id).iter().map(|(_, n)| n).sum::<usize>();
    assert_eq!(n("tl-decode-candle"), 27);
    assert_eq!(n("tl-decode-opbench"), 14);
    assert!(p.charts().any(|c| c.id == "tl-prefill-opbench"));
    // The side-by-side table: a column per implementation, kernels per step first.
    let t = p
        .sections
        .iter()
        .flat_map(|s| &s.tables)
        .find(|t| t.id == "trace-compare-decode")
        .unwrap();
    assert_eq!(t.table.columns, vec!["quantity", "candle", "opbench"]);
    assert_eq!(t.table.rows[0].cells, vec!["kernels per step", "26", "13"]);
    assert!(p.filters.iter().any(|f| f.dim == "impl"));
    assert!(p.intro.contains("opbench: "), "{}", p.intro);
    assert!(p.intro.contains("untraced"), "{}", p.intro);
}

#[test]
fn an_artifact_without_implementations_loads_as_candle() {
    let p = trace_page("tests/fixtures/trace_v1");
    assert_eq!(points(&p, "trace-kernels"), vec![("candle".into(), 4)]);
    let c = p.charts().find(|c| c.id == "trace-classes").unwrap();
    assert_eq!(c.x_order, vec!["candle"]);
    assert_eq!(
        points(&p, "tl-decode-candle")
            .iter()
            .map(|(_, n)| n)
            .sum::<usize>(),
        27
    );
    assert!(!p
        .charts()
        .any(|c| c.id.contains("opbench") || c.id.contains("cmp")));
    // Its untraced step is a note, not a metric: the intro still names it.
    assert!(p.intro.contains("untraced decode step p50"), "{}", p.intro);
    assert!(!p.filters.iter().any(|f| f.dim == "impl"));
}

#[test]
fn matmul_bandwidth_is_over_the_busy_time_where_kernels_overlap() {
    // The committed trace: opbench's decode matmuls overlap under programmatic dependent
    // launch (summed durations ~2x their busy time); the hover's rate uses the busy time.
    let p = trace_page("artifacts");
    let c = p.charts().find(|c| c.id == "trace-classes").unwrap();
    let hovers: Vec<&str> = c
        .traces
        .iter()
        .filter(|t| t.name == "matmul")
        .flat_map(|t| t.points.iter().map(|pt| pt.hover.as_str()))
        .filter(|h| h.starts_with("opbench") || h.contains("opbench"))
        .collect();
    assert!(!hovers.is_empty(), "no opbench matmul bar");
    for h in hovers {
        let gbps: f64 = h
            .split("busy time: ")
            .nth(1)
            .and_then(|r| r.split(" GB/s").next())
            .map(|n| n.replace(',', "").parse().unwrap())
            .unwrap_or_else(|| panic!("no rate in {h}"));
        assert!(gbps > 1500.0, "{gbps} GB/s: {h}");
    }
}
