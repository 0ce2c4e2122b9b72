//! Chart invariants on the committed artifacts (two GPUs, real runs) and the fixtures: the
//! numbers each chart draws mean what its axes say.

use opbench::site::pages::PageContext;
use opbench::site::{build_pages, load, PlotlyMode};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

fn pages(artifacts: &str) -> Vec<PageContext> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (loaded, warnings) = load(&root.join(artifacts), false).unwrap();
    build_pages(
        &loaded,
        &warnings,
        artifacts,
        PlotlyMode::Cdn,
        "2026-11-22T06:00:00Z",
    )
}

fn every_site() -> Vec<(&'static str, Vec<PageContext>)> {
    ["artifacts", "tests/fixtures/artifacts"]
        .into_iter()
        .map(|a| (a, pages(a)))
        .collect()
}

fn page<'a>(pages: &'a [PageContext], file: &str) -> &'a PageContext {
    pages.iter().find(|p| p.file == file).unwrap()
}

#[test]
fn profiler_percentages_stay_per_gpu_and_at_most_100() {
    for (site, pages) in every_site() {
        let charts: Vec<_> = page(&pages, "kernels.html")
            .charts()
            .filter(|c| c.id.starts_with("kern-ncu"))
            .collect();
        assert!(!charts.is_empty(), "{site}: no profiler chart");
        for c in charts {
            assert!(!c.stacked, "{site} {}: percentages must not stack", c.id);
            let gpus: BTreeSet<&str> = c
                .traces
                .iter()
                .flat_map(|t| t.points.iter().map(|p| p.f["gpu"].as_str()))
                .collect();
            assert!(gpus.len() <= 1, "{site} {}: GPUs mixed: {gpus:?}", c.id);
            for t in &c.traces {
                let mut seen = BTreeSet::new();
                for p in &t.points {
                    assert!(p.y <= 100.0, "{site} {}: {} at {}", c.id, t.name, p.y);
                    assert!(
                        seen.insert(p.x.to_string()),
                        "{site} {}: two {} bars at {}",
                        c.id,
                        t.name,
                        p.x
                    );
                }
            }
        }
    }
}

#[test]
fn llm_peers_of_one_problem_share_an_x_category() {
    for (site, pages) in every_site() {
        let llm = page(&pages, "llm.html");
        let peers: Vec<_> = llm
            .charts()
            .filter(|c| c.id.starts_with("llm-peer"))
            .collect();
        assert!(!peers.is_empty(), "{site}: no llm-peer chart");
        // (gpu, model, dtype, batch) -> implementation -> x categories.
        let mut at: BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
        for t in peers.iter().flat_map(|c| &c.traces) {
            for p in &t.points {
                let key = ["gpu", "model", "dtype", "batch"]
                    .iter()
                    .map(|d| p.f.get(*d).cloned().unwrap_or_default())
                    .collect();
                at.entry(key)
                    .or_default()
                    .entry(p.f["impl"].clone())
                    .or_default()
                    .insert(p.x.as_str().unwrap().to_string());
            }
        }
        let mut paired = 0;
        for (key, imps) in &at {
            let xs: Vec<&BTreeSet<String>> = imps.values().collect();
            for x in &xs {
                assert_eq!(x.len(), 1, "{site} {key:?}: several categories {x:?}");
            }
            if xs.len() >= 2 {
                assert!(
                    xs.iter().all(|x| *x == xs[0]),
                    "{site} {key:?}: peers apart: {imps:?}"
                );
                paired += 1;
            }
        }
        assert!(paired >= 1, "{site}: no problem has two implementations");
        for x in peers.iter().flat_map(|c| &c.x_order) {
            for setting in ["harness=", "mem_sampled=", "event_tracking=", "device="] {
                assert!(!x.contains(setting), "{site}: a run setting in {x:?}");
            }
        }
    }
}

