//! The overview: highlight cards, a table of every benchmark's headline figures, one system
//! panel per environment, and the list of artifacts.

use super::super::chart::{Dims, TableRow, TableView};
use super::super::fmt;
use super::super::names;
use super::super::palette::Palette;
use super::super::points::{Point, Store};
use super::common::*;
use super::{Card, EnvView, PageContext};
use crate::artifact::Status;
use std::collections::BTreeMap;

/// Most artifacts listed on the overview (newest first); summary.json lists them all.
pub const MAX_ARTIFACT_ROWS: usize = 300;

fn gpu_dims(gpu: &str) -> Dims {
    [("gpu".to_string(), gpu.to_string())].into_iter().collect()
}

fn muted(title: &str, link: &str, bin: &str) -> Card {
    Card {
        title: title.into(),
        value: "—".into(),
        details: vec![format!("no data yet: run {bin}")],
        link: link.into(),
        f: Dims::new(),
        muted: true,
    }
}

fn layernorm_card(gpu: &str, pts: &[Point]) -> Option<Card> {
    let peers = peer_index(pts, peer_key);
    let base = names::LN_BASELINE[0];
    let mut sp: Vec<(f64, Point)> = pts
        .iter()
        .filter(|p| p.ok() && !names::NOT_OURS.contains(&p.imp()))
        .filter_map(|p| {
            let v = names::metric(p.row, names::SPEEDUP_LN).or_else(|| {
                let b = peers
                    .get(&(peer_key(p), base.to_string()))
                    .and_then(p50_us)?;
                Some(b / p50_us(p)?)
            })?;
            Some((v, *p))
        })
        .collect();
    sp.sort_by(|a, b| b.0.total_cmp(&a.0));
    let (best, p) = *sp.first()?;
    let (worst, wp) = *sp.last()?;
    let faster = sp.iter().filter(|(v, _)| *v > 1.0).count();
    let r = p.row;
    let shape = format!(
        "{}×{} {} {}",
        names::param_str(r, names::ROWS).unwrap_or_default(),
        names::param_str(r, names::COLS).unwrap_or_default(),
        p.dtype().unwrap_or_default(),
        names::param_str(r, names::MODE).unwrap_or_default()
    );
    let mut details = vec![format!("{} at {shape}", p.imp())];
    if let Some(g) = names::metric(r, names::GBPS) {
        let pc = names::metric(r, names::PCT_COPY)
            .map(|v| format!(" = {} of copy", fmt::pct(v)))
            .unwrap_or_default();
        details.push(format!("{} GB/s{pc}", fmt::num(g)));
    }
    details.push(format!(
        "faster at {faster} of {} points; slowest ratio {} ({} {}×{})",
        sp.len(),
        fmt::times(worst),
        wp.dtype().unwrap_or_default(),
        names::param_str(wp.row, names::ROWS).unwrap_or_default(),
        names::param_str(wp.row, names::COLS).unwrap_or_default()
    ));
    details.push(gpu.to_string());
    Some(Card {
        title: format!("Best LayerNorm speedup vs {base}"),
        value: fmt::times(best),
        details,
        link: "layernorm.html".into(),
        f: gpu_dims(gpu),
        muted: false,
    })
}

