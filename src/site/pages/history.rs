//! The history page: each headline quantity over commits (one line per point and GPU) with
//! the median's 95% interval, regressions marked with the `compare` verdicts, and every run.

use super::super::chart::{pt_cat, ChartView, Dims, Trace, TraceSet};
use super::super::fmt;
use super::super::palette::Palette;
use super::common::{NamedTable, Section};
use super::{plain_table, Empty, PageContext};
use crate::compare::{Options, Verdict};
use crate::history::{History, Series, HISTORY_DIR};
use std::collections::BTreeMap;
use std::path::Path;

/// The loaded history, or why there is none.
pub struct Loaded {
    pub history: Option<History>,
    pub problem: Option<String>,
    pub dir: String,
}

impl Loaded {
    pub fn runs(&self) -> usize {
        self.history.as_ref().map_or(0, |h| h.runs.len())
    }
}

/// Reads `<artifacts>/history/` (bad files are left out with a warning on the page).
pub fn load(artifacts: &Path) -> Loaded {
    let dir = artifacts.join(HISTORY_DIR);
    let shown = dir.display().to_string();
    if !dir.is_dir() {
        return Loaded {
            history: None,
            problem: None,
            dir: shown,
        };
    }
    match History::load(&dir, true) {
        Ok(h) => Loaded {
            history: Some(h),
            problem: None,
            dir: shown,
        },
        Err(e) => Loaded {
            history: None,
            problem: Some(format!("reading {shown}: {e:#}")),
            dir: shown,
        },
    }
}

fn short(c: Option<&str>) -> String {
    fmt::commit(c, None)
}

/// Filter coordinates of a series: GPU, kind, implementation, and dtype / L2 mode from params.
fn dims(s: &Series) -> Dims {
    let mut d = Dims::new();
    d.insert("gpu".into(), s.gpu.clone());
    d.insert("kind".into(), s.point.kind.clone());
    d.insert("impl".into(), s.point.implementation.clone());
    for kv in s.point.params.split(", ") {
        if let Some((k, v)) = kv.split_once('=') {
            if k == "dtype" {
                d.insert("dtype".into(), v.to_string());
            } else if k == "mode" || k == "l2" {
                d.insert("mode".into(), v.to_string());
            }
        }
    }
    d
}

