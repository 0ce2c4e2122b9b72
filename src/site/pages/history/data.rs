//! The history page's files: one `<script src>` data file per kind (assigning
//! `window.OPBENCH_HISTORY[kind]`) and the runs CSV.

use super::digest::RunDigest;
use super::series::KindData;
use super::{
    kind_caption, kind_title, links, marks, regressions, y_range, ChartSpec, KindView, DATA_GLOBAL,
};
use crate::history::{round_sig, HISTORY_DIR};
use crate::site::fmt;
use crate::site::pages::DataFile;

fn r4(x: f64) -> f64 {
    round_sig(x, 4)
}

/// "2026-12-03" of an RFC 3339 time: the x axis's date under each commit.
fn day(started_utc: &str) -> String {
    started_utc.chars().take(10).collect()
}

/// The view of one kind and its data file; `counts`: the regressions table's groups, whose
/// verdicts mark the newest commit's points.
pub fn kind_files(
    k: &KindData,
    gpus: &[&str],
    counts: &[regressions::GroupCount],
) -> (KindView, DataFile) {
    let slug = crate::site::pages::slug(&k.kind);
    let mut charts = Vec::new();
    let mut data = serde_json::Map::new();
    for (i, c) in k.charts.iter().enumerate() {
        let id = format!("h-{slug}-{i}");
        charts.push(ChartSpec {
            id: id.clone(),
            title: c.meta.title.clone(),
            quantity: c.meta.quantity.clone(),
            higher_is_better: c.meta.higher_is_better,
        });
        let mut all_bands = Vec::new();
        let lines: Vec<serde_json::Value> = c
            .lines
            .iter()
            .map(|l| {
                let hover: Vec<String> = l
                    .values
                    .iter()
                    .map(|v| {
                        let mut t =
                            format!("{} [{}, {}]", fmt::num(v.v), fmt::num(v.lo), fmt::num(v.hi));
                        if v.points > 1 {
                            t.push_str(&format!(" · {} points", v.points));
                        }
                        t
                    })
                    .collect();
                let bands: Vec<(f64, f64, f64)> =
                    l.values.iter().map(|v| (v.v, v.lo, v.hi)).collect();
                all_bands.extend(bands);
                serde_json::json!({
                    "gpu": gpus.iter().position(|g| *g == l.gpu).unwrap_or(0),
                    "mark": marks::mark(counts, &k.kind, &l.gpu, &k.commits)
                        .filter(|mk| l.x.contains(&mk.x)),
                    "x": l.x,
                    "y": l.values.iter().map(|v| r4(v.v)).collect::<Vec<_>>(),
                    "lo": l.values.iter().map(|v| r4(v.lo)).collect::<Vec<_>>(),
                    "hi": l.values.iter().map(|v| r4(v.hi)).collect::<Vec<_>>(),
                    "t": hover,
                    "m": l.verdicts.iter().map(|v| match v {
                        Some(crate::compare::Verdict::Slower) => 1,
                        Some(_) => -1,
                        None => 0,
                    }).collect::<Vec<i8>>(),
                })
            })
            .collect();
        let y_range = y_range::y_range(&all_bands).map(|r| r.map(r4));
        data.insert(
            id,
            serde_json::json!({ "lines": lines, "y_range": y_range }),
        );
    }
    let commits: Vec<(String, String, String)> = k
        .commits
        .iter()
        .map(|c| {
            (
                c.hash.clone().unwrap_or_default(),
                c.started_utc.clone(),
                day(&c.started_utc),
            )
        })
        .collect();
    let body = serde_json::json!({ "commits": commits, "charts": data });
    let file = format!("data/history-{slug}.js");
    let text = format!(
        "// opbench history data of kind {:?}, loaded by assets/history.js.\n\
         (window.{DATA_GLOBAL} = window.{DATA_GLOBAL} || {{}})[{}] = {};\n",
        k.kind,
        serde_json::to_string(&k.kind).unwrap_or_default(),
        body
    );
    (
        KindView {
            kind: k.kind.clone(),
            id: format!("kind-{slug}"),
            title: kind_title(&k.kind),
            caption: kind_caption(k),
            file: file.clone(),
            charts,
        },
        DataFile { path: file, text },
    )
}

pub fn runs_csv(runs: &[RunDigest], repo: Option<&str>) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let _ = w.write_record([
        "run",
        "kind",
        "commit",
        "dirty",
        "started_utc",
        "gpu",
        "points",
        "file",
        "commit_url",
    ]);
    for r in runs {
        let link = links::commit_link(r.commit.as_deref(), repo);
        let _ = w.write_record([
            regressions::cell(&r.label()),
            regressions::cell(&r.kind),
            r.commit.clone().unwrap_or_default(),
            r.dirty.map_or(String::new(), |d| d.to_string()),
            r.started_utc.clone(),
            regressions::cell(&r.gpu),
            r.points.to_string(),
            regressions::cell(&format!("{HISTORY_DIR}/{}", r.file)),
            link.url.unwrap_or_default(),
        ]);
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}