fn decode_card(gpu: &str, pts: &[Point]) -> Option<Card> {
    let decode: Vec<Point> = pts
        .iter()
        .filter(|p| p.ok() && !names::is_llm_peer(p.imp()))
        .filter(|p| names::decode_tps(p.row).is_some())
        .copied()
        .collect();
    let min_batch = decode
        .iter()
        .filter_map(|p| names::param_f64(p.row, names::BATCH))
        .reduce(f64::min);
    // The headline: the smallest batch, the largest model measured at it, the fastest run.
    let p = decode
        .iter()
        .filter(|p| names::param_f64(p.row, names::BATCH) == min_batch)
        .max_by(|a, b| {
            let k = |p: &Point| {
                (
                    names::param_f64(p.row, names::PARAMS_COUNT).unwrap_or(0.0),
                    names::decode_tps(p.row).unwrap_or(0.0),
                )
            };
            let (ka, kb) = (k(a), k(b));
            ka.0.total_cmp(&kb.0).then(ka.1.total_cmp(&kb.1))
        })?;
    let r = p.row;
    let tps = names::decode_tps(r)?;
    let bound = names::metric(r, names::BOUND_TPS);
    let pct = names::metric(r, names::PCT_BOUND).or_else(|| Some(100.0 * tps / bound?));
    let mut details = Vec::new();
    details.push(match (pct, bound) {
        (Some(pc), Some(b)) => format!(
            "{} of the bandwidth bound ({} tokens/s)",
            fmt::pct(pc),
            fmt::num(b)
        ),
        (Some(pc), None) => format!("{} of the bandwidth bound", fmt::pct(pc)),
        _ => "bandwidth bound not recorded".into(),
    });
    details.push(format!(
        "{} · {} {} batch {}",
        p.imp(),
        names::param_str(r, names::MODEL).unwrap_or_default(),
        p.dtype().unwrap_or_default(),
        names::param_str(r, names::BATCH).unwrap_or_else(|| "?".into())
    ));
    // The fastest run of each peer implementation at the same configuration.
    let key = peer_key(p);
    let mut best_peer: BTreeMap<&str, f64> = BTreeMap::new();
    for q in pts
        .iter()
        .filter(|q| q.ok() && names::is_llm_peer(q.imp()) && peer_key(q) == key)
    {
        if let Some(v) = names::decode_tps(q.row) {
            let e = best_peer.entry(q.imp()).or_insert(v);
            *e = e.max(v);
        }
    }
    for (imp, v) in best_peer {
        details.push(format!(
            "{imp}: {} tokens/s ({} faster)",
            fmt::num(v),
            fmt::times(tps / v)
        ));
    }
    details.push(gpu.to_string());
    Some(Card {
        title: "LLM decode".into(),
        value: format!("{} tokens/s", fmt::num(tps)),
        details,
        link: "llm.html".into(),
        f: gpu_dims(gpu),
        muted: false,
    })
}

fn gemm_card(gpu: &str, pts: &[Point]) -> Option<Card> {
    let tf = |p: &Point| names::metric(p.row, names::TFLOPS);
    let p = pts
        .iter()
        .filter(|p| p.ok() && !names::is_cublas(p.imp()) && !names::NOT_OURS.contains(&p.imp()))
        .filter(|p| tf(p).is_some())
        .max_by(|a, b| tf(a).unwrap_or(0.0).total_cmp(&tf(b).unwrap_or(0.0)))?;
    let v = tf(p)?;
    let key = peer_key(p);
    let cublas = pts
        .iter()
        .find(|q| q.ok() && names::is_cublas(q.imp()) && peer_key(q) == key);
    let pct = names::metric(p.row, names::PCT_CUBLAS).or_else(|| {
        let c = cublas?;
        Some(100.0 * p50_us(c)? / p50_us(p)?)
    });
    let r = p.row;
    let shape = match (
        names::param_str(r, names::GEMM_M),
        names::param_str(r, names::GEMM_N),
        names::param_str(r, names::GEMM_K),
    ) {
        (Some(m), Some(n), Some(k)) if m == n && n == k => format!("{m}³"),
        (Some(m), Some(n), Some(k)) => format!("{m}×{n}×{k}"),
        _ => params_text(p),
    };
    let mut details = vec![format!(
        "{} at {shape} {}",
        p.imp(),
        p.dtype().unwrap_or_default()
    )];
    details.push(match (pct, cublas.and_then(tf)) {
        (Some(pc), Some(c)) => format!("{} of cuBLAS ({} TFLOP/s)", fmt::pct(pc), fmt::num(c)),
        (Some(pc), None) => format!("{} of cuBLAS", fmt::pct(pc)),
        _ => "no cuBLAS time at this shape".into(),
    });
    details.push(gpu.to_string());
    Some(Card {
        title: "Best hand-written GEMM".into(),
        value: format!("{} TFLOP/s", fmt::num(v)),
        details,
        link: "gemm.html".into(),
        f: gpu_dims(gpu),
        muted: false,
    })
}

fn cards(store: &Store) -> Vec<Card> {
    type Maker = fn(&str, &[Point]) -> Option<Card>;
    let specs: [(&str, &str, &str, &str, Maker); 3] = [
        (
            "layernorm",
            "Best LayerNorm speedup vs candle",
            "layernorm.html",
            "layernorm_bench",
            layernorm_card,
        ),
        ("llm", "LLM decode", "llm.html", "llm_bench", decode_card),
        (
            "gemm",
            "Best hand-written GEMM",
            "gemm.html",
            "gemm_bench",
            gemm_card,
        ),
    ];
    // Cards in the order LayerNorm, LLM, GEMM, each kind's GPUs (sorted) side by side; a kind
    // with no card at all gets one muted card saying what to run.
    let mut made: Vec<(String, usize, Card)> = Vec::new();
    let mut muted_cards = Vec::new();
    for (i, (kind, title, link, bin, make)) in specs.into_iter().enumerate() {
        let pts = store.of_kind(kind);
        let before = made.len();
        for gpu in gpus(&pts) {
            let mine: Vec<Point> = pts.iter().filter(|p| p.gpu() == gpu).copied().collect();
            if let Some(c) = make(&gpu, &mine) {
                made.push((gpu, i, c));
            }
        }
        if made.len() == before {
            let mut c = muted(title, link, bin);
            if !pts.is_empty() {
                c.details = vec!["artifacts present, but no point has the figures".into()];
            }
            muted_cards.push(c);
        }
    }
    made.sort_by(|a, b| (a.1, &a.0).cmp(&(b.1, &b.0)));
    made.into_iter()
        .map(|(_, _, c)| c)
        .chain(muted_cards)
        .collect()
}

