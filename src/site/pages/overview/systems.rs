//! The overview's system panels: one per environment the artifacts were measured in, with
//! throttling during a run named at the top of its panel.

use super::cards::gpu_dims;
use crate::artifact::Loaded;
use crate::env::GpuEnv;
use crate::site::fmt;
use crate::site::pages::EnvView;
use crate::site::points::Store;
use std::collections::BTreeMap;

/// One panel per environment: GPU model, driver, CUDA and host.
pub fn panels(store: &Store) -> Vec<EnvView> {
    let mut groups: BTreeMap<String, Vec<&Loaded>> = BTreeMap::new();
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
    let groups: Vec<Vec<&Loaded>> = groups.into_values().collect();
    let facts: Vec<[String; 4]> = groups.iter().map(|ls| env_facts(ls[0])).collect();
    groups
        .iter()
        .enumerate()
        .map(|(i, ls)| {
            let e = &ls[0].artifact.env;
            let (mut rows, throttled) = match &e.gpu {
                Some(g) => gpu_rows(g, ls),
                None => (vec![("device".into(), e.device.clone())], String::new()),
            };
            rows.extend(run_rows(ls));
            let label = e.label();
            EnvView {
                title: title(&label, &facts, i, &groups),
                throttled,
                rows,
                f: gpu_dims(&label),
            }
        })
        .collect()
}

/// What tells environments of one GPU model apart: driver, CUDA, host CPU, OS.
fn env_facts(l: &Loaded) -> [String; 4] {
    let e = &l.artifact.env;
    let (driver, cuda) = e.gpu.as_ref().map_or((String::new(), String::new()), |g| {
        (
            format!("driver {}", g.driver_version),
            format!("CUDA {}", g.cuda_driver_version),
        )
    });
    [driver, cuda, e.host.cpu_model.clone(), e.host.os.clone()]
}

/// The panel's title: its label, and where another panel has the same label, the first fact
/// in which they differ ("NVIDIA H200 · AMD EPYC 9654").
fn title(label: &str, facts: &[[String; 4]], i: usize, groups: &[Vec<&Loaded>]) -> String {
    let same: Vec<usize> = (0..groups.len())
        .filter(|&j| j != i && groups[j][0].artifact.env.label() == label)
        .collect();
    let Some(k) = (0..4).find(|&k| same.iter().any(|&j| facts[j][k] != facts[i][k])) else {
        return label.to_string();
    };
    format!("{label} · {}", facts[i][k])
}

/// The GPU's rows (model, clocks seen, throttling, boards) and the throttling banner.
fn gpu_rows(g: &GpuEnv, ls: &[&Loaded]) -> (Vec<(String, String)>, String) {
    let mut rows: Vec<(String, String)> = Vec::new();
    let mut throttled = String::new();
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
    (rows, throttled)
}

/// The host, commits, times, kinds and ceilings of an environment's runs.
fn run_rows(ls: &[&Loaded]) -> Vec<(String, String)> {
    let mut rows: Vec<(String, String)> = Vec::new();
    let e = &ls[0].artifact.env;
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
    rows
}