#[test]
fn a_gemm_heatmap_never_merges_gpus_or_dtypes() {
    for (site, pages) in every_site() {
        for c in page(&pages, "gemm.html")
            .charts()
            .filter(|c| c.id.starts_with("gemm-mn-"))
        {
            for dim in ["gpu", "dtype"] {
                let vals: BTreeSet<&str> = c.cells.iter().map(|x| x.f[dim].as_str()).collect();
                assert_eq!(vals.len(), 1, "{site} {}: {dim} mixed: {vals:?}", c.id);
                assert!(c.title.contains(vals.iter().next().unwrap()), "{}", c.title);
            }
        }
    }
    let committed = pages("artifacts");
    let n = page(&committed, "gemm.html")
        .charts()
        .filter(|c| c.id.starts_with("gemm-mn-"))
        .count();
    assert!(n >= 2, "one M × N heatmap per GPU of the committed runs");
}

#[test]
fn model_architectures_show_heads_smallest_model_first() {
    let committed = pages("artifacts");
    let c = page(&committed, "llm.html")
        .charts()
        .find(|c| c.id == "llm-arch")
        .unwrap();
    let names: Vec<&str> = c.traces.iter().map(|t| t.name.as_str()).collect();
    assert!(names.contains(&"attention heads"), "{names:?}");
    let order: Vec<&str> = c.x_order.iter().map(String::as_str).collect();
    let pos = |m: &str| order.iter().position(|x| *x == m).unwrap();
    assert!(pos("llama-24m") < pos("llama-134m"), "{order:?}");
    assert!(pos("llama-336m") < pos("tinyllama-1.1b"), "{order:?}");
    // One log axis: no second axis whose ticks fall at odd values.
    assert!(c.log_y && c.y2_title.is_none());
    let heads = c
        .traces
        .iter()
        .find(|t| t.name == "attention heads")
        .unwrap();
    let tiny = heads
        .points
        .iter()
        .find(|p| p.x == "tinyllama-1.1b")
        .unwrap();
    assert_eq!(tiny.y, 32.0);
}

#[test]
fn every_chart_keeps_to_the_legend_rule_and_roofs_are_labelled() {
    use opbench::site::rules;
    for (site, pages) in every_site() {
        for p in &pages {
            for c in p.charts() {
                assert!(
                    c.hide_legend || rules::legend_entries(c) <= rules::MAX_LEGEND_ENTRIES,
                    "{site} {}: {} legend entries",
                    c.id,
                    rules::legend_entries(c)
                );
                // A hidden legend leaves colours unnamed: only where there are fewer than 3.
                let colours: BTreeSet<&str> = c
                    .traces
                    .iter()
                    .filter(|t| !t.guide)
                    .map(|t| t.color.as_str())
                    .collect();
                assert!(
                    !c.hide_legend || colours.len() < 3,
                    "{site} {}: {} colours and no legend",
                    c.id,
                    colours.len()
                );
            }
        }
        let rl = page(&pages, "gemm.html")
            .charts()
            .find(|c| c.id.starts_with("gemm-roofline"))
            .unwrap();
        assert!(!rl.hide_legend, "{site}: the roofline names its kernels");
        let roofs: Vec<_> = rl.traces.iter().filter(|t| t.guide).collect();
        assert!(!roofs.is_empty());
        assert!(roofs.iter().all(|t| t.label.is_some()));
        let text: String = roofs.iter().filter_map(|t| t.label.clone()).collect();
        assert!(text.contains("TF/s"), "{text}");
    }
    let committed = pages("artifacts");
    let labels: String = page(&committed, "gemm.html")
        .charts()
        .filter(|c| c.id.starts_with("gemm-roofline"))
        .flat_map(|c| c.traces.iter().filter_map(|t| t.label.clone()))
        .collect();
    assert!(
        labels.contains("H200 bf16") && labels.contains("H100 bf16"),
        "{labels}"
    );
}

#[test]
fn llm_latency_labels_show_what_varies_and_keep_a_legend() {
    let committed = pages("artifacts");
    let llm = page(&committed, "llm.html");
    let lat = llm
        .charts()
        .find(|c| c.id.starts_with("llm-latency"))
        .unwrap();
    assert!(!lat.hide_legend, "the legend names the implementations");
    for x in &lat.x_order {
        assert!(x.len() <= 25, "{x:?}: a label of only what varies");
        for never in ["NVIDIA", "=", "f16", "128+128"] {
            assert!(!x.contains(never), "{x:?} carries {never:?}");
        }
    }
    assert!(lat.caption.contains("f16 128+128"), "{}", lat.caption);
    for c in llm.charts().filter(|c| c.id.starts_with("llm-pct-")) {
        for x in &c.x_order {
            assert!(!x.contains("NVIDIA") && !x.contains('='), "{x:?}");
        }
    }
}