/// The headline figure of a (kind, benchmark): (label, metric lookups, higher is better).
fn headline(kind: &str, benchmark: &str) -> Option<(&'static str, &'static [&'static str])> {
    match (kind, benchmark) {
        ("layernorm", _) => Some(("GB/s", names::GBPS)),
        ("gemm", _) | ("kernels", _) => Some(("TFLOP/s", names::TFLOPS)),
        (_, "prefill") => Some((
            "prefill tokens/s",
            &["prefill_tokens_per_s", "tokens_per_s"],
        )),
        (_, "decode") => Some(("decode tokens/s", &["decode_tokens_per_s", "tokens_per_s"])),
        (_, "e2e") => Some(("tokens/s", names::E2E_TPS)),
        (_, "generate") => Some(("decode tokens/s", names::DECODE_TPS)),
        _ => None,
    }
}

fn summary_table(store: &Store) -> TableView {
    let mut groups: BTreeMap<(String, String, String, String), Vec<Point>> = BTreeMap::new();
    for p in &store.points {
        groups
            .entry((
                p.artifact().kind.clone(),
                p.row.benchmark.clone(),
                p.imp().to_string(),
                p.gpu(),
            ))
            .or_default()
            .push(*p);
    }
    let mut rows = Vec::new();
    for ((kind, bench, imp, gpu), pts) in groups {
        let count = |s: Status| pts.iter().filter(|p| p.row.status == s).count();
        let ok: Vec<&Point> = pts.iter().filter(|p| p.ok()).collect();
        let (label, keys): (String, Vec<String>) = match headline(&kind, &bench) {
            Some((l, k)) => (l.to_string(), k.iter().map(|s| s.to_string()).collect()),
            None => match ok.iter().find_map(|p| p.row.metrics.keys().next()) {
                Some(k) => (k.clone(), vec![k.clone()]),
                None => (String::new(), vec![]),
            },
        };
        let key_refs: Vec<&str> = keys.iter().map(|s| s.as_str()).collect();
        let best = ok
            .iter()
            .filter_map(|p| names::metric(p.row, &key_refs))
            .reduce(f64::max);
        let headline = match best {
            Some(v) => format!("best {} {label}", fmt::num(v)),
            None => "—".into(),
        };
        let p50s: Vec<(String, f64)> = ok
            .iter()
            .filter_map(|p| names::primary_stat(p.row).map(|(k, s)| (k.to_string(), s.p50)))
            .collect();
        let p50 = match (
            p50s.iter().map(|x| x.1).reduce(f64::min),
            p50s.iter().map(|x| x.1).reduce(f64::max),
        ) {
            (Some(lo), Some(hi)) => {
                let k = &p50s[0].0;
                let unit = names::unit_label(k);
                if lo == hi {
                    format!("{} {unit} ({k})", fmt::num(lo))
                } else {
                    format!("{} – {} {unit} ({k})", fmt::num(lo), fmt::num(hi))
                }
            }
            _ => "—".into(),
        };
        let checked: Vec<bool> = pts
            .iter()
            .filter_map(|p| p.row.correctness.as_ref().map(|c| c.passed))
            .collect();
        let failed_checks = checked.iter().filter(|b| !**b).count();
        let correctness = match (checked.len(), failed_checks) {
            (0, _) => "not checked".into(),
            (n, 0) => format!("all {n} passed"),
            (n, f) => format!("{f} of {n} FAILED"),
        };
        let mut f = gpu_dims(&gpu);
        f.insert("impl".into(), imp.clone());
        rows.push(TableRow {
            cells: vec![
                kind,
                bench,
                imp,
                format!(
                    "{} ok · {} failed · {} skipped",
                    count(Status::Ok),
                    count(Status::Failed),
                    count(Status::Skipped)
                ),
                headline,
                p50,
                correctness,
                gpu,
            ],
            f,
        });
    }
    TableView {
        columns: [
            "kind",
            "benchmark",
            "implementation",
            "points",
            "headline",
            "P50 range",
            "correctness",
            "GPU",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
        rows,
    }
}

fn envs(store: &Store) -> Vec<EnvView> {
    let mut groups: BTreeMap<String, Vec<&crate::artifact::Loaded>> = BTreeMap::new();
    for l in store.loaded {
        let e = &l.artifact.env;
        // One environment per GPU model, driver, CUDA and host: runs on other boards of the
        // same model (another UUID) are the same environment to a reader.
        let key = match &e.gpu {
            Some(g) => format!(
                "{}|{}|{}|{}|{}",
                g.name, g.driver_version, g.cuda_driver_version, e.host.cpu_model, e.host.os
            ),
            None => format!("cpu|{}|{}", e.host.cpu_model, e.host.os),
        };
        groups.entry(key).or_default().push(l);
    }
    let mut out = Vec::new();
    for (_, ls) in groups {
        let e = &ls[0].artifact.env;
        let mut rows: Vec<(String, String)> = Vec::new();
        let mut throttled = String::new();
        if let Some(g) = &e.gpu {
            rows.push((
                "GPU".into(),
                format!("{} ({})", g.name, fmt::bytes(g.memory_total_bytes as f64)),
            ));
            rows.push(("compute capability".into(), g.compute_capability.clone()));
            rows.push(("driver".into(), g.driver_version.clone()));
            rows.push(("CUDA (driver)".into(), g.cuda_driver_version.clone()));
            let sm: Vec<u32> = ls
                .iter()
                .filter_map(|l| l.artifact.env.gpu.as_ref())
                .flat_map(|g| [g.clocks_start.sm_mhz, g.clocks_end.sm_mhz])
                .collect();
            let (lo, hi) = (
                sm.iter().min().copied().unwrap_or(0),
                sm.iter().max().copied().unwrap_or(0),
            );
            rows.push((
                "clocks".into(),
                format!(
                    "max SM {} MHz, memory {} MHz; SM seen {}–{} MHz during runs",
                    g.max_sm_mhz, g.max_mem_mhz, lo, hi
                ),
            ));
            let mut reasons: Vec<String> = ls
                .iter()
                .filter_map(|l| l.artifact.env.gpu.as_ref())
                .flat_map(|g| g.throttle_reasons_seen.iter().cloned())
                .collect();
            reasons.sort();
            reasons.dedup();
            let throttled_runs = ls
                .iter()
                .filter_map(|l| l.artifact.env.gpu.as_ref())
                .filter(|g| !g.throttle_reasons_seen.is_empty())
                .count();
            if !reasons.is_empty() {
                throttled = format!(
                    "Throttled: {} (in {throttled_runs} of {} runs)",
                    reasons.join(", "),
                    ls.len()
                );
            }
            rows.push((
                "throttling seen".into(),
                if reasons.is_empty() {
                    "none".into()
                } else {
                    reasons.join(", ")
                },
            ));
            let mut boards: Vec<&str> = ls
                .iter()
                .filter_map(|l| l.artifact.env.gpu.as_ref())
                .map(|g| g.uuid.as_str())
                .collect();
            boards.sort_unstable();
            boards.dedup();
            if boards.len() > 1 {
                rows.push((
                    "boards".into(),
                    format!("{} GPUs of this model (different UUIDs)", boards.len()),
                ));
            }
        } else {
            rows.push(("device".into(), e.device.clone()));
        }
        let h = &e.host;
        rows.push((
            "host".into(),
            format!(
                "{}, {} cores{}, {}",
                h.cpu_model,
                h.cores,
                h.memory_bytes
                    .map(|m| format!(", {}", fmt::bytes(m as f64)))
                    .unwrap_or_default(),
                h.os
            ),
        ));
        let mut commits: Vec<String> = ls
            .iter()
            .map(|l| {
                fmt::commit(
                    l.artifact.run.git_commit.as_deref(),
                    l.artifact.run.git_dirty,
                )
            })
            .collect();
        commits.sort();
        commits.dedup();
        let more = commits.len().saturating_sub(5);
        commits.truncate(5);
        rows.push((
            "commits".into(),
            format!(
                "{}{}",
                commits.join(", "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            ),
        ));
        let mut times: Vec<&str> = ls
            .iter()
            .map(|l| l.artifact.run.finished_utc.as_str())
            .collect();
        times.sort();
        let (first, last) = (times[0], times[times.len() - 1]);
        rows.push((
            "time".into(),
            if first == last {
                fmt::time_utc(first)
            } else {
                format!("{} – {}", fmt::time_utc(first), fmt::time_utc(last))
            },
        ));
        let mut kinds: Vec<&str> = ls.iter().map(|l| l.artifact.kind.as_str()).collect();
        kinds.sort();
        kinds.dedup();
        rows.push((
            "runs".into(),
            format!("{} artifacts: {}", ls.len(), kinds.join(", ")),
        ));
        let c = &ls[0].artifact.ceilings;
        let mut ceil = Vec::new();
        if let Some(g) = c.copy_gbps {
            ceil.push(format!("copy {} GB/s", fmt::num(g)));
        }
        for (d, v) in &c.matmul_tflops {
            ceil.push(format!("{d} matmul {} TFLOP/s", fmt::num(*v)));
        }
        if !ceil.is_empty() {
            rows.push(("ceilings (newest run)".into(), ceil.join("; ")));
        }
        let label = e.label();
        out.push(EnvView {
            title: label.clone(),
            throttled,
            rows,
            f: gpu_dims(&label),
        });
    }
    out
}

fn artifacts_table(store: &Store) -> (TableView, usize) {
    let mut ls: Vec<&crate::artifact::Loaded> = store.loaded.iter().collect();
    ls.sort_by(|a, b| {
        (&b.artifact.run.finished_utc, &b.file).cmp(&(&a.artifact.run.finished_utc, &a.file))
    });
    let hidden = ls.len().saturating_sub(MAX_ARTIFACT_ROWS);
    let rows = ls
        .into_iter()
        .take(MAX_ARTIFACT_ROWS)
        .map(|l| {
            let a = &l.artifact;
            let n = |s: Status| a.results.iter().filter(|r| r.status == s).count();
            TableRow {
                cells: vec![
                    l.file.clone(),
                    a.kind.clone(),
                    a.run.id.clone(),
                    a.env.label(),
                    fmt::commit(a.run.git_commit.as_deref(), a.run.git_dirty),
                    fmt::time_utc(&a.run.finished_utc),
                    if a.run.complete {
                        "yes"
                    } else {
                        "no (interrupted)"
                    }
                    .into(),
                    format!(
                        "{} ok · {} failed · {} skipped",
                        n(Status::Ok),
                        n(Status::Failed),
                        n(Status::Skipped)
                    ),
                    a.notes.join("; "),
                ],
                f: gpu_dims(&a.env.label()),
            }
        })
        .collect();
    let t = TableView {
        columns: [
            "file", "kind", "run", "GPU", "commit", "finished", "complete", "results", "notes",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
        rows,
    };
    (t, hidden)
}

pub fn build(
    page: &mut PageContext,
    store: &Store,
    _pal: &Palette,
    _entries: &[(String, String, String)],
) {
    page.template = "overview.html".into();
    page.intro = "GPU operator benchmarks: every figure below was read from the JSON artifacts \
                  the benchmarks wrote; each detail page has the charts and their data."
        .into();
    if store.loaded.is_empty() {
        page.empty = Some(super::Empty {
            message: format!(
                "No artifacts in {} yet. Run a benchmark on a GPU machine (it writes a JSON \
                 artifact under artifacts/), then render the site again.",
                page.site.artifacts_dir
            ),
            command: "cargo run --release --features cuda --bin layernorm_bench && cargo run --release --bin dashboard".into(),
        });
    }
    page.filters = filters(&store.points, &["gpu"]);
    page.cards = cards(store);
    page.envs = envs(store);
    let mut s1 = Section::new(
        "benchmarks",
        "Benchmarks",
        "One row per benchmark, implementation and GPU: how many points were measured, the best \
         headline figure, the range of P50 times and the correctness checks.",
    );
    s1.tables.push(NamedTable {
        id: "summary".into(),
        title: "Headline figures".into(),
        caption: String::new(),
        table: summary_table(store),
    });
    let (t, hidden) = artifacts_table(store);
    let mut s2 = Section::new("artifacts", "Artifacts", "");
    s2.tables.push(NamedTable {
        id: "artifacts".into(),
        title: "Runs, newest first".into(),
        caption: if hidden > 0 {
            format!(
                "The {MAX_ARTIFACT_ROWS} newest of {} artifacts; summary.json lists all.",
                store.loaded.len()
            )
        } else {
            String::new()
        },
        table: t,
    });
    page.sections = vec![s1, s2];
}