pub fn build(page: &mut PageContext, loaded: &Loaded) {
    page.intro = "Every recorded run (artifacts/history, one file per run) over commits: each \
                  point's headline quantity (time_us, else its first duration) as one line per \
                  GPU, whiskers = the 95% confidence interval of the median. Markers show the \
                  verdict against the previous run on the same line (compare's rule: the \
                  intervals must not overlap and the change must exceed 3%). Click a point to \
                  see its run."
        .into();
    let Some(h) = loaded.history.as_ref().filter(|h| !h.runs.is_empty()) else {
        page.empty = Some(Empty {
            message: match &loaded.problem {
                Some(p) => format!("The history could not be read: {p}"),
                None => format!(
                    "No runs recorded in {} yet. Record a benchmark run into the history, \
                     then render the site again.",
                    loaded.dir
                ),
            },
            command: "cargo run --release --bin history -- record artifacts/layernorm.json && \
                      cargo run --release --bin dashboard"
                .into(),
        });
        return;
    };
    page.site.warnings.extend(h.warnings.iter().cloned());
    let opts = Options::default();
    let series: Vec<Series> = h.series(&opts).into_iter().filter(|s| s.headline).collect();
    let commits = h.commits();
    let x_order: Vec<String> = commits.iter().map(|c| short(Some(c))).collect();
    let pal = Palette::new(series.iter().map(|s| s.point.implementation.as_str()));
    let gpus: Vec<&str> = {
        let mut g: Vec<&str> = series.iter().map(|s| s.gpu.as_str()).collect();
        g.sort();
        g.dedup();
        g
    };
    let mut by_kind: BTreeMap<&str, Vec<&Series>> = BTreeMap::new();
    for s in &series {
        by_kind.entry(s.point.kind.as_str()).or_default().push(s);
    }
    let mut charts = Vec::new();
    let mut verdict_rows = Vec::new();
    // Kinds with the most commits first: their lines say the most.
    let mut kinds: Vec<(&str, Vec<&Series>)> = by_kind.into_iter().collect();
    let n_commits = |list: &Vec<&Series>| {
        let mut c: Vec<&Option<String>> = list
            .iter()
            .flat_map(|s| s.points.iter().map(|p| &p.commit))
            .collect();
        c.sort();
        c.dedup();
        c.len()
    };
    kinds.sort_by(|a, b| n_commits(&b.1).cmp(&n_commits(&a.1)).then(a.0.cmp(b.0)));
    for (ki, (kind, list)) in kinds.iter().enumerate() {
        let unit = list.first().map(|s| s.stat.clone()).unwrap_or_default();
        let mut c = ChartView::new(
            &format!("hist-{ki}"),
            &format!("{kind}: headline quantity over commits"),
            &format!(
                "One line per point (benchmark, implementation, parameters; launch \
                 configuration ignored) and GPU; y = P50 of the headline quantity ({unit} \
                 for most points; each point's hover names its quantity), log scale; \
                 whiskers: the median's 95% interval. Red triangles: SLOWER than the \
                 previous run of that line; green: FASTER. x: commits in order of their \
                 first run."
            ),
            "commit",
            "P50 (log)",
        );
        c.log_y = true;
        c.click_details = true;
        c.x_order = x_order.clone();
        let mut set = TraceSet::default();
        let mut marks = TraceSet::default();
        // Parameters every line of this kind shares are left out of the names.
        let split =
            |s: &Series| -> Vec<String> { s.point.params.split(", ").map(String::from).collect() };
        let common: Vec<String> = match list.first() {
            Some(first) => split(first)
                .into_iter()
                .filter(|kv| list.iter().all(|s| split(s).contains(kv)))
                .collect(),
            None => Vec::new(),
        };
        for s in list {
            let f = dims(s);
            let own: Vec<String> = split(s)
                .into_iter()
                .filter(|kv| !common.contains(kv))
                .collect();
            let mut name = format!("{} {}", s.point.implementation, own.join(" "));
            if s.point.benchmark != s.point.kind {
                name = format!("{} {name}", s.point.benchmark);
            }
            if gpus.len() > 1 {
                name = format!("{name} · {}", s.gpu);
            }
            let gi = gpus.iter().position(|g| *g == s.gpu).unwrap_or(0);
            let color = pal.of(&s.point.implementation);
            let tr = set.get(&name, || {
                let mut t = Trace::new(&name, color.clone(), "lines+markers");
                t.dash = ["solid", "dot", "dash", "dashdot"]
                    .get(gi % 4)
                    .map(|d| d.to_string());
                t
            });
            for p in &s.points {
                let verdict = p.vs_previous.map(|j| {
                    format!(
                        "{}{}",
                        j.verdict,
                        j.ratio.map(|r| format!(" (×{:.3})", r)).unwrap_or_default()
                    )
                });
                let hover = format!(
                    "run: {}\ncommit: {}\nstarted: {}\nGPU: {}\npoint: {} {} {}\n{}: P50 {} \
                     (95% CI {} – {}, n={})\nvs previous run: {}\nfile: {}/{}",
                    p.run_id,
                    p.commit.as_deref().unwrap_or("unknown"),
                    fmt::time_utc(&p.started_utc),
                    s.gpu,
                    s.point.benchmark,
                    s.point.implementation,
                    s.point.params,
                    s.stat,
                    fmt::num(p.p50),
                    fmt::num(p.median_ci95[0]),
                    fmt::num(p.median_ci95[1]),
                    p.n,
                    verdict.clone().unwrap_or_else(|| "— (first run)".into()),
                    HISTORY_DIR,
                    p.file
                );
                let x = short(p.commit.as_deref());
                let mut pt = pt_cat(&x, p.p50, hover.clone(), f.clone());
                pt.lo = Some(p.median_ci95[0]);
                pt.hi = Some(p.median_ci95[1]);
                tr.points.push(pt);
                if let Some(j) = p.vs_previous {
                    let (label, color, symbol) = match j.verdict {
                        Verdict::Slower => {
                            ("SLOWER than the previous run", "#dc2626", "triangle-up")
                        }
                        Verdict::Faster => {
                            ("FASTER than the previous run", "#16a34a", "triangle-down")
                        }
                        _ => continue,
                    };
                    let m = marks.get(label, || {
                        let mut t = Trace::new(label, color, "markers");
                        t.symbol = Some(symbol.into());
                        t
                    });
                    m.points.push(pt_cat(&x, p.p50, hover, f.clone()));
                    verdict_rows.push((
                        vec![
                            j.verdict.to_string(),
                            kind.to_string(),
                            format!("{} {}", s.point.benchmark, s.point.implementation),
                            s.point.params.clone(),
                            s.stat.clone(),
                            s.gpu.clone(),
                            x,
                            fmt::num(p.p50),
                            j.ratio.map(|r| format!("×{r:.3}")).unwrap_or_default(),
                            p.run_id.clone(),
                        ],
                        f.clone(),
                    ));
                }
            }
        }
        let mut traces = set.into_vec();
        traces.extend(marks.into_vec());
        c.hide_legend = traces.len() > 16;
        if c.hide_legend {
            c.caption += " Too many lines for a legend: hover a line to see its point, or \
                          narrow them with the filters.";
        }
        c.traces = traces;
        charts.push(c.finish("No ok point with a sampled quantity in these runs."));
    }
    let mut s = Section::new(
        "over-commits",
        "Over commits",
        &format!(
            "{} runs of {} commit(s) on {} GPU(s). A line with one point has one run so far.",
            h.runs.len(),
            commits.len(),
            gpus.len()
        ),
    );
    s.charts = charts;
    if !verdict_rows.is_empty() {
        s.tables.push(NamedTable {
            id: "hist-verdicts".into(),
            title: "Changes against the previous run".into(),
            caption: "Every SLOWER and FASTER verdict of a line against its previous run. \
                      Between runs on one machine, drift alone gives some of these \
                      (docs/history.md): check a control implementation before calling one a \
                      regression."
                .into(),
            table: plain_table(
                &[
                    "verdict",
                    "kind",
                    "benchmark, implementation",
                    "parameters",
                    "quantity",
                    "GPU",
                    "commit",
                    "P50",
                    "ratio to previous",
                    "run",
                ],
                verdict_rows,
            ),
        });
    }
    let run_rows = h
        .runs
        .iter()
        .map(|r| {
            let mut f = Dims::new();
            f.insert("gpu".into(), r.gpu());
            f.insert("kind".into(), r.kind().to_string());
            (
                vec![
                    r.run_id().to_string(),
                    r.kind().to_string(),
                    fmt::commit(r.commit(), r.record.run.git_dirty),
                    fmt::time_utc(r.started_utc()),
                    r.gpu(),
                    r.record.points.len().to_string(),
                    format!("{HISTORY_DIR}/{}", r.file),
                ],
                f,
            )
        })
        .collect();
    let mut runs = Section::new("runs", "Runs", "");
    runs.tables.push(NamedTable {
        id: "hist-runs".into(),
        title: "Every recorded run".into(),
        caption: "Oldest first. Each file holds the run's environment, ceilings and per point \
                  n, P50, the median's 95% interval, P5 and P95 (zcat FILE | python3 -m \
                  json.tool reads one)."
            .into(),
        table: plain_table(
            &["run", "kind", "commit", "started", "GPU", "points", "file"],
            run_rows,
        ),
    });
    let dims: Vec<Dims> = series.iter().map(dims).collect();
    page.filters =
        super::super::filters::collect(dims.iter(), &["gpu", "kind", "impl", "dtype", "mode"]);
    page.sections = vec![s, runs];
}