#[test]
fn one_system_panel_per_environment_with_throttling_marked() {
    let committed = pages("artifacts");
    let envs = &committed[0].envs;
    let titles: Vec<&str> = envs.iter().map(|e| e.title.as_str()).collect();
    let distinct: BTreeSet<&str> = titles.iter().copied().collect();
    assert_eq!(titles.len(), distinct.len(), "{titles:?}");
    assert!(
        envs.iter().any(|e| e.throttled.contains("SW_POWER_CAP")),
        "{:?}",
        envs.iter().map(|e| &e.throttled).collect::<Vec<_>>()
    );
}

#[test]
fn every_chart_says_what_was_measured_where_and_the_statistic() {
    for (site, pages) in every_site() {
        for p in &pages {
            for c in p.charts() {
                let s = &c.subtitle;
                assert!(
                    s.starts_with("Measured on ") && s.contains("commit"),
                    "{site} {} {}: subtitle {s:?}",
                    p.file,
                    c.id
                );
                // Every GPU the chart draws is named in it.
                for t in &c.traces {
                    for pt in &t.points {
                        if let Some(g) = pt.f.get("gpu") {
                            assert!(s.contains(g.as_str()), "{site} {}: {g} not in {s:?}", c.id);
                        }
                    }
                }
                assert!(
                    [
                        "median",
                        "P50",
                        "CUPTI",
                        "Nsight",
                        "parameters",
                        "error",
                        "FLOPs"
                    ]
                    .iter()
                    .any(|w| s.contains(w)),
                    "{site} {}: no statistic in {s:?}",
                    c.id
                );
            }
        }
    }
}

#[test]
fn llm_throughput_reads_at_a_glance() {
    for (site, pages) in every_site() {
        let c = page(&pages, "llm.html")
            .charts()
            .find(|c| c.id == "llm-throughput")
            .unwrap();
        let legend = opbench::site::rules::legend_entries(c);
        assert!(legend <= 10, "{site}: {legend} legend entries");
        assert!(!c.hide_legend, "{site}: the legend is shown");
        for t in &c.traces {
            assert!(t.points.len() >= 2, "{site}: {} is not a line", t.name);
            assert!(
                !t.name.contains("NVIDIA") && !t.name.contains("FIXTURE"),
                "{site}: GPU in the name {}",
                t.name
            );
        }
    }
}

#[test]
fn gemm_points_with_b_stored_n_by_k_are_labelled_and_filterable() {
    let committed = pages("artifacts");
    let g = page(&committed, "gemm.html");
    let f = g
        .filters
        .iter()
        .find(|f| f.dim == "b_layout")
        .expect("the committed GEMM artifacts hold both B layouts");
    assert_eq!(f.values, vec!["kn".to_string(), "nk".to_string()]);
    let heat = g
        .charts()
        .find(|c| c.id.starts_with("gemm-heatmap") && c.title.contains("square"))
        .unwrap();
    let text = serde_json::to_string(heat).unwrap();
    assert!(text.contains("B[N,K]"), "the [N,K] shapes are named");
}

#[test]
fn heatmap_cells_are_single_points_of_one_gpu() {
    // The kernels × shapes and the kernel-parameter heatmaps: one cell, one point. (The GEMM
    // M × N grids show the best kernel per cell, and say so.)
    for (site, pages) in every_site() {
        for p in &pages {
            for c in p
                .charts()
                .filter(|c| c.id.starts_with("gemm-heatmap") || c.id.starts_with("kern-heat"))
            {
                let mut seen = BTreeSet::new();
                let gpus: BTreeSet<&str> = c
                    .cells
                    .iter()
                    .filter_map(|cell| cell.f.get("gpu").map(String::as_str))
                    .collect();
                assert!(gpus.len() <= 1, "{site} {}: cells of {gpus:?}", c.id);
                for cell in &c.cells {
                    assert!(
                        seen.insert((cell.x.clone(), cell.y.clone())),
                        "{site} {}: two points at {} × {}",
                        c.id,
                        cell.y,
                        cell.x
                    );
                }
            }
        }
    }
}
